"""The comparison's statistics, computed by ``rliable`` (Agarwal et al. 2021, "Deep
Reinforcement Learning at the Edge of the Statistical Precipice", NeurIPS): no bootstrap code
of our own.

Per algorithm, over its runs' final ratings (one task, so the "task" axis of rliable's score
matrices has length 1):

- the **interquartile mean** (IQM: the mean of the middle 50% of runs, robust to one
  outlying seed and less noisy than the median), with a 95% **stratified bootstrap**
  confidence interval (percentile method);
- **performance profiles**: for each rating ``tau``, the share of runs rated above it, with
  its bootstrap band;
- **IQM learning curves**: the IQM over runs at each evaluation point, with its interval;

and for every ordered pair ``(X, Y)`` the **probability of improvement** ``P(X > Y)``: the
chance that a run of X is rated above a run of Y (the Mann-Whitney U statistic divided by
``m * n``; ties count one half), with its interval.

Intervals are reproducible: the bootstrap draws from ``numpy.random.RandomState(seed)``
(``seed`` 0 unless asked) and NumPy's global generator is seeded for each call and put back.
``rliable`` comes with the ``learning`` extra (``pip install -e ".[learning]"``); it is
imported only here.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

import numpy as np

EXTRA = 'pip install -e ".[learning]"'
CONFIDENCE = 0.95


def import_rliable():
    """``(library, metrics)`` of rliable, or a ``RuntimeError`` naming the extra."""
    try:
        from rliable import library, metrics
    except ImportError as error:
        raise RuntimeError(f"the learning statistics need rliable, which is not installed: {EXTRA}") from error
    return library, metrics


@contextlib.contextmanager
def _arch_quiet(seed: int | None = None) -> Iterator[None]:
    """Quiet and seeded: arch (rliable's bootstrap) warns on every call that ``random_state``
    will go in a later version (rliable 1.2 passes it; arch<8 still takes it: pyproject pins
    both). With ``seed``, NumPy's global generator is seeded for the call and put back after:
    some of rliable's draws (the performance profiles', and arch's beside the ``random_state``
    handed to it) come from it, and without this two calls with one seed gave intervals that
    differed in the last draw."""
    state = np.random.get_state() if seed is not None else None
    if seed is not None:
        np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module="arch")
            yield
    finally:
        if state is not None:
            np.random.set_state(state)


@dataclass
class Comparison:
    """What [compare][training.learning.statistics.compare] computes.

    Attributes:
        iqm: algorithm -> IQM of its final ratings.
        iqm_interval: algorithm -> (low, high) of its 95% interval.
        improvement: (X, Y) -> P(X > Y); ``improvement_interval`` the same keys -> (low, high).
        taus: the ratings at which the profiles are read.
        profiles: algorithm -> share of runs above each tau; ``profile_intervals`` -> (2, len(taus)).
        curve_steps: the evaluation points (steps); ``curve_iqm``/``curve_intervals``: algorithm ->
            IQM per point and its (2, points) interval.
    """

    iqm: dict[str, float]
    iqm_interval: dict[str, tuple[float, float]]
    improvement: dict[tuple[str, str], float]
    improvement_interval: dict[tuple[str, str], tuple[float, float]]
    taus: np.ndarray
    profiles: dict[str, np.ndarray]
    profile_intervals: dict[str, np.ndarray]
    curve_steps: list[int]
    curve_iqm: dict[str, np.ndarray]
    curve_intervals: dict[str, np.ndarray]


def final_scores(runs: Sequence[Mapping]) -> np.ndarray:
    """``(runs, 1)``: the runs' final ratings as rliable's score matrix (one task)."""
    return np.asarray([[float(run["rating"])] for run in runs], dtype=np.float64)


def curve_scores(runs: Sequence[Mapping], points: int) -> np.ndarray:
    """``(runs, 1, points)``: each run's rating at each evaluation point."""
    rows = []
    for run in runs:
        ratings = [float(r) for _, r in run["curve"]]
        if len(ratings) != points:
            raise ValueError(f"seed {run['seed']}: {len(ratings)} curve points, expected {points}")
        rows.append([ratings])
    return np.asarray(rows, dtype=np.float64)


