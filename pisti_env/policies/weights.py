"""A checkpoint's tensor files, read only after checks.

A checkpoint is a directory: ``model.safetensors`` (the networks' weights; a policy
checkpoint holds the policy's alone), ``trainer.safetensors`` (training checkpoints only) and
``metadata.json`` (``pisti_env.policies.metadata``), with the SHA-256 of each tensor file.
Nothing is ever unpickled. ``load_tensors`` checks a file's hash, then its tensors' names,
shapes and dtypes from the header, before anything is allocated; ``load_policy_weights``
is the one reader of policy weights (``load_policy``, the trainer's warm starts). The trainer
writes checkpoints (``training.trainer.weights.save_checkpoint``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import torch
from safetensors import SafetensorError, safe_open

from ..util.regular_files import regular_file, sha256
from ..rules.settings import Settings, make_settings
from .metadata import GAME_DEFINING, METADATA_FILE, MODEL_FILE, CheckpointError, read_metadata
from .network import PolicyNetwork
from .spec import NetworkSpec

FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")
_DTYPE_NAMES = {  # torch dtype -> its name in a safetensors header
    torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64", torch.int64: "I64",
    torch.int32: "I32", torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}


def non_finite(tensors: "dict[str, object]") -> str | None:
    """The name of the first floating-point tensor of ``tensors`` holding NaN or infinity
    (``None`` when all are finite)."""
    floats = {name: v for name, v in tensors.items() if isinstance(v, torch.Tensor) and v.is_floating_point()}
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for value in floats.values():
        by_device.setdefault(value.device, []).append(torch.isfinite(value).all())
    # One host-device sync per device on the common path (all finite), not one per tensor.
    if all(bool(torch.stack(flags).all()) for flags in by_device.values()):
        return None
    return next(name for name, value in floats.items() if not bool(torch.isfinite(value).all()))


def checked_file(directory: str | os.PathLike, name: str, metadata: dict[str, Any]) -> Path:
    """The path of a checkpoint's tensor file ``name``, after checking it against its recorded hash."""
    directory = Path(directory)
    path = directory / name
    expected = metadata["files"].get(name)
    if expected is None or not os.path.lexists(path):
        raise CheckpointError(f"{directory} has no {name}")
    regular_file(path, CheckpointError)  # never through a link (it could lead anywhere) or from a FIFO
    try:
        digest = sha256(path)
    except OSError as error:
        raise CheckpointError(f"{path} cannot be read ({error.strerror or error})") from None
    if digest != expected:
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
            tensors = {k: f.get_tensor(k) for k in (header if expected is None else expected)}
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:  # pragma: no cover - checked above
        raise CheckpointError(f"{path} is corrupt: {str(error)[:200]}") from None
    bad = non_finite(tensors)
    if bad is not None:  # a diverged run's weights: refused here, not met later as "illegal action 0"
        raise CheckpointError(f"{path}: tensor {bad} holds NaN or infinity (the weights of a run that diverged?)")
    return tensors


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


def load_policy_weights(
    directory: str | os.PathLike, settings: Settings | Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The checked metadata and the policy network's weights (state-dict keys without the
    ``policy.`` prefix) of a checkpoint: the one reader of policy weights (``load_policy``,
    a warm start). In order: the metadata's schema; the game (``settings``, if given: every
    setting but the match context must be the checkpoint's); the weights' hash; their shapes,
    from the header, against the policy network the metadata describes; then only the policy's
    tensors are read. Raises ``CheckpointError``."""
    metadata = read_metadata(directory)
    if settings is not None:
        wanted = (settings if isinstance(settings, Settings) else make_settings(**settings)).to_dict()
        check_settings(metadata, {k: wanted[k] for k in GAME_DEFINING}, directory)
    spec = NetworkSpec.from_metadata(metadata, Path(directory) / METADATA_FILE)
    shapes = network_shapes(lambda: PolicyNetwork(spec))
    weights = load_tensors(directory, MODEL_FILE, metadata, {f"policy.{k}": v for k, v in shapes.items()}, exact=False)
    return metadata, {k.removeprefix("policy."): v for k, v in weights.items()}
