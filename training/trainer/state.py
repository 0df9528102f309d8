"""The trainer state a training checkpoint holds, declared once.

`collect_state` is the one description of it: ``trainer.safetensors`` holds

* ``optimizer.{i}.{step,exp_avg,exp_avg_sq}``: Adam's moments per trainable parameter;
* ``engine.{field}``: the batched engine's [`BatchState`][pisti_env.batched.state.BatchState];
* ``collector.controller``, ``collector.episode_return`` and the seat controller's tensors;
* ``generator`` and ``torch_rng``: the sampling generator and torch's global generator;
* ``pool.{i}.*``: the weights of each snapshot in the opponent pool; ``magnet.*``: the magnet;
* each extension's tensors (`state`);

and the metadata's ``trainer`` entry the plain values: the optimizer's parameter group, the
pool's entries (name, margin, games, snapshot) and each extension's plain state. A resume
checks a checkpoint against `state_layout` (what a fresh trainer of the same config
would write, derived from `collect_state`) before reading it, then `restore_state`
puts it back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import torch

from pisti_env.batched import BatchState
from pisti_env.batched.state import CODE_WIDTH
from pisti_env.rules.locations import NUM_LOCATIONS
from pisti_env.policies.metadata import CheckpointError

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


def check_state_values(
    trainer: "Trainer", tensors: Mapping[str, torch.Tensor], update: int, pool_entries: int, path: Any,
) -> None:
    """The values of trainer-state ``tensors`` whose layout is checked (`state_layout`),
    checked before any is put back: the random generators' states are states their generators
    take; every engine field within its range (card locations, seats, counters; ``slot`` the
    game numbers ``0..B-1``; each deck a deck of this game); the collector's controllers
    existing pool entries; Adam's step counts at most the optimizer steps ``update`` updates
    make, its second moments non-negative. (Every float tensor is finite: `load_tensors`.)
    Raises [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the file (``path``: its metadata file) and tensor."""
    file = Path(path).parent / "trainer.safetensors"

    def fail(key: str, problem: str) -> CheckpointError:
        return CheckpointError(f"{file}: tensor {key}: {problem}")

    for key, device in (("torch_rng", "cpu"), ("generator", trainer.generator.device)):
        if key == "generator" and tuple(tensors[key].shape) != tuple(trainer.generator.get_state().shape):
            continue  # another device type's generator: not put back (restore_state reseeds it)
        try:
            torch.Generator(device=device).set_state(tensors[key])
        except (RuntimeError, TypeError, ValueError) as error:
            raise fail(key, f"not a state of torch's random generator ({str(error)[:80]})") from None
    engine = trainer.engine
    n, games = engine.num_players, int(tensors["engine.slot"].shape[0])
    sides = int(tensors["engine.side_counts"].shape[-1])
    deck = engine.state.deck[:1].sort(1).values  # what every row of a deck of this game holds, in some order
    cards = int(deck.max()) + 1
    width = int(tensors["engine.deck"].shape[1])
    big = 1 << 40  # points and counters far beyond any match, far from int64's overflow
    bounds = {
        "code": (0, NUM_LOCATIONS * CODE_WIDTH - 1), "deck": (0, cards - 1), "stock_pos": (0, width),
        "turn": (0, n - 1), "dealer": (0, n - 1), "in_hands": (0, width), "hand_sizes": (0, width),
        "top": (0, cards - 1), "pile_size": (0, width), "pile_hidden": (0, width), "pile_points_public": (0, big),
        "pile_points_hidden": (0, big), "last_capturer": (-1, sides - 1), "side_counts": (-big, big),
        "reward_base": (-big, big), "hands_completed": (0, big), "episode": (0, big), "attempt": (0, big),
        "slot": (0, games - 1), "claimant": (-1, n - 1), "claim_card": (-1, cards - 1),
    }
    for field in BatchState.__dataclass_fields__:
        low, high = bounds[field]
        value = tensors[f"engine.{field}"]
        if value.numel() and (int(value.min()) < low or int(value.max()) > high):
            raise fail(f"engine.{field}", f"values must lie in {low}..{high}, found {int(value.min())}..{int(value.max())}")
    if not torch.equal(tensors["engine.slot"].cpu(), torch.arange(games)):
        raise fail("engine.slot", f"must number the games 0..{games - 1} in order")
    if not torch.equal(tensors["engine.deck"].cpu().sort(1).values, deck.cpu().expand(games, -1)):
        raise fail("engine.deck", "a row is not a deck of this game's cards")
    controller = tensors["collector.controller"]
    if controller.numel() and not -1 <= int(controller.min()) <= int(controller.max()) < max(pool_entries, 1):
        raise fail("collector.controller", f"names a pool entry the checkpoint does not hold ({pool_entries} entries)")
    steps = update * trainer.config.update_epochs * trainer.config.num_minibatches
    for key, value in tensors.items():
        if key.startswith("optimizer.") and key.endswith(".step"):
            if not (0 <= float(value) <= steps and float(value).is_integer()):
                raise fail(key, f"must be a whole number of optimizer steps, at most {steps} after {update} updates")
        elif key.startswith("optimizer.") and key.endswith(".exp_avg_sq") and value.numel() and float(value.min()) < 0:
            raise fail(key, "Adam's second moments cannot be negative")


def checked_param_groups(trainer: "Trainer", saved: Sequence[Mapping[str, Any]], path: Any) -> list[dict[str, Any]]:
    """The optimizer's parameter group to load: the fresh optimizer's own (its switches, as this
    torch sets them) with the saved numbers, each checked: ``lr`` within 0 and the config's
    ``learning_rate`` (the schedule only anneals it), ``eps`` positive, ``betas`` two numbers in
    [0, 1), ``weight_decay`` non-negative. Raises [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the field."""
    group = dict(trainer.optimizer.state_dict()["param_groups"][0])
    field = "trainer.optimizer_param_groups[0]"
    rate = trainer.config.learning_rate
    checks = {
        "lr": (lambda v: 0 <= v <= rate * (1 + 1e-9), f"a number in [0, {rate}] (the run's learning_rate, annealed)"),
        "eps": (lambda v: v > 0, "a number > 0"),
        "weight_decay": (lambda v: v >= 0, "a number >= 0"),
        "betas": (lambda v: len(v) == 2 and all(0 <= b < 1 for b in v), "two numbers in [0, 1)"),
    }
    for key, (ok, allowed) in checks.items():
        if key not in saved[0]:
            continue
        value = saved[0][key]
        numbers = value if isinstance(value, list) else [value]
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in numbers) or not ok(value):
            raise CheckpointError(f"{path}: field '{field}.{key}': must be {allowed}, got {value!r}")
        group[key] = tuple(value) if isinstance(value, list) else value
    return [group]


def restore_state(trainer: "Trainer", tensors: Mapping[str, torch.Tensor], extra: Mapping[str, Any], path: Any) -> None:
    """Put checked trainer-state ``tensors`` and plain values ``extra`` (of the metadata file
    ``path``) back into ``trainer`` (checked: `check_state_values`, done by the caller,
    and `checked_param_groups`)."""
    groups = checked_param_groups(trainer, extra["optimizer_param_groups"], path)
    optimizer_state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("optimizer."):
            _, index, name = key.split(".", 2)
            optimizer_state.setdefault(int(index), {})[name] = value
    trainer.optimizer.load_state_dict({"state": optimizer_state, "param_groups": groups})
    if trainer.shard.keeps_games(int(tensors["engine.slot"].shape[0]), trainer.engine.batch_size):
        trainer.engine.state = BatchState(
            **{f: tensors[f"engine.{f}"].to(trainer.device) for f in BatchState.__dataclass_fields__}
        )
        trainer.collector.resume_from(trainer.engine.state, tensors["collector.controller"],
                                      tensors["collector.episode_return"])
        if trainer.collector.seats is not None:
            trainer.collector.seats.restore(tensors)
        if tuple(tensors["generator"].shape) == tuple(trainer.generator.get_state().shape):
            trainer.generator.set_state(tensors["generator"])
        else:  # saved on another device type (CPU and CUDA generators differ): a stream of its own
            trainer.generator.manual_seed(int(torch.randint(0, 1 << 62, (1,), generator=_from_state(tensors["torch_rng"]))))
        torch.set_rng_state(tensors["torch_rng"])
    if trainer.magnet is not None:
        trainer.magnet.load_state_dict({k.removeprefix("magnet."): v for k, v in tensors.items() if k.startswith("magnet.")})
    for extension in trainer.extensions:
        extension.restore(tensors, extra.get(extension.state_key) if extension.state_key else None)
    _restore_pool(trainer, tensors, extra["pool"], path)


def _from_state(state: torch.Tensor) -> torch.Generator:
    generator = torch.Generator()
    generator.set_state(state)
    return generator


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
