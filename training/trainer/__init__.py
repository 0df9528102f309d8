"""The self-play PPO trainer (``pisti-train``), on the batched engine; everything here uses torch.

The core, read in this order:

* :mod:`.config`: :class:`TrainConfig`, every knob of a run (the game is one ``Settings``),
  checked when it is made; :mod:`.spec`: :class:`NetworkSpec`, the policy network it builds;
* :mod:`.network`: the policy and value networks; :mod:`.ppo`: per-seat credit, GAE, the losses;
* :mod:`.rollout`: self-play rollouts; :mod:`.pool`: the opponent pool;
* :mod:`.train`: :class:`Trainer`, one PPO update top to bottom;
* :mod:`.runner`: :func:`run`, a whole run with its directory (locked: :mod:`.lock`),
  :mod:`.logs` and :mod:`.evaluation`, stopped by :mod:`.failures` when it cannot go on;
  :mod:`.cli`: ``pisti-train``;
* checkpoints: :mod:`.atomic` (atomic files), :mod:`.run_layout` (a run directory),
  :mod:`.paths` (files inside them, never through a link), :mod:`.metadata` (the schema),
  :mod:`.weights` (tensor files), gathered in :mod:`.checkpoint`;
  :mod:`.state` (the trainer state), :mod:`.resume`, :mod:`.warm_start`;
* :mod:`.policy`: a checkpoint as a player (:class:`CheckpointPlayer`, :func:`load_policy`);
* :mod:`.distributed`: torchrun ranks.

Research plugs in through :mod:`.extension` (the bluff variant's: :mod:`training.bluff`).
"""

from .config import TrainConfig
from .policy import CheckpointPlayer, load_policy
from .runner import run
from .train import Trainer

__all__ = ["TrainConfig", "CheckpointPlayer", "load_policy", "Trainer", "run"]
