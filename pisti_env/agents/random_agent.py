"""``random``: a uniformly random legal action.

With the bluff variant (R29) that includes the face-down plays and the answers: on a lone card
half of its choices are face down (mostly bluffs), and it challenges half of the claims. This
is the same policy as sampling the action mask uniformly.
"""

from __future__ import annotations

from .base import Agent
from .view import SeatView


class RandomAgent(Agent):
    """Takes a legal action drawn uniformly from its own seeded generator.

    Args:
        seed: seeds the generator (see :class:`~pisti_env.agents.base.Agent`).
    """

    name = "random"

    def choose(self, view: SeatView, legal: list[int]) -> int:
        return legal[self.rng.randrange(len(legal))]
