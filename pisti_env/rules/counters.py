"""The per-side counters of a hand and the keys of a hand result, shared by both engines.

``Game.counts[row][side]`` and the batched engine's ``BatchState.side_counts[b, row, side]``
hold the same rows, named by [`Counter`][pisti_env.rules.counters.Counter]. A hand result (``Game.hand_scores()``, the
env's ``info["hand_result"]``, the batched ``BatchStep.hand_result``) is one dict per side
with the keys `hand_result_keys` lists.
"""

from __future__ import annotations

from enum import IntEnum


class Counter(IntEnum):
    """Rows of the per-side counter table."""

    CAPTURED = 0  # cards captured this hand (R21)
    CARD_POINTS = 1  # their points (R20), hidden ones included
    PUBLIC_POINTS = 2  # points every seat can count this hand (R30)
    PISTIS = 3  # piştis this hand (R13; R14 with double_pisti=10; believed/proven claims, R29)
    DOUBLE_PISTIS = 4  # double piştis this hand (R14)
    PISTI_POINTS = 5  # their points (R13–R17)
    MATCH_SCORES = 6  # totals of the finished hands of this match (R24)
    # The bluff variant only (R29); without it the table stops at MATCH_SCORES:
    BLUFF_POINTS = 7  # bluff points received this hand (public at once, R30)
    BLUFF_CLAIMS = 8  # claims this side made this hand
    BLUFF_BELIEVED = 9  # ... believed
    BLUFF_CHALLENGED_TRUE = 10  # ... challenged and true
    BLUFF_CHALLENGED_FALSE = 11  # ... challenged and false (bluffs caught)


NUM_PLAIN_COUNTERS = Counter.MATCH_SCORES + 1


def num_counters(bluff: bool) -> int:
    """Rows of the counter table: the plain ones, plus the bluff rows with the variant (R29)."""
    return len(Counter) if bluff else NUM_PLAIN_COUNTERS


# Hand-result keys (R20–R22) and the counter row each one reads ("majority" and "total" are
# computed at the hand's end, R21, R22).
HAND_RESULT_KEYS = ("cards", "card_points", "majority", "pisti", "double_pisti", "pisti_points", "total")
# With the bluff variant (R29): bluff points and this side's claim counts.
BLUFF_RESULT_ROWS = {
    "bluff_points": Counter.BLUFF_POINTS,
    "bluff_claims": Counter.BLUFF_CLAIMS,
    "bluff_believed": Counter.BLUFF_BELIEVED,
    "bluff_challenged_true": Counter.BLUFF_CHALLENGED_TRUE,
    "bluff_challenged_false": Counter.BLUFF_CHALLENGED_FALSE,
}
BLUFF_COUNTERS = tuple(BLUFF_RESULT_ROWS)[1:]  # the claim counts, without the points
COUNTED_RESULT_ROWS = {
    "cards": Counter.CAPTURED,
    "card_points": Counter.CARD_POINTS,
    "pisti": Counter.PISTIS,
    "double_pisti": Counter.DOUBLE_PISTIS,
    "pisti_points": Counter.PISTI_POINTS,
}


def hand_result_keys(bluff: bool) -> tuple[str, ...]:
    """The keys of one side's hand result, in order."""
    return HAND_RESULT_KEYS + (tuple(BLUFF_RESULT_ROWS) if bluff else ())
