"""Child processes the checkpoint-safety tests kill with SIGKILL (tests/test_checkpoint_safety.py).

Each runs in a process forked from a forkserver that has already imported torch and the
trainer, so a child starts in a fraction of a second. With ``slow_seed``, every rename,
replace, symlink, fsync and tensor-file write sleeps a few random milliseconds first, so that
a kill lands inside a save (between its files and its renames) as often as between saves.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any


def _slow_down(seed: int) -> None:
    from training.trainer import checkpoint

    rng = random.Random(seed)

    def slowed(function):
        def wrapper(*args, **kwargs):
            time.sleep(rng.uniform(0.0, 0.004))
            return function(*args, **kwargs)

        return wrapper

    for name in ("rename", "replace", "symlink", "fsync"):
        setattr(os, name, slowed(getattr(os, name)))
    checkpoint.save_file = slowed(checkpoint.save_file)


def train(values: dict[str, Any], resume: bool, slow_seed: int | None, ready) -> None:
    """``run`` a tiny TrainConfig (``values``, for ``TrainConfig.from_dict``), resuming if asked."""
    from training.trainer.config import TrainConfig
    from training.trainer.train import run

    if slow_seed is not None:
        _slow_down(slow_seed)
    ready.set()
    run(TrainConfig.from_dict(values), resume=resume, progress=False)


def save_repeatedly(values: dict[str, Any], directory: str, slow_seed: int, ready) -> None:
    """Save one trainer's checkpoint over ``directory`` again and again (a step counter in its
    metadata grows), as a policy-only and a full checkpoint in turn."""
    from training.trainer.config import TrainConfig
    from training.trainer.train import Trainer

    trainer = Trainer(TrainConfig.from_dict(values))
    _slow_down(slow_seed)
    ready.set()
    while True:
        trainer.step += 1
        trainer.save(directory, with_trainer_state=trainer.step % 2 == 0)
