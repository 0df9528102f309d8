"""The trainer state a training checkpoint holds, declared once.

:func:`collect_state` is the one description of it: ``trainer.safetensors`` holds

* ``optimizer.{i}.{step,exp_avg,exp_avg_sq}``: Adam's moments per trainable parameter;
* ``engine.{field}``: the batched engine's :class:`~pisti_env.batched.BatchState`;
* ``collector.controller``, ``collector.episode_return`` and the seat controller's tensors;
* ``generator`` and ``torch_rng``: the sampling generator and torch's global generator;
* ``pool.{i}.*``: the weights of each snapshot in the opponent pool; ``magnet.*``: the magnet;
* each extension's tensors (:meth:`~training.trainer.extension.TrainerExtension.state`);

and the metadata's ``trainer`` entry the plain values: the optimizer's parameter group, the
pool's entries (name, margin, games, snapshot) and each extension's plain state. A resume
checks a checkpoint against :func:`state_layout` (what a fresh trainer of the same config
would write, derived from :func:`collect_state`) before reading it, then :func:`restore_state`
puts it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

import torch

from pisti_env.batched import BatchState

from .metadata import CheckpointError
from .pool import Opponent

if TYPE_CHECKING:  # pragma: no cover
    from .train import Trainer

_PER_RUN = ("optimizer.", "pool.")  # tensors whose layout depends on the saved run, not on the config


def collect_state(trainer: "Trainer") -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """(tensors, plain values) of the trainer's state; see the module docstring."""
    tensors: dict[str, torch.Tensor] = {}
    optimizer = trainer.optimizer.state_dict()
    for index, state in optimizer["state"].items():
        for key, value in state.items():
            tensors[f"optimizer.{index}.{key}"] = torch.as_tensor(value)
    for field in BatchState.__dataclass_fields__:
        tensors[f"engine.{field}"] = getattr(trainer.engine.state, field)
    tensors["collector.controller"] = trainer.collector.controller
    tensors["collector.episode_return"] = trainer.collector.episode_return
    if trainer.collector.seats is not None:
        tensors.update(trainer.collector.seats.state())
    tensors["generator"] = trainer.generator.get_state()
    tensors["torch_rng"] = torch.get_rng_state()
    entries = []
    for i, entry in enumerate(trainer.pool.entries):
        entries.append({"name": entry.name, "margin": entry.margin, "games": entry.games, "snapshot": entry.network is not None})
        if entry.network is not None:
            for key, value in entry.network.state_dict().items():
                tensors[f"pool.{i}.{key}"] = value
    if trainer.magnet is not None:
        tensors.update({f"magnet.{key}": value for key, value in trainer.magnet.state_dict().items()})
    extra: dict[str, Any] = {"optimizer_param_groups": optimizer["param_groups"], "pool": entries}
    for extension in trainer.extensions:
        own, plain = extension.state()
        tensors.update(own)
        if extension.state_key is not None and plain is not None:
            extra[extension.state_key] = plain
    return tensors, extra


def state_layout(
    trainer: "Trainer", extra: Mapping[str, Any], with_optimizer: bool, games: int | None = None,
) -> tuple[dict[str, tuple[int, ...]], dict[str, torch.dtype]]:
    """The (shape, dtype) of every tensor a checkpoint's trainer state must hold for
    ``trainer`` (fresh, of the checkpoint's config) given the saved plain values ``extra``:
    its own state's (engine, collector, generators, magnet), the optimizer's moments (if
    ``with_optimizer``: none before the first update), a policy's per snapshot of the saved
    pool, and each extension's for its saved plain state. ``games``: the saved games in flight
    (the batch of the engine and collector tensors), if not this trainer's (a distributed run's
    checkpoint holds rank 0's share)."""
    fresh, _ = collect_state(trainer)
    extension_keys = set()
    for extension in trainer.extensions:
        extension_keys |= set(extension.state()[0])
    layout = {k: (tuple(v.shape), v.dtype) for k, v in fresh.items()
              if not k.startswith(_PER_RUN) and k not in extension_keys}
    for extension in trainer.extensions:
        saved = extra.get(extension.state_key) if extension.state_key else None
        layout.update({k: (shape, torch.float32) for k, shape in extension.state_layout(saved).items()})
    if games is not None:
        for k, (shape, dtype) in layout.items():
            if k.startswith(("engine.", "collector.")):
                layout[k] = ((games, *shape[1:]), dtype)
    if with_optimizer:
        for index, parameter in enumerate(trainer.trainable):
            layout[f"optimizer.{index}.step"] = ((), torch.float32)
            layout[f"optimizer.{index}.exp_avg"] = (tuple(parameter.shape), torch.float32)
            layout[f"optimizer.{index}.exp_avg_sq"] = (tuple(parameter.shape), torch.float32)
    policy = {k: (tuple(v.shape), v.dtype) for k, v in trainer.network.policy.state_dict().items()}
    for i, entry in enumerate(extra["pool"]):
        if entry["snapshot"]:
            layout.update({f"pool.{i}.{k}": v for k, v in policy.items()})
    return {k: shape for k, (shape, _) in layout.items()}, {k: dtype for k, (_, dtype) in layout.items()}


def restore_state(trainer: "Trainer", tensors: Mapping[str, torch.Tensor], extra: Mapping[str, Any], path: Any) -> None:
    """Put checked trainer-state ``tensors`` and plain values ``extra`` (of the metadata file
    ``path``) back into ``trainer``."""
    optimizer_state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("optimizer."):
            _, index, name = key.split(".", 2)
            optimizer_state.setdefault(int(index), {})[name] = value
    trainer.optimizer.load_state_dict({"state": optimizer_state, "param_groups": extra["optimizer_param_groups"]})
    if trainer.shard.keeps_games(int(tensors["engine.slot"].shape[0]), trainer.engine.batch_size):
        trainer.engine.state = BatchState(
            **{f: tensors[f"engine.{f}"].to(trainer.device) for f in BatchState.__dataclass_fields__}
        )
        trainer.collector.resume_from(trainer.engine.state, tensors["collector.controller"],
                                      tensors["collector.episode_return"])
        if trainer.collector.seats is not None:
            trainer.collector.seats.restore(tensors)
        trainer.generator.set_state(tensors["generator"])
        torch.set_rng_state(tensors["torch_rng"])
    if trainer.magnet is not None:
        trainer.magnet.load_state_dict({k.removeprefix("magnet."): v for k, v in tensors.items() if k.startswith("magnet.")})
    for extension in trainer.extensions:
        extension.restore(tensors, extra.get(extension.state_key) if extension.state_key else None)
    _restore_pool(trainer, tensors, extra["pool"], path)


def _restore_pool(trainer: "Trainer", tensors: Mapping[str, torch.Tensor], pool: Sequence[Mapping[str, Any]], path: Any) -> None:
    trainer.pool.entries = []
    for i, entry in enumerate(pool):
        if entry["snapshot"]:
            player = trainer.pool.snapshot_player(trainer.network.policy, entry["name"])
            player.network.load_state_dict({k.split(".", 2)[2]: v for k, v in tensors.items() if k.startswith(f"pool.{i}.")})
            player.network.requires_grad_(False)
        else:
            try:
                player = trainer.pool.baseline(entry["name"])
            except (ValueError, TypeError) as error:
                raise CheckpointError(f"{path}: field 'trainer.pool[{i}].name': {error}") from None
        trainer.pool.entries.append(Opponent(entry["name"], player, entry["margin"], entry["games"], entry["snapshot"]))
