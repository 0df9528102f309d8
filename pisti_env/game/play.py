"""A face-up play's consequences in [`Game`][pisti_env.game.Game]: the capture and its pişti
(R10–R17), then the turn passing on, a new round dealt or the hand ending (R3, R18, R19, R27).

This is the hot path of ``Game.step`` (the AEC env, pimc's rollouts): keep it lean.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import locations as loc
from ..rules.counters import Counter
from .deal import deal_round
from .hand_end import end_hand
from ..rules.scoring import POINTS, is_double_pisti, pisti_value

if TYPE_CHECKING:
    from .engine import Game

# Counter rows a capture updates, as plain ints: looking up an enum member costs more than the
# update itself.
_CAPTURED, _CARD_POINTS, _PUBLIC_POINTS = int(Counter.CAPTURED), int(Counter.CARD_POINTS), int(Counter.PUBLIC_POINTS)
_PISTIS, _DOUBLE_PISTIS, _PISTI_POINTS = int(Counter.PISTIS), int(Counter.DOUBLE_PISTIS), int(Counter.PISTI_POINTS)


def capture(game: Game, p: int, seat: int) -> None:
    """Seat takes the whole pile with card ``p`` (R10, R11), scoring a pişti if any (R13–R17)."""
    pile = game.pile
    where = game.where
    counts = game.counts
    side = game.side_of[seat]
    if len(pile) == 1:
        lone = pile[0]
        settings = game.settings
        # R16: the hand's very last card (``p`` has left the hand already).
        last_card = not game.in_hands and game.stock_pos == len(game.deck)
        points = pisti_value(p, lone, 1, settings, last_card)  # R13–R17
        if points:
            counts[_DOUBLE_PISTIS if is_double_pisti(p, lone, settings) else _PISTIS][side] += 1
            counts[_PISTI_POINTS][side] += points
            counts[_PUBLIC_POINTS][side] += points
    shown = loc.CAPT_SHOWN + side
    pile_hidden = loc.PILE_HIDDEN
    hidden_points = public_points = 0
    for c in pile:
        if where[c] == pile_hidden:  # R8: known from now on to the capturing side only
            where[c] = loc.CAPT_HIDDEN + side
            hidden_points += POINTS[c]
        else:
            where[c] = shown
            public_points += POINTS[c]
    where[p] = shown
    public_points += POINTS[p]
    counts[_CAPTURED][side] += len(pile) + 1
    counts[_CARD_POINTS][side] += public_points + hidden_points
    counts[_PUBLIC_POINTS][side] += public_points
    game.last_capturer = side
    game.pile_hidden = 0
    pile.clear()


def pass_turn(game: Game, seat: int) -> None:
    """After ``seat``'s play: the next seat with cards moves (R3, R27), or deal again
    (R18), or the hand ends (R19)."""
    if game.in_hands:
        n = game.num_players
        nxt = seat + 1 if seat + 1 < n else 0
        hands = game.hands
        # R27: a seat whose hand is empty is skipped. (The deal order of R6/R27 fills seats
        # from the first player on, so this is a guard rather than a branch taken in play.)
        while not hands[nxt]:
            nxt = nxt + 1 if nxt + 1 < n else 0
        game.turn = nxt
    elif game.stock_pos < len(game.deck):
        deal_round(game)  # R18
    else:
        end_hand(game)
