"""How a training run stops when it cannot go on: a file it could not write, or weights gone
NaN or infinite. Each is an exception naming what happened and the last complete checkpoint,
with the exit status ``pisti-train`` ends with (docs/reliability.md lists them).

* `WriteFailed` (exit status 3): an ``OSError`` while writing a checkpoint, the logs,
  the config, the final policy or its evaluation (a full disk, a removed directory, a lost
  permission). Checkpoints are written whole or not at all, so the last complete one is
  intact: free the space and ``--resume``.
* `Diverged` (exit status 4): the network's weights or the optimizer's state hold NaN
  or infinity after an update. Nothing of that update is saved; resuming would diverge again
  the same way, so the message suggests a smaller learning rate.
"""

from __future__ import annotations

import errno as errnos
import os
from typing import TYPE_CHECKING

# The finiteness check of weights, shared with the policy loader (which refuses a diverged run's
# weights) and re-exported here.
from pisti_env.policies.weights import non_finite

if TYPE_CHECKING:  # pragma: no cover
    from .train import Trainer

WRITE_FAILED = 3
DIVERGED = 4


class RunStopped(RuntimeError):
    """A run that could not go on; ``exit_code`` is the status ``pisti-train`` exits with."""

    exit_code = 1


class WriteFailed(RunStopped):
    exit_code = WRITE_FAILED


class Diverged(RunStopped):
    exit_code = DIVERGED


def last_checkpoint(out: str | os.PathLike) -> str:
    """Words naming the run's newest published checkpoint (published means complete)."""
    from .run_layout import run_checkpoints

    try:
        found = run_checkpoints(out)
    except OSError:
        found = []
    if not found:
        return f"no checkpoint of this run was written yet ({out} holds none)"
    return f"the last complete checkpoint is {found[0]}"


def write_failed(error: OSError, out: str | os.PathLike) -> WriteFailed:
    """``error`` (raised while writing into run directory ``out``) as the run's stop."""
    what = error.filename if error.filename is not None else f"a file in {out}"
    reason = error.strerror or str(error) or type(error).__name__
    advice = "free some space, then continue with --resume" if error.errno in (errnos.ENOSPC, errnos.EDQUOT) \
        else "fix that, then continue with --resume"
    return WriteFailed(f"could not write {what}: {reason}; {last_checkpoint(out)}: {advice}")


def stop_if_diverged(trainer: "Trainer", out: str | os.PathLike) -> None:
    """Raise `Diverged` if the trainer's networks or optimizer state hold NaN or infinity
    after its latest update (checked after every update: about a millisecond at the default sizes)."""
    tensors: dict[str, object] = dict(trainer.network.state_dict())
    for index, state in trainer.optimizer.state_dict()["state"].items():
        tensors.update({f"optimizer.{index}.{k}": v for k, v in state.items()})
    name = non_finite(tensors)
    if name is not None:
        raise Diverged(
            f"training diverged at update {trainer.update}: {name} holds NaN or infinity after it; nothing of it "
            f"was saved and {last_checkpoint(out)}. Resuming would diverge again: start afresh with a smaller "
            "--learning-rate (or a smaller --max-grad-norm)"
        )

