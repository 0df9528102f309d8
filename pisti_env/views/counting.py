"""Card counting from one seat's knowledge (R30–R31): pure functions of a game and a seat.

Which cards a seat cannot identify follows from the location codes alone
(`unknown_codes`), so these counts agree with the observation and
with [`Game.determinize`][pisti_env.game.Game.determinize]. Each function answers what the named seat could count at the
table, or what every seat can. They take the whole game, so players never call them: a player
holds no ``Game``, only a [`SeatView`][pisti_env.SeatView], which exposes them for its
own seat as cached attributes (``view.unseen``, ``view.unseen_rank_counts``, ...).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..rules import locations as loc
from ..rules.cards import NUM_CARD_IDS, NUM_RANKS, RANK
from ..game.engine import Game
from ..rules.scoring import POINTS


def rank_counts(cards: Iterable[int]) -> list[int]:
    """For each rank (0 = A … 12 = K), how many of ``cards`` (card ids or physical cards) have it."""
    counts = [0] * NUM_RANKS
    for c in cards:
        counts[RANK[c]] += 1
    return counts


def points(cards: Iterable[int]) -> int:
    """Total points (R20) of ``cards`` (card ids)."""
    return sum(POINTS[c] for c in cards)


def unseen(game: Game, seat: int) -> list[int]:
    """Card ids ``seat`` cannot identify (R31): other hands, the stock, hidden table cards,
    hidden cards other sides captured, face-down cards of other seats never shown (R29).
    Ascending; an id twice if both copies are unseen."""
    codes = loc.unknown_codes(seat, game.side_of[seat])
    return sorted(p % NUM_CARD_IDS for p, code in enumerate(game.where) if code in codes)


def unseen_count(game: Game, seat: int) -> int:
    """How many cards ``seat`` cannot identify (R31). A public number: it follows from the hand
    sizes, the stock size, the never-turned table cards and who captured them (R8) and the
    face-down cards not shown (R29)."""
    codes = loc.unknown_codes(seat, game.side_of[seat])
    return sum(1 for code in game.where if code in codes)


def unseen_known_by(game: Game, seat: int, other: int) -> int:
    """How many of the cards ``seat`` cannot identify ``other`` can: its hand, its side's
    never-turned table captures (R8), its face-down cards (R29). A public number too."""
    mine = loc.unknown_codes(seat, game.side_of[seat])
    theirs = loc.unknown_codes(other, game.side_of[other])
    return sum(1 for code in game.where if code in mine and code not in theirs)


def public_rank_counts(game: Game) -> list[int]:
    """For each rank, how many of its cards every seat has seen and can place: face up on the
    table or captured face up, Jacks of R7, the shown stock-bottom card (R28). What any seat
    surely knows (it may know more: its own hand and hidden captures)."""
    public = loc.PUBLIC_CODES
    return rank_counts(p for p, code in enumerate(game.where) if code in public)


def played_ranks(game: Game) -> list[int]:
    """For each rank, how many cards of it were shown this hand (`Game.history`)."""
    return rank_counts(c for _, c in game.history)


def pile_known(game: Game) -> list[int]:
    """Card ids in the pile that everyone has seen: face-up cards and R7 Jacks, bottom first."""
    where = game.where
    return [p % NUM_CARD_IDS for p in game.pile if where[p] == loc.PILE_UP or where[p] == loc.PILE_JACK]


def stock_bottom_holder(game: Game) -> int | None:
    """The seat holding the shown stock-bottom card (R28) now, or ``None`` (in the stock,
    already played, or the setting is off). Public: the card was shown to everyone."""
    sb = game.stock_bottom
    if sb is None:
        return None
    seat = loc.in_hand_of(game.where[sb])
    return None if seat < 0 else seat

