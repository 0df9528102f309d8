"""The bluff variant (R29) in [`Game`][pisti_env.game.Game]: when a seat may claim a pişti,
the face-down play, and the answer (believe or challenge) with its score.

A face-down play leaves the lone card in ``game.pile`` and puts the claim in
``game.claimant``/``game.claim_card`` (the card at ``loc.PILE_DOWN + claimant``, known to its
player only); the answer is a turn of its own (``game.turn`` moves to the seat that played the
lone card), then play goes on with the seat after the claimant. A believed card is captured at
``loc.CAPT_DOWN + claimant``: its side counts it, but only its player knows it (R30, R31).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..rules import locations as loc
from ..rules.actions import BELIEVE, CHALLENGE
from ..rules.cards import NUM_CARD_IDS, RANK
from ..rules.counters import Counter
from .play import pass_turn
from ..rules.scoring import CHALLENGE_FACTOR, POINTS, bluff_stake

if TYPE_CHECKING:
    from .engine import Game


def may_claim(game: Game, seat: int) -> bool:
    """R29: a face-down play needs exactly one card on the table (and no claim pending);
    with ``last_card_pisti=False`` never on the hand's very last card (R16)."""
    if game.claimant >= 0 or len(game.pile) != 1:
        return False
    lone_seat = loc.played_by_seat(game.played_by[game.pile[0]])
    # The lone card always was played face up by a seat of another side (a capture emptied
    # the table, then the previous seat played it); a guard, never met in play.
    if lone_seat < 0 or game.side_of[lone_seat] == game.side_of[seat]:
        return False
    last_card = game.in_hands == 1 and game.stock_pos == len(game.deck)
    return game.settings.last_card_pisti or not last_card


def play_face_down(game: Game, p: int, seat: int) -> None:
    """R29: ``seat`` plays ``p`` face down on the lone card, claiming a pişti; the seat that
    played the lone card answers next."""
    game.hands[seat].remove(p)
    game.in_hands -= 1
    # R28: everyone saw the stock-bottom card at the deal, so it stays known face down.
    game.where[p] = loc.PILE_DOWN_SHOWN if p == game.stock_bottom else loc.PILE_DOWN + seat
    game.claimant = seat
    game.claim_card = p
    game.counts[Counter.BLUFF_CLAIMS][game.side_of[seat]] += 1
    game.turn = loc.played_by_seat(game.played_by[game.pile[0]])


def answer(game: Game, challenge: bool) -> None:
    """R29: the answer to the pending claim, scored; then the seat after the claimant moves."""
    claimant, p, answerer = game.claimant, game.claim_card, game.turn
    lone = game.pile[0]
    side = game.side_of[claimant]
    stake = bluff_stake(lone, game.settings)
    counts = game.counts
    where = game.where
    if not challenge:  # believed: the stake, both cards taken, the face-down one never shown
        _score_bluff(game, side, stake)
        counts[Counter.BLUFF_BELIEVED][side] += 1
        counts[Counter.PISTIS][side] += 1
        if where[p] == loc.PILE_DOWN_SHOWN:  # known to all (R28): an ordinary shown capture
            where[p] = loc.CAPT_SHOWN + side
            _take_claimed(game, lone, side, public_points=POINTS[lone] + POINTS[p])
            shown = p % NUM_CARD_IDS
        else:
            where[p] = loc.CAPT_DOWN + claimant
            _take_claimed(game, lone, side, public_points=POINTS[lone])
            shown = -1
    else:
        # The card is shown: from now on it is an ordinary face-up card played by the claimant.
        game.played_by[p] = loc.PLAYED_BY + claimant
        game.history.append((claimant, p % NUM_CARD_IDS))
        shown = p % NUM_CARD_IDS
        if RANK[p] == RANK[lone]:  # a true claim (a Jack on a lone non-Jack is not, R29)
            _score_bluff(game, side, CHALLENGE_FACTOR * stake)
            counts[Counter.BLUFF_CHALLENGED_TRUE][side] += 1
            counts[Counter.PISTIS][side] += 1
            where[p] = loc.CAPT_SHOWN + side
            _take_claimed(game, lone, side, public_points=POINTS[lone] + POINTS[p])
        else:  # caught: the challenger's side alone scores; both cards stay, the bluff on top
            _score_bluff(game, game.side_of[answerer], CHALLENGE_FACTOR * stake)
            counts[Counter.BLUFF_CHALLENGED_FALSE][side] += 1
            game.pile.append(p)
            where[p] = loc.PILE_UP
    game.claims.append((claimant, answerer, lone % NUM_CARD_IDS, CHALLENGE if challenge else BELIEVE, shown))
    game.claimant = game.claim_card = -1
    pass_turn(game, claimant)


def _score_bluff(game: Game, side: int, points: int) -> None:
    """Bluff points (R29): public, independent of ``double_pisti``, never a 10♦ bonus."""
    game.counts[Counter.BLUFF_POINTS][side] += points
    game.counts[Counter.PUBLIC_POINTS][side] += points


def _take_claimed(game: Game, lone: int, side: int, public_points: int) -> None:
    """A believed or proven claim takes both cards: a capture (R19)."""
    counts = game.counts
    game.where[lone] = loc.CAPT_SHOWN + side
    counts[Counter.CAPTURED][side] += 2
    counts[Counter.CARD_POINTS][side] += POINTS[lone] + POINTS[game.claim_card]
    counts[Counter.PUBLIC_POINTS][side] += public_points
    game.last_capturer = side
    game.pile.clear()
