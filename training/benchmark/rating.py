"""The anchored rating: one number per task on a fixed scale, ``random`` 0 and ``greedy`` 1000.

An agent's *panel mean* on a task is the mean, over the task's panel of opponents, of its
per-opponent metric (mean score difference per hand for hand tasks, match win rate for match
tasks), each measured on the task's duplicate deals. The rating maps it linearly::

    rating = 1000 * (panel_mean - anchors["random"]) / (anchors["greedy"] - anchors["random"])

where the anchors are ``random``'s and ``greedy``'s own panel means on the same task (stored
with the task). Why this scale: the margin in points is what the game is played for and what
every figure of this project reports; a linear map keeps differences meaningful (200 rating
points are the same number of points per hand anywhere on the scale) and two fixed, cheap,
deterministic-to-reproduce anchors tie the scale to something anyone can rerun. An Elo-style
scale would need a pairwise outcome model that margins of a few points per hand do not fit
well, and would move with the panel's spread. A rating compares only within one task version
(a different panel or deal set gives a different scale).

The interval: the per-opponent tables are independent, so the panel mean's 95% half-width is
``sqrt(sum(h_i^2)) / k`` for ``k`` opponents with half-widths ``h_i``, mapped by the same line.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

SCALE = 1000.0
ANCHORS = ("random", "greedy")


def panel_mean(means: Sequence[float], half_widths: Sequence[float]) -> dict[str, float]:
    """The mean of the per-opponent means and its 95% half-width (independent tables)."""
    if not means or len(means) != len(half_widths):
        raise ValueError("panel_mean needs one half-width per mean, and at least one mean")
    k = len(means)
    finite = [h for h in half_widths if h is not None and math.isfinite(h)]
    half = math.sqrt(sum(h * h for h in finite)) / k if len(finite) == k else float("nan")
    return {"mean": sum(means) / k, "half_width": half}


def anchored_rating(panel: Mapping[str, float], anchors: Mapping[str, float]) -> dict[str, float] | None:
    """The rating (``rating`` and ``half_width``) of a panel mean (`panel_mean`) on the
    scale the ``anchors`` (``{"random": ..., "greedy": ...}``) define; ``None`` when the task has
    no anchors yet."""
    if not all(name in anchors for name in ANCHORS):
        return None
    low, high = anchors["random"], anchors["greedy"]
    if high == low:
        raise ValueError(f"the anchors must differ, got random {low} and greedy {high}")
    slope = SCALE / (high - low)
    return {"rating": slope * (panel["mean"] - low), "half_width": abs(slope) * panel["half_width"]}
