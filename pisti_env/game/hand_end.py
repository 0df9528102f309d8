"""The end of a hand of [`Game`][pisti_env.game.Game]: the sweep (R19), the hand's scores into
the match (R20–R24), the end of the match (R25, R26) or the next hand by the next dealer (R5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import locations as loc
from ..rules.counters import Counter
from .deal import start_hand
from ..rules.scoring import POINTS

if TYPE_CHECKING:
    from .engine import Game


def end_hand(game: Game) -> None:
    """R19 sweep, R20–R23 scoring, R24–R26 match bookkeeping, R5 next dealer."""
    pile = game.pile
    if pile:
        # R19: the last capturer takes what is left; not a capture and never a pişti.
        # (Safety net from seed 000: the dealer's side if nobody captured at all.)
        side = game.last_capturer if game.last_capturer >= 0 else game.side_of[game.dealer]
        where = game.where
        card_points = game.counts[Counter.CARD_POINTS]
        for c in pile:
            hidden = where[c] == loc.PILE_HIDDEN
            where[c] = (loc.CAPT_HIDDEN if hidden else loc.CAPT_SHOWN) + side
            card_points[side] += POINTS[c]
        game.counts[Counter.CAPTURED][side] += len(pile)
        game.pile_hidden = 0
        pile.clear()
    result = game.hand_scores()
    scores, public = game.counts[Counter.MATCH_SCORES], game.counts[Counter.PUBLIC_POINTS]
    for side, r in enumerate(result):
        scores[side] += r["total"]
        public[side] = r["total"]  # everything is public at the end (R30)
    game.hand_results.append(result)
    game.hands_completed += 1

    best = max(scores)
    leaders = [s for s in range(game.num_sides) if scores[s] == best]
    target = game.settings.target
    if target is None:  # single hand: equal highest totals are a draw (R25)
        game.done = True
        game.winner = leaders[0] if len(leaders) == 1 else None
        return
    if best >= target and len(leaders) == 1:  # R25
        runner_up = max(s for i, s in enumerate(scores) if i != leaders[0])
        if best - runner_up >= game.settings.win_margin:  # R26
            game.done = True
            game.winner = leaders[0]
            return
    start_hand(game, (game.dealer + 1) % game.num_players, None)  # R5
