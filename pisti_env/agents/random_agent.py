"""``random``: a uniformly random legal action.

With the bluff variant (R29) that includes the face-down plays and the answers: on a lone card
half of its choices are face down (mostly bluffs), and it challenges half of the claims. This
is the same policy as sampling the action mask uniformly, which is its batched form
(`RandomAgent.act_batch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Agent
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch


class RandomAgent(Agent):
    """Takes a legal action drawn uniformly from its own seeded generator.

    Args:
        seed: seeds the generator (see [`Agent`][pisti_env.agents.base.Agent]).
    """

    name = "random"

    def choose(self, view: SeatView, legal: list[int]) -> int:
        return legal[self.rng.randrange(len(legal))]

    def act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """A uniformly random legal action per row of ``mask`` (the observations are not read)."""
        import torch

        noise = torch.rand(mask.shape, generator=generator, device=mask.device)
        return noise.masked_fill(~mask, -1.0).argmax(1)
