"""What every recipe in ``examples/`` prints when it is done: how fast it trained (with the load
average, since other jobs slow a shared CPU) and the trained player's margins over the
baselines on duplicate deals (:func:`~training.harness.margins.baseline_margins`)."""

from __future__ import annotations

import argparse
import math
import os
from typing import Callable


def print_training(steps: int, seconds: float, unit: str = "steps", note: str = "") -> None:
    """``trained 3,830,000 steps in 600 s (6,383 steps/s; load average 4.1 on 2 CPUs)`` and
    ``note`` after it; ``unit`` names what ``steps`` counts (``"plays"``, ``"env steps"``)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(f"trained {steps:,} {unit} in {seconds:.0f} s ({steps / max(seconds, 1e-9):,.0f} steps/s; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs){note}", flush=True)


def print_margins(margins: dict[str, dict[str, float]], deals: int) -> None:
    """:func:`~training.harness.margins.baseline_margins`' result, a line per baseline:
    ``vs greedy: +4.77 ± 0.45 points per hand (2000 duplicate deals)``."""
    for baseline, diff in margins.items():
        print(f"vs {baseline}: {diff['mean']:+.2f} ± {diff['half_width']:.2f} points per hand ({deals} duplicate deals)", flush=True)


def add_run_flags(parser: argparse.ArgumentParser, *, seed: int = 0, save: str = "where to save the trained weights",
                  threads: str = "--threads") -> None:
    """The flags every recipe has, the same way: ``--deals`` (duplicate deals per evaluation, 0:
    none), ``--seed``, torch's thread count (``threads`` names the flag) and ``--save`` (``save``
    says what it saves)."""
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation (0: none)")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument(threads, type=int, default=1, help="torch CPU threads (small networks gain nothing from more)")
    parser.add_argument("--save", default=None, help=save)


def report(steps: int, seconds: float, deals: int, margins: Callable[[], dict[str, dict[str, float]]],
           unit: str = "steps", note: str = "") -> dict[str, dict[str, float]] | None:
    """:func:`print_training`, then (``deals`` > 0) ``margins()`` printed by :func:`print_margins`
    and returned."""
    print_training(steps, seconds, unit, note)
    if not deals:
        return None
    results = margins()
    print_margins(results, deals)
    return results
