"""Worlds a seat cannot tell apart from the real one (R31): the cards it cannot know, and a copy
of a [`Game`][pisti_env.game.Game] with those cards dealt again (for search players like pimc).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..rules import locations as loc
from ..util.arguments import check_int
from ..rules.cards import RANK
from ..rules.counters import Counter
from ..rules.scoring import POINTS

if TYPE_CHECKING:
    from .engine import Game


def unknown_cards(game: Game, seat: int) -> list[int]:
    """Physical cards whose identity ``seat`` cannot know (R31), ascending; see
    `pisti_env.rules.locations.unknown_codes`."""
    unknown = loc.unknown_codes(seat, game.side_of[seat])
    return [p for p, code in enumerate(game.where) if code in unknown]


def determinize(game: Game, seat: int, rng: random.Random | int | None = None, *, claim: bool | None = None) -> Game:
    """A copy of ``game`` in which everything ``seat`` cannot know (R31) is dealt again uniformly.

    The unknown cards (`unknown_cards`, a set the seat can work out itself) are
    shuffled and dealt into the unknown places in an order that is itself public: the
    face-down card of a pending claim (R29), other hands by seat and position, hidden table
    cards, the stock in dealing order, the hidden captures of each other side, then the
    believed face-down cards of each other seat (R29). Hand sizes, the stock size and
    everything the seat has seen are kept, and the result depends only on ``rng`` and on
    what the seat knows, never on where the hidden cards really are. ``deck[:stock_pos]``
    (the cards dealt already) is listed in ascending order, since their real deal order is
    not knowable. The copy's generator is reseeded from ``rng`` so it does not reveal the
    real shuffles of later hands either.

    Args:
        game: the real game (left unchanged).
        seat: the seat whose knowledge is kept.
        rng: a ``random.Random`` (advanced in place), an int seed, or ``None``.
        claim: with a pending claim whose face-down card ``seat`` cannot see (R29),
            ``True``/``False`` deals only worlds in which that card is / is not of the lone
            card's rank (uniformly among them); ``None`` (default): no condition.

    Raises ``ValueError`` for a seat outside ``0..num_players - 1``, for ``claim`` without
    such a claim, or when no world meets ``claim``; ``TypeError`` for a seat that is not an int,
    or an ``rng`` that is neither a ``random.Random``, an int seed nor ``None``.
    """
    seat = check_int(seat, "seat", low=0, high=game.num_players - 1, kind="seat")
    if not isinstance(rng, random.Random):
        rng = random.Random(check_int(rng, "rng", kind="seed or a random.Random", none=True)
                            if rng is not None else None)
    unknown = loc.unknown_codes(seat, game.side_of[seat])
    where = game.where
    hidden_claim = game.claimant >= 0 and where[game.claim_card] in unknown
    if claim is not None and not hidden_claim:
        raise ValueError(
            f"claim={claim!r} needs a pending claim whose face-down card seat {seat} cannot see (R29); "
            "pass claim=None"
        )
    cards = unknown_cards(game, seat)  # ascending: no trace of where they really are
    rng.shuffle(cards)
    if claim is not None:
        _condition_claim(game, cards, claim, rng)
    deal = iter(cards)
    g = game.clone()
    if hidden_claim:
        g.claim_card = card = next(deal)
        g.where[card] = loc.PILE_DOWN + game.claimant
    for s, hand in enumerate(g.hands):
        if s != seat:
            for i, p in enumerate(hand):
                if where[p] in unknown:
                    hand[i] = card = next(deal)
                    g.where[card] = loc.HAND + s
    for i, p in enumerate(g.pile):
        if where[p] == loc.PILE_HIDDEN:
            g.pile[i] = card = next(deal)
            g.where[card] = loc.PILE_HIDDEN
    for i in range(g.stock_pos, len(g.deck)):
        if where[g.deck[i]] == loc.STOCK:
            g.deck[i] = card = next(deal)
            g.where[card] = loc.STOCK
    # The order in which the dealt cards came off the deck is not knowable either: list them
    # in ascending order, so the deck stays a permutation of the cards.
    stock = set(g.deck[g.stock_pos :])
    g.deck[: g.stock_pos] = [p for p in range(len(g.deck)) if p not in stock]
    captured_codes = [loc.CAPT_HIDDEN + side for side in range(game.num_sides)]
    captured_codes += [loc.CAPT_DOWN + s for s in range(game.num_players)]
    for code in captured_codes:
        if code in unknown:
            for _ in range(where.count(code)):
                g.where[next(deal)] = code
    # Hidden captured cards may now score differently for the other sides (R20).
    card_points = [0] * game.num_sides
    for p, code in enumerate(g.where):
        side = loc.captured_by(code, game.side_of)
        if side >= 0:
            card_points[side] += POINTS[p]
    g.counts[Counter.CARD_POINTS] = card_points
    g.rng = random.Random(rng.getrandbits(64))
    return g


def _condition_claim(game: Game, cards: list[int], claim: bool, rng: random.Random) -> None:
    """Make ``cards[0]`` (the pending claim's slot) a card of the lone card's rank
    (``claim=True``) or not (``False``): if it is not, swap it with one drawn uniformly from
    those that are, which leaves the deal uniform among the worlds meeting the condition."""
    rank = RANK[game.pile[0]]
    if (RANK[cards[0]] == rank) == claim:
        return
    fits = [i for i, p in enumerate(cards) if (RANK[p] == rank) == claim]
    if not fits:
        raise ValueError(
            f"no world has a {'true' if claim else 'false'} claim: "
            f"every unseen card is {'not ' if claim else ''}of the lone card's rank (R29)"
        )
    i = fits[rng.randrange(len(fits))]
    cards[0], cards[i] = cards[i], cards[0]
