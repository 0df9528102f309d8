"""Players by name: ``make_agent("greedy", seed=1)``, ``make_agent("pimc:n=32", seed=1)``.

A *spec* is a registered name, optionally followed by ``:`` and comma-separated ``key=value``
options passed to the player's constructor (``"pimc:n=32,rollout=random"``). Values are read
as int, float or bool (``true``/``false``) when they look like one, else kept as text.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .base import Agent
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .pimc import PimcAgent
from .random_agent import RandomAgent

AGENTS: dict[str, Callable[..., Agent]] = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "expert": ExpertAgent,
    "pimc": PimcAgent,
}


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


def parse_agent_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name:key=value,key=value"`` into the name and its options.

    Raises ``TypeError`` for a non-string and ``ValueError`` for an unknown name or a malformed
    option, naming what is allowed.
    """
    if not isinstance(spec, str):
        raise TypeError(f"a player spec must be a string like 'greedy' or 'pimc:n=32', got {type(spec).__name__}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in AGENTS:
        raise ValueError(f"unknown player {name!r}; registered players are {agent_names()}")
    options: dict[str, Any] = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"bad option {item!r} in player spec {spec!r}: expected key=value")
            options[key] = _value(value.strip())
    return name, options


def make_agent(spec: str, seed: int | None = None, **options: Any) -> Agent:
    """A new player from a name or spec (see the module docstring).

    Args:
        spec: a registered name (:func:`agent_names`), optionally with ``:key=value`` options.
        seed: seeds the player's generator.
        **options: more constructor options; they override those in ``spec``.

    Raises ``ValueError`` for an unknown name or option (naming the allowed ones) and whatever
    the player's constructor raises for a bad value.
    """
    name, spec_options = parse_agent_spec(spec)
    spec_options.update(options)
    cls = AGENTS[name]
    allowed = [p for p in inspect.signature(cls).parameters if p != "seed"]
    unknown = sorted(set(spec_options) - set(allowed))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for player {name!r}; allowed: {allowed or 'none'}")
    return cls(seed=seed, **spec_options)
