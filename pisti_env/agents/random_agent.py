"""``random``: a uniformly random legal card."""

from __future__ import annotations

from .base import Agent
from .view import SeatView


class RandomAgent(Agent):
    """Plays a legal card drawn uniformly from its own seeded generator.

    Args:
        seed: seeds the generator (see :class:`~pisti_env.agents.base.Agent`).
    """

    name = "random"

    def choose(self, view: SeatView, legal: list[int]) -> int:
        return legal[self.rng.randrange(len(legal))]
