"""The action ids of both engines and of ``pisti_v0`` (R2, R29).

An action is a plain int. Ids 0..51 play that card id face up (R2). The bluff variant (R29)
extends the same space: ``FACE_DOWN + id`` plays the card face down claiming a pişti,
``BELIEVE`` and ``CHALLENGE`` answer a claim.
"""

from __future__ import annotations

from .cards import NUM_CARD_IDS, card_to_text

FACE_DOWN = NUM_CARD_IDS  # + card id: play that card face down, claiming a pişti (R29)
BELIEVE = FACE_DOWN + NUM_CARD_IDS  # 104
CHALLENGE = BELIEVE + 1  # 105
NUM_PLAIN_ACTIONS = NUM_CARD_IDS  # 52: one per card id
NUM_BLUFF_ACTIONS = CHALLENGE + 1  # 106


def num_actions(bluff: bool) -> int:
    """Size of the action space: 52, or 106 with the bluff variant (R29)."""
    return NUM_BLUFF_ACTIONS if bluff else NUM_PLAIN_ACTIONS


def action_to_text(action: int) -> str:
    """Text of an action id: ``"7C"`` (face up, R2), ``"7C face down"``, ``"believe"``,
    ``"challenge"`` (R29)."""
    if action == BELIEVE:
        return "believe"
    if action == CHALLENGE:
        return "challenge"
    if FACE_DOWN <= action < BELIEVE:
        return f"{card_to_text(action - FACE_DOWN)} face down"
    return card_to_text(action)
