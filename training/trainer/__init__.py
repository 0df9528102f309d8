"""The self-play PPO trainer (``pisti-train``), on the batched engine; everything here uses torch.

* :mod:`.config` — :class:`TrainConfig`, every knob of a run (the game is one ``Settings``);
* :mod:`.network` — the policy and value networks; :mod:`.ppo` — GAE and the PPO losses;
* :mod:`.rollout` — self-play rollouts; :mod:`.pool` — the opponent pool;
* :mod:`.checkpoint` — safetensors + JSON checkpoints; :mod:`.policy` — a checkpoint as a
  player (:class:`CheckpointPlayer`, :func:`load_policy`);
* :mod:`.train` — :class:`Trainer` and :func:`run`; :mod:`.cli` — the command line.
"""

from .config import TrainConfig
from .policy import CheckpointPlayer, load_policy
from .train import Trainer, run

__all__ = ["TrainConfig", "CheckpointPlayer", "load_policy", "Trainer", "run"]
