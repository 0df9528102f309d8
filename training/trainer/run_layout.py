"""A training run's directory (OUT) and where its checkpoints live in it.

* ``OUT/checkpoints/update-NNNNNNNNN/``: the run's checkpoints (the newest ``keep`` of them),
  each complete before it gets its name (:func:`~training.trainer.weights.save_checkpoint`);
* ``OUT/checkpoint``: a symbolic link to the newest, swapped with one atomic rename;
* ``OUT/config.json``, ``OUT/metrics.csv``, ``OUT/tensorboard/``, ``OUT/policy/``,
  ``OUT/evaluation.json``: the run's config, logs, final policy and its evaluation
  (:data:`RUN_FILES`; :mod:`training.trainer.run` writes them).

A kill at any instant leaves the previous checkpoint complete and ``OUT/checkpoint`` pointing
at a complete one; :func:`latest_run_checkpoint` finds the newest complete one and clears what
killed saves left.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from .atomic import fsync_dir, remove_directory, remove_strays

LATEST = "checkpoint"  # OUT/checkpoint: a symbolic link to the newest complete checkpoint
HISTORY = "checkpoints"  # OUT/checkpoints/update-NNNNNNNNN/
RUN_FILES = (LATEST, HISTORY, "metrics.csv", "tensorboard", "policy", "config.json", "evaluation.json")
# A run's log files whose sizes a checkpoint records (OUT-relative, nothing else).
LOG_FILE = re.compile(r"metrics\.csv|tensorboard/events\.out\.tfevents\.[A-Za-z0-9._-]{1,200}")
_RUN_NAME = re.compile(r"^update-(\d{9,})$")


def run_checkpoint_name(update: int) -> str:
    """The directory name of a run's checkpoint after ``update`` updates (sorts by update)."""
    return f"update-{update:09d}"


def publish_run_checkpoint(
    out: str | os.PathLike,
    update: int,
    save: Callable[[Path], Path],
    keep: int,
) -> Path:
    """Save a run's checkpoint after ``update`` updates as ``OUT/checkpoints/update-N`` through
    ``save(path)`` (:func:`~training.trainer.weights.save_checkpoint`: complete before it gets
    that name), point ``OUT/checkpoint`` at it with one atomic rename of a
    symbolic link, and remove all but the newest ``keep`` (:func:`prune_run_checkpoints`). A kill at any instant
    leaves the previous checkpoint complete and ``OUT/checkpoint`` pointing at a complete one
    (the link names a checkpoint only once it is complete). Returns the new checkpoint's path."""
    out = Path(out)
    history = out / HISTORY
    history.mkdir(parents=True, exist_ok=True)
    path = save(history / run_checkpoint_name(update))  # complete before it has its name
    _point_latest(out, path)
    remove_strays(history)
    prune_run_checkpoints(out, path, keep)
    return path


def prune_run_checkpoints(out: str | os.PathLike, current: Path, keep: int) -> None:
    """Remove a run's checkpoints but ``current`` and the ``keep - 1`` newest before it (a kill
    between a save and its pruning leaves one more, removed on resume), and any of a later
    update than ``current`` (a future the run left when it resumed from an older checkpoint
    because the newest was damaged: the logs no longer match it)."""
    update = int(_RUN_NAME.match(current.name).group(1))
    found = run_checkpoints(out)
    published = [p for p in found if int(_RUN_NAME.match(p.name).group(1)) <= update]
    for old in [p for p in found if p not in published] + published[max(1, keep):]:
        if old != current:
            remove_directory(old)


def _point_latest(out: Path, path: Path) -> None:
    """Make ``OUT/checkpoint`` a link to ``path`` (inside ``OUT/checkpoints``) in one rename."""
    link = out / LATEST
    if link.is_dir() and not link.is_symlink():  # never replace a directory someone put there
        raise ValueError(f"{link} is a directory, not the link to the newest checkpoint this trainer keeps there")
    tmp = out / f".{LATEST}.link-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(os.path.relpath(path, out), tmp, target_is_directory=True)
    os.replace(tmp, link)
    fsync_dir(out)


def run_checkpoints(out: str | os.PathLike) -> list[Path]:
    """A run's published checkpoint directories ``OUT/checkpoints/update-N``, newest first
    (published means renamed into place complete; the hashes are checked on reading)."""
    history = Path(out) / HISTORY
    if not history.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in history.iterdir() if (m := _RUN_NAME.match(p.name)) and p.is_dir()]
    return [p for _, p in sorted(found, reverse=True)]


def latest_run_checkpoint(
    out: str | os.PathLike, verify: Callable[[Path], Any] | None = None
) -> tuple[Path | None, list[str]]:
    """The newest complete checkpoint of run directory ``out`` (``None`` if there is none) and
    a note for each newer one passed over as incomplete or corrupt (``verify(path)`` raised a
    ``ValueError``; default: :func:`~training.trainer.weights.verify_checkpoint` of a training
    checkpoint, its schema, hashes and trainer state). Clears what killed saves left (temporary directories and links) and points
    ``OUT/checkpoint`` at the checkpoint found."""
    if verify is None:
        from .weights import verify_checkpoint  # (weights -> metadata -> this module)

        def verify(path: Path) -> Any:
            return verify_checkpoint(path, trainer_state=True)
    out = Path(out)
    remove_strays(out)
    remove_strays(out / HISTORY)
    notes = []
    for path in run_checkpoints(out):
        try:
            verify(path)
        except ValueError as error:
            notes.append(f"passed over {path}: {error}")
            continue
        if not (out / LATEST).is_symlink() or (out / LATEST).resolve() != path.resolve():
            _point_latest(out, path)
        return path, notes
    return None, notes
