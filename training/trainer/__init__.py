"""The self-play PPO trainer (``pisti-train``), on the batched engine; everything here uses torch.

The core, read in this order:

* `.config`: [`TrainConfig`][training.trainer.config.TrainConfig], every knob of a run (the game is one ``Settings``),
  checked when it is made; it builds the policy network's ``NetworkSpec``
  (`pisti_env.policies.spec`);
* `.network`: the value network (the policy network is `pisti_env.policies.network`);
  `.ppo`: per-seat credit, GAE, the losses;
* `.rollout`: self-play rollouts; `.pool`: the opponent pool;
* `.train`: `Trainer`, one PPO update top to bottom;
* `.runner`: [`run`][training.trainer.runner.run], a whole run with its directory (locked: `.lock`),
  `.logs` and `.evaluation`, stopped by `.failures` when it cannot go on;
  `.cli`: ``pisti-train``;
* checkpoints: `.atomic` (atomic files), `.run_layout` (a run directory),
  `.metadata` (what a resume checks beyond the schema), `.weights` (tensor files
  written), gathered in `.checkpoint` with the readers of `pisti_env.policies`
  (the schema, the tensor files read, files never read through a link);
  `.state` (the trainer state), `.resume`, `.warm_start`;
* a checkpoint as a player ([`CheckpointPlayer`][pisti_env.policies.player.CheckpointPlayer], [`load_policy`][pisti_env.policies.loader.load_policy]) is
  `pisti_env.policies`' (``player``, ``loader``); `.policy`, `.spec` and
  `.paths` re-export the names that lived here;
* `.distributed`: torchrun ranks.

Research plugs in through `.extension` (the bluff variant's: `training.bluff`).
"""

from pisti_env.policies.loader import load_policy
from pisti_env.policies.player import CheckpointPlayer

from .config import TrainConfig
from .runner import run
from .train import Trainer

__all__ = ["TrainConfig", "CheckpointPlayer", "load_policy", "Trainer", "run"]
