"""The action ids of both engines and of ``pisti_v0`` (R2, R29).

An action is a plain int. Ids 0..51 play that card id face up (R2). The bluff variant (R29)
extends the same space: ``FACE_DOWN + id`` plays the card face down claiming a pişti,
``BELIEVE`` and ``CHALLENGE`` answer a claim.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..util.arguments import is_integer
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


def action_id(action: Any, num_actions: int) -> int:
    """The ``int`` an integer-like ``action`` stands for; the one conversion every mode uses.

    Accepted: ``int`` (not ``bool``), NumPy integers, and any object with ``item()`` holding
    exactly one element (``numel()`` or ``size`` == 1) whose ``item()`` is an ``int``: 0-d
    and one-element integer NumPy arrays, one-element integer torch tensors (duck-typed, torch
    is never imported). The range is not checked here (the game does, with a ``ValueError``).

    Raises:
        TypeError: for anything else, naming the type (and an array's shape and dtype).
    """
    if is_integer(action):  # the library's one rule (pisti_env.util.arguments)
        return int(action)
    item = getattr(action, "item", None)
    if callable(item):
        numel = getattr(action, "numel", None)
        count = numel() if callable(numel) else getattr(action, "size", None)
        if isinstance(count, (int, np.integer)) and count == 1:
            value = item()
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    what = "card id" if num_actions == NUM_CARD_IDS else "action id"
    raise TypeError(
        f"an action must be an int {what} 0..{num_actions - 1} (an int, a NumPy integer, or a "
        f"one-element integer array or tensor), got {_describe(action)}"
    )


def _describe(value: Any) -> str:
    """Type name, plus shape and dtype for arrays and tensors, plus a short repr."""
    text = type(value).__name__
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, np.generic):
        text += f" of shape {tuple(shape)} and dtype {dtype}"
    rep = repr(value)
    return f"{text} {rep if len(rep) <= 60 else rep[:57] + '...'}"
