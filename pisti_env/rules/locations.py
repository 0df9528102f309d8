"""Where a card is and who may know it: the location codes of both engines (R8, R28–R31).

Every physical card has one *location code* (``Game.where``, the batched engine's
``BatchState.where``) and one *playing-seat code* (``Game.played_by``). A location code says at
once where the card lies and which seats can identify it, so the observation encoder, the
seat views, ``determinize`` and the critic's hidden-information input all derive what a seat
may know from these codes and the predicates below, never from a second definition.

Codes are small ints (they fit a byte). Families indexed by seat or side (``HAND + seat``,
``CAPT_SHOWN + side``, ...) reserve `MAX_SEATS` consecutive codes each. The values are
part of the saved state of training checkpoints: never renumber them.
"""

from __future__ import annotations

from functools import lru_cache

MAX_SEATS = 6  # R3, R27: at most six players (two decks), so at most six sides

# --- location codes (``where``) ---------------------------------------------------------------
STOCK = 0  # in the stock, unseen
STOCK_SHOWN = 1  # the shown stock-bottom card, still in the stock (R28)
HAND = 2  # + seat: in that seat's hand, known to that seat only
HAND_SHOWN = HAND + MAX_SEATS  # + seat: the shown stock-bottom card in that seat's hand (R28)
PILE_UP = HAND_SHOWN + MAX_SEATS  # face up in the table pile
PILE_JACK = PILE_UP + 1  # a Jack moved to the bottom at the deal: public (R7)
PILE_HIDDEN = PILE_JACK + 1  # a table card never turned up (R8)
CAPT_SHOWN = PILE_HIDDEN + 1  # + side: captured by that side, seen by everyone
CAPT_HIDDEN = CAPT_SHOWN + MAX_SEATS  # + side: never-shown table card captured by that side (R8)
# --- playing-seat codes (``played_by``), disjoint from the location codes so that one lookup
# table can map both (the observation's card rows are the sum of the two).
PLAYED_BY = 32  # + seat: the card was played face up this hand by that seat
# --- the bluff variant (R29), after the playing-seat codes ---------------------------------
PILE_DOWN = PLAYED_BY + MAX_SEATS  # + seat: face-down card of a pending claim, known to that seat only
CAPT_DOWN = PILE_DOWN + MAX_SEATS  # + seat: a believed face-down card, captured by that seat's side,
# known to that seat only, not even to its partner (R29, R30, R31)
PILE_DOWN_SHOWN = CAPT_DOWN + MAX_SEATS  # the shown stock-bottom card (R28) played face down: public
NOBODY = 255  # playing-seat code of a card nobody has played face up (a face-down card keeps
# it until it is shown: who played it would give it away)

NUM_LOCATIONS = PILE_DOWN_SHOWN + 1  # location codes are 0 .. NUM_LOCATIONS - 1
NUM_PLAIN_LOCATIONS = CAPT_HIDDEN + MAX_SEATS  # without the bluff variant codes stop below this

if CAPT_HIDDEN + MAX_SEATS > PLAYED_BY:  # the families must not run into the playing-seat codes
    raise AssertionError("location codes overlap the playing-seat codes")


@lru_cache(maxsize=None)
def unknown_codes(seat: int, side: int) -> frozenset[int]:
    """Location codes whose cards ``seat`` (of ``side``) cannot identify (R31): the unseen
    stock, other seats' hands (not the shown stock bottom, R28), table cards never turned up
    (R8) unless its own side captured them, and other seats' face-down cards never shown
    (R29) — a partner's too (R30)."""
    codes = {STOCK, PILE_HIDDEN}
    codes.update(HAND + s for s in range(MAX_SEATS) if s != seat)
    codes.update(CAPT_HIDDEN + s for s in range(MAX_SEATS) if s != side)
    codes.update(PILE_DOWN + s for s in range(MAX_SEATS) if s != seat)
    codes.update(CAPT_DOWN + s for s in range(MAX_SEATS) if s != seat)
    return frozenset(codes)


# Codes of cards every seat can identify (R7, R28, R30).
PUBLIC_CODES = frozenset(
    [PILE_UP, PILE_JACK, STOCK_SHOWN, PILE_DOWN_SHOWN]
    + [CAPT_SHOWN + s for s in range(MAX_SEATS)]
    + [HAND_SHOWN + s for s in range(MAX_SEATS)]
)


def in_hand_of(code: int) -> int:
    """The seat holding a card with location ``code``, or -1 when it is in no hand."""
    if HAND <= code < HAND + MAX_SEATS:
        return code - HAND
    if HAND_SHOWN <= code < HAND_SHOWN + MAX_SEATS:
        return code - HAND_SHOWN
    return -1


def captured_by(code: int, side_of: tuple[int, ...] | list[int]) -> int:
    """The side that captured a card with location ``code`` (shown, hidden or a believed
    face-down card, whose code names the claimant's seat), or -1 when it is not captured.
    ``side_of[seat]`` maps seats to sides (R4)."""
    if CAPT_SHOWN <= code < CAPT_SHOWN + MAX_SEATS:
        return code - CAPT_SHOWN
    if CAPT_HIDDEN <= code < CAPT_HIDDEN + MAX_SEATS:
        return code - CAPT_HIDDEN
    if CAPT_DOWN <= code < CAPT_DOWN + MAX_SEATS:
        return side_of[code - CAPT_DOWN]
    return -1


def played_by_seat(code: int) -> int:
    """The seat of a playing-seat code, or -1 for `NOBODY`."""
    return -1 if code == NOBODY else code - PLAYED_BY
