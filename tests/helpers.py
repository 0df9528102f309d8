"""Deck-building and play helpers for the rule tests (RULES.md R6 deal order).

Stable functions (other test files may import them):

* ``deck_with_prefix(prefix_codes, decks=1) -> list[str]``: the given cards first, in order,
  then every remaining card in id order (R2), as text codes.
* ``deck_from_plays(table, plays, decks=1) -> list[str]``: with 2, 3 or 4 players and one
  deck, R6 deals the cards after the table round-robin from the first player, four rounds per
  deal, and play also goes round-robin from the first player (R3, R18). So if every player
  plays its cards of a deal in the order they were dealt, the i-th card played is deck item
  ``4 + i``. A deck is therefore ``table + plays`` (missing cards appended in id order).
* ``deck_with_suffix(prefix, suffix, decks=1) -> list[str]``: ``prefix``, then the remaining
  cards in id order, then ``suffix`` (the deck's last cards, i.e. the last deal).
* ``play(g, codes, seats=None)``: play text codes one after another, checking the seat to move.
* ``play_random(g, rng)``: one random legal move.
* ``finish_hand_random(g, rng)`` / ``finish_hand_in_order(g)``: play until the hand ends.
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

from pisti_env import card_to_text, parse_card

ALL_CODES = [card_to_text(c) for c in range(52)]


def codes(text: str) -> list[str]:
    """``"7C 7D JS"`` -> ``["7C", "7D", "JS"]``."""
    return text.split()


def deck_with_prefix(prefix_codes: Iterable[int | str], decks: int = 1) -> list[str]:
    """The given cards first (in order), then every remaining card in id order (text codes).

    With ``decks=2`` each id is present twice; the prefix may name an id at most twice.
    """
    prefix = [card_to_text(parse_card(c)) for c in prefix_codes]
    left = {c: decks for c in ALL_CODES}
    for c in prefix:
        if left[c] == 0:
            raise ValueError(f"card {c} named more than {decks} time(s) in the prefix")
        left[c] -= 1
    rest = [c for c in ALL_CODES for _ in range(left[c])]
    return prefix + rest


def deck_with_suffix(
    prefix: Iterable[int | str], suffix: Iterable[int | str], decks: int = 1
) -> list[str]:
    """``prefix`` first, then every remaining card in id order, then ``suffix`` last."""
    prefix = [card_to_text(parse_card(c)) for c in prefix]
    suffix = [card_to_text(parse_card(c)) for c in suffix]
    full = deck_with_prefix(prefix + suffix, decks=decks)
    rest = full[len(prefix) + len(suffix):]
    return prefix + rest + suffix


def deck_from_plays(table: Sequence[int | str], plays: Sequence[int | str], decks: int = 1) -> list[str]:
    """``table`` (4 cards, item 3 face up) then ``plays`` then the remaining cards in id order.

    For 2–4 players with one deck, playing the deck in order (``finish_hand_in_order``) plays
    exactly ``plays`` first (see the module docstring).
    """
    if len(table) != 4:
        raise ValueError("the table gets exactly 4 cards (R6)")
    return deck_with_prefix(list(table) + list(plays), decks=decks)


def play(g, cards: Iterable[int | str], seats: Sequence[int] | None = None) -> None:
    """Play each card (text code or id); if ``seats`` is given, assert the seat to move first."""
    cards = list(cards)
    for i, c in enumerate(cards):
        if seats is not None:
            assert g.turn == seats[i], f"play {i} ({c}): expected seat {seats[i]} to move, got {g.turn}"
        cid = parse_card(c)
        assert cid in g.legal_actions(), f"play {i} ({c}) is not legal for seat {g.turn}: {g.legal_actions()}"
        g.step(cid)


def play_random(g, rng: random.Random) -> int:
    """One random legal move; returns the card id played."""
    card = rng.choice(g.legal_actions())
    g.step(card)
    return card


def finish_hand_random(g, rng: random.Random) -> None:
    """Random legal play until the current hand ends (or the game is over)."""
    start = g.hands_completed
    while not g.done and g.hands_completed == start:
        play_random(g, rng)


def finish_hand_in_order(g) -> None:
    """Play the stock in deck order until the hand ends: the seat to move plays the card it
    received earliest among those it still holds (for a deck built by ``deck_from_plays``)."""
    start = g.hands_completed
    while not g.done and g.hands_completed == start:
        hand = g.hands[g.turn]
        first = min(hand, key=g.deck.index)
        g.step(first % 52)
