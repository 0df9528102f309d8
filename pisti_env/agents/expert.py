"""``expert``: plays by the tips of the rule texts (``shared/seeds``), with card counting.

Every legal card gets a value in points for the player's side, and the best one is played:

* **Capture** (R10, R11): the pile's points (the cards seen, plus the expected points of the
  hidden table cards, R8), the card's own points, any pişti (R13–R17, always taken), and a
  share of the 3 majority points per card (R21). A Jack spent on a pile that is neither big
  nor valuable costs what holding it is worth (``jack_keep``): Jacks are saved for big or
  valuable piles, for taking a pile the next player would likely take otherwise, and for the
  end of the hand (R19: the last capturer sweeps the table).
* **Discard**: what the next player is expected to take from the resulting pile. Card
  counting gives the chance that the next seat holds a given rank: the unseen cards of that
  rank against its hand size (a hypergeometric draw). A lone card (a new pile) risks a pişti:
  the player opens with a rank nobody can match (all others seen), or one it holds twice,
  never with a Jack while Jacks are out. Point cards are not thrown where the next seat can
  take them. In partnerships (R4) the next seat is always an opponent: the partner's
  opponents are never fed.
* **End of the hand**: on its last card a Jack loses its keep value. Two players, stock
  empty (R18): once card counting pins down the other hand (every unseen card must be in it,
  or only a few hands are possible), the last deal is played exactly
  (`endgame`), timing the last capture for the leftover pile (R19) and
  the majority (R21).
* **Bluff variant** (R29, `bluffing`): on a lone card each card may
  also be played face down. A card of the lone card's rank is a true claim, worth the stake
  and more if challenged. A bluff is worth the stake and both cards if believed, and costs two
  stakes (the answerer's) plus the card left face up on the pile if challenged. The chance of
  a challenge assumes an answerer that counts cards as the expert does: sure when it can see
  that no card of the rank is left for the claimant, likely when few are. As the answerer it
  challenges when that pays in expectation, the claim being surely a bluff when all cards of
  the rank are accounted for.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import JACK, RANK
from ..rules.scoring import CHALLENGE_FACTOR, POINTS, bluff_stake, captures, pisti_value
from .base import Agent
from .bluffing import challenge_pays, challenge_probability, claim_true_probability, hold_probability
from .endgame import endgame_values
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

    from ..rules.settings import Settings
    from .expert_batched import BatchedExpert

__all__ = ["ExpertAgent", "batched_form_covers", "endgame_choices", "hold_probability"]

# Values closer than this are a tie (the choice is then drawn at random).
TIE = 1e-9


def batched_form_covers(settings: Settings) -> bool:
    """Whether the batched form (`expert_batched`) plays the games of
    ``settings``: one deck, without the bluff variant (its claims and answers are counted per
    decision in Python) and without the shown stock-bottom card (R28: the observation does not
    say which other hand holds it)."""
    return settings.decks == 1 and not settings.bluff and not settings.show_stock_bottom


def endgame_choices(
    legal: list[int], unseen: list[int], free: int, known: list[int], top: int | None, pile_size: int,
    pile_points: int, last_capturer: int | None, captured: tuple[int, int], settings: Settings, max_worlds: int,
    memo: dict | None = None,
) -> list[int] | None:
    """Two players, stock empty (R18): the exact last-deal choice when the other hand is one of
    at most ``max_worlds`` possible ones, else ``None``.

    The other hand is ``known`` (R28: the shown stock-bottom card it holds) plus ``free`` cards
    of ``unseen``; every such hand is solved exactly (`endgame_values`)
    and the cards of ``legal`` are valued by their total over the hands. Returns the cards
    within `TIE` of the best total, in ``legal``'s order. ``last_capturer``: 0 the
    mover's side, 1 the other, ``None`` nobody; ``captured``: cards captured this hand
    (mover's side, other side); ``pile_points``: the points of the (all known) pile. ``memo``:
    solved positions to share with other calls of the same ``settings`` (a fresh one by default).
    """
    worlds = math.comb(len(unseen), free) if 0 <= free <= len(unseen) else 0
    if not 0 < worlds <= max_worlds:
        return None
    totals = dict.fromkeys(legal, 0.0)
    memo = {} if memo is None else memo
    for hand in itertools.combinations(unseen, free):
        values = endgame_values(legal, list(hand) + known, top, pile_size, pile_points, last_capturer, captured,
                                settings, memo)
        for card, value in values.items():
            totals[card] += value
    best = max(totals.values())
    return [c for c in legal if totals[c] > best - TIE]


class ExpertAgent(Agent):
    """A rule-of-thumb player that counts cards (see the module docstring).

    Args:
        seed: seeds the tie-breaks (see [`Agent`][pisti_env.agents.base.Agent]).
        card_weight: points one captured card is worth towards the majority (R21).
        jack_keep: points a Jack in hand is worth while the player has more turns this hand.
        point_keep: share of a point card's value lost by throwing it on a pile (R20).
        lead_bonus: value of making the next seat open an empty pile (the pişti chance it gives).
        endgame_worlds: with two players and the stock empty, solve the rest of the hand exactly
            when at most this many hands of the other player are possible (averaging over
            them); 0 turns the exact endgame off.
        bluff_rate: bluff variant (R29): how often it assumes a claimant without the lone
            card's rank bluffs (see `bluffing`), 0..1.
        challenge_rate: bluff variant: how often it assumes a claim is challenged although the
            answerer's card counting says to believe it, 0..1.
        settings: the game it plays; with it, in the games `batched_form_covers`, it also
            has a batched form (``act_batch``, `batched_form`) for the batched engine's
            observations, making the same choices; without it (or in other games) it has none.
    """

    name = "expert"

    def __init__(
        self,
        seed: int | None = None,
        card_weight: float = 0.2,
        jack_keep: float = 2.5,
        point_keep: float = 0.3,
        lead_bonus: float = 0.5,
        endgame_worlds: int = 6,
        bluff_rate: float = 0.2,
        challenge_rate: float = 0.1,
        settings: Settings | None = None,
    ) -> None:
        super().__init__(seed)
        if isinstance(endgame_worlds, bool) or not isinstance(endgame_worlds, int) or endgame_worlds < 0:
            raise ValueError(f"expert option 'endgame_worlds' must be an int >= 0, got {endgame_worlds!r}")
        self.endgame_worlds = endgame_worlds
        for key, value in (("card_weight", card_weight), ("jack_keep", jack_keep),
                           ("point_keep", point_keep), ("lead_bonus", lead_bonus),
                           ("bluff_rate", bluff_rate), ("challenge_rate", challenge_rate)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"expert option {key!r} must be a number, got {type(value).__name__} {value!r}")
        for key, value in (("bluff_rate", bluff_rate), ("challenge_rate", challenge_rate)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"expert option {key!r} must be a probability 0..1, got {value!r}")
        self.card_weight = float(card_weight)
        self.jack_keep = float(jack_keep)
        self.point_keep = float(point_keep)
        self.lead_bonus = float(lead_bonus)
        self.bluff_rate = float(bluff_rate)
        self.challenge_rate = float(challenge_rate)
        self.settings = settings
        self._batched: dict[str, BatchedExpert] = {}  # the batched form per device, built on first use (torch)
        if settings is not None and batched_form_covers(settings):
            # Only for the games it covers, so has_batched_form() is False elsewhere and callers
            # keep such games on the Python engine.
            self.act_batch = self._act_batch

    def batched_form(self, device: "torch.device | str" = "cpu") -> "BatchedExpert":
        """The batched form of this player (`BatchedExpert`,
        same options) for the observations of its ``settings``: the same tie set of best cards."""
        if self.settings is None or not batched_form_covers(self.settings):
            raise ValueError("expert's batched form reads observations of given settings without the bluff variant, "
                             "show_stock_bottom or two decks: build it with make_player('expert', settings=...)")
        form = self._batched.get(str(device))
        if form is None:
            from .expert_batched import BatchedExpert

            form = self._batched[str(device)] = BatchedExpert(
                self.settings, card_weight=self.card_weight, jack_keep=self.jack_keep, point_keep=self.point_keep,
                lead_bonus=self.lead_bonus, endgame_worlds=self.endgame_worlds, device=device,
            )
        return form

    def _act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """The same choices for a batch of the batched engine's observations and masks, ties
        drawn from ``generator`` (see `BatchedExpert`)."""
        return self.batched_form(observation.device)(observation, mask, generator)

    def choose(self, view: SeatView, legal: list[int]) -> int:
        if legal[0] >= BELIEVE:  # R29: answering a claim
            return self._answer(view)
        best = self.best_actions(view, legal)
        return best[0] if len(best) == 1 else best[self.rng.randrange(len(best))]

    def best_actions(self, view: SeatView, legal: list[int]) -> list[int]:
        """The actions of ``legal`` (a play, not an answer) that the expert values most, in
        ``legal``'s order: its choice is one of them, drawn with its generator when there are
        several. The exact endgame's best cards when it applies, else the rules of thumb's."""
        cards = [a for a in legal if a < FACE_DOWN]
        may_claim = len(cards) < len(legal)
        # The exact endgame knows no face-down plays: with a claim possible, the rules of thumb.
        if (self.endgame_worlds and not may_claim and view.num_players == 2 and view.stock_size == 0
                and view.pile_hidden == 0):
            other = 1 - view.seat
            known = [view.stock_bottom] if view.stock_bottom_holder == other else []  # R28
            last = view.last_capturer
            counts = view.captured_count
            best = endgame_choices(
                cards, view.unseen, view.hand_sizes[other] - len(known), known, view.pile_top, view.pile_size,
                view.pile_known_points, None if last is None else int(last != view.side),
                (counts[view.side], counts[1 - view.side]), view.settings, self.endgame_worlds,
            )
            if best is not None:
                return best
        settings = view.settings
        seat, side = view.seat, view.side
        n = view.num_players
        top = view.pile_top
        size = view.pile_size
        unseen = view.unseen_rank_counts
        unseen_total = len(view.unseen)
        hidden_mean = view.unseen_points / unseen_total if unseen_total else 0.0
        pile_value = view.pile_known_points + view.pile_hidden * hidden_mean
        hand_sizes = view.hand_sizes
        nxt = (seat + 1) % n
        next_hand = hand_sizes[nxt]
        # R28: the shown stock-bottom card, if the next seat holds it, is a rank it surely has.
        known_rank = RANK[view.stock_bottom] if view.stock_bottom_holder == nxt else None
        if known_rank is not None:
            next_hand -= 1
        sign = -1.0 if view.side_of[nxt] != side else 1.0  # the next seat's gains are our losses
        left = view.cards_left_in_hand
        last_card = left == 1
        my_future = hand_sizes[seat] - 1 + view.stock_size // n  # our turns after this one
        w = self._card_weight(view)
        jack_keep = self.jack_keep if my_future > 0 else 0.0

        def hold(rank: int) -> float:
            if rank == known_rank:
                return 1.0
            return hold_probability(unseen[rank], unseen_total, next_hand)

        p_jack = hold(JACK)

        def capture(card: int, pisti: float, jack_cost: float = 0.0) -> float:
            """Taking the pile with ``card`` (plus ``pisti`` points for a pişti or claim)."""
            value = pile_value + POINTS[card] + pisti + w * (size + 1)
            value -= jack_cost
            if not last_card:
                value += self.lead_bonus
            return value

        def discard(card: int) -> float:
            """Leaving ``card`` face up on top of the pile: what the next seat may take."""
            rank, points = RANK[card], POINTS[card]
            if size == 0:  # a lone card: the next seat may pişti it (R13, R14)
                if rank == JACK:
                    p = p_jack
                    gift = settings.double_pisti + points + 2 * w
                else:
                    p = hold(rank)
                    gift = pisti_value(card, card, 1, settings, left == 2) + points + 2 * w
            else:
                p_rank = hold(rank) if rank != JACK else 0.0
                gift = pile_value + points + w * (size + 2)
                p = p_rank + (1.0 - p_rank) * (p_jack if gift >= self.jack_keep else 0.0)
            value = sign * p * gift - self.point_keep * points
            return value - jack_keep if rank == JACK else value

        values: list[tuple[int, float]] = []
        for card in cards:
            if captures(card, top):
                spent = RANK[card] == JACK and not (size == 1 and RANK[top] == JACK)
                value = capture(card, pisti_value(card, top, size, settings, last_card), jack_keep if spent else 0.0)
            else:
                value = discard(card)
            values.append((card, value))
        if may_claim:  # R29: each card face down, claiming a pişti on the lone card
            stake = bluff_stake(top, settings)
            for card in cards:
                p_challenge = challenge_probability(view, card, self.bluff_rate, self.challenge_rate)
                if RANK[card] == RANK[top]:  # a true claim: a challenge only raises the stake
                    value = capture(card, stake * (1.0 + (CHALLENGE_FACTOR - 1) * p_challenge))
                else:  # believed: both cards and the stake; caught: the raised stake to the answerer
                    believed = capture(card, stake, jack_keep if RANK[card] == JACK else 0.0)
                    caught = -CHALLENGE_FACTOR * stake + discard(card)
                    value = (1.0 - p_challenge) * believed + p_challenge * caught
                values.append((FACE_DOWN + card, value))
        best_value = None
        best: list[int] = []
        for action, value in values:
            if best_value is None or value > best_value + TIE:
                best_value, best = value, [action]
            elif value > best_value - TIE:
                best.append(action)
        return best

    def _answer(self, view: SeatView) -> int:
        """R29: challenge when it pays in expectation, the claim's truth estimated by card
        counting (`claim_true_probability`): surely a bluff
        when every card of the rank is accounted for."""
        _, lone = view.pending_claim
        q = claim_true_probability(view, self.bluff_rate)
        stake = bluff_stake(lone, view.settings)
        known = view.claim_card
        unseen_total = len(view.unseen)
        hidden = POINTS[known] if known is not None else (view.unseen_points / unseen_total if unseen_total else 0.0)
        cards = POINTS[lone] + hidden + 2 * self._card_weight(view)  # what the claimant takes
        return CHALLENGE if challenge_pays(q, stake, cards) else BELIEVE

    def _card_weight(self, view: SeatView) -> float:
        """Majority value of one more captured card (R21): nothing once the majority is settled."""
        counts = view.captured_count
        total = view.settings.num_cards
        if max(counts) * 2 > total:
            return 0.0
        return self.card_weight

    def __repr__(self) -> str:
        return (f"ExpertAgent(card_weight={self.card_weight}, jack_keep={self.jack_keep}, "
                f"point_keep={self.point_keep}, lead_bonus={self.lead_bonus}, endgame_worlds={self.endgame_worlds}, "
                f"bluff_rate={self.bluff_rate}, challenge_rate={self.challenge_rate})")
