"""Checkpoints: weights in safetensors, everything else in JSON; nothing is ever unpickled.

A checkpoint is a directory:

* ``model.safetensors``: the policy's weights (all that playing needs);
* ``trainer.safetensors`` (training checkpoints only): optimizer moments, the batched
  engine's state, the collector's controllers, the pool's snapshots, the random generator;
* ``metadata.json``, written last: format and observation-encoding versions, game settings,
  network shape, training step, config, the small non-tensor state, and the SHA-256 of each
  tensor file. A checkpoint whose files do not match their hashes is refused, so a write
  killed half-way never loads as a good checkpoint.

Every file is written to a temporary name and moved into place (atomic on POSIX), and
metadata.json moves last.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from pisti_env.observation import OBS_VERSION

FORMAT = "pisti-checkpoint"
FORMAT_VERSION = 2  # 2: separate policy and value networks (keys policy.*, value.*)
MODEL_FILE = "model.safetensors"
TRAINER_FILE = "trainer.safetensors"
METADATA_FILE = "metadata.json"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for other settings or another encoding."""


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it owner-only; a checkpoint is shared like any file
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


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


def save_checkpoint(
    directory: str | os.PathLike,
    model_state: dict[str, torch.Tensor],
    metadata: dict[str, Any],
    trainer_state: dict[str, torch.Tensor] | None = None,
) -> Path:
    """Write a checkpoint directory (see the module docstring); returns its path.

    ``metadata`` must hold ``settings`` (the game settings), ``observation_size`` and
    ``hidden_sizes``; the format fields and file hashes are added here.
    """
    directory = Path(directory)
    files = {MODEL_FILE: model_state}
    if trainer_state is not None:
        files[TRAINER_FILE] = trainer_state
    hashes = {}
    for name, tensors in files.items():
        plain = {k: v.detach().to("cpu").contiguous().clone() for k, v in tensors.items()}
        _atomic_write(directory / name, lambda tmp, plain=plain: save_file(plain, tmp))
        hashes[name] = _sha256(directory / name)
    if trainer_state is None and (directory / TRAINER_FILE).exists():
        os.unlink(directory / TRAINER_FILE)  # a policy-only checkpoint has no stale trainer state
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, "obs_version": OBS_VERSION, **metadata, "files": hashes}

    def write_json(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(full, f, indent=2, sort_keys=True)

    _atomic_write(directory / METADATA_FILE, write_json)
    return directory


def read_metadata(directory: str | os.PathLike) -> dict[str, Any]:
    """The checked metadata of a checkpoint (format, versions, file hashes)."""
    directory = Path(directory)
    path = directory / METADATA_FILE
    if not path.is_file():
        raise CheckpointError(f"{directory} is not a checkpoint: no {METADATA_FILE} in it")
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{path} is corrupt: {error}") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a pisti checkpoint (format {metadata.get('format')!r})")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{directory}: checkpoint format version {metadata.get('format_version')} is not supported "
            f"(this version reads {FORMAT_VERSION})"
        )
    if metadata.get("obs_version") != OBS_VERSION:
        raise CheckpointError(
            f"{directory} was trained on observation encoding version {metadata.get('obs_version')}, "
            f"but this pisti_env encodes version {OBS_VERSION}: the policy would misread its inputs"
        )
    return metadata


def load_tensors(directory: str | os.PathLike, name: str, metadata: dict[str, Any]) -> dict[str, torch.Tensor]:
    """A tensor file of the checkpoint, after checking it against its recorded hash."""
    directory = Path(directory)
    path = directory / name
    expected = metadata.get("files", {}).get(name)
    if expected is None or not path.is_file():
        raise CheckpointError(f"{directory} has no {name}")
    if _sha256(path) != expected:
        raise CheckpointError(f"{path} does not match its recorded hash: the checkpoint is corrupt or incomplete")
    try:
        return load_file(path)
    except (SafetensorError, OSError) as error:  # pragma: no cover - the hash check comes first
        raise CheckpointError(f"{path} is corrupt: {error}") from None


def check_settings(metadata: dict[str, Any], settings: dict[str, Any], directory: str | os.PathLike) -> None:
    """Refuse a checkpoint trained for other game settings than ``settings``."""
    trained = metadata.get("settings", {})
    differ = {k: (trained.get(k), v) for k, v in settings.items() if trained.get(k) != v}
    if differ:
        details = ", ".join(f"{k}: trained {a!r}, asked {b!r}" for k, (a, b) in sorted(differ.items()))
        raise CheckpointError(f"{directory} was trained for other game settings ({details})")
