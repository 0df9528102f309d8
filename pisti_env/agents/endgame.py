"""Exact play of the last deal between two sides whose hands are both known (minimax).

Once the stock is empty (R18) and a seat can name every card the other seat holds (card
counting: all other cards have been seen), the rest of the hand is a game of perfect
information of at most eight plies. This module plays it out exactly: captures (R10, R11),
piştis (R13–R17), the last capturer's sweep (R19) and the majority (R21), each side playing
its best. Only *future* points matter for the choice, so hidden points already captured are
not needed.
"""

from __future__ import annotations

from ..rules.cards import JACK, NUM_CARD_IDS, RANK, TEN_DIAMONDS
from ..rules.settings import Settings
from ..rules.scoring import MAJORITY_POINTS, POINTS, pisti_value


def endgame_values(
    mine: list[int],
    theirs: list[int],
    top: int | None,
    pile_size: int,
    pile_points: int,
    last_capturer: int | None,
    captured: tuple[int, int],
    settings: Settings,
    memo: dict | None = None,
) -> dict[int, float]:
    """The exact value, for the side to move, of playing each of its cards.

    Args:
        mine: card ids of the player to move (it moves first).
        theirs: card ids of the only other player (2 players, R3).
        top: the pile's top card id (``None``: empty).
        pile_size: cards in the pile. pile_points: their points (R20; every one known).
        last_capturer: 0 = the mover's side captured last, 1 = the other side, ``None``: nobody.
        captured: cards captured so far this hand, (mover's side, other side), for the majority.
        settings: the pişti variants (R14, R16, R17).
        memo: a dict to share solved positions between calls with the same settings (e.g. the
            possible hands of one decision); a fresh one by default.

    Returns ``{card id: the mover's future points minus the other side's}`` with perfect play
    on both sides to the end of the hand, the sweep and the majority included.
    """
    memo = {} if memo is None else memo
    # Cards of one rank and value play alike (the 10♦ is the only 10 worth points, R17, R20), so
    # the search runs on their kinds, each hand a sorted tuple: a position's key needs no sort.
    hand = tuple(sorted(KIND[card] for card in mine))
    other = tuple(sorted(KIND[card] for card in theirs))
    top_kind = None if top is None else KIND[top]
    last = 0 if last_capturer is None else 1 + last_capturer
    lead = captured[0] - captured[1]
    tried: dict[tuple[int, int], float] = {}
    for i, kind in enumerate(hand):
        if kind not in tried:
            tried[kind] = _play(kind, hand[:i] + hand[i + 1:], other, top_kind, pile_size, pile_points, last, lead,
                                settings, memo)
    return {card: tried[KIND[card]] for card in mine}


# A card's kind (rank, points), and one card id of each kind for the rules that take ids.
KIND = tuple((RANK[card], POINTS[card]) for card in range(NUM_CARD_IDS))
_CARD_OF = {kind: card for card, kind in reversed(list(enumerate(KIND)))}
_TEN_DIAMONDS = KIND[TEN_DIAMONDS]
_FLIP = (0, 2, 1)  # the last-capturer code seen from the other side


def _play(kind: tuple[int, int], rest: tuple, other: tuple, top: tuple[int, int] | None, size: int, points: int,
          last: int, lead: int, settings: Settings, memo: dict) -> float:
    """Value for the mover of playing a card of ``kind`` (``rest``, ``other``: the hands left,
    sorted kinds). ``last``: 0 nobody captured, 1 the mover's side, 2 the other; ``lead``: the
    mover's captured cards minus the other side's (R21)."""
    rank, card_points = kind
    if size and (rank == top[0] or rank == JACK):  # R10, R11
        gain = points + card_points + pisti_value(_CARD_OF[kind], _CARD_OF[top], size, settings, not rest and not other)
        # The other side moves next on an empty pile, and the mover is its "other" (code 2).
        return gain - _best(other, rest, None, 0, 0, 2, -(lead + size + 1), settings, memo)
    return -_best(other, rest, kind, size + 1, points + card_points, _FLIP[last], -lead, settings, memo)


def _best(hand: tuple, other: tuple, top: tuple[int, int] | None, size: int, points: int, last: int,
          lead: int, settings: Settings, memo: dict) -> float:
    """Best value for the side holding ``hand``, to move (``last`` and ``lead`` from its side)."""
    if not hand:
        if other:  # cannot happen with two players dealt alike; kept for safety
            return -_best(other, hand, top, size, points, _FLIP[last], -lead, settings, memo)
        value = 0.0
        if size and last:  # R19: the last capturer sweeps the table
            sign = 1 if last == 1 else -1
            value += sign * points
            lead += sign * size
        if lead > 0:  # R21
            value += MAJORITY_POINTS
        elif lead < 0:
            value -= MAJORITY_POINTS
        return value
    # A pişti depends on the top card itself only through the 10♦ bonus (R17).
    top_key = None if top is None else (top, size == 1 and top == _TEN_DIAMONDS)
    key = (hand, other, top_key, size, points, last, lead)
    found = memo.get(key)
    if found is not None:
        return found
    best = None
    previous = None
    for i, kind in enumerate(hand):
        if kind == previous:  # sorted: equal kinds are neighbours
            continue
        previous = kind
        v = _play(kind, hand[:i] + hand[i + 1:], other, top, size, points, last, lead, settings, memo)
        if best is None or v > best:
            best = v
    memo[key] = best
    return best
