"""Seconds for an evaluation against ``greedy`` on duplicate deals (2 players, single hands).

For each scripted baseline, the whole ``training.harness.evaluate.evaluate`` call (play, paired
statistics, the rating bootstrap) over ``--deals`` duplicate deals, i.e. twice as many hands;
target: 10,000 deals in at most 60 s on two cores. ``pimc`` is far slower: it is timed on
``--pimc-deals`` deals and the figure scaled to ``--deals``.

Usage: ``python benchmarks/bench_eval.py [--deals 10000] [--pimc-deals 40] [--workers 2]``
"""

from __future__ import annotations

import argparse
import time

from training.harness.duplicate import default_workers
from training.harness.evaluate import evaluate


def timed(player: str, deals: int, workers: int) -> tuple[float, dict]:
    start = time.perf_counter()
    report = evaluate([player, "greedy"], deals=deals, matches=0, seed=0, workers=workers)
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--pimc-deals", type=int, default=40)
    parser.add_argument("--pimc", default="pimc", help="pimc spec, e.g. pimc:n=32")
    parser.add_argument("--workers", type=int, default=default_workers())
    args = parser.parse_args()
    print(f"evaluation vs greedy, 2 players, {args.workers} worker(s), seed 0")
    print(f"{'player':<16} {'deals':>7} {'hands':>7} {'seconds':>9} {'s per 10k deals':>16} {'diff/hand':>16}")
    rows = [(p, args.deals) for p in ("random", "greedy", "expert")] + [(args.pimc, args.pimc_deals)]
    for player, deals in rows:
        seconds, report = timed(player, deals, args.workers)
        diff = report["tables"][0]["pairs"][0]["score_diff"]
        per10k = seconds * 10_000 / deals
        target = "  (target 60 s)" if player != args.pimc else "  (scaled)"
        print(f"{player:<16} {deals:>7} {2 * deals:>7} {seconds:>9.1f} {per10k:>16.1f} "
              f"{diff['mean']:>+9.2f} ± {diff['half_width']:.2f}{target}")


if __name__ == "__main__":
    main()
