"""A checkpoint's tensor files: written atomically with their hashes, read only after checks.

A checkpoint is a directory: ``model.safetensors`` (the networks' weights; a policy
checkpoint holds the policy's alone), ``trainer.safetensors`` (training checkpoints only:
everything `training.trainer.state` declares) and ``metadata.json``
(`pisti_env.policies.metadata`), with the SHA-256 of each tensor file. Nothing is ever
unpickled. `save_checkpoint` writes the directory whole (`training.trainer.atomic`);
`verify_checkpoint` checks a complete one. The readers live in
`pisti_env.policies.weights` (the policy loader needs them without the trainer) and are
re-exported here: `load_tensors` checks a file's hash, then its tensors' names, shapes
and dtypes from the header, before anything is allocated; `load_policy_weights` is the
one reader of policy weights (``load_policy``, warm starts).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import save_file

from pisti_env.views.observation import OBS_VERSION
from pisti_env.policies.metadata import (
    FORMAT, FORMAT_VERSION, METADATA_FILE, MODEL_FILE, TRAINER_FILE, CheckpointError, read_metadata,
)
from pisti_env.policies.weights import (  # noqa: F401 - re-exported: the readers' home
    _DTYPE_NAMES, FLOAT_DTYPES, check_settings, checked_file, load_policy_weights, load_tensors, network_shapes,
    non_finite, tensor_shapes,
)

from .atomic import fsync_dir, publish_directory, remove_strays, sha256, umask, write_atomic

__all__ = [
    "FLOAT_DTYPES", "check_settings", "checked_file", "load_policy_weights", "load_tensors", "network_shapes",
    "save_checkpoint", "tensor_shapes", "verify_checkpoint",
]


def save_checkpoint(
    directory: str | os.PathLike,
    model_state: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    trainer_state: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Write a checkpoint directory (see the module docstring); returns its path.

    The files are written and flushed in a fresh temporary directory beside ``directory``,
    which is then renamed to ``directory`` (a symbolic link there is replaced in one rename, an
    existing directory exchanged with it in one step where the system can, see `publish_directory`). ``metadata`` must hold
    ``settings`` (the game settings), ``observation_size``, ``card_features`` and
    ``hidden_sizes``; the format fields and file hashes are added here.
    """
    directory = Path(directory)
    files = {MODEL_FILE: model_state, **({TRAINER_FILE: trainer_state} if trainer_state is not None else {})}
    for name, tensors in files.items():
        bad = non_finite(tensors)
        if bad is not None:  # never publish a checkpoint no reader would accept
            raise ValueError(f"{directory} not written: {bad} of its {name} holds NaN or infinity")
    try:
        _write_checkpoint(directory, files, metadata)
    except (OSError, SafetensorError) as error:  # named by the checkpoint, not by its temporary directory
        code = getattr(error, "errno", None) or _errno_in(str(error))
        reason = getattr(error, "strerror", None) or (os.strerror(code) if code else str(error)[:200])
        raise OSError(code, reason, str(directory)) from None
    return directory


def _errno_in(text: str) -> int | None:
    """The OS error number inside a safetensors error's text (``... (os error 28)``)."""
    found = re.search(r"(?:os error |code: )(\d+)", text)
    return int(found.group(1)) if found else None


def _write_checkpoint(directory: Path, files: dict[str, dict[str, torch.Tensor]], metadata: dict[str, Any]) -> None:
    directory.parent.mkdir(parents=True, exist_ok=True)
    remove_strays(directory.parent, directory.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
    try:
        os.chmod(tmp, 0o777 & ~umask())
        hashes = {}
        for name, tensors in files.items():
            plain = {k: v.detach().to("cpu").contiguous().clone() for k, v in tensors.items()}
            write_atomic(tmp / name, lambda path, plain=plain: save_file(plain, path))
            hashes[name] = sha256(tmp / name)
        full = {"format": FORMAT, "format_version": FORMAT_VERSION, "obs_version": OBS_VERSION, **metadata, "files": hashes}

        def write_json(path: str) -> None:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(full, f, indent=2, sort_keys=True)

        write_atomic(tmp / METADATA_FILE, write_json)
        fsync_dir(tmp)
        publish_directory(tmp, directory)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def verify_checkpoint(directory: str | os.PathLike, trainer_state: bool = False) -> dict[str, Any]:
    """The checked metadata of a complete checkpoint: the schema, and every tensor file's hash
    (``trainer_state``: it must hold one). Raises [`CheckpointError`][pisti_env.policies.metadata.CheckpointError]."""
    metadata = read_metadata(directory)
    if trainer_state and TRAINER_FILE not in metadata["files"]:
        raise CheckpointError(f"{Path(directory) / METADATA_FILE}: field 'files': no {TRAINER_FILE} (a policy-only checkpoint)")
    for name in metadata["files"]:
        checked_file(Path(directory), name, metadata)
    return metadata
