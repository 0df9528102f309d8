"""The deal of [`Game`][pisti_env.game.Game]: a caller's deck checked, the shuffle, the table
cards and the R28 cut when a hand starts (R5–R8, R28), and each round of four cards (R6, R18, R27).

The functions act on the game state they are given, as `pisti_env.batched.hands` does for
the batched engine. Every random choice comes from ``game.rng`` (R5, R7).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Sequence

from ..rules import locations as loc
from ..util.arguments import check_sequence
from ..rules.cards import HAND_SIZE, IS_JACK, NUM_CARD_IDS, TABLE_SIZE, card_to_text, parse_card
from ..rules.counters import Counter, num_counters
from ..rules.settings import Settings

if TYPE_CHECKING:
    from .engine import Game


def validated_deck(settings: Settings, deck: Sequence[int | str]) -> list[int]:
    """Card ids of a deck given by the caller, checked (R6, R7, R27)."""
    check_sequence(deck, "deck", "a list (or other sequence) of card ids or text codes, item 0 dealt first")
    decks = settings.decks
    expected = NUM_CARD_IDS * decks
    if len(deck) != expected:
        raise ValueError(f"deck must hold {expected} cards ({decks} deck(s) of 52), got {len(deck)}")
    try:
        ids = [parse_card(c) for c in deck]
    except (TypeError, ValueError) as error:  # name the argument
        raise type(error)(f"deck: {error}") from None
    counts = [0] * NUM_CARD_IDS
    for c in ids:
        counts[c] += 1
    repeated = [card_to_text(c) for c in range(NUM_CARD_IDS) if counts[c] > decks]
    missing = [card_to_text(c) for c in range(NUM_CARD_IDS) if counts[c] < decks]
    if repeated or missing:
        raise ValueError(
            f"deck must hold every card exactly {decks} time(s): repeated {repeated}, missing {missing}"
        )
    if all(IS_JACK[c] for c in ids[:TABLE_SIZE]):
        raise ValueError("deck deals four Jacks to the table: a void deal (R7); give another deck")
    return ids


def physical_deck(settings: Settings, ids: list[int]) -> list[int]:
    """Physical indices for a list of ids: the second copy of an id becomes ``id + 52``."""
    seen = [False] * NUM_CARD_IDS
    deck = []
    for c in ids:
        deck.append(c + NUM_CARD_IDS if seen[c] else c)
        seen[c] = True
    if settings.show_stock_bottom:
        cut_stock_bottom(deck)
    return deck


def cut_stock_bottom(deck: list[int]) -> None:
    """R28: the shown bottom card is never a Jack; move the last non-Jack to the end."""
    if IS_JACK[deck[-1]]:
        i = max(i for i, c in enumerate(deck) if not IS_JACK[c])
        deck.append(deck.pop(i))


def shuffled_deck(settings: Settings, rng: random.Random) -> list[int]:
    """A fresh shuffle of the physical cards from ``rng`` (R5), cut (R28); a void deal is
    shuffled again (R7)."""
    while True:
        deck = list(range(settings.num_cards))
        rng.shuffle(deck)
        if settings.show_stock_bottom:
            cut_stock_bottom(deck)
        if not all(IS_JACK[c] for c in deck[:TABLE_SIZE]):
            return deck


def first_deal(settings: Settings, seed: int) -> tuple[int, list[int]]:
    """The dealer and the physical deck of the first hand of ``Game(settings, seed=seed)``
    (the same draws in the same order), without building the game: what the batched
    evaluation needs to start the Python engine's deals."""
    rng = random.Random(seed)
    dealer = rng.randrange(settings.num_players)
    return dealer, shuffled_deck(settings, rng)


def start_hand(game: Game, dealer: int, deck: list[int] | None) -> None:
    """A new hand dealt by ``dealer`` from ``deck`` (physical cards, item 0 dealt first), or from
    a fresh shuffle when ``deck`` is ``None``: fresh per-hand state, the table cards (R6.1, R7, R8)
    and the first round (R6.2). The match totals carry over (R24)."""
    n, sides = game.num_players, game.num_sides
    settings = game.settings
    if deck is None:
        deck = shuffled_deck(settings, game.rng)
    game.dealer = dealer
    game.deck = deck
    game.where = bytearray([loc.STOCK]) * settings.num_cards
    game.played_by = bytearray([loc.NOBODY]) * settings.num_cards
    game.hands = [[] for _ in range(n)]
    # A fresh counter table (bluff rows with the variant, R29); the match totals carry over
    # from the finished hands (R24).
    match_scores = game.counts[Counter.MATCH_SCORES] if game.hands_completed else [0] * sides
    game.counts = [[0] * sides for _ in range(num_counters(settings.bluff))]
    game.counts[Counter.MATCH_SCORES] = match_scores
    # R29, the bluff variant: the pending claim (claimant seat and its face-down physical
    # card, -1 when none) and the public record of this hand's claims: (claimant, answerer,
    # lone card id, BELIEVE or CHALLENGE, the face-down card id if everyone knows it —
    # challenged, or the R28 card — else -1).
    game.claimant = game.claim_card = -1
    game.claims: list[tuple[int, int, int, int, int]] = []
    game.last_capturer = -1
    game.history = []
    game.stock_bottom = deck[-1] if settings.show_stock_bottom else None  # R28
    if game.stock_bottom is not None:
        game.where[game.stock_bottom] = loc.STOCK_SHOWN

    # R6.1: items 0..3 to the table, item 3 on top face up, the rest face down.
    pile = list(deck[:TABLE_SIZE])
    for c in pile:
        game.where[c] = loc.PILE_HIDDEN
    # R7: while the top card is a Jack, move it to the bottom (public) and turn up the next.
    while IS_JACK[pile[-1]]:
        jack = pile.pop()
        pile.insert(0, jack)
        game.where[jack] = loc.PILE_JACK
    game.where[pile[-1]] = loc.PILE_UP
    game.pile = pile
    game.pile_hidden = sum(1 for c in pile if game.where[c] == loc.PILE_HIDDEN)  # public count (R8)
    game.stock_pos = TABLE_SIZE
    game.in_hands = 0
    deal_round(game)


def deal_round(game: Game) -> None:
    """R6.2/R18/R27: four cards each, one at a time, from the first player round; stop when
    the stock runs out."""
    n = game.num_players
    deck, pos, end = game.deck, game.stock_pos, len(game.deck)
    hands, where = game.hands, game.where
    first = (game.dealer + 1) % n
    dealt = 0
    for _ in range(HAND_SIZE):
        for i in range(n):
            if pos == end:
                break
            seat = (first + i) % n
            c = deck[pos]
            pos += 1
            hands[seat].append(c)
            where[c] = (loc.HAND_SHOWN if where[c] == loc.STOCK_SHOWN else loc.HAND) + seat
            dealt += 1
    game.stock_pos = pos
    game.in_hands = dealt
    game.turn = first  # the first player always receives a card
