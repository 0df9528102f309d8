"""Small rule facts the players share: what a card captures and what a pişti scores.

Each follows RULES.md and cites it; the players call these instead of restating the rules.
"""

from __future__ import annotations

from ..cards import JACK, RANK, TEN_DIAMONDS
from ..rules import Settings


def captures(card: int, top: int | None) -> bool:
    """Whether playing ``card`` takes the pile whose top card is ``top`` (``None``: empty pile):
    same rank (R10) or a Jack on a non-empty pile (R11)."""
    return top is not None and (RANK[card] == RANK[top] or RANK[card] == JACK)


def pisti_value(card: int, top: int | None, pile_size: int, settings: Settings, last_card: bool) -> int:
    """Pişti points for playing ``card`` on a pile of ``pile_size`` cards with top ``top``.

    Args:
        card: the card id played.
        top: the pile's top card id, ``None`` for an empty pile.
        pile_size: cards in the pile before the play.
        settings: the game settings (``double_pisti``, ``last_card_pisti``,
            ``ten_diamonds_pisti_bonus``).
        last_card: whether this is the very last card of the hand (R16).

    Returns 10 for a pişti (R13), ``double_pisti`` for Jack on a lone Jack (R14), plus the 10♦
    bonus (R17); 0 for no pişti, including a pişti voided by R16.
    """
    if pile_size != 1 or top is None:
        return 0
    rank, top_rank = RANK[card], RANK[top]
    if rank == JACK:
        if top_rank != JACK:
            return 0  # R13: a Jack on a lone non-Jack is a plain capture
        points = settings.double_pisti  # R14
    elif rank == top_rank:
        points = 10  # R13
    else:
        return 0
    if not points or (last_card and not settings.last_card_pisti):  # R16
        return 0
    if card % 52 == TEN_DIAMONDS or top % 52 == TEN_DIAMONDS:
        points += settings.ten_diamonds_pisti_bonus  # R17
    return points
