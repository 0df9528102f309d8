"""The self-play PPO trainer (``pisti-train``), on the batched engine; everything here uses torch.

The core, read in this order:

* :mod:`.config`: :class:`TrainConfig`, every knob of a run (the game is one ``Settings``),
  checked when it is made; it builds the policy network's ``NetworkSpec``
  (:mod:`pisti_env.policies.spec`);
* :mod:`.network`: the value network (the policy network is :mod:`pisti_env.policies.network`);
  :mod:`.ppo`: per-seat credit, GAE, the losses;
* :mod:`.rollout`: self-play rollouts; :mod:`.pool`: the opponent pool;
* :mod:`.train`: :class:`Trainer`, one PPO update top to bottom;
* :mod:`.runner`: :func:`run`, a whole run with its directory (locked: :mod:`.lock`),
  :mod:`.logs` and :mod:`.evaluation`, stopped by :mod:`.failures` when it cannot go on;
  :mod:`.cli`: ``pisti-train``;
* checkpoints: :mod:`.atomic` (atomic files), :mod:`.run_layout` (a run directory),
  :mod:`.metadata` (what a resume checks beyond the schema), :mod:`.weights` (tensor files
  written), gathered in :mod:`.checkpoint` with the readers of :mod:`pisti_env.policies`
  (the schema, the tensor files read, files never read through a link);
  :mod:`.state` (the trainer state), :mod:`.resume`, :mod:`.warm_start`;
* a checkpoint as a player (:class:`CheckpointPlayer`, :func:`load_policy`) is
  :mod:`pisti_env.policies`' (``player``, ``loader``); :mod:`.policy`, :mod:`.spec` and
  :mod:`.paths` re-export the names that lived here;
* :mod:`.distributed`: torchrun ranks.

Research plugs in through :mod:`.extension` (the bluff variant's: :mod:`training.bluff`).
"""

from pisti_env.policies.loader import load_policy
from pisti_env.policies.player import CheckpointPlayer

from .config import TrainConfig
from .runner import run
from .train import Trainer

__all__ = ["TrainConfig", "CheckpointPlayer", "load_policy", "Trainer", "run"]
