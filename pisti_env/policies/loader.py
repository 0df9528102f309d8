"""The policy loader: a checkpoint directory as a player (``load_policy``).

``make_player`` of the registry calls it for a spec that is a checkpoint path or a shipped
policy's name (``pisti_env.policies.SHIPPED_POLICIES``); the trainer's evaluations, the
benchmark and the exploiter load policies through it too. It reads the checkpoint through
``pisti_env.policies.weights`` (the metadata's schema, the weights' hash and shapes, all
checked before the network is built).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..rules.settings import Settings
from .metadata import check_play
from .network import PolicyNetwork
from .player import CheckpointPlayer
from .spec import NetworkSpec
from .weights import load_policy_weights

__all__ = ["load_policy"]


def load_policy(
    path: str | os.PathLike,
    deterministic: bool | None = None,
    settings: Settings | Mapping[str, Any] | None = None,
    device: str = "cpu",
    play: str | None = None,
) -> CheckpointPlayer:
    """Load a checkpoint directory's policy as a player (a `CheckpointPlayer`, from
    `pisti_env.policies.player`). The trainer is not needed: `pisti_env` alone loads and
    plays any checkpoint, a shipped policy or one a run wrote.

    Args:
        path: the checkpoint directory (a training checkpoint or a shipped policy).
        deterministic: ``True``: play the most likely legal action, ``False``: sample.
        play: how it chooses (see `CheckpointPlayer`); not with ``deterministic``.
            Neither given: as the checkpoint's metadata ``play`` says (``"argmax"`` when
            absent; a bluff-variant policy is saved to draw its mixed decisions).
        settings: if given (a [`Settings`][pisti_env.rules.Settings] or its keyword dict), the
            game it will play; a checkpoint trained for another game (any setting but the match
            context: players, partnerships, decks, scoring variants, bluff) raises
            `CheckpointError`.
        device: where the network lives.

    Returns:
        The player, its network in eval mode on ``device``, named after the directory
        (`pisti-2p` for `checkpoints/pisti-2p` or the shipped policy's folder in the package).

    Raises:
        CheckpointError: (from `pisti_env.policies.metadata`, a ``ValueError``) naming the file
            and the field, for a missing, corrupt or mismatched checkpoint: the metadata is
            checked against its schema and the weights' shapes against the network it
            describes before the network is built (`load_policy_weights`, in
            `pisti_env.policies.weights`).
        ValueError: for ``deterministic`` and ``play`` both given, or an unknown ``play``.
    """
    if deterministic is not None and play is not None:
        raise ValueError("give deterministic or play, not both")
    if play is not None:
        check_play(play, f" for checkpoint {str(path)!r}")  # before the files are read
    metadata, weights = load_policy_weights(path, settings)  # validated before anything is built
    network = PolicyNetwork(NetworkSpec.from_metadata(metadata))  # the spec the metadata stores
    network.load_state_dict(weights)  # the shapes were checked against the file's header
    if deterministic is not None:
        play = "argmax" if deterministic else "sample"
    return CheckpointPlayer(network.to(device), metadata, play=play or metadata.get("play", "argmax"),
                            name=os.path.basename(os.path.abspath(path)))
