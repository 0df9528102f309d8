"""Policies: the policy network, how a checkpoint of it is loaded and played, and the shipped
ones; everything playing a trained policy needs, without the trainer (``training`` trains
networks and writes checkpoints; ``pisti_env`` never imports it).

* ``spec``: ``pisti_env.policies.spec.NetworkSpec``, what a policy network is (the
  game, the widths, R29's head options), as a checkpoint's metadata stores it;
* ``network``: the policy network and the masked distribution over its actions;
  ``claim_heads`` and ``claim_game``: R29's heads and solved claims, built when a spec
  asks for them;
* ``metadata``: ``metadata.json``'s schema, read as untrusted input (``CheckpointError``);
  ``weights``: the tensor files, read after checking their hashes and shapes;
* ``loader``: ``load_policy(path)``; ``player``: ``CheckpointPlayer``, the loaded
  policy as a player, single decisions and batches;
* the shipped policies, as package data beside this file (``pisti-2p/``, ``pisti-4p/``,
  ``pisti-bluff/``; ``checkpoints/`` in a checkout is a link to this folder), playable by name
  through the registry (``SHIPPED_POLICIES``).

Importing this package imports no torch; its modules but ``spec`` and ``metadata`` do.
"""

from __future__ import annotations

import os

# Trained checkpoints shipped inside the package (package data), playable by name.
SHIPPED_POLICIES = ("pisti-2p", "pisti-4p", "pisti-bluff")
POLICY_DIR = os.path.dirname(os.path.abspath(__file__))

__all__ = ["SHIPPED_POLICIES", "POLICY_DIR", "shipped_policy_path"]


def shipped_policy_path(name: str) -> str:
    """The directory of the shipped policy ``name`` (one of ``SHIPPED_POLICIES``);
    ``ValueError`` for another name, naming the allowed ones."""
    if name not in SHIPPED_POLICIES:
        raise ValueError(f"unknown shipped policy {name!r}; shipped policies are {list(SHIPPED_POLICIES)}")
    return os.path.join(POLICY_DIR, name)
