"""Training-side tools, in two subpackages:

* `training.trainer` — the self-play PPO trainer (``pisti-train``): config, the value
  network, PPO, rollouts, the opponent pool, checkpoints written; uses torch (the policy
  network, its loader and the checkpoint player are `pisti_env.policies`');
* `training.harness` — the evaluation harness (``pisti-eval``, ``pisti-bluff-stats``):
  duplicate deals, statistics, reports and plots; imports torch only when a checkpoint plays.

Importing this package is cheap: it imports neither torch nor matplotlib.
``training.load_policy(path)`` loads a trained checkpoint as a player (torch on demand).
"""

from typing import Any


def load_policy(*args: Any, **kwargs: Any):
    """[`pisti_env.policies.loader.load_policy`][pisti_env.policies.loader.load_policy]: a trained checkpoint as a player for any seat."""
    from pisti_env.policies.loader import load_policy as _load_policy

    return _load_policy(*args, **kwargs)
