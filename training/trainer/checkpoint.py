"""Checkpoints: weights in safetensors, everything else in JSON; nothing is ever unpickled.

A checkpoint is a directory:

* ``model.safetensors``: the networks' weights (a policy checkpoint: the policy's alone, all
  that playing needs);
* ``trainer.safetensors`` (training checkpoints only): optimizer moments, the batched
  engine's state, the collector's controllers, the pool's snapshots, the random generator;
* ``metadata.json``: format and observation-encoding versions, game settings, network shape,
  training step, config, the small non-tensor state, and the SHA-256 of each tensor file.

**Writing** (:func:`save_checkpoint`): every file is written and flushed to disk in a fresh
temporary directory beside the target, which is then renamed into place: a reader sees the
old checkpoint or the new one, never a mixture; a killed write leaves only a temporary
directory (``.NAME.tmp-*``), removed by the next save. A training run keeps its checkpoints in
``OUT/checkpoints/update-NNNNNNNNN/`` (the last ``keep`` of them) and ``OUT/checkpoint`` is a
symbolic link to the newest, swapped with one atomic rename (:func:`publish_run_checkpoint`);
:func:`latest_run_checkpoint` finds the newest complete one and clears what killed saves left.

**Reading** (:func:`read_metadata`, :func:`load_tensors`): untrusted input. ``metadata.json``
is size-bounded and checked against a schema (types, ranges, bounded network sizes, the game
settings, the observation size those settings give) before anything is built from it; tensor
files are checked against their hashes, and their shapes, read from the safetensors header,
against the network the metadata describes before any tensor is allocated
(:func:`load_policy_weights`, the one reader of policy weights). Every failure is a
:class:`CheckpointError` naming the file and the field.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from pisti_env.observation import OBS_VERSION, ObservationLayout
from pisti_env.rules import Settings, make_settings

from .config import MAX_CAPTURE_VALUE, is_capture_value

FORMAT = "pisti-checkpoint"
FORMAT_VERSION = 2  # 2: separate policy and value networks (keys policy.*, value.*)
MODEL_FILE = "model.safetensors"
TRAINER_FILE = "trainer.safetensors"
METADATA_FILE = "metadata.json"

# A run directory's checkpoints (see the module docstring).
LATEST = "checkpoint"  # OUT/checkpoint: a symbolic link to the newest complete checkpoint
HISTORY = "checkpoints"  # OUT/checkpoints/update-NNNNNNNNN/
_RUN_NAME = re.compile(r"^update-(\d{9,})$")
_STRAY = re.compile(r"^\..+\.(tmp|old|link)-[A-Za-z0-9_]+$")  # what a killed save leaves

# Bounds of what a checkpoint may ask to be built (a forged one must not exhaust memory).
MAX_METADATA_BYTES = 1 << 20
MAX_HIDDEN_LAYERS = 8
MAX_HIDDEN_WIDTH = 4096
MAX_TEXT = 4096  # characters of a name or version string
MAX_COUNT = 1 << 62  # steps, updates, games
FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")
_DTYPE_NAMES = {  # torch dtype -> its name in a safetensors header
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64", torch.int64: "I64",
    torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}

# The settings only of the match context (which the policy sees in its observation); every
# other field of Settings changes the game a policy was trained for.
MATCH_CONTEXT = ("target", "win_margin")
GAME_DEFINING = tuple(f.name for f in dataclasses.fields(Settings) if f.name not in MATCH_CONTEXT)


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for other settings or another encoding."""


