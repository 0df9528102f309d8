"""The one registry of players: a *spec* becomes a [`Player`][pisti_env.agents.base.Player].

``make_player("greedy", seed=1)``, ``make_player("pimc:n=32,rollout=random", seed=1)``,
``make_player("pisti-2p", settings=...)``. A spec is either

* the name of a shipped policy (`SHIPPED_POLICIES`: ``pisti-2p``, ``pisti-4p``,
  ``pisti-bluff``), trained checkpoints installed with the package (``pisti_env/policies/``,
  package data), optionally with ``:play=...`` as a checkpoint path below; or
* a registered name, optionally followed by ``:`` and comma-separated ``key=value`` options
  passed to the player's constructor (values are read as int, float or bool ``true``/``false``
  when they look like one, else kept as text); or
* the path of a trained checkpoint directory (``checkpoints/pisti-2p`` in a checkout is the
  shipped one), loaded by [`pisti_env.policies.loader.load_policy`][pisti_env.policies.loader.load_policy] (imported only then:
  it needs torch; the trainer is never needed),
  optionally followed by ``:play=argmax``, ``:play=sample`` or ``:play=sample_bluffs`` (see
  [`pisti_env.policies.player.CheckpointPlayer`][pisti_env.policies.player.CheckpointPlayer]) instead of what its metadata says
  (``sample_bluffs`` for a bluff-variant policy, whose claims and answers are mixed decisions;
  else ``argmax``); or
* the path of a policy exported by ``pisti-export`` (a ``.pt`` TorchScript or ``.onnx`` file),
  played by `ExportedPolicy` without the trainer's code.

The harness, ``pisti-bluff-stats``, pimc's rollouts and the trainer's opponent pool all build
their players here. ``make_agent`` is the same function under its older name.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable

from ..util.arguments import check_int
from ..policies import POLICY_DIR, SHIPPED_POLICIES, shipped_policy_path  # noqa: F401 - the registry's names too
from ..rules.settings import Settings
from .base import Agent, BatchedPlayer, Player, StatePlayer, has_batched_form, needs_engine_state
from .bluffer import BlufferAgent, challenger
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .ismcts import IsmctsAgent
from .pimc import PimcAgent
from .random_agent import RandomAgent
from .search import SearchAgent

AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "expert": ExpertAgent,
    "pimc": PimcAgent,
    "search": SearchAgent,  # rollouts of a policy on the batched engine: torch and the policy imported on first use
    "ismcts": IsmctsAgent,  # OpenSpiel's IS-MCTS: needs the openspiel extra, imported when built
    "bluffer": BlufferAgent,  # R29: claims face down whenever allowed
    "challenger": challenger,  # bluffer's preset mirror: never claims, challenges every claim
}
# Files of a policy exported by pisti-export (pisti_env.agents.exported reads them).
EXPORT_SUFFIXES = (".pt", ".onnx")
# Constructor arguments the registry fills in itself, never taken from a spec.
_GIVEN = ("seed", "settings")


def agent_names() -> list[str]:
    """The registered player names."""
    return list(AGENTS)


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _check_spec(spec: Any) -> None:
    if not isinstance(spec, str):
        raise TypeError(f"a player spec must be a string like 'greedy' or 'pimc:n=32', got {type(spec).__name__}")


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into the name and its options.

    Raises ``TypeError`` for a non-string and ``ValueError`` for an unknown name or a malformed
    option, naming what is allowed.
    """
    _check_spec(spec)
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in AGENTS:
        raise ValueError(f"unknown player {name!r}; registered players are {agent_names()}")
    return name, _options(rest, spec)


def _options(rest: str, spec: str) -> dict[str, Any]:
    """``"key=value,key=value"`` (the part of ``spec`` after its ``:``) as a dict; ``ValueError``
    for an item that is not ``key=value``."""
    options: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"bad option {item!r} in player spec {spec!r}: expected key=value")
            options[key] = _value(value.strip())
    return options


def make_player(
    spec: str, seed: int | None = None, *, settings: Settings | None = None, device: str = "cpu", **options: Any
) -> Player:
    """A new player from a spec (see the module docstring).

    Args:
        spec: a registered name (`agent_names`), optionally with ``:key=value`` options,
            a shipped policy's name (`SHIPPED_POLICIES`), a checkpoint path or an exported
            policy's file.
        seed: seeds the player's randomness.
        settings: the game the player will play. Players with a batched form need it to read
            observations; a checkpoint trained for another game is refused
            (``CheckpointError``, of `pisti_env.policies.metadata`).
        device: where a checkpoint's network lives.
        **options: more constructor options of a registered player; they override the spec's.

    Raises ``TypeError`` for a non-string spec, ``ValueError`` for a spec that is neither a
    registered name nor an existing path, or an unknown option (naming the allowed ones),
    ``TypeError`` for a seed that is not an int (or ``None``), and whatever the player's constructor raises for a bad value.
    """
    _check_spec(spec)
    if seed is not None:
        seed = check_int(seed, "seed", none=True)  # the library's one rule (pisti_env.util.arguments)
    if spec.partition(":")[0].strip().lower() in AGENTS:
        return _scripted(spec, seed, settings, options)
    path, play = _checkpoint_spec(spec, options)
    if os.path.isfile(path) and path.endswith(EXPORT_SUFFIXES):
        from .exported import load_exported  # torch or onnxruntime, only for an export

        player = load_exported(path, settings=settings, device=device, play=play)
        player.reset(seed)
        return player
    from ..policies.loader import load_policy  # torch, only for a checkpoint

    player = load_policy(path, settings=settings, device=device, play=play)  # checks play
    player.reset(seed)
    return player


