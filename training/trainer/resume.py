"""Resuming a run from a training checkpoint: the one place where a resume reads and checks it.

`resume_trainer` reads a checkpoint in this order, checking each part before anything is
built from it: the metadata's schema (`read_metadata`); the
saved config (`saved_config`: a valid [`TrainConfig`][training.trainer.config.TrainConfig] of the checkpoint's game and
widths) with the changes asked for (`resume_config`: only
`RESUMABLE` fields may change), its device
(`check_device`) and the checkpoint paths among its players (`check_saved_players`:
loaded only when the command line names them); the trainer metadata
(`validate_trainer_metadata`, its counters cross-checked by
`check_counters`, and each extension's
`check_state`); the weights' and the trainer
state's shapes, from the files' headers, against what this config builds
(`state_layout`); then the tensors (finite), their values
(`check_state_values`), and
`restore_state`. Nothing here writes a file: a refused resume
leaves the run as it was. `restart_config` reads the config a run without a checkpoint
starts again from.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import torch

from pisti_env.batched import BatchedPisti
from pisti_env.tools.flags import torch_device
from pisti_env.policies.metadata import (
    METADATA_FILE, MODEL_FILE, TRAINER_FILE, CheckpointError, read_json, read_metadata,
)
from pisti_env.policies.weights import checked_file, load_tensors, network_shapes, tensor_shapes
from pisti_env.rules.settings import Settings, make_settings

from .config import RESUMABLE, TrainConfig, flag
from .distributed import LOCAL, Shard
from .extension import extensions_for
from .metadata import validate_trainer_metadata
from .network import ActorCritic, resolve_precision
from .state import check_state_values, restore_state, state_layout

if TYPE_CHECKING:  # pragma: no cover
    from .train import Trainer


def resume_trainer(
    cls: type["Trainer"],
    directory: str | os.PathLike,
    total_steps: int | None = None,
    changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
) -> "Trainer":
    """A trainer (of class ``cls``) in exactly the state a checkpoint saved, with its own config.

    Args:
        directory: a training checkpoint (with ``trainer.safetensors``).
        total_steps: extends the run's budget (the learning rate then anneals to 0 over the
            new total, from where the new schedule stands); by default the saved run's own
            budget stands. Less than already trained: ``ValueError``.
        changes: config or game-setting values asked for (flags given with ``--resume``);
            only the fields of `RESUMABLE` may differ from
            the checkpoint's (`resume_config`), any other difference is a
            ``ValueError`` naming them.
        shard: a rank of a distributed run (`training.trainer.distributed`;
            `keeps_games` says whose games in
            flight come back: a distributed run's checkpoint holds rank 0's share).

    Every failure is a [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the file and the field (see the module
    docstring for the order of the checks).
    """
    directory = Path(directory)
    metadata = read_metadata(directory)
    path = directory / METADATA_FILE
    saved = saved_config(metadata, path)
    if total_steps is not None:
        changes = {**(changes or {}), "total_steps": total_steps}
    changes = changes or {}
    config = resume_config(saved, changes, metadata.get("step", 0), directory)
    check_device(config.device, path)
    check_saved_players(config, changes, path)
    # The networks this config builds, on the meta device, against the weights' header.
    hidden_information = BatchedPisti(1, **config.settings.to_dict()).hidden_information_size
    spec = config.network_spec()
    shapes = network_shapes(lambda: ActorCritic(spec, hidden_information if config.privileged_value else 0,
                                                config.value_hidden_sizes))
    extensions = extensions_for(config)
    trained = sum(all(extension.trains(k) for extension in extensions) for k in shapes)
    extra = validate_trainer_metadata(metadata, path, trained)
    check_counters(metadata, saved, extra, path)
    for extension in extensions:
        extension.check_state(extra.get(extension.state_key) if extension.state_key else None, path)
    # The engine's batch (the only size the trainer state sets) before the engine is built:
    # the config's num_envs, shared by the run's processes (a distributed run saves rank 0's share).
    state_header = tensor_shapes(checked_file(directory, TRAINER_FILE, metadata))
    batch = {shape[0] if shape else None for key, (shape, _) in state_header.items() if key.startswith("engine.")}
    saved_games = next(iter(batch)) if len(batch) == 1 else None
    if saved_games is None or saved_games * metadata.get("world", 1) != config.num_envs:
        raise CheckpointError(
            f"{directory / TRAINER_FILE}: its engine state is not for num_envs={config.num_envs} (the config's, "
            "or a rank's share of it)"
        )
    weights = load_tensors(directory, MODEL_FILE, metadata, shapes)
    shard = (shard or LOCAL).resumed(int(metadata["update"]))
    trainer = cls(config, shard=shard, from_checkpoint=True)
    trainer.network.load_state_dict(weights)
    expected, dtypes = state_layout(trainer, extra, any(k.startswith("optimizer.") for k in state_header), saved_games)
    if torch.device(saved.device).type != trainer.device.type and "generator" in state_header:
        expected["generator"] = state_header["generator"][0]  # another device type's generator (restore_state reseeds)
    tensors = load_tensors(directory, TRAINER_FILE, metadata, expected, dtypes=dtypes)
    check_state_values(trainer, tensors, int(metadata["update"]), len(extra["pool"]), path)
    restore_state(trainer, tensors, extra, path)
    trainer.step = int(metadata["step"])
    trainer.update = int(metadata["update"])
    return trainer


def check_device(device: str, path: Path) -> None:
    """Refuse a device this machine does not have (``device: "cuda:7"`` saved by a GPU run,
    resumed on a CPU) before anything is built on it, suggesting ``--device``."""
    try:
        torch_device(device)
    except argparse.ArgumentTypeError as error:
        raise CheckpointError(
            f"{path}: field 'config.device': {error}: continue the run on another device with --resume --device cpu "
            "(or another device this machine has)"
        ) from None


def check_saved_players(config: TrainConfig, given: Mapping[str, Any], path: Path,
                        fields: tuple[str, ...] = ("baselines", "eval_baselines")) -> None:
    """Refuse to load a checkpoint path only saved in a run (``config.baselines`` or
    ``eval_baselines``; ``init_from`` when a run starts again from its config): a saved path
    could lead anywhere on the disk. Registered players and shipped policies are loaded by name;
    a checkpoint path only when the command line names it again (``given``: the values given
    with ``--resume``). Snapshots of the run itself are in its trainer state, not paths."""
    from pisti_env.agents import checkpoint_location
    from pisti_env.agents.registry import SHIPPED_POLICIES

    for field in fields:
        value = getattr(config, field)
        specs = value if isinstance(value, tuple) else (() if value is None else (value,))
        named = given.get(field)
        named = tuple(named) if isinstance(named, (list, tuple)) else (() if named is None else (named,))
        for spec in specs:
            if spec in named or spec.partition(":")[0].strip() in SHIPPED_POLICIES or checkpoint_location(spec) is None:
                continue
            raise CheckpointError(
                f"{path}: field 'config.{field}': {spec!r} is a checkpoint path saved in the run, and a resume loads "
                f"a checkpoint only when the command line names it: add {flag(field)} {' '.join(map(str, specs))} "
                "to continue with it"
            )


def check_counters(metadata: Mapping[str, Any], saved: TrainConfig, trainer: Mapping[str, Any], path: Path) -> None:
    """Cross-check a training checkpoint's counters against its config: ``step`` is ``update``
    rollouts of ``num_envs * rollout_steps`` decisions, ``update`` within the run's budget, the
    pool's baselines the config's and at most ``pool_size`` snapshots."""
    step, update, batch = metadata["step"], metadata["update"], saved.batch_decisions
    if update > max(1, saved.total_steps // batch):
        raise CheckpointError(f"{path}: field 'update': {update} updates, more than the run's budget of "
                              f"{max(1, saved.total_steps // batch)} (total_steps {saved.total_steps})")
    if step != update * batch:
        raise CheckpointError(f"{path}: field 'step': {step} steps is not {update} updates of {batch} decisions "
                              "(num_envs x rollout_steps)")
    pool = trainer["pool"]
    baselines = [entry["name"] for entry in pool if not entry["snapshot"]]
    if baselines != list(saved.baselines):
        raise CheckpointError(f"{path}: field 'trainer.pool': its baselines {baselines} are not the config's "
                              f"{list(saved.baselines)}")
    if len(pool) - len(baselines) > saved.pool_size:
        raise CheckpointError(f"{path}: field 'trainer.pool': {len(pool) - len(baselines)} snapshots, more than "
                              f"pool_size {saved.pool_size}")


def saved_config(metadata: Mapping[str, Any], path: Path) -> TrainConfig:
    """The config a training checkpoint (``path``: its metadata file) records, checked: a valid
    config, for the checkpoint's own game and network widths, within the sizes a checkpoint may
    hold. Raises [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the field."""
    if "config" not in metadata:
        raise CheckpointError(f"{path}: field 'config': missing (a training checkpoint records its config)")
    try:
        config = TrainConfig.from_dict(metadata["config"])
    except (ValueError, TypeError) as error:
        named = re.match(r"TrainConfig\.(\w+) ", str(error))  # the config's errors name their field
        raise CheckpointError(f"{path}: field 'config{'.' + named.group(1) if named else ''}': {error}") from None
    if config.settings.to_dict() != make_settings(**metadata["settings"]).to_dict():
        raise CheckpointError(f"{path}: field 'config.settings': not the checkpoint's settings")
    if list(config.hidden_sizes) != list(metadata["hidden_sizes"]):
        raise CheckpointError(f"{path}: field 'config.hidden_sizes': not the checkpoint's hidden_sizes")
    for field in ("answer_hidden_sizes", "claim_hidden_sizes"):
        if list(getattr(config, field)) != list(metadata.get(field, [])):
            raise CheckpointError(f"{path}: field 'config.{field}': not the checkpoint's {field}")
    return config


def resume_config(
    saved: TrainConfig, changes: Mapping[str, Any], trained_steps: int, directory: str | os.PathLike
) -> TrainConfig:
    """The config a resumed run continues with: ``saved`` (the checkpoint's) with ``changes``
    applied, config or game-setting names to the values asked for. Only the fields of
    `RESUMABLE` may change; a value of any other field that
    differs from the checkpoint's is a ``ValueError`` naming each such flag. ``total_steps``
    below ``trained_steps`` is a ``ValueError`` too."""
    game = {f.name for f in dataclasses.fields(Settings)}
    fields = {f.name for f in dataclasses.fields(TrainConfig)} - {"settings"}
    unknown = sorted(set(changes) - game - fields)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}")
    conflicts = []
    asked = {k: v for k, v in changes.items() if k in game}
    trained = saved.settings.to_dict()
    try:
        merged = make_settings(**{**trained, **asked}).to_dict()
    except (ValueError, TypeError):
        merged = {**trained, **asked}
    for key in sorted(asked):
        if merged[key] != trained[key]:
            conflicts.append(f"--{key.replace('_', '-')} {asked[key]!r} (the checkpoint's: {trained[key]!r})")
    values = {}
    for key in sorted(set(changes) & fields):
        value = tuple(changes[key]) if isinstance(changes[key], list) else changes[key]
        if key in RESUMABLE:
            values[key] = value
            continue
        if key == "precision" and value in ("auto", saved.precision):
            value = resolve_precision(value, saved.device)
        if value != getattr(saved, key):
            conflicts.append(f"{flag(key)} {value!r} (the checkpoint's: {getattr(saved, key)!r})")
    if conflicts:
        allowed = ", ".join(flag(k) for k in RESUMABLE)
        raise ValueError(
            f"--resume continues {directory} with its own settings and config; these flags contradict it: "
            f"{'; '.join(conflicts)}. Only {allowed} may change on resume (or start a new run with another --out)"
        )
    total = values.get("total_steps")
    if total is not None and total < trained_steps:
        raise ValueError(f"{directory} has trained {trained_steps} steps already: --steps {total} is less")
    return dataclasses.replace(saved, **values)


def restart_config(out: str | os.PathLike, changes: Mapping[str, Any]) -> TrainConfig:
    """The config to start a run again from when it holds no complete checkpoint (it stopped
    before its first): ``OUT/config.json``, read as untrusted input (`read_json`, a valid
    [`TrainConfig`][training.trainer.config.TrainConfig]), with ``changes`` as on any resume (`resume_config`), its device
    and saved checkpoint paths checked as a checkpoint's are. No ``config.json`` either is a
    [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] saying how to start afresh."""
    out = Path(out)
    path = out / "config.json"
    if not os.path.lexists(path):
        raise CheckpointError(
            f"--resume: {out} holds no complete checkpoint and no config.json to start the run again from: "
            "start a new run there with --fresh (it replaces what is there) or choose another --out"
        )
    values = read_json(path)
    try:
        if not isinstance(values, dict):
            raise TypeError(f"must be an object of config fields, got {type(values).__name__}")
        saved = TrainConfig.from_dict(values)
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{path}: {error}") from None
    config = resume_config(saved, changes, 0, out)
    check_device(config.device, path)
    check_saved_players(config, changes, path, ("baselines", "eval_baselines", "init_from"))
    return config
