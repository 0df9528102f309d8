"""What a play takes and what it scores: every scoring fact of RULES.md, written once.

The Python engine (`pisti_env.game`), the batched engine, the scripted players and the
trainer's batched opponents all read their numbers from here; ``tests/project/test_rule_facts.py``
fails if a rule value appears as a bare literal anywhere else in the package.

Captures (R10, R11), card points (R20), piştis (R13–R17), the majority (R21) and the bluff
stakes (R29). The scalar functions serve the Python engine and the players; the batched
engine computes the same rules on tensors from the same constants.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .cards import ACE, JACK, NUM_CARD_IDS, RANK, TEN_DIAMONDS, TWO_CLUBS

if TYPE_CHECKING:  # only for annotations: rules.py imports this module's constants
    from .settings import Settings

# --- R20: card points --------------------------------------------------------------------
ACE_POINTS = 1
JACK_POINTS = 1
TWO_CLUBS_POINTS = 2
TEN_DIAMONDS_POINTS = 3

# --- R13, R14, R17: piştis ------------------------------------------------------------------
PISTI_POINTS = 10  # R13: a card of the lone card's rank (not a Jack)
DOUBLE_PISTI_CHOICES = (20, 10, 0)  # R14: Jack on a lone Jack; 20 is a "double pişti"
DOUBLE_PISTI_POINTS = 20  # R14: the value of ``double_pisti`` that counts as a double pişti
TEN_DIAMONDS_BONUS_CHOICES = (0, 3)  # R17: extra points for a pişti involving the 10♦

# --- R21: the majority of cards ------------------------------------------------------------
MAJORITY_POINTS = 3

# --- R29: the bluff variant's stakes ---------------------------------------------------------
BLUFF_STAKE = 10  # a believed claim; a challenged one is worth CHALLENGE_FACTOR times that
CHALLENGE_FACTOR = 2  # a challenge doubles the stake (proven: the claimant's; caught: the challenger's)
JACK_STAKE_FACTOR = 2  # ``bluff_jack_double``: stakes doubled on a lone Jack


def card_points(card: int) -> int:
    """Points a captured card scores (R20): Ace 1, Jack 1, 2♣ 2, 10♦ 3, others 0. ``card`` is
    a card id or a physical index (two decks, R27)."""
    card %= NUM_CARD_IDS
    if card == TEN_DIAMONDS:
        return TEN_DIAMONDS_POINTS
    if card == TWO_CLUBS:
        return TWO_CLUBS_POINTS
    rank = RANK[card]
    if rank == ACE:
        return ACE_POINTS
    return JACK_POINTS if rank == JACK else 0


# Indexed by physical index (covers two decks, R27); the engines' hot paths read it.
POINTS = tuple(card_points(p) for p in range(2 * NUM_CARD_IDS))


def captures(card: int, top: int | None) -> bool:
    """Whether playing ``card`` takes the pile whose top card is ``top`` (``None``: empty pile):
    same rank (R10) or a Jack on a non-empty pile (R11)."""
    return top is not None and (RANK[card] == RANK[top] or RANK[card] == JACK)


def pisti_value(card: int, top: int | None, pile_size: int, settings: "Settings", last_card: bool) -> int:
    """Pişti points for playing ``card`` on a pile of ``pile_size`` cards with top ``top``.

    Args:
        card: the card id (or physical index) played.
        top: the pile's top card, ``None`` for an empty pile.
        pile_size: cards in the pile before the play.
        settings: the game settings (``double_pisti``, ``last_card_pisti``,
            ``ten_diamonds_pisti_bonus``).
        last_card: whether this is the very last card of the hand (R16).

    Returns ``PISTI_POINTS`` for a pişti (R13), ``double_pisti`` for a Jack on a lone Jack
    (R14), plus the 10♦ bonus (R17); 0 for no pişti, including one voided by R16.
    """
    if pile_size != 1 or top is None:
        return 0
    rank, top_rank = RANK[card], RANK[top]
    if rank == JACK:
        if top_rank != JACK:
            return 0  # R13: a Jack on a lone non-Jack is a plain capture
        points = settings.double_pisti  # R14
    elif rank == top_rank:
        points = PISTI_POINTS  # R13
    else:
        return 0
    if not points or (last_card and not settings.last_card_pisti):  # R16
        return 0
    if involves_ten_diamonds(card, top):
        points += settings.ten_diamonds_pisti_bonus  # R17
    return points


def involves_ten_diamonds(card: int, lone: int) -> bool:
    """R17: the pişti of ``card`` on ``lone`` holds the 10♦ (ids or physical indices)."""
    return card % NUM_CARD_IDS == TEN_DIAMONDS or lone % NUM_CARD_IDS == TEN_DIAMONDS


def is_double_pisti(card: int, lone: int, settings: "Settings") -> bool:
    """R14: a Jack taking a lone Jack counts as a *double* pişti when it scores 20 (with
    ``double_pisti=10`` it is an ordinary pişti, with 0 none at all)."""
    return RANK[card] == JACK and RANK[lone] == JACK and settings.double_pisti == DOUBLE_PISTI_POINTS


def majority_side(captured: Sequence[int]) -> int:
    """R21: the side with strictly the most captured cards, or -1 on a tie for the most."""
    best = max(captured)
    return captured.index(best) if list(captured).count(best) == 1 else -1


def majority_points(captured: Sequence[int]) -> list[int]:
    """R21 per side: ``MAJORITY_POINTS`` to the side with strictly the most cards, else 0."""
    winner = majority_side(captured)
    return [MAJORITY_POINTS if side == winner else 0 for side in range(len(captured))]


def bluff_stake(lone: int, settings: "Settings") -> int:
    """Points of a believed claim on the lone card ``lone`` (R29): ``BLUFF_STAKE``, doubled on
    a lone Jack with ``bluff_jack_double``; a challenged claim is worth ``CHALLENGE_FACTOR``
    times that."""
    return BLUFF_STAKE * (JACK_STAKE_FACTOR if settings.bluff_jack_double and RANK[lone] == JACK else 1)
