"""Child processes the checkpoint-safety tests kill with SIGKILL (tests/trainer/test_checkpoint_safety.py).

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
    from training.trainer import weights

    rng = random.Random(seed)

    def slowed(function):
        def wrapper(*args, **kwargs):
            time.sleep(rng.uniform(0.0, 0.004))
            return function(*args, **kwargs)

        return wrapper

    for name in ("rename", "replace", "symlink", "fsync"):
        setattr(os, name, slowed(getattr(os, name)))
    weights.save_file = slowed(weights.save_file)


def train(values: dict[str, Any], resume: bool, slow_seed: int | None, ready) -> None:
    """``run`` a tiny TrainConfig (``values``, for ``helpers.train_config``), resuming if asked."""
    from helpers import train_config
    from training.trainer.runner import run

    if slow_seed is not None:
        _slow_down(slow_seed)
    ready.set()
    run(train_config(**values), resume=resume, progress=False)


def save_repeatedly(values: dict[str, Any], directory: str, slow_seed: int, ready) -> None:
    """Save one trainer's checkpoint over ``directory`` again and again (a step counter in its
    metadata grows), as a policy-only and a full checkpoint in turn."""
    from helpers import train_config
    from training.trainer.train import Trainer

    trainer = Trainer(train_config(**values))
    _slow_down(slow_seed)
    ready.set()
    while True:
        trainer.step += 1
        trainer.save(directory, with_trainer_state=trainer.step % 2 == 0)


def pisti_train(argv: list[str], stderr_path: str) -> None:
    """``pisti-train ARGV`` as a process of its own (the run-directory lock tests,
    tests/trainer/test_run_directory.py): its stderr into ``stderr_path``, its exit status the
    command's."""
    import sys

    from training.trainer.cli import main

    with open(stderr_path, "w", encoding="utf-8") as stderr:
        sys.stderr = stderr
        code = main(argv)
        stderr.flush()
    raise SystemExit(code)
