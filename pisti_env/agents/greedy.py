"""``greedy``: take whenever possible, the most valuable capture first; otherwise throw the
cheapest card.

Bluff variant (R29): greedy never plays a card face down, and believes every claim except one
it can prove false by counting: when every card of the lone card's rank is in its own hand,
seen face up, or among its side's captures, the face-down card cannot be of that rank.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Sequence

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import JACK, RANK
from ..rules.settings import Settings
from ..rules.scoring import POINTS, pisti_value
from .base import Agent
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

# Heuristic, not a rule value: added to a Jack's discard cost (above any card's points), so a
# Jack is the last card greedy throws away without capturing.
JACK_DISCARD_COST = 10


def greedy_card(
    legal: Sequence[int],
    top: int | None,
    pile_size: int,
    pile_points: int,
    settings: Settings,
    last_card: bool,
    rng: random.Random,
) -> int:
    """The greedy choice among ``legal`` (shared by `GreedyAgent` and search rollouts).

    If some card captures (R10, R11), play the capture worth most: the pile's points plus any
    pişti (R13–R17); on equal value a rank match rather than a Jack. Otherwise play the
    cheapest card: fewest points (R20), Jacks last. Remaining ties go to ``rng``.

    Args:
        legal: the card ids that may be played (non-empty).
        top: the pile's top card id, ``None`` when the pile is empty.
        pile_size: cards in the pile.
        pile_points: the points the player counts in the pile (a seat counts only the cards it
            has seen; a rollout in a determinized game may count all).
        settings: the game settings (pişti variants).
        last_card: whether this is the hand's very last card (R16).
        rng: tie-breaks.
    """
    best: list[int] = []
    if top is not None:
        top_rank = RANK[top]
        best_key = None
        for c in legal:
            rank = RANK[c]
            if rank == top_rank or rank == JACK:
                key = (pile_points + pisti_value(c, top, pile_size, settings, last_card), rank != JACK)
                if best_key is None or key > best_key:
                    best_key, best = key, [c]
                elif key == best_key:
                    best.append(c)
    if not best:
        cheapest = None
        for c in legal:
            cost = POINTS[c] + (JACK_DISCARD_COST if RANK[c] == JACK else 0)
            if cheapest is None or cost < cheapest:
                cheapest, best = cost, [c]
            elif cost == cheapest:
                best.append(c)
    return best[0] if len(best) == 1 else best[rng.randrange(len(best))]


class GreedyAgent(Agent):
    """Captures whenever it can, the most valuable capture first (counting the pile cards it
    has seen and any pişti); otherwise discards the cheapest card (no points, Jacks last).

    Args:
        seed: seeds the tie-breaks (see [`Agent`][pisti_env.agents.base.Agent]).
        settings: the game settings; needed only by the batched form (`act_batch`), to
            read the batched engine's observations.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None, settings: Settings | None = None) -> None:
        super().__init__(seed)
        self.settings = settings
        self._batched = None  # the batched form, built on first use (it imports torch)

    def act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """The same choices for a batch of the batched engine's observations and masks (see
        `BatchedGreedy`)."""
        if self.settings is None:
            raise ValueError("greedy's batched form reads observations of given settings: "
                             "build it with make_player('greedy', settings=...)")
        if self._batched is None:
            from .greedy_batched import BatchedGreedy

            self._batched = BatchedGreedy(self.settings, observation.device)
        return self._batched(observation, mask, generator)

    def choose(self, view: SeatView, legal: list[int]) -> int:
        if legal[0] >= BELIEVE:  # R29: answering a claim
            return CHALLENGE if provably_bluff(view) else BELIEVE
        cards = [a for a in legal if a < FACE_DOWN]  # never face down
        if len(cards) == 1:
            return cards[0]
        return greedy_card(
            cards, view.pile_top, view.pile_size, view.pile_known_points, view.settings,
            view.cards_left_in_hand == 1, self.rng,
        )


def provably_bluff(view: SeatView) -> bool:
    """Whether the pending claim (R29) is surely false for the seat of ``view``: the face-down
    card is known and not of the lone card's rank (R28), or no card of that rank is left unseen."""
    _, lone = view.pending_claim
    known = view.claim_card
    if known is not None:
        return RANK[known] != RANK[lone]
    return view.unseen_rank_counts[RANK[lone]] == 0
