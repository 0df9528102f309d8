"""Card-counting estimates for the bluff variant (R29), shared by ``expert`` and ``pimc``.

The stakes (`pisti_env.rules.scoring.bluff_stake`): a believed claim scores ``S`` (10, or 20
on a lone Jack with ``bluff_jack_double``), a challenged one ``2S`` for the claimant if true,
else ``2S`` for the challenger. Leaving the cards aside, challenging pays when the claim is true with probability
below 3/4, and bluffing pays when the answer is a challenge with probability below 1/3.

Both estimates read only a [`SeatView`][pisti_env.SeatView] (R30–R31):

* `claim_true_probability` — the answering seat: a claimant that holds a card of the
  lone card's rank is assumed always to claim with it (a true claim scores at least what a
  face-up pişti does), one that does not to bluff at rate ``bluff_rate``. So the claim is true
  with probability ``h / (h + (1 - h) * bluff_rate)``, ``h`` being the chance that the
  claimant's hand held the rank, counted from the cards this seat has not seen. When every card
  of the rank is accounted for, the claim is surely a bluff.
* `challenge_probability` — the claiming seat: the answerer is assumed to count cards
  the same way and to challenge when that pays (`challenge_pays`), or anyway at rate
  ``challenge_rate``. A bluff it can disprove (it sees every other card of the rank) is surely
  challenged; a bluff on a rank whose cards are mostly unseen is likely believed. So the
  bluffs that pay are the low-risk ones.
"""

from __future__ import annotations

import math

from ..rules.cards import RANK, SUITS
from ..rules.scoring import CHALLENGE_FACTOR, POINTS, bluff_stake
from ..views.view import SeatView


def hold_probability(unseen_of_rank: int, unseen_total: int, hand_size: int) -> float:
    """Chance that a hand of ``hand_size`` cards drawn from ``unseen_total`` unseen cards holds
    at least one of the ``unseen_of_rank`` cards of a rank (hypergeometric)."""
    if unseen_of_rank <= 0 or hand_size <= 0:
        return 0.0
    if hand_size > unseen_total - unseen_of_rank:
        return 1.0
    miss = 1.0
    for i in range(hand_size):
        miss *= (unseen_total - unseen_of_rank - i) / (unseen_total - i)
    return 1.0 - miss


def claim_true_probability(view: SeatView, bluff_rate: float) -> float:
    """For the seat answering the pending claim: the chance that it is true (R29).

    Exact (0 or 1) when the seat can see the face-down card (the shown stock-bottom card, R28);
    0 when every card of the lone card's rank is accounted for (seen, in its own hand or its
    side's captures); otherwise the model of the module docstring.
    """
    claim = view.pending_claim
    if claim is None:
        raise ValueError("claim_true_probability needs a pending claim (R29)")
    claimant, lone = claim
    rank = RANK[lone]
    known = view.claim_card
    if known is not None:
        return 1.0 if RANK[known] == rank else 0.0
    unseen_of_rank = view.unseen_rank_counts[rank]  # the face-down card is among the unseen
    if unseen_of_rank == 0:
        return 0.0
    h = hold_probability(unseen_of_rank, len(view.unseen), view.hand_sizes[claimant] + 1)
    return h / (h + (1.0 - h) * bluff_rate)


def challenge_pays(q: float, stake: int, cards: float) -> bool:
    """Whether challenging beats believing for the answerer, in points for its side (R29):
    believing gives the claimant ``stake`` and the two cards (worth ``cards``); a challenge
    gives it ``2 * stake`` and the cards if the claim is true (probability ``q``), else the
    answerer's side ``2 * stake``. (With no cards at stake: challenge when ``q < 3/4``.)"""
    believe = -(stake + cards)
    challenge = q * -(CHALLENGE_FACTOR * stake + cards) + (1.0 - q) * CHALLENGE_FACTOR * stake
    return challenge > believe


def challenge_probability(view: SeatView, card: int, bluff_rate: float, challenge_rate: float) -> float:
    """For the seat to move, before it plays ``card`` face down on the lone card: the chance
    that the answer is a challenge (R29).

    The answerer is assumed to count cards as `claim_true_probability` does and to
    challenge when that pays (`challenge_pays`); otherwise it still challenges at
    ``challenge_rate``. What it can count depends on how many of the unseen cards of the rank
    it holds itself (a hypergeometric draw): holding every one, it knows a bluff for sure. The
    cards of the rank this seat holds or its side captured unseen stay unseen to the answerer,
    so it can never be sure of a true claim. The shown stock-bottom card (R28) is known to
    everyone: challenged exactly when it is a bluff.
    """
    lone = view.pile_top
    answerer = view.lone_card_seat
    if lone is None or answerer is None:
        raise ValueError("challenge_probability needs exactly one played card on the table (R29)")
    rank = RANK[lone]
    true_claim = RANK[card] == rank
    if view.stock_bottom == card and view.stock_bottom_holder == view.seat:  # R28: a known card
        return 0.0 if true_claim else 1.0
    unseen_of_rank = view.unseen_rank_counts[rank]
    # Cards of the rank this seat can place but the answerer cannot: in this hand (the card
    # played, for a true claim) or captured unseen by this side.
    mine = len(SUITS) * view.settings.decks - view.public_rank_counts[rank] - unseen_of_rank
    pool = len(view.unseen)
    # The places of this seat's unseen cards that the answerer can see (its hand, its side's
    # hidden captures): the unseen cards of the rank are spread over them at random.
    hand = view.unseen_known_by(answerer)
    answerer_pool = view.unseen_count_of(answerer)
    my_hand = view.hand_sizes[view.seat]
    stake = bluff_stake(lone, view.settings)
    cards = POINTS[lone] + POINTS[card]
    p_challenge = 0.0
    total = math.comb(pool, hand)
    for held in range(min(unseen_of_rank, hand) + 1):  # cards of the rank the answerer holds
        p_held = math.comb(unseen_of_rank, held) * math.comb(pool - unseen_of_rank, hand - held) / total
        left = mine + unseen_of_rank - held  # of the rank, unseen by the answerer
        if left == 0:
            q = 0.0
        else:
            h = hold_probability(left, answerer_pool, my_hand)
            q = h / (h + (1.0 - h) * bluff_rate)
        p_challenge += p_held * (1.0 if challenge_pays(q, stake, cards) else challenge_rate)
    return p_challenge
