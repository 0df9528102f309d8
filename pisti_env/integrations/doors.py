"""What the batched library doors (SB3, Tianshou, TorchRL) share: the vector env each one wraps.

Each door is [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] behind a library's API, so it takes that
env's arguments as they are (``opponent``, ``partner``, ``seat``, ``reward``, ``device`` and the
game settings, documented once, on [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]) and sets the ones
its library's API fixes itself. Library-free: no RL library is imported here.
"""

from __future__ import annotations

from typing import Any

from ..envs.vector import PistiVectorEnv

# The vector env's arguments a door sets itself: how it hands out observations, and when a
# finished game restarts (every door maps the engine's same-step restart onto its library's way).
DOOR_SETS = ("output", "autoreset_mode")


def door_vector_env(door: str, num_envs: int, output: str, options: dict[str, Any]) -> PistiVectorEnv:
    """The [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] of ``num_envs`` games behind the library door ``door`` (its
    class name, for errors), with ``output`` as the door needs and ``options`` (the vector env's
    other keyword arguments) as the caller gave them. An option the door sets itself is a
    ``TypeError``; the vector env checks the rest."""
    fixed = sorted(set(options) & set(DOOR_SETS))
    if fixed:
        raise TypeError(f"{door} sets {', '.join(fixed)} itself: leave {'it' if len(fixed) == 1 else 'them'} out")
    return PistiVectorEnv(num_envs, output=output, **options)
