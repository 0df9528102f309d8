"""The statistics of the evaluation report: t confidence intervals, Wilson intervals for win
rates and Bradley–Terry ratings.

Pure Python and NumPy, no SciPy: the Student t quantile comes from the regularized incomplete
beta function (continued fraction) and bisection.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)  # rating points per unit of natural-log strength


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be in [0, 1], got {x}")
    if x in (0.0, 1.0):
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """The Student t distribution function with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (0 < p < 1)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_ci(values: Sequence[float] | np.ndarray, level: float = 0.95) -> dict[str, float]:
    """Mean of independent samples with a two-sided Student-t confidence interval.

    Args:
        values: the samples (e.g. one paired score difference per duplicate deal).
        level: the confidence level, in (0, 1).

    Returns ``{"mean", "ci_low", "ci_high", "half_width", "sd", "n"}``; with fewer than two
    samples the interval is NaN.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = np.asarray(values, dtype=np.float64)
    n = int(x.size)
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = float(x.mean())
    if n < 2:
        half = sd = float("nan")
    else:
        sd = float(x.std(ddof=1))
        half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "half_width": half, "sd": sd, "n": n}


def rate_ci(values: Sequence[float] | np.ndarray, trials: int, level: float = 0.95) -> dict[str, float]:
    """A win rate (a mean of per-deal rates in [0, 1]) with a Wilson score interval.

    A Student-t interval on rates collapses to ``± 0`` when every deal gives the same result
    (a 100% win rate) and reaches past 0 or 1 near them; the Wilson interval stays inside
    [0, 1] and keeps a width at the bounds. The seatings of one duplicate deal are paired, so
    the interval uses the *effective* number of trials ``rate (1 - rate) / se²``, with ``se``
    the rates' standard error over deals (Kish's design effect): in mid-range the interval is
    then the t interval's to a fraction of a percent, pairing's gain kept. When every deal gives
    the same rate of 0 or 1 (``se`` 0) the effective trials are ``trials``, the hands (or
    matches) played, as if each were independent; the same rate strictly between (a
    deterministic policy against itself splits every deal) has no width, as the t interval.

    Args:
        values: one rate per duplicate deal (its seatings' wins, a draw counting half).
        trials: the hands (or matches) the rates come from.
        level: the confidence level, in (0, 1).

    Returns `mean_ci`'s keys with ``ci_low``/``ci_high`` the Wilson bounds, ``half_width``
    the larger distance from the rate to a bound (so ``rate ± half_width`` covers the interval)
    and ``n_eff`` the effective trials (``None`` where no count applies: fewer than two deals, or
    no variation strictly between 0 and 1).
    """
    x = np.asarray(values, dtype=np.float64)
    if np.any(x < 0.0) or np.any(x > 1.0):
        raise ValueError("rate_ci needs rates in [0, 1]")
    return rate_interval(mean_ci(x, level), trials, level)


def rate_interval(stat: dict[str, float], trials: int, level: float = 0.95) -> dict[str, float]:
    """`rate_ci` from the rates' summary, `mean_ci`'s ``mean``, ``sd`` and ``n``
    (a report keeps them, so its intervals can be checked without replaying it)."""
    rate, sd, n = stat["mean"], stat["sd"], int(stat["n"])
    if n < 2:
        return {**stat, "n_eff": None}
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < n:
        raise ValueError(f"trials must be an int >= the number of rates ({n}), got {trials!r}")
    se2 = sd * sd / n
    if se2 == 0.0 and 0.0 < rate < 1.0:  # every deal split alike (a deterministic mirror): nothing varies
        return {**stat, "ci_low": rate, "ci_high": rate, "half_width": 0.0, "n_eff": None}
    n_eff = float(trials) if se2 == 0.0 else rate * (1.0 - rate) / se2
    z = t_quantile(0.5 + level / 2.0, n - 1)
    shrink = 1.0 + z * z / n_eff
    centre = (rate + z * z / (2.0 * n_eff)) / shrink
    spread = z / shrink * math.sqrt(rate * (1.0 - rate) / n_eff + z * z / (4.0 * n_eff * n_eff))
    low, high = max(0.0, centre - spread), min(1.0, centre + spread)
    return {**stat, "ci_low": low, "ci_high": high, "half_width": max(rate - low, high - rate), "n_eff": n_eff}


def bradley_terry(
    wins: np.ndarray, tol: float = 1e-10, max_iter: int = 10_000
) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry ratings on the Elo scale.

    Model: ``P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))``. Fitted by the MM algorithm
    (Hunter 2004); a draw counts half a win for each.

    Args:
        wins: ``m x m`` array, ``wins[i, j]`` = (possibly fractional) wins of ``i`` over ``j``.
        tol: stop when no log-strength moves more than this.
        max_iter: iteration cap.

    Returns the ratings ``R`` (mean 0). A player without any win gets ``-inf``, one without any
    loss ``+inf`` (the likelihood has no finite maximum then).
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if (w < 0).any():
        raise ValueError("wins must be non-negative")
    m = w.shape[0]
    games = w + w.T
    np.fill_diagonal(games, 0.0)
    total_wins = w.sum(axis=1) - np.diag(w)
    total_losses = w.sum(axis=0) - np.diag(w)
    played = games.sum(axis=1) > 0
    finite = played & (total_wins > 0) & (total_losses > 0)
    ratings = np.full(m, np.nan)
    ratings[played & (total_wins == 0)] = -np.inf
    ratings[played & (total_losses == 0) & (total_wins > 0)] = np.inf
    idx = np.flatnonzero(finite)
    if idx.size:
        g = games[np.ix_(idx, idx)]
        wi = w[np.ix_(idx, idx)].sum(axis=1)
        strength = np.ones(idx.size)
        for _ in range(max_iter):
            denom = (g / (strength[:, None] + strength[None, :])).sum(axis=1)
            new = wi / denom
            new /= math.exp(np.log(new).mean())
            done = np.max(np.abs(np.log(new) - np.log(strength))) < tol
            strength = new
            if done:
                break
        r = ELO_SCALE * np.log(strength)
        ratings[idx] = r - r.mean()
    return ratings


def elo_difference(win_rate: float) -> float:
    """Rating difference whose Bradley–Terry win probability is ``win_rate``:
    ``400 * log10(p / (1 - p))``."""
    if not 0.0 < win_rate < 1.0:
        raise ValueError(f"win_rate must be in (0, 1), got {win_rate}")
    return 400.0 * math.log10(win_rate / (1.0 - win_rate))
