"""A checkpoint's ``metadata.json``: its schema lives in `pisti_env.policies.metadata`
(the policy loader reads it, without the trainer) and is re-exported here for code that imports
it from here; what only a resume checks, the ``trainer`` field of a training checkpoint
(`validate_trainer_metadata`), is this module's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pisti_env.policies.metadata import (  # noqa: F401 - re-exported (the private checks: training.bluff's too)
    FORMAT, FORMAT_VERSION, GAME_DEFINING, LOG_FILE, MATCH_CONTEXT, MAX_COUNT, MAX_METADATA_BYTES, MAX_TEXT, MAX_WORLD,
    METADATA_FILE, MODEL_FILE, PLAY_MODES, TRAINER_FILE, CheckpointError, _brief, _fail, _integer, _mapping, _number,
    _sequence, _settings, _text, check_hidden_sizes, check_play, play_mode, read_json, read_metadata, validate_metadata,
)

__all__ = [
    "FORMAT", "FORMAT_VERSION", "GAME_DEFINING", "LOG_FILE", "MATCH_CONTEXT", "MAX_COUNT", "MAX_METADATA_BYTES",
    "MAX_TEXT", "MAX_WORLD", "METADATA_FILE", "MODEL_FILE", "PLAY_MODES", "TRAINER_FILE", "CheckpointError",
    "check_hidden_sizes", "check_play", "play_mode", "read_json", "read_metadata", "validate_metadata",
    "validate_trainer_metadata",
]


def validate_trainer_metadata(metadata: dict[str, Any], path: Path, num_params: int) -> dict[str, Any]:
    """The ``trainer`` field of a training checkpoint (``path``: its metadata file) checked:
    ``optimizer_param_groups`` (one group over ``num_params`` parameters) and the pool's
    entries (name, margin, games, snapshot); an extension's own entry is checked by the
    extension (`check_state`). Returns it."""
    if "trainer" not in metadata:
        raise CheckpointError(f"{path.parent} is a policy-only checkpoint: it cannot resume training")
    for key in ("step", "update"):  # their types and ranges: validate_metadata
        if key not in metadata:
            raise _fail(path, key, "missing (a training checkpoint records its steps and updates)")
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
    return trainer
