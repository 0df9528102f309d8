"""A training run's directory (OUT) and where its checkpoints live in it.

* ``OUT/checkpoints/update-NNNNNNNNN/``: the run's checkpoints (the newest ``keep`` of them),
  each complete before it gets its name (`save_checkpoint`);
* ``OUT/checkpoint``: a symbolic link to the newest, swapped with one atomic rename;
* ``OUT/config.json``, ``OUT/metrics.csv``, ``OUT/tensorboard/``, ``OUT/policy/``,
  ``OUT/evaluation.json``: the run's config, logs, final policy and its evaluation
  (`RUN_FILES`; [`training.trainer.run`][training.trainer.runner.run] writes them).

A kill at any instant leaves the previous checkpoint complete and ``OUT/checkpoint`` pointing
at a complete one. A resume first reads: `check_run_directory` (each of the run's names
holds what a run keeps there, no links), `find_run_checkpoint` (the newest complete
checkpoint); only once everything is checked does it change the run: `tidy_run` clears
what killed saves left. `clear_run` removes a run (``pisti-train --fresh``): only what its
own records show it wrote (`plan_clear`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Callable

# A run's log files whose sizes a checkpoint records: the schema's (the loader checks them), re-exported.
from pisti_env.policies.metadata import LOG_FILE  # noqa: F401
from pisti_env.util.regular_files import describe, entry_kind, read_regular

from .atomic import fsync_dir, remove_directory, remove_strays

LATEST = "checkpoint"  # OUT/checkpoint: a symbolic link to the newest complete checkpoint
HISTORY = "checkpoints"  # OUT/checkpoints/update-NNNNNNNNN/
RUN_FILES = (LATEST, HISTORY, "metrics.csv", "tensorboard", "policy", "config.json", "evaluation.json")
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
    ``save(path)`` (`save_checkpoint`: complete before it gets
    that name), point ``OUT/checkpoint`` at it with one atomic rename of a
    symbolic link, and remove all but the newest ``keep`` (`prune_run_checkpoints`). A kill at any instant
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
    if entry_kind(link) == "directory":  # never replace a directory someone put there
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
    if entry_kind(history) != "directory":
        return []
    found = [(int(m.group(1)), p) for p in history.iterdir()
             if (m := _RUN_NAME.match(p.name)) and entry_kind(p) == "directory"]  # a link is not a checkpoint
    return [p for _, p in sorted(found, reverse=True)]


def find_run_checkpoint(
    out: str | os.PathLike, verify: Callable[[Path], Any] | None = None
) -> tuple[Path | None, list[str]]:
    """The newest complete checkpoint of run directory ``out`` (``None`` if there is none) and
    a note for each newer one passed over as incomplete, corrupt or not a directory
    (``verify(path)`` raised a ``ValueError``; default:
    `verify_checkpoint` of a training checkpoint, its schema,
    hashes and trainer state). Reads only: nothing in ``out`` changes (`tidy_run` then
    clears what killed saves left)."""
    if verify is None:
        from .weights import verify_checkpoint  # torch and safetensors, only for this default

        def verify(path: Path) -> Any:
            return verify_checkpoint(path, trainer_state=True)
    out = Path(out)
    notes = []
    history = out / HISTORY
    if entry_kind(history) == "directory":
        for entry in sorted(history.iterdir()):
            if _RUN_NAME.match(entry.name) and entry_kind(entry) != "directory":
                notes.append(f"passed over {entry}: {describe(entry_kind(entry))}, not a checkpoint directory")
    for path in run_checkpoints(out):
        try:
            verify(path)
        except ValueError as error:
            notes.append(f"passed over {path}: {error}")
            continue
        return path, notes
    return None, notes


def tidy_run(out: str | os.PathLike, path: Path | None) -> None:
    """Clear what killed saves left in run directory ``out`` (temporary directories and links)
    and point ``OUT/checkpoint`` at ``path`` (the checkpoint a resume continues from)."""
    out = Path(out)
    remove_strays(out)
    remove_strays(out / HISTORY)
    if path is not None and not _links_to(out / LATEST, os.path.relpath(path, out)):
        _point_latest(out, path)


def latest_run_checkpoint(
    out: str | os.PathLike, verify: Callable[[Path], Any] | None = None
) -> tuple[Path | None, list[str]]:
    """`find_run_checkpoint`, then `tidy_run`: what killed saves left is cleared and
    ``OUT/checkpoint`` points at the checkpoint found."""
    path, notes = find_run_checkpoint(out, verify)
    tidy_run(out, path)
    return path, notes


def _links_to(link: Path, target: str) -> bool:
    try:
        return os.readlink(link) == target  # the link's own text: never resolved (it may loop)
    except OSError:
        return False


# What a run keeps at each name of RUN_FILES (a checkpoint is written only through the link).
_RUN_KINDS = {LATEST: "link", HISTORY: "directory", "metrics.csv": "file", "tensorboard": "directory",
              "policy": "directory", "config.json": "file", "evaluation.json": "file"}


def check_run_directory(out: str | os.PathLike) -> None:
    """Refuse a run directory whose own files are not what a run keeps there (``ValueError``
    naming the first): ``metrics.csv`` a directory, ``tensorboard`` a file, a link where a
    file or a directory belongs (it could lead out of OUT), an event file that is a link, a
    checkpoint's name (``checkpoints/update-N``) holding a file, a link or a loop (the run
    would train, then fail to save there on every try).
    Reads only, so a run refused here is left exactly as it was."""
    out = Path(out)
    for name, wanted in _RUN_KINDS.items():
        kind = entry_kind(out / name)
        if kind is not None and kind != wanted:
            raise ValueError(
                f"{out / name} is {describe(kind)}, where a run keeps {describe(wanted)}: this is not a run "
                "pisti-train can continue as it is (move that away, or start afresh with --fresh or another --out)"
            )
    if entry_kind(out / HISTORY) == "directory":
        for path in sorted((out / HISTORY).iterdir()):
            kind = entry_kind(path)
            if _RUN_NAME.match(path.name) and kind != "directory":
                raise ValueError(
                    f"{path} is {describe(kind)}, not a checkpoint directory: the run would write its checkpoint "
                    "there and fail after training, so it is not continued (move it away)")
    if entry_kind(out / "tensorboard") == "directory":
        for path in sorted((out / "tensorboard").iterdir()):
            if path.name.startswith("events.out.tfevents.") and entry_kind(path) != "file":
                raise ValueError(f"{path} is {describe(entry_kind(path))}, not a regular file: links inside a run are "
                                 "not followed (move it away)")


# ---------------------------------------------------------------------- what a run wrote
# --fresh deletes only what a run's own records show it wrote: each of its names is checked
# for what pisti wrote there (a checkpoint directory with its metadata, the metrics' header,
# the config's fields...), never taken by name alone.
_LINK_TEXT = re.compile(rf"^{HISTORY}/update-\d{{9,}}$")
_METRICS_HEADER = b"update,global_step,"
_OWN_PROBE_BYTES = 1_048_576  # bytes of a small JSON file read to see who wrote it


def probe_json(path: Path) -> object:
    """The JSON a small regular file at ``path`` holds (links not followed), or ``None``."""
    try:
        return json.loads(read_regular(path, _OWN_PROBE_BYTES))
    except (ValueError, OSError):
        return None


def is_checkpoint_directory(path: Path) -> bool:
    """Whether ``path`` is a directory (not a link) holding a pisti checkpoint's ``metadata.json``
    (its ``format``; the rest may be damaged: such a checkpoint is still the run's own)."""
    if entry_kind(path) != "directory" or entry_kind(path / "metadata.json") != "file":
        return False
    metadata = probe_json(path / "metadata.json")
    return isinstance(metadata, dict) and metadata.get("format") == "pisti-checkpoint"


def _is_latest_link(path: Path) -> bool:
    try:
        return entry_kind(path) == "link" and bool(_LINK_TEXT.match(os.readlink(path)))
    except OSError:
        return False


def _is_metrics(path: Path) -> bool:
    if entry_kind(path) != "file":
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            return os.read(fd, len(_METRICS_HEADER)) == _METRICS_HEADER
        finally:
            os.close(fd)
    except OSError:
        return False


def _is_config(path: Path) -> bool:
    value = probe_json(path)
    return isinstance(value, dict) and {"out_dir", "total_steps", "settings"} <= set(value)


def _is_evaluation(path: Path) -> bool:
    value = probe_json(path)
    return isinstance(value, dict) and {"step", "deals"} <= set(value)


def _is_directory(path: Path) -> bool:
    return entry_kind(path) == "directory"


# What a run writes at each of its names, checked before --fresh deletes it. ``checkpoints``
# and ``tensorboard`` are folders whose own entries are checked (`_owned_inside`).
RUN_OWNERS: dict[str, Callable[[Path], bool]] = {
    LATEST: _is_latest_link, HISTORY: _is_directory, "metrics.csv": _is_metrics, "tensorboard": _is_directory,
    "policy": is_checkpoint_directory, "config.json": _is_config, "evaluation.json": _is_evaluation,
}


def _owned_inside(folder: Path) -> tuple[list[Path], list[Path]]:
    """``(ours, in the way)`` inside a run's ``checkpoints`` or ``tensorboard`` folder: the
    checkpoints with pisti metadata, the TensorBoard event files (regular files); in the way:
    anything else at a checkpoint's name (a later save would land on it). Other entries stay."""
    ours, blocking = [], []
    for entry in sorted(folder.iterdir()):
        if folder.name == HISTORY and _RUN_NAME.match(entry.name):
            (ours if is_checkpoint_directory(entry) else blocking).append(entry)
        elif folder.name == "tensorboard" and entry.name.startswith("events.out.tfevents."):
            if entry_kind(entry) == "file":
                ours.append(entry)
    return ours, blocking


def plan_clear(out: str | os.PathLike, owners: dict[str, Callable[[Path], bool]] | None = None,
               keep: tuple[str, ...] = (), command: str = "--fresh") -> list[Path]:
    """The paths in ``out`` that a run's own records show it wrote, to be deleted by
    `clear_run` (checkpoint directories with pisti metadata, the metrics with their
    header, TensorBoard event files, the config, the link to the newest checkpoint...;
    ``owners``: each name with its check, `RUN_OWNERS` by default; ``keep``: names
    left). Reads only. Raises ``ValueError`` (one line, naming the first) when ``out`` holds
    something at one of those names that no run wrote: the whole folder when nothing in it is
    a run's (``out`` is not a pisti run), otherwise that entry. Anything at other names stays."""
    out = Path(out)
    owners = RUN_OWNERS if owners is None else owners
    ours: list[Path] = []
    foreign: list[Path] = []
    for name, check in owners.items():
        path = out / name
        if name in keep or entry_kind(path) is None:
            continue
        if not check(path):
            foreign.append(path)
        elif name in (HISTORY, "tensorboard"):
            inside, blocking = _owned_inside(path)
            ours += inside
            foreign += blocking
        else:
            ours.append(path)
    if foreign and not ours:
        names = ", ".join(str(p.relative_to(out)) for p in foreign)
        raise ValueError(
            f"{out} is not a pisti run ({names} not written by one): {command} deletes only a run's own files; "
            "choose another --out"
        )
    if foreign:
        raise ValueError(
            f"{foreign[0]} was not written by a pisti run ({describe(entry_kind(foreign[0]))} that none writes there): "
            f"{command} deletes only a run's own files; move it away or choose another --out"
        )
    return ours


def clear_run(out: str | os.PathLike, keep: tuple[str, ...] = (), owners: dict[str, Callable[[Path], bool]] | None = None,
              command: str = "--fresh") -> None:
    """Remove what a run wrote in ``out`` (`plan_clear`, which refuses a folder that is
    not a run before anything changes; ``keep``: names left) and what killed saves left;
    anything else stays, and a run's folders (``checkpoints``, ``tensorboard``) are removed
    only once empty. Each path is first renamed to a temporary name, so a kill during the
    removal leaves no half-removed file under a run's name."""
    out = Path(out)
    doomed_paths = plan_clear(out, owners, keep, command)
    remove_strays(out)
    for name in (HISTORY, "tensorboard"):
        if entry_kind(out / name) == "directory":
            remove_strays(out / name)
    for path in doomed_paths:
        doomed = path.parent / f".{path.name}.old-{uuid.uuid4().hex}"
        os.rename(path, doomed)
        if entry_kind(doomed) == "directory":
            shutil.rmtree(doomed, ignore_errors=True)
        else:
            doomed.unlink()
    for name in (HISTORY, "tensorboard"):
        path = out / name
        if name not in keep and entry_kind(path) == "directory" and (owners or RUN_OWNERS).get(name) is not None:
            try:
                path.rmdir()  # only an emptied folder: what else is there stays
            except OSError:
                pass
    fsync_dir(out)
