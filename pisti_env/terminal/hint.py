"""The hint of ``pisti-play``: what a policy would play here, with its probabilities.

By default the policy is the shipped checkpoint trained for the game's settings
(``checkpoints/pisti-2p``, ``pisti-4p`` or ``pisti-bluff``, :func:`shipped_policy`); any player
spec works (``--hint-policy``). A trained policy gives its probabilities
(``action_probabilities``); a scripted player just names its move. The policy is loaded on the
first hint (a checkpoint needs torch), through the registry.
"""

from __future__ import annotations

import os
from typing import Any

from ..actions import BELIEVE, FACE_DOWN, action_to_text
from ..agents import SeatView, make_player
from ..cards import card_to_symbol
from ..rules import Settings

CHECKPOINTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "checkpoints")
SHIPPED = ("pisti-2p", "pisti-4p", "pisti-bluff")


def shipped_policy(settings: Settings) -> tuple[str, Any] | None:
    """``(path, player)`` of the first shipped checkpoint trained for ``settings`` (the match
    target aside), loaded through the registry, which refuses one trained for another game;
    ``None`` when none fits or torch is missing."""
    for name in SHIPPED:
        path = os.path.join(CHECKPOINTS, name)
        if not os.path.isdir(path):
            continue
        try:
            return path, make_player(path, settings=settings)
        except (ImportError, ValueError):  # CheckpointError is a ValueError: another game's policy
            continue
    return None


def _label(action: int) -> str:
    """An action as the person would type it: ``10♦``, ``d 7♥`` (face down), ``believe``."""
    if action < FACE_DOWN:
        return card_to_symbol(action)
    if action < BELIEVE:
        return "d " + card_to_symbol(action - FACE_DOWN)
    return action_to_text(action)


def _percent(p: float) -> str:
    """``0.456`` -> ``"46%"``; below half a percent ``"<1%"`` (never a misleading ``0%``)."""
    return f"{100 * p:.0f}%" if p >= 0.005 else "<1%"


class Hinter:
    """Answers ``h``: ``hinter(view)`` is a line of text.

    Args:
        settings: the game's settings.
        spec: the policy: a player spec or checkpoint path; ``None``: :func:`shipped_policy`.
    """

    def __init__(self, settings: Settings, spec: str | None = None) -> None:
        self.settings = settings
        self.spec = spec
        self._player: Any = None
        self._name = ""
        self._error: str | None = None

    def _load(self) -> None:
        if self._player is not None or self._error is not None:
            return
        if self.spec is None:
            found = shipped_policy(self.settings)
            if found is None:
                self._error = "no shipped policy was trained for these settings (give one with --hint-policy)"
                return
            self._name, self._player = os.path.relpath(found[0]), found[1]
            return
        try:
            self._player = make_player(self.spec, seed=0, settings=self.settings)
            self._name = self.spec
        except (ImportError, TypeError, ValueError) as err:
            self._error = f"the hint policy {self.spec!r} cannot be used: {err}"

    def __call__(self, view: SeatView) -> str:
        """What the policy would play for ``view``'s seat (whose turn it must be)."""
        self._load()
        if self._error is not None:
            return f"No hint: {self._error}."
        probabilities = getattr(self._player, "action_probabilities", None)
        if probabilities is None:
            return f"{self._name} would play {_label(self._player.act(view))}."
        probs = sorted(probabilities(view).items(), key=lambda item: -item[1])
        best = probs[0][0]
        rest = ", ".join(f"{_label(a)} {_percent(p)}" for a, p in probs)
        return f"{self._name} would play {_label(best)} ({rest})."
