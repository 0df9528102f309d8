"""The hint of ``pisti-play``: what a policy would play here, with its probabilities.

By default the policy is the shipped checkpoint trained for the game's settings
(``pisti-2p``, ``pisti-4p`` or ``pisti-bluff``, installed with the package,
`shipped_policy`); any player spec works (``--hint-policy``). A trained policy gives its probabilities
(``action_probabilities``); a scripted player just names its move. ``pisti-play`` loads the
policy before the game (a checkpoint needs torch), through the registry; where no shipped
policy fits the game, the hints come from ``expert`` and the person is told why.
"""

from __future__ import annotations

import os
from typing import Any

from ..rules.actions import BELIEVE, FACE_DOWN, action_to_text
from ..agents import SeatView, make_player
from ..agents.registry import SHIPPED_POLICIES, shipped_policy_path
from ..rules.cards import card_to_symbol
from ..rules.settings import Settings

SHIPPED = SHIPPED_POLICIES


FALLBACK = "expert"  # the player used where no shipped policy fits the game (said so, never silently)


def find_shipped_policy(settings: Settings) -> tuple[str, Any] | str:
    """``(name, player)`` of the first shipped checkpoint trained for ``settings`` (the match
    target aside; ``name`` is its registry spec, e.g. ``"pisti-2p"``), loaded through the
    registry, which refuses one trained for another game; else a sentence saying why there is
    none (not installed, torch missing, none trained for this game)."""
    installed = [name for name in SHIPPED if os.path.isdir(shipped_policy_path(name))]
    if not installed:
        return "the shipped policies are not installed with this copy of the package"
    for name in installed:
        try:
            return name, make_player(name, settings=settings)
        except ImportError as err:  # a checkpoint needs torch
            return f"the shipped policies need torch, which cannot be imported ({err})"
        except ValueError:  # CheckpointError is a ValueError: a policy trained for another game
            continue
    return (f"no shipped policy was trained for this game ({', '.join(installed)} fit 2 players, 4 in "
            "partnerships and the 2-player bluff variant)")


def shipped_policy(settings: Settings) -> tuple[str, Any] | None:
    """`find_shipped_policy`'s ``(name, player)``, or ``None`` where none fits."""
    found = find_shipped_policy(settings)
    return None if isinstance(found, str) else found


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
        spec: the policy: a player spec or checkpoint path; ``None``: the shipped policy trained
            for the game (`find_shipped_policy`), else `FALLBACK`, with a
            `note` saying so and why.
    """

    def __init__(self, settings: Settings, spec: str | None = None) -> None:
        self.settings = settings
        self.spec = spec
        self.note: str | None = None  # set by load() when the default policy is replaced
        self._player: Any = None
        self._name = ""

    def load(self) -> None:
        """Build the policy now (``pisti-play`` does so before the game, so a bad
        ``--hint-policy`` is refused up front). Raises the registry's ``ValueError``/``TypeError``,
        or ``ImportError`` for a checkpoint without torch."""
        if self._player is not None:
            return
        if self.spec is None:
            found = find_shipped_policy(self.settings)
            if isinstance(found, str):
                self.note = f"hints come from {FALLBACK}: {found} (choose another with --hint-policy)"
                found = FALLBACK, make_player(FALLBACK, seed=0, settings=self.settings)
            self._name, self._player = found
            return
        self._player = make_player(self.spec, seed=0, settings=self.settings)
        self._name = self.spec

    def __call__(self, view: SeatView) -> str:
        """What the policy would play for ``view``'s seat (whose turn it must be)."""
        try:
            self.load()
        except (ImportError, TypeError, ValueError) as err:
            return f"No hint: the hint policy {self.spec!r} cannot be used: {err}."
        probabilities = getattr(self._player, "action_probabilities", None)
        if probabilities is None:
            return f"{self._name} would play {_label(self._player.act(view))}."
        probs = sorted(probabilities(view).items(), key=lambda item: -item[1])
        best = probs[0][0]
        rest = ", ".join(f"{_label(a)} {_percent(p)}" for a, p in probs)
        return f"{self._name} would play {_label(best)} ({rest})."