def iqm_with_interval(scores: Mapping[str, np.ndarray], reps: int = 50_000, seed: int = 0
                      ) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """rliable's IQM of each ``(runs, tasks)`` score matrix and its stratified bootstrap interval."""
    library, metrics = import_rliable()
    with _arch_quiet(seed):
        points, intervals = library.get_interval_estimates(
            dict(scores), lambda x: np.array([metrics.aggregate_iqm(x)]), reps=reps,
            confidence_interval_size=CONFIDENCE, random_state=np.random.RandomState(seed))
    return ({name: float(points[name][0]) for name in scores},
            {name: (float(intervals[name][0, 0]), float(intervals[name][1, 0])) for name in scores})


def probability_of_improvement(scores: Mapping[str, np.ndarray], reps: int = 2_000, seed: int = 0
                               ) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], tuple[float, float]]]:
    """rliable's P(X > Y) for every ordered pair of algorithms, with its bootstrap interval."""
    library, metrics = import_rliable()
    names = list(scores)
    pairs = {f"{x}\x00{y}": (scores[x], scores[y]) for x in names for y in names if x != y}
    if not pairs:
        return {}, {}
    with _arch_quiet(seed):
        points, intervals = library.get_interval_estimates(
            pairs, metrics.probability_of_improvement, reps=reps, confidence_interval_size=CONFIDENCE,
            random_state=np.random.RandomState(seed))
    key = lambda pair: tuple(pair.split("\x00"))  # noqa: E731
    return ({key(p): float(np.ravel(points[p])[0]) for p in pairs},
            {key(p): (float(np.ravel(intervals[p][0])[0]), float(np.ravel(intervals[p][1])[0])) for p in pairs})


def performance_profiles(scores: Mapping[str, np.ndarray], taus: np.ndarray, reps: int = 2_000, seed: int = 0
                         ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's score-distribution performance profile of each algorithm at ``taus``."""
    library, _ = import_rliable()
    with _arch_quiet(seed):  # create_performance_profile draws from NumPy's global generator only
        profiles, intervals = library.create_performance_profile(dict(scores), taus, reps=reps,
                                                                 confidence_interval_size=CONFIDENCE)
    return ({k: np.asarray(v) for k, v in profiles.items()}, {k: np.asarray(v) for k, v in intervals.items()})


def iqm_curves(curves: Mapping[str, np.ndarray], reps: int = 5_000, seed: int = 0
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's IQM over runs at each evaluation point of ``(runs, 1, points)`` arrays, with intervals."""
    library, metrics = import_rliable()

    def iqm_per_point(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x[..., point]) for point in range(x.shape[-1])])

    with _arch_quiet(seed):
        points, intervals = library.get_interval_estimates(
            dict(curves), iqm_per_point, reps=reps, confidence_interval_size=CONFIDENCE,
            random_state=np.random.RandomState(seed))
    return {k: np.asarray(v) for k, v in points.items()}, {k: np.asarray(v) for k, v in intervals.items()}


def compare(results: Mapping[str, Mapping], evaluation_steps: Sequence[int], *, seed: int = 0,
            reps: int = 50_000) -> Comparison:
    """Every statistic above for ``results`` (algorithm -> its results document); all of them
    must share ``evaluation_steps`` (the caller checks the task and budget)."""
    finals = {name: final_scores(doc["runs"]) for name, doc in results.items()}
    curves = {name: curve_scores(doc["runs"], len(evaluation_steps)) for name, doc in results.items()}
    iqm, iqm_interval = iqm_with_interval(finals, reps=reps, seed=seed)
    improvement, improvement_interval = probability_of_improvement(finals, reps=min(reps, 2_000), seed=seed)
    every = np.concatenate([s.ravel() for s in finals.values()])
    low, high = float(every.min()), float(every.max())
    pad = max((high - low) * 0.05, 1.0)
    taus = np.linspace(low - pad, high + pad, 101)
    profiles, profile_intervals = performance_profiles(finals, taus, reps=min(reps, 2_000), seed=seed)
    curve_iqm, curve_intervals = iqm_curves(curves, reps=min(reps, 5_000), seed=seed)
    return Comparison(iqm, iqm_interval, improvement, improvement_interval, taus, profiles, profile_intervals,
                      list(evaluation_steps), curve_iqm, curve_intervals)