def checkpoint_location(spec: Any) -> tuple[str, str] | None:
    """``(path, options)`` of a spec that names an existing path, the whole spec or the part
    before its last ``:`` (``options``: the rest, ``""`` when none), or a shipped policy's name
    (its directory in the package, before any path of that name); ``None`` for any other spec
    (a registered name, a missing path, not a string)."""
    if not isinstance(spec, str) or spec.partition(":")[0].strip().lower() in AGENTS:
        return None
    name, colon, tail = spec.partition(":")
    if name.strip() in SHIPPED_POLICIES:
        return shipped_policy_path(name.strip()), tail
    if os.path.exists(spec):
        return spec, ""
    head, colon, tail = spec.rpartition(":")
    if colon and head and os.path.exists(head):
        return head, tail
    return None


def _checkpoint_spec(spec: str, options: dict[str, Any]) -> tuple[str, str | None]:
    """A checkpoint spec split into its path and its ``play`` option (``None``: the metadata's);
    ``ValueError`` for a path that does not exist or another option."""
    location = checkpoint_location(spec)
    if location is None:
        raise ValueError(
            f"unknown player {spec!r}: registered players are {agent_names()} (options as 'pimc:n=32'), "
            f"shipped policies {list(SHIPPED_POLICIES)}, or give the path of a trained checkpoint (optionally "
            "PATH:play=argmax|sample|sample_bluffs) or of an exported policy (.pt, .onnx)"
        )
    path, tail = location
    given = {**_options(tail, spec), **options}  # keyword options override the spec's
    unknown = sorted(set(given) - {"play"})
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for checkpoint {path!r}; allowed: ['play']")
    return path, given.get("play")


def _scripted(spec: str, seed: int | None, settings: Settings | None, options: dict[str, Any]) -> Agent:
    name, spec_options = parse_agent_spec(spec)
    spec_options.update(options)
    cls = AGENTS[name]
    parameters = inspect.signature(cls).parameters
    allowed = [p for p in parameters if p not in _GIVEN]
    unknown = sorted(set(spec_options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for player {name!r}; allowed: {allowed or 'none'}")
    if "settings" in parameters:
        spec_options["settings"] = settings
    return cls(seed=seed, **spec_options)



def as_player(spec: str | Player, role: str, **kwargs: Any) -> Player:
    """``spec`` as a player: a spec through [`make_player`][pisti_env.agents.make_player] (``kwargs`` passed on), a
    [`Player`][pisti_env.agents.base.Player] object as it is. ``role`` names the argument in the ``TypeError`` raised
    for anything else."""
    if isinstance(spec, str):
        return make_player(spec, **kwargs)
    if isinstance(spec, Player):
        return spec
    raise TypeError(
        f"{role} must be a player spec (e.g. 'greedy', 'pimc:n=32', a checkpoint path) or a "
        f"pisti_env.agents.Player object, got {type(spec).__name__}"
    )


def as_batched_player(
    spec: str | Player, role: str, hint: str = "", *, python_engine: bool = False, **kwargs: Any
) -> BatchedPlayer | StatePlayer:
    """`as_player` for the batched engine's users.

    A player with a batched form (``act_batch``: ``random``, ``greedy``, ``bluffer``,
    ``challenger``, checkpoints, ``expert`` given ``settings`` without bluffs, the shown
    stock-bottom card or two decks) is returned as it is. Any other (``pimc``, ``ismcts``, such
    an ``expert``, a player object) is, with ``python_engine=True``, wrapped in a
    `PythonPlayerBatched`, which plays it through the
    Python engine at Python speed and needs the engine's state (``act_state``, see
    `needs_engine_state`): only a caller that hands it the state
    may ask for this (the trainer's pool does). Without ``python_engine`` such a player is
    refused with a ``ValueError`` (``hint`` ends its message).

    ``kwargs`` go to [`make_player`][pisti_env.agents.make_player]; their ``settings`` (default: the rules' defaults)
    are the game the wrapper converts.
    """
    player = as_player(spec, role, **kwargs)
    if has_batched_form(player) or (python_engine and needs_engine_state(player)):
        return player
    if python_engine:
        from .python_batched import PythonPlayerBatched

        return PythonPlayerBatched(player, kwargs.get("settings") or Settings())
    raise ValueError(
        f"{role} {spec!r} has no batched form (act_batch): 'random', 'greedy', 'bluffer', 'challenger', "
        f"'expert' (given the settings of a game without bluffs, show_stock_bottom or two decks), "
        f"a checkpoint path or a player object with act_batch have one{hint}"
    )


make_agent = make_player