# ---------------------------------------------------------------------- writing
def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _fsync_file(path: str | os.PathLike) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def remove_strays(parent: str | os.PathLike, name: str | None = None) -> list[Path]:
    """Remove what killed saves left in ``parent`` (temporary directories, files and links
    named ``.NAME.tmp-*``, ``.NAME.old-*``, ``.NAME.link-*``; only NAME's if given); returns them."""
    parent = Path(parent)
    removed = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if not _STRAY.match(entry.name) or (name is not None and not entry.name.startswith(f".{name}.")):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def write_atomic(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Write one file through ``write(temporary_path)``, flush it to disk and move it into
    place (atomic on POSIX), with the permissions of any new file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        _fsync_file(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it owner-only; a checkpoint is shared like any file
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_checkpoint(
    directory: str | os.PathLike,
    model_state: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    trainer_state: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Write a checkpoint directory (see the module docstring); returns its path.

    The files are written and flushed in a fresh temporary directory beside ``directory``,
    which is then renamed to ``directory`` (a symbolic link there is replaced in one rename, an
    existing directory exchanged with it in one step where the system can, see :func:`_publish`). ``metadata`` must hold
    ``settings`` (the game settings), ``observation_size``, ``card_features`` and
    ``hidden_sizes``; the format fields and file hashes are added here.
    """
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    remove_strays(directory.parent, directory.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())
        files = {MODEL_FILE: model_state}
        if trainer_state is not None:
            files[TRAINER_FILE] = trainer_state
        hashes = {}
        for name, tensors in files.items():
            plain = {k: v.detach().to("cpu").contiguous().clone() for k, v in tensors.items()}
            write_atomic(tmp / name, lambda path, plain=plain: save_file(plain, path))
            hashes[name] = _sha256(tmp / name)
        full = {"format": FORMAT, "format_version": FORMAT_VERSION, "obs_version": OBS_VERSION, **metadata, "files": hashes}

        def write_json(path: str) -> None:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(full, f, indent=2, sort_keys=True)

        write_atomic(tmp / METADATA_FILE, write_json)
        _fsync_dir(tmp)
        _publish(tmp, directory)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return directory


def _publish(tmp: Path, target: Path) -> None:
    """Move the complete directory ``tmp`` to ``target`` in one atomic step: a rename, or
    (``target`` a directory already) an exchange of the two (``renameat2``, Linux) after which
    the old one is removed. Where the exchange is unsupported, the old directory is moved aside
    first: a kill between the two renames leaves no ``target``, the old copy in
    ``.NAME.old-*`` (removed by the next save)."""
    if target.is_dir() and not target.is_symlink():
        if _exchange(tmp, target):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "previous")
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)  # a link (or nothing) there: replaced in one step
    _fsync_dir(target.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where the
    system or the file system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    return False  # EINVAL / ENOSYS: not supported here (the fallback then renames)


def run_checkpoint_name(update: int) -> str:
    """The directory name of a run's checkpoint after ``update`` updates (sorts by update)."""
    return f"update-{update:09d}"


def publish_run_checkpoint(
    out: str | os.PathLike,
    update: int,
    model_state: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    trainer_state: dict[str, torch.Tensor] | None,
    keep: int,
) -> Path:
    """Save a run's checkpoint after ``update`` updates as ``OUT/checkpoints/update-N`` (complete
    before it gets that name), point ``OUT/checkpoint`` at it with one atomic rename of a
    symbolic link, and remove all but the newest ``keep`` (:func:`prune_run_checkpoints`). A kill at any instant
    leaves the previous checkpoint complete and ``OUT/checkpoint`` pointing at a complete one
    (the link names a checkpoint only once it is complete). Returns the new checkpoint's path."""
    out = Path(out)
    history = out / HISTORY
    history.mkdir(parents=True, exist_ok=True)
    path = save_checkpoint(history / run_checkpoint_name(update), model_state, metadata, trainer_state)
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
            _remove(old)


def _remove(directory: Path) -> None:
    """Remove a published checkpoint: renamed to a temporary name first (one step), so that a
    kill during the removal never leaves a half-deleted directory under a checkpoint's name."""
    doomed = directory.parent / f".{directory.name}.old-{uuid.uuid4().hex}"
    os.rename(directory, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def _point_latest(out: Path, path: Path) -> None:
    """Make ``OUT/checkpoint`` a link to ``path`` (inside ``OUT/checkpoints``) in one rename."""
    link = out / LATEST
    if link.is_dir() and not link.is_symlink():  # a checkpoint of the older single-directory layout
        raise CheckpointError(f"{link} is a directory, not the link this trainer keeps there (see latest_run_checkpoint)")
    tmp = out / f".{LATEST}.link-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(os.path.relpath(path, out), tmp, target_is_directory=True)
    os.replace(tmp, link)
    _fsync_dir(out)


def run_checkpoints(out: str | os.PathLike) -> list[Path]:
    """A run's published checkpoint directories ``OUT/checkpoints/update-N``, newest first
    (published means renamed into place complete; the hashes are checked on reading)."""
    history = Path(out) / HISTORY
    if not history.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in history.iterdir() if (m := _RUN_NAME.match(p.name)) and p.is_dir()]
    return [p for _, p in sorted(found, reverse=True)]


def latest_run_checkpoint(out: str | os.PathLike, trainer_state: bool = True) -> tuple[Path | None, list[str]]:
    """The newest complete checkpoint of run directory ``out`` (``None`` if there is none) and
    a note for each newer one passed over as incomplete or corrupt.

    Clears what killed saves left (temporary directories and links); a checkpoint of the older
    layout (a real directory ``OUT/checkpoint``) is moved to ``OUT/checkpoints`` first, and
    ``OUT/checkpoint`` is pointed at the checkpoint found. ``trainer_state``: only training
    checkpoints (with ``trainer.safetensors``) count."""
    out = Path(out)
    remove_strays(out)
    remove_strays(out / HISTORY)
    legacy = out / LATEST
    if legacy.is_dir() and not legacy.is_symlink():
        try:
            metadata = verify_checkpoint(legacy, trainer_state)
        except CheckpointError as error:
            raise CheckpointError(f"{legacy} (a checkpoint of an older trainer) is incomplete or corrupt: {error}") from None
        (out / HISTORY).mkdir(exist_ok=True)
        target = out / HISTORY / run_checkpoint_name(int(metadata.get("update", 0)))
        if target.exists():
            _remove(target)
        os.rename(legacy, target)
    notes = []
    for path in run_checkpoints(out):
        try:
            verify_checkpoint(path, trainer_state)
        except CheckpointError as error:
            notes.append(f"passed over {path}: {error}")
            continue
        if not (out / LATEST).is_symlink() or (out / LATEST).resolve() != path.resolve():
            _point_latest(out, path)
        return path, notes
    return None, notes


def verify_checkpoint(directory: str | os.PathLike, trainer_state: bool = False) -> dict[str, Any]:
    """The checked metadata of a complete checkpoint: the schema, and every tensor file's hash
    (``trainer_state``: it must hold one). Raises :class:`CheckpointError`."""
    metadata = read_metadata(directory)
    if trainer_state and TRAINER_FILE not in metadata["files"]:
        raise CheckpointError(f"{Path(directory) / METADATA_FILE}: field 'files': no {TRAINER_FILE} (a policy-only checkpoint)")
    for name in metadata["files"]:
        checked_file(Path(directory), name, metadata)
    return metadata


# ---------------------------------------------------------------------- the schema
def _fail(path: Path, field: str, problem: str) -> CheckpointError:
    return CheckpointError(f"{path}: field {field!r}: {problem}")


def _text(value: Any, path: Path, field: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise _fail(path, field, f"must be a string of at most {MAX_TEXT} characters, got {_brief(value)}")
    return value


def _integer(value: Any, path: Path, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(path, field, f"must be an integer in {low}..{high}, got {_brief(value)}")
    return value


def _number(value: Any, path: Path, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, field, f"must be a finite number, got {_brief(value)}")
    return float(value)


def _mapping(value: Any, path: Path, field: str, max_items: int = 256) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > max_items:
        raise _fail(path, field, f"must be an object of at most {max_items} entries, got {_brief(value)}")
    return value


def _sequence(value: Any, path: Path, field: str, max_items: int) -> list[Any]:
    if not isinstance(value, list) or len(value) > max_items:
        raise _fail(path, field, f"must be a list of at most {max_items} entries, got {_brief(value)}")
    return value


def _brief(value: Any) -> str:
    """A short description of an untrusted value (never the whole of a large one)."""
    if isinstance(value, (dict, list)):
        items = list(value.items()) if isinstance(value, dict) else value
        flat = all(not isinstance(x, (dict, list, tuple)) for x in items) if isinstance(value, list) else all(
            not isinstance(v, (dict, list)) for _, v in items)
        if not (flat and len(value) <= 8 and len(repr(value)) <= 60):
            return f"a {'object' if isinstance(value, dict) else 'list'} of {len(value)} entries"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_hidden_sizes(value: Any, field: str = "hidden_sizes", path: Path | None = None) -> tuple[int, ...]:
    """Hidden-layer widths within the bounds a checkpoint may hold (1..``MAX_HIDDEN_LAYERS``
    layers of 1..``MAX_HIDDEN_WIDTH``); a :class:`CheckpointError` (``path`` given) or
    ``ValueError`` otherwise."""
    problem = None
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_HIDDEN_LAYERS:
        problem = f"must be a list of 1..{MAX_HIDDEN_LAYERS} layer widths, got {_brief(value)}"
    elif any(isinstance(h, bool) or not isinstance(h, int) or not 1 <= h <= MAX_HIDDEN_WIDTH for h in value):
        problem = f"must hold widths in 1..{MAX_HIDDEN_WIDTH}, got {_brief(list(value))}"
    if problem:
        if path is None:
            raise ValueError(f"{field} {problem}")
        raise _fail(path, field, problem)
    return tuple(value)


def _settings(value: Any, path: Path, field: str = "settings") -> Settings:
    names = {f.name for f in dataclasses.fields(Settings)}
    value = _mapping(value, path, field)
    unknown = sorted(set(value) - names)
    if unknown:
        raise _fail(path, field, f"unknown setting(s) {[_brief(k) for k in unknown[:4]]}; known: {sorted(names)}")
    for key, item in value.items():
        if item is not None and not isinstance(item, (bool, int)):
            raise _fail(path, f"{field}.{key}", f"must be an integer, a boolean or null, got {_brief(item)}")
    try:
        return make_settings(**value)
    except (ValueError, TypeError) as error:
        raise _fail(path, field, str(error)) from None


_OPTIONAL_FIELDS = {"name", "step", "update", "config", "torch_version", "trainer", "log_sizes", "world", "play",
                    "answer_hidden_sizes", "claim_hidden_sizes", "average_heads", "solved_claims",
                    "claim_capture_value", "claim_capture_value_last_deal"}
MAX_AVERAGE_HEADS = 4096  # members of a fictitious-play average (training.trainer.average)
MAX_WORLD = 65_536  # processes of a distributed run whose checkpoint we read (rank 0 saves its share of the games)
_REQUIRED_FIELDS = {"format", "format_version", "obs_version", "settings", "observation_size", "card_features",
                    "hidden_sizes", "files"}

# How a loaded policy chooses by default (training.trainer.policy.CheckpointPlayer): the most
# likely legal action, a draw from its distribution, or R29's mixed decisions drawn and the card
# chosen.
PLAY_MODES = ("argmax", "sample", "sample_bluffs")


def play_mode(settings: Any) -> str:
    """How a policy trained for ``settings`` (a :class:`~pisti_env.rules.Settings`) plays:
    ``"sample_bluffs"`` in the bluff variant, where R29's claims and answers are mixed
    decisions and any pure choice there is exploitable; ``"argmax"`` otherwise."""
    return "sample_bluffs" if settings.bluff else "argmax"


def check_play(play: Any, where: str = "") -> str:
    """``play`` if it is one of :data:`PLAY_MODES`, else a ``ValueError`` naming them
    (``where``, e.g. ``" for checkpoint 'runs/x'"``, says whose)."""
    if play not in PLAY_MODES:
        raise ValueError(f"play must be one of {list(PLAY_MODES)}{where}, got {play!r}")
    return play


def validate_metadata(metadata: Any, path: Path) -> dict[str, Any]:
    """``metadata`` (parsed ``metadata.json`` at ``path``) checked against the schema: the
    fields above with their types and ranges, the settings a valid game, ``observation_size``
    and ``card_features`` those of the settings' encoding, ``hidden_sizes`` bounded; the
    optional ``config``, ``trainer`` and ``log_sizes`` shallowly (:func:`validate_trainer_metadata`
    for the rest, when resuming). Returns it; raises :class:`CheckpointError` naming the field."""
    metadata = _mapping(metadata, path, "(top level)")
    if metadata.get("format") != FORMAT:
        raise _fail(path, "format", f"not a pisti checkpoint (format {_brief(metadata.get('format'))})")
    if metadata.get("format_version") != FORMAT_VERSION or isinstance(metadata.get("format_version"), bool):
        raise _fail(path, "format_version",
                    f"version {_brief(metadata.get('format_version'))} is not supported (this version reads {FORMAT_VERSION})")
    if metadata.get("obs_version") != OBS_VERSION or isinstance(metadata.get("obs_version"), bool):
        raise _fail(path, "obs_version",
                    f"trained on observation encoding version {_brief(metadata.get('obs_version'))}, but this pisti_env "
                    f"encodes version {OBS_VERSION}: the policy would misread its inputs")
    missing = sorted(_REQUIRED_FIELDS - set(metadata))
    if missing:
        raise _fail(path, missing[0], f"missing (required: {sorted(_REQUIRED_FIELDS)})")
    unknown = sorted(set(metadata) - _REQUIRED_FIELDS - _OPTIONAL_FIELDS)
    if unknown:
        raise _fail(path, _brief(unknown[0]), "unknown field")
    settings = _settings(metadata["settings"], path)
    layout = ObservationLayout(settings)
    _integer(metadata["observation_size"], path, "observation_size", layout.size, layout.size)
    _integer(metadata["card_features"], path, "card_features", layout.num_card_features, layout.num_card_features)
    check_hidden_sizes(metadata["hidden_sizes"], "hidden_sizes", path)
    for field, head in (("answer_hidden_sizes", "an answer head"), ("claim_hidden_sizes", "a claim head")):
        if metadata.get(field, []) != []:  # absent or empty: no such head (the card logits decide)
            check_hidden_sizes(metadata[field], field, path)
            if not settings.bluff:
                raise _fail(path, field, f"{head} needs the bluff variant (R29) in settings")
    if "average_heads" in metadata:
        _integer(metadata["average_heads"], path, "average_heads", 1, MAX_AVERAGE_HEADS)
        if not (metadata.get("answer_hidden_sizes") and metadata.get("claim_hidden_sizes")):
            raise _fail(path, "average_heads", "averaged heads need an answer head and a claim head "
                        "(answer_hidden_sizes, claim_hidden_sizes)")
    if "solved_claims" in metadata:
        if not isinstance(metadata["solved_claims"], bool):
            raise _fail(path, "solved_claims", f"must be true or false, got {_brief(metadata['solved_claims'])}")
        if metadata["solved_claims"] and not settings.bluff:
            raise _fail(path, "solved_claims", "solved claims need the bluff variant (R29) in settings")
        if metadata["solved_claims"] and (metadata.get("answer_hidden_sizes") or metadata.get("claim_hidden_sizes")):
            raise _fail(path, "solved_claims", "solved claims replace the answer and claim heads: not with "
                        "answer_hidden_sizes or claim_hidden_sizes")
    for field in ("claim_capture_value", "claim_capture_value_last_deal"):
        if field not in metadata:
            continue
        value = metadata[field]
        if not is_capture_value(value):
            raise _fail(path, field, f"must be a number of points in [0, {MAX_CAPTURE_VALUE:g}], got {_brief(value)}")
        if not metadata.get("solved_claims"):
            raise _fail(path, field, "is a solved claims' capture value: only with solved_claims")
    files = _mapping(metadata["files"], path, "files", 2)
    for name, digest in files.items():
        if name not in (MODEL_FILE, TRAINER_FILE):
            raise _fail(path, "files", f"unknown file {_brief(name)} (known: {MODEL_FILE}, {TRAINER_FILE})")
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise _fail(path, f"files.{name}", f"must be a SHA-256 hex digest, got {_brief(digest)}")
    if MODEL_FILE not in files:
        raise _fail(path, "files", f"no {MODEL_FILE}")
    for key in ("name", "torch_version"):
        if key in metadata:
            _text(metadata[key], path, key)
    for key in ("step", "update"):
        if key in metadata:
            _integer(metadata[key], path, key, 0, MAX_COUNT)
    if "world" in metadata:
        _integer(metadata["world"], path, "world", 1, MAX_WORLD)
    if "play" in metadata and metadata["play"] not in PLAY_MODES:
        raise _fail(path, "play", f"must be one of {list(PLAY_MODES)}, got {_brief(metadata['play'])}")
    if "config" in metadata:
        for key, item in _mapping(metadata["config"], path, "config").items():
            if isinstance(item, dict) and key == "settings":
                _settings(item, path, "config.settings")
            elif isinstance(item, list):
                if len(item) > 64 or not all(isinstance(x, (str, int, float, bool)) for x in item):
                    raise _fail(path, f"config.{key}", f"must be a short list of plain values, got {_brief(item)}")
            elif item is not None and not isinstance(item, (str, int, float, bool)):
                raise _fail(path, f"config.{key}", f"must be a plain value, got {_brief(item)}")
            elif isinstance(item, str):
                _text(item, path, f"config.{key}")
    if "trainer" in metadata:
        _mapping(metadata["trainer"], path, "trainer")
    if "log_sizes" in metadata:
        for key, size in _mapping(metadata["log_sizes"], path, "log_sizes", 1024).items():
            if not isinstance(key, str) or not LOG_FILE.fullmatch(key):
                raise _fail(path, "log_sizes", f"not a log file of a run: {_brief(key)}")
            _integer(size, path, f"log_sizes.{key}", 0, MAX_COUNT)
    return metadata


# A run's log files whose sizes a checkpoint records (OUT-relative, nothing else).
LOG_FILE = re.compile(r"metrics\.csv|tensorboard/events\.out\.tfevents\.[A-Za-z0-9._-]{1,200}")


def validate_trainer_metadata(metadata: dict[str, Any], path: Path, num_params: int) -> dict[str, Any]:
    """The ``trainer`` field of a training checkpoint (``path``: its metadata file) checked:
    ``optimizer_param_groups`` (one group over ``num_params`` parameters) and the pool's
    entries (name, margin, games, snapshot). Returns it."""
    if "trainer" not in metadata:
        raise CheckpointError(f"{path.parent} is a policy-only checkpoint: it cannot resume training")
    trainer = _mapping(metadata["trainer"], path, "trainer")
    groups = _sequence(trainer.get("optimizer_param_groups"), path, "trainer.optimizer_param_groups", 1)
    if len(groups) != 1:
        raise _fail(path, "trainer.optimizer_param_groups", "must hold the one parameter group")
    group = _mapping(groups[0], path, "trainer.optimizer_param_groups[0]", 64)
    if group.get("params") != list(range(num_params)):
        raise _fail(path, "trainer.optimizer_param_groups[0].params", f"must be 0..{num_params - 1}, this network's parameters")
    for key, item in group.items():
        if key == "params":
            continue
        if isinstance(item, list):
            for x in _sequence(item, path, f"trainer.optimizer_param_groups[0].{key}", 8):
                _number(x, path, f"trainer.optimizer_param_groups[0].{key}")
        elif item is not None and not isinstance(item, (bool, str)):
            _number(item, path, f"trainer.optimizer_param_groups[0].{key}")
    for i, entry in enumerate(_sequence(trainer.get("pool"), path, "trainer.pool", 1024)):
        field = f"trainer.pool[{i}]"
        entry = _mapping(entry, path, field, 8)
        if set(entry) != {"name", "margin", "games", "snapshot"}:
            raise _fail(path, field, f"must hold name, margin, games and snapshot, got {sorted(map(str, entry))[:6]}")
        _text(entry["name"], path, f"{field}.name")
        _number(entry["margin"], path, f"{field}.margin")
        _integer(entry["games"], path, f"{field}.games", 0, MAX_COUNT)
        if not isinstance(entry["snapshot"], bool):
            raise _fail(path, f"{field}.snapshot", f"must be true or false, got {_brief(entry['snapshot'])}")
    if "average" in trainer:  # a fictitious-play run's schedule (training.trainer.average)
        average = _mapping(trainer["average"], path, "trainer.average", 3)
        if set(average) != {"offers", "stride", "member_offers"}:
            raise _fail(path, "trainer.average", "must hold offers, stride and member_offers")
        offers = _integer(average["offers"], path, "trainer.average.offers", 0, MAX_COUNT)
        _integer(average["stride"], path, "trainer.average.stride", 1, MAX_COUNT)
        members = _sequence(average["member_offers"], path, "trainer.average.member_offers", MAX_AVERAGE_HEADS)
        if not members:
            raise _fail(path, "trainer.average.member_offers", "the average holds at least one member")
        for x in members:
            _integer(x, path, "trainer.average.member_offers[]", 0, offers)
    return trainer


# ---------------------------------------------------------------------- reading
def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def read_metadata(directory: str | os.PathLike) -> dict[str, Any]:
    """The metadata of a checkpoint directory, size-bounded, parsed and checked against the
    schema (:func:`validate_metadata`); raises :class:`CheckpointError` naming the file and the
    field."""
    directory = Path(directory)
    path = directory / METADATA_FILE
    if not path.is_file():
        raise CheckpointError(f"{directory} is not a checkpoint: no {METADATA_FILE} in it")
    size = path.stat().st_size
    if size > MAX_METADATA_BYTES:
        raise CheckpointError(f"{path} is corrupt: {size} bytes, more than the {MAX_METADATA_BYTES} a checkpoint's metadata may have")
    try:
        metadata = json.loads(path.read_bytes().decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:  # JSONDecodeError is a ValueError
        message = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise CheckpointError(f"{path} is corrupt: {message}") from None
    return validate_metadata(metadata, path)


def checked_file(directory: str | os.PathLike, name: str, metadata: dict[str, Any]) -> Path:
    """The path of a checkpoint's tensor file ``name``, after checking it against its recorded hash."""
    directory = Path(directory)
    path = directory / name
    expected = metadata["files"].get(name)
    if expected is None or not path.is_file():
        raise CheckpointError(f"{directory} has no {name}")
    if _sha256(path) != expected:
        raise CheckpointError(f"{path} does not match its recorded hash: the checkpoint is corrupt or incomplete")
    return path


def tensor_shapes(path: str | os.PathLike) -> dict[str, tuple[tuple[int, ...], str]]:
    """Each tensor's (shape, dtype) from a safetensors file's header, without reading the data."""
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:
        raise CheckpointError(f"{path} is corrupt: {str(error)[:200]}") from None


def load_tensors(
    directory: str | os.PathLike,
    name: str,
    metadata: dict[str, Any],
    expected: Mapping[str, Sequence[int]] | None = None,
    exact: bool = True,
    dtypes: Mapping[str, torch.dtype] | None = None,
) -> dict[str, torch.Tensor]:
    """A tensor file of the checkpoint, after checking it against its recorded hash and, from
    its header before anything is allocated, its tensors against ``expected`` (name -> shape):
    each must be there with that shape and its dtype of ``dtypes`` (default: a float dtype),
    and (``exact``) nothing else. Only the tensors of ``expected`` are read (all, without it)."""
    directory = Path(directory)
    path = checked_file(directory, name, metadata)
    header = tensor_shapes(path)
    if expected is not None:
        problems = []
        for key, shape in expected.items():
            if key not in header:
                problems.append(f"{key} missing")
            elif header[key][0] != tuple(shape):
                problems.append(f"{key} has shape {list(header[key][0])}, the network needs {list(shape)}")
            elif header[key][1] not in ((_DTYPE_NAMES.get(dtypes[key], "?"),) if dtypes and key in dtypes else FLOAT_DTYPES):
                problems.append(f"{key} has dtype {header[key][1]}")
        if exact:
            problems += [f"{key} unexpected" for key in sorted(set(header) - set(expected))]
        if problems:
            raise CheckpointError(
                f"{path}: its tensors do not have the layout of the network the metadata describes: "
                + "; ".join(problems[:4]) + (f" (and {len(problems) - 4} more)" if len(problems) > 4 else "")
            )
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: f.get_tensor(k) for k in (header if expected is None else expected)}
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:  # pragma: no cover - checked above
        raise CheckpointError(f"{path} is corrupt: {str(error)[:200]}") from None


def check_settings(metadata: dict[str, Any], settings: dict[str, Any], directory: str | os.PathLike) -> None:
    """Refuse a checkpoint trained for other game settings than ``settings``."""
    trained = make_settings(**metadata["settings"]).to_dict()
    differ = {k: (trained.get(k), v) for k, v in settings.items() if trained.get(k) != v}
    if differ:
        details = ", ".join(f"{k}: trained {a!r}, asked {b!r}" for k, (a, b) in sorted(differ.items()))
        raise CheckpointError(f"{directory} was trained for other game settings ({details})")


def network_shapes(build: Callable[[], torch.nn.Module]) -> dict[str, tuple[int, ...]]:
    """The state-dict shapes of the network ``build()`` makes, built on the meta device (no
    memory allocated, whatever the sizes)."""
    with torch.device("meta"):
        return {k: tuple(v.shape) for k, v in build().state_dict().items()}


def solved_claims_metadata(capture_value: float, last_deal_capture_value: float | None = None) -> dict[str, Any]:
    """The metadata fields of a policy whose claims and answers are solved
    (:class:`~training.trainer.claim_game.SolvedClaims`): ``solved_claims``,
    ``claim_capture_value`` and, where the last deal has a value of its own,
    ``claim_capture_value_last_deal``."""
    fields: dict[str, Any] = {"solved_claims": True, "claim_capture_value": float(capture_value)}
    if last_deal_capture_value is not None:
        fields["claim_capture_value_last_deal"] = float(last_deal_capture_value)
    return fields


def network_of(metadata: Mapping[str, Any]) -> torch.nn.Module:
    """The policy network (:class:`~training.trainer.network.PolicyNetwork`, untrained) that a
    checkpoint's checked ``metadata`` describes: its game's layout, ``hidden_sizes``,
    ``answer_hidden_sizes`` and ``claim_hidden_sizes`` (absent in checkpoints without such a
    head), ``average_heads`` (absent but in the policy of a fictitious-play run),
    ``solved_claims``, ``claim_capture_value`` and ``claim_capture_value_last_deal`` (absent but
    where R29's claim game is played solved)."""
    from .network import policy_network

    return policy_network(
        make_settings(**metadata["settings"]), metadata["hidden_sizes"], metadata.get("answer_hidden_sizes", ()),
        metadata.get("claim_hidden_sizes", ()), metadata.get("average_heads", 0), metadata.get("solved_claims", False),
        metadata.get("claim_capture_value", 0.0), metadata.get("claim_capture_value_last_deal"),
    )


def load_policy_weights(
    directory: str | os.PathLike, settings: Settings | Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The checked metadata and the policy network's weights (state-dict keys without the
    ``policy.`` prefix) of a checkpoint: the one reader of policy weights (``load_policy``,
    a warm start). In order: the metadata's schema; the game (``settings``, if given: every
    setting but the match context must be the checkpoint's); the weights' hash; their shapes,
    from the header, against the policy network the metadata describes; then only the policy's
    tensors are read. Raises :class:`CheckpointError`."""
    metadata = read_metadata(directory)
    if settings is not None:
        wanted = (settings if isinstance(settings, Settings) else make_settings(**settings)).to_dict()
        check_settings(metadata, {k: wanted[k] for k in GAME_DEFINING}, directory)
    shapes = network_shapes(lambda: network_of(metadata))
    weights = load_tensors(directory, MODEL_FILE, metadata, {f"policy.{k}": v for k, v in shapes.items()}, exact=False)
    return metadata, {k.removeprefix("policy."): v for k, v in weights.items()}
