"""The slow path of ``Game.step``: an action that is not a plain face-up play of a held card is
checked here, and a bad one refused with an error that names the legal actions (R9, R29).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..util.arguments import is_integer
from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN, action_to_text
from ..rules.cards import NUM_CARD_IDS
from .claims import may_claim

if TYPE_CHECKING:
    from .engine import Game


def resolve_action(game: Game, action: Any, seat: int) -> tuple[int, int]:
    """Validate ``seat``'s action. Returns ``(0, physical card)`` for a face-up play,
    ``(FACE_DOWN, physical card)`` for a face-down one and ``(BELIEVE, action)`` for an answer
    (R29). Raises ``TypeError``/``ValueError`` as [`step`][pisti_env.game.Game.step] documents."""
    bluff = game.settings.bluff
    top = game.num_actions - 1
    what = "an int card id" if not bluff else "an int action id"
    if not is_integer(action):  # the library's one rule (pisti_env.util.arguments)
        raise TypeError(f"an action must be {what} 0..{top}, got {type(action).__name__} {action!r}")
    action = int(action)
    legal = game.legal_actions()
    if not 0 <= action <= top:
        if not bluff:
            raise ValueError(
                f"action {action} is out of range: actions are card ids 0..{top}; {_legal_text(legal)}"
            )
        raise ValueError(
            f"action {action} is out of range: actions are 0..{top} (card ids 0..51 face up, "
            f"52 + card id face down, 104 believe, 105 challenge, R29); {_legal_text(legal)}"
        )
    if game.claimant >= 0:  # R29: the answer comes before anything else
        if action in (BELIEVE, CHALLENGE):
            return BELIEVE, action
        raise ValueError(
            f"illegal action {action} ({action_to_text(action)}): seat {seat} must answer seat "
            f"{game.claimant}'s claim of a pişti first, believe (104) or challenge (105) (R29); "
            f"{_legal_text(legal)}"
        )
    if action >= BELIEVE:
        raise ValueError(
            f"illegal action {action} ({action_to_text(action)}): there is no claim to answer (R29); "
            f"{_legal_text(legal)}"
        )
    card = action % FACE_DOWN
    if action >= FACE_DOWN and not may_claim(game, seat):
        raise ValueError(
            f"illegal action {action} ({action_to_text(action)}): a card may be played face down "
            f"only when exactly one card lies on the table"
            + ("" if game.settings.last_card_pisti else ", and never as the hand's last card")
            + f" (R29); {_legal_text(legal)}"
        )
    hand = game.hands[seat]
    for p in (card, card + NUM_CARD_IDS):
        if p in hand:
            return (FACE_DOWN if action >= FACE_DOWN else 0), p
    raise ValueError(
        f"illegal action {action} ({action_to_text(action)}): seat {seat} does not hold that card; "
        f"{_legal_text(legal)}"
    )


def _legal_text(legal: list[int]) -> str:
    return f"legal now: {legal} ({', '.join(action_to_text(a) for a in legal)})"
