"""Card identifiers, ranks, text codes and the deal sizes (RULES.md R1, R2, R6).

Card points (R20) are scoring: `pisti_env.rules.scoring`.

A *card id* is ``suit * 13 + rank`` (R2): suits in the order clubs, diamonds, hearts,
spades and ranks in the order A 2 … 10 J Q K. It is also the action id for playing that
card face up. With two decks (R27) both copies of a card share one id; the engine tells
them apart internally by *physical index* ``copy * 52 + id`` (so ``physical % 52`` is the id).
"""

from __future__ import annotations

from typing import Iterable

from ..util.arguments import is_integer

NUM_CARD_IDS = 52
SUITS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
NUM_RANKS = 13
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
ACE, JACK = 0, 10

TWO_CLUBS = 0 * NUM_RANKS + 1  # 2♣ = 1
TEN_DIAMONDS = 1 * NUM_RANKS + 9  # 10♦ = 22


def card_id(suit: int, rank: int) -> int:
    """The card id of R2 for ``suit`` (0..3, C D H S) and ``rank`` (0..12, A..K)."""
    return suit * NUM_RANKS + rank


def rank_of(card: int) -> int:
    """Rank 0..12 (A..K) of a card id or physical index."""
    return card % NUM_RANKS


def suit_of(card: int) -> int:
    """Suit 0..3 (C D H S) of a card id or physical index."""
    return (card % NUM_CARD_IDS) // NUM_RANKS


# Lookup tables indexed by physical index (covers two decks); the engines' hot paths use them.
RANK = tuple(p % NUM_RANKS for p in range(2 * NUM_CARD_IDS))
IS_JACK = tuple(r == JACK for r in RANK)

# The deal (R6): four cards to the table, then four to each player, again from the stock (R18).
TABLE_SIZE = 4
HAND_SIZE = 4


def card_to_text(card: int) -> str:
    """Text form of R2: rank then suit letter, e.g. ``22 -> "10D"``."""
    card %= NUM_CARD_IDS
    return RANK_NAMES[rank_of(card)] + SUITS[suit_of(card)]


def card_to_symbol(card: int) -> str:
    """Display form with a suit symbol, e.g. ``22 -> "10♦"``, ``10 -> "J♣"``."""
    card %= NUM_CARD_IDS
    return RANK_NAMES[rank_of(card)] + SUIT_SYMBOLS[suit_of(card)]


_TEXT_TO_ID = {card_to_text(c): c for c in range(NUM_CARD_IDS)}


def parse_card(card: int | str) -> int:
    """A card id from an id (0..51) or a text code such as ``"10D"`` or ``"js"``.

    Raises ``TypeError`` for other types and ``ValueError`` for unknown cards.
    """
    if isinstance(card, str):
        key = card.strip().upper()
        if key not in _TEXT_TO_ID:
            raise ValueError(
                f"unknown card text {card!r}: expected rank A,2..10,J,Q,K then suit C,D,H,S "
                f"(e.g. 'AC', '10D', 'JS')"
            )
        return _TEXT_TO_ID[key]
    if not is_integer(card):
        raise TypeError(
            f"a card must be an int id 0..51 or a text code like '10D', got {type(card).__name__}"
        )
    card = int(card)
    if not 0 <= card < NUM_CARD_IDS:
        raise ValueError(f"card id {card} is out of range: ids are 0..51 (R2)")
    return card


def parse_cards(cards: Iterable[int | str]) -> list[int]:
    """Card ids for a sequence of ids or text codes (see `parse_card`)."""
    return [parse_card(c) for c in cards]
