"""A checkpoint's ``metadata.json``: its schema, read as untrusted input.

Size-bounded, parsed without NaN or infinities, then checked field by field (types, ranges,
bounded network sizes, the game settings, the observation size those settings give) before
anything is built from it. The network fields are a ``pisti_env.policies.spec.NetworkSpec``
(``pisti_env.policies.spec.NetworkSpec.from_metadata`` checks them); the training fields
(``trainer``, ``log_sizes``) are checked here too, shallowly (the trainer checks the rest of
``trainer`` when it resumes: ``training.trainer.metadata.validate_trainer_metadata``). Every
failure is a ``CheckpointError`` naming the file and the field.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import os
from pathlib import Path
from typing import Any

from pisti_env.views.observation import OBS_VERSION, ObservationLayout
from pisti_env.rules.settings import Settings, make_settings

from ..util.regular_files import read_regular
from .spec import OPTIONAL as SPEC_OPTIONAL, NetworkSpec, SpecError
from .spec import check_hidden_sizes as spec_hidden_sizes

FORMAT = "pisti-checkpoint"
FORMAT_VERSION = 2  # 2: separate policy and value networks (keys policy.*, value.*)
MODEL_FILE = "model.safetensors"
TRAINER_FILE = "trainer.safetensors"
METADATA_FILE = "metadata.json"

# Bounds of what a checkpoint may ask to be built (a forged one must not exhaust memory).
MAX_METADATA_BYTES = 1 << 20
MAX_TEXT = 4096  # characters of a name or version string
MAX_COUNT = 1 << 62  # steps, updates, games
# The settings only of the match context (which the policy sees in its observation); every
# other field of Settings changes the game a policy was trained for.
MATCH_CONTEXT = ("target", "win_margin")
GAME_DEFINING = tuple(f.name for f in dataclasses.fields(Settings) if f.name not in MATCH_CONTEXT)
# A run's log files whose sizes a checkpoint records (OUT-relative, nothing else): the metadata's
# ``log_sizes`` keys (the run directory's layout, ``training.trainer.run_layout``, names them too).
LOG_FILE = re.compile(r"metrics\.csv|tensorboard/events\.out\.tfevents\.[A-Za-z0-9._-]{1,200}")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for other settings or another encoding."""


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
    """Hidden-layer widths within the bounds a checkpoint may hold
    (``pisti_env.policies.spec.check_hidden_sizes``); a ``CheckpointError`` naming
    ``path`` and ``field`` (``path`` given) or the ``ValueError`` otherwise."""
    try:
        return spec_hidden_sizes(value, field)
    except SpecError as error:
        if path is None:
            raise
        raise _fail(path, field, error.problem) from None


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
                    *SPEC_OPTIONAL}
MAX_WORLD = 65_536  # processes of a distributed run whose checkpoint we read (rank 0 saves its share of the games)
_REQUIRED_FIELDS = {"format", "format_version", "obs_version", "settings", "observation_size", "card_features",
                    "hidden_sizes", "files"}

# How a loaded policy chooses by default (pisti_env.policies.player.CheckpointPlayer): the most
# likely legal action, a draw from its distribution, or R29's mixed decisions drawn and the card
# chosen.
PLAY_MODES = ("argmax", "sample", "sample_bluffs")


def play_mode(settings: Any) -> str:
    """How a policy trained for ``settings`` (a ``pisti_env.rules.Settings``) plays:
    ``"sample_bluffs"`` in the bluff variant, where R29's claims and answers are mixed
    decisions and any pure choice there is exploitable; ``"argmax"`` otherwise."""
    return "sample_bluffs" if settings.bluff else "argmax"


def check_play(play: Any, where: str = "") -> str:
    """``play`` if it is one of ``PLAY_MODES``, else a ``ValueError`` naming them
    (``where``, e.g. ``" for checkpoint 'runs/x'"``, says whose)."""
    if play not in PLAY_MODES:
        raise ValueError(f"play must be one of {list(PLAY_MODES)}{where}, got {play!r}")
    return play


def validate_metadata(metadata: Any, path: Path) -> dict[str, Any]:
    """``metadata`` (parsed ``metadata.json`` at ``path``) checked against the schema: the
    fields above with their types and ranges, the settings a valid game, ``observation_size``
    and ``card_features`` those of the settings' encoding, ``hidden_sizes`` bounded; the
    optional ``config``, ``trainer`` and ``log_sizes`` shallowly (``validate_trainer_metadata``
    for the rest, when resuming). Returns it; raises ``CheckpointError`` naming the field."""
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
    NetworkSpec.from_metadata(metadata, path)  # hidden_sizes and the research heads' options
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


# ---------------------------------------------------------------------- reading
def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses as infinity: as corrupt as a NaN
        raise ValueError(f"{text[:40]} is beyond the range of a float")
    return value


def read_metadata(directory: str | os.PathLike) -> dict[str, Any]:
    """The metadata of a checkpoint directory, size-bounded, parsed and checked against the
    schema (``validate_metadata``); raises ``CheckpointError`` naming the file and the
    field."""
    directory = Path(directory)
    path = directory / METADATA_FILE
    if not os.path.lexists(path):
        raise CheckpointError(f"{directory} is not a checkpoint: no {METADATA_FILE} in it")
    return validate_metadata(read_json(path), path)


def read_json(path: Path) -> Any:
    """A checkpoint's or a run's JSON file, read as untrusted: a regular file (never through a
    link), at most ``MAX_METADATA_BYTES``, UTF-8, no NaN or infinity (``1e400`` included);
    any failure a ``CheckpointError`` naming the file."""
    data = read_regular(path, MAX_METADATA_BYTES, CheckpointError)
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:  # JSONDecodeError is a ValueError
        message = "nested too deeply" if isinstance(error, RecursionError) else str(error)[:200]
        raise CheckpointError(f"{path} is corrupt: {message}") from None

