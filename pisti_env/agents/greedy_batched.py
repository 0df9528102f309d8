"""The batched form of ``greedy`` (`GreedyAgent.act_batch`): the same choices for a whole
batch of the batched engine's observations and masks, ties broken at random.

This module imports torch; `pisti_env.agents.greedy` imports it only when a batched form
is asked for, so ``import pisti_env`` never does.
"""

from __future__ import annotations

import torch

from ..rules.actions import BELIEVE, CHALLENGE
from ..rules.cards import JACK, NUM_CARD_IDS, RANK, TEN_DIAMONDS
from ..views.observation import CARDS_SCALE, HAND_SCALE, ObservationLayout
from ..rules.settings import Settings
from ..rules.scoring import PISTI_POINTS, POINTS
from .greedy import JACK_DISCARD_COST

# Tie-break noise added to keys that are spaced 1 apart (values are doubled, then +1 for a rank
# match over a Jack): below 1, it only ever reorders cards of equal key.
TIE_NOISE = 0.5


def pisti_values(settings: Settings, rank: torch.Tensor, top: torch.Tensor, lone: torch.Tensor,
                 last_card: torch.Tensor) -> torch.Tensor:
    """(B, 52) `pisti_value` of playing each card id on a pile whose top
    card is ``top`` (B,): a pişti on a ``lone`` card (R13), a Jack on a lone Jack (R14), none on
    the hand's very ``last_card`` without ``last_card_pisti`` (R16), the 10♦ bonus (R17).
    ``rank``: (52,) the rank of each card id. Float32 holding small integers (exact)."""
    top_rank = rank[top]
    is_jack = rank == JACK
    lone = lone[:, None]
    plain = lone & (rank[None, :] == top_rank[:, None]) & ~is_jack[None, :]
    jack_on_jack = lone & is_jack[None, :] & (top_rank == JACK)[:, None]
    pisti = plain * float(PISTI_POINTS) + jack_on_jack * float(settings.double_pisti)
    if not settings.last_card_pisti:
        pisti = pisti * ~last_card[:, None]
    if settings.ten_diamonds_pisti_bonus:
        with_ten = (torch.arange(NUM_CARD_IDS, device=rank.device) == TEN_DIAMONDS)[None, :] | (top == TEN_DIAMONDS)[:, None]
        pisti = pisti + (pisti > 0) * with_ten * float(settings.ten_diamonds_pisti_bonus)
    return pisti


class BatchedGreedy:
    """``greedy`` for a batch of observations: the capture worth most (pile points it has seen
    plus any pişti, R10–R17; a rank match before a Jack on equal value), else the cheapest card
    (fewest points, Jacks last). With the bluff variant (R29) it never plays face down and
    believes every claim unless no card of the lone card's rank is left unseen (then the claim
    is surely false). (The Python ``greedy`` also challenges when the face-down card is the
    shown stock-bottom card of R28 and not of the rank; the observation cannot tell that card
    in a claim from one still in the stock, so here that rare case is believed.)

    Args:
        settings: the game the observations come from (their layout, the pişti variants).
        device: where the lookup tables live (that of the observations).
    """

    def __init__(self, settings: Settings, device: torch.device | str = "cpu") -> None:
        self.settings = settings
        self.layout = ObservationLayout(settings)
        self.rank = torch.tensor(RANK[:NUM_CARD_IDS], device=device)
        self.points = torch.tensor(POINTS[:NUM_CARD_IDS], dtype=torch.float32, device=device)
        self.is_jack = self.rank == JACK
        self.discard_cost = self.points + JACK_DISCARD_COST * self.is_jack

    def __call__(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        choice = self._play(observation, mask[:, :NUM_CARD_IDS], generator)
        if mask.shape[1] == NUM_CARD_IDS:
            return choice
        # R29: answering a claim (the only decision whose mask offers BELIEVE).
        top_rank = self.rank[observation[:, self.layout["pile_top"]].argmax(1)]
        unseen = observation[:, self.layout["unseen"]]
        unseen_of_rank = (unseen * (self.rank[None, :] == top_rank[:, None])).sum(1)
        answer = torch.where(unseen_of_rank == 0, CHALLENGE, BELIEVE)
        return torch.where(mask[:, BELIEVE], answer, choice)

    def _keys(self, observation: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(captures, capture key, discard key): the cards that capture (R10, R11) and the keys
        greedy ranks them by, integers spaced 1 apart (``mask``: the card ids' columns)."""
        layout, s = self.layout, self.settings
        top = observation[:, layout["pile_top"]]
        has_top = top.sum(1) > 0
        top_id = top.argmax(1)
        top_rank = self.rank[top_id]
        known_pile = observation[:, layout["pile_face_up"]] + observation[:, layout["pile_public_jack"]]
        pile_points = known_pile @ self.points  # (B,)
        pile_size = (observation[:, layout["pile_size"]][:, 0] * CARDS_SCALE).round()
        cards_left = (
            observation[:, layout["hand_sizes"]].sum(1) * HAND_SCALE + observation[:, layout["stock_size"]][:, 0] * CARDS_SCALE
        ).round()
        same_rank = self.rank[None, :] == top_rank[:, None]
        captures = mask & has_top[:, None] & (same_rank | self.is_jack[None, :])
        pisti = pisti_values(s, self.rank, top_id, pile_size == 1, cards_left == 1)
        capture_key = (pile_points[:, None] + pisti) * 2 + (~self.is_jack)[None, :]
        discard_key = -(self.discard_cost[None, :] * 2)
        return captures, capture_key, discard_key

    def best_cards(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, 52) bool: the face-up cards greedy ranks first (``mask``: the card ids' columns);
        its choice is one of them, drawn at random when there are several (the Python
        ``greedy_card``'s ``best``, which it draws from with its own generator)."""
        captures, capture_key, discard_key = self._keys(observation, mask)
        capture_key = capture_key.masked_fill(~captures, -1.0)
        discard_key = discard_key.expand_as(mask).masked_fill(~mask, -1e9)
        best_capture = captures & (capture_key == capture_key.max(1, keepdim=True).values)
        best_discard = mask & (discard_key == discard_key.max(1, keepdim=True).values)
        return torch.where(captures.any(1)[:, None], best_capture, best_discard)

    def _play(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The face-up card to play (``mask``: the card ids)."""
        captures, capture_key, discard_key = self._keys(observation, mask)
        noise = torch.rand(mask.shape, generator=generator, device=mask.device) * TIE_NOISE
        capture_choice = (capture_key + noise).masked_fill(~captures, -1.0).argmax(1)
        discard_choice = (discard_key + noise).masked_fill(~mask, -1e9).argmax(1)
        return torch.where(captures.any(1), capture_choice, discard_choice)
