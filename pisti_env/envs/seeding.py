"""How an environment's ``reset(seed=...)`` picks the seed of its [`Game`][pisti_env.game.Game].

``pisti_v0`` and the single-agent Gymnasium env share it, so the same seed deals the same game
in both: a given seed is the game's seed; without one the game's seed is drawn from the
generator of the last seed given (or OS entropy before any).
"""

from __future__ import annotations

import random

from ..util.arguments import check_int


def next_game_seed(seed: int | None, seeder: random.Random | None) -> tuple[random.Random, int]:
    """``(new seeder, game seed)`` for a reset with ``seed``; ``seeder`` is the env's current one
    (``None`` before the first reset). ``seeder`` itself is never moved on: the env keeps the
    new one only once its reset has succeeded. Raises ``TypeError`` for a seed that is not an
    int, ``ValueError`` for a negative one (the one rule of both envs, and of the vector env and
    Gymnasium's own seeding: a seed is an int >= 0)."""
    if seed is not None:
        seed = check_int(seed, "seed", low=0, none=True)
        new = random.Random(seed)
        new.getrandbits(63)  # so the next unseeded reset does not replay this seed
        return new, seed
    new = random.Random()
    if seeder is not None:
        new.setstate(seeder.getstate())  # a copy, so a failed reset moves nothing
    return new, new.getrandbits(63)
