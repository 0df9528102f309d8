"""Seconds for an evaluation against ``greedy`` (or ``--opponent``) on duplicate deals (2 players, single hands).

For each player, the whole ``training.harness.evaluate.evaluate`` call (play, paired
statistics, the rating bootstrap) over ``--deals`` duplicate deals, i.e. twice as many hands,
on the engine ``evaluate`` picks (``auto``; the ``engine`` column says which):

* the shipped checkpoint (``--checkpoint``) on the batched engine, target: 10,000 deals in at
  most 5 s on two cores (issue 17); the same evaluation on the Python engine
  (``--engine python``) is timed on ``--python-deals`` deals and scaled, as the same-run
  reference;
* ``random``, ``greedy`` and ``expert`` (scripted players alone: the Python engine); target for
  the Python engine: 10,000 deals in at most 60 s on two cores;
* ``pimc``, far slower: timed on ``--pimc-deals`` deals and scaled.

``--workers`` are the Python engine's processes, ``--threads`` the batched engine's torch
threads (default: every core, as ``pisti-eval``; on a machine busy with other jobs
``--threads 1`` is far faster). On a
shared machine compare the ``cpu s here`` column (this process's CPU time, all its threads;
the Python engine's worker processes are not in it) as well as the wall seconds.

``--opponent expert --only checkpoint`` times the checkpoint against ``expert`` instead, on
both engines (``expert`` has a batched form without the bluff variant).

Usage: ``python benchmarks/bench_eval.py [--deals 10000] [--python-deals 500] [--pimc-deals 40]
[--workers 2] [--threads 2] [--only checkpoint] [--opponent greedy] [--device cpu]``
"""

from __future__ import annotations

import argparse
import os
import time

from pisti_env import make_settings
from pisti_env.agents import make_player
from training.harness.duplicate import default_workers
from training.harness.evaluate import evaluate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(player: str, deals: int, workers: int, engine: str, threads: int, opponent: str = "greedy",
          device: str = "cpu") -> tuple[float, float, dict]:
    """Wall seconds, this process's CPU seconds (every thread; worker processes not counted)
    and the report."""
    start, cpu = time.perf_counter(), time.process_time()
    report = evaluate([player, opponent], deals=deals, matches=0, seed=0, workers=workers, engine=engine,
                      threads=threads, device=device)
    return time.perf_counter() - start, time.process_time() - cpu, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--python-deals", type=int, default=500, help="deals of the checkpoint on the Python engine")
    parser.add_argument("--pimc-deals", type=int, default=40)
    parser.add_argument("--pimc", default="pimc", help="pimc spec, e.g. pimc:n=32")
    parser.add_argument("--checkpoint", default=os.path.join(ROOT, "checkpoints", "pisti-2p"))
    parser.add_argument("--workers", type=int, default=default_workers(), help="the Python engine's processes")
    parser.add_argument("--threads", type=int, default=default_workers(),
                        help="the batched engine's torch threads (default: every core)")
    parser.add_argument("--only", choices=("checkpoint", "all"), default="all",
                        help="checkpoint: only the checkpoint's two rows")
    parser.add_argument("--opponent", default="greedy", help="the other player of every table (default greedy)")
    parser.add_argument("--device", default="cpu", help="the batched engine's device, e.g. cuda (the Python engine's: the CPU)")
    args = parser.parse_args()
    where = f", batched engine on {args.device}" if args.device != "cpu" else ""
    print(f"evaluation vs {args.opponent}, 2 players, {args.workers} worker process(es), {args.threads} torch thread(s), seed 0{where}")
    print(f"{'player':<16} {'engine':<8} {'deals':>7} {'hands':>7} {'seconds':>9} {'s per 10k deals':>16} "
          f"{'cpu s here':>10} {'diff/hand':>16}")
    checkpoint = os.path.relpath(args.checkpoint)
    start = time.perf_counter()
    make_player(checkpoint, settings=make_settings(num_players=2, target=None), device=args.device)  # import torch (and start CUDA), read the file once
    print(f"(torch import and a first checkpoint load, not counted below: {time.perf_counter() - start:.1f} s)")
    rows = [(checkpoint, args.deals, "auto", "  (target 5 s)" if args.opponent == "greedy" else "  (batched)"),
            (checkpoint, args.python_deals, "python", "  (scaled: same-run reference)")]
    if args.only == "all":
        rows += [(p, args.deals, "auto", "") for p in ("random", "greedy", "expert") if p != args.opponent]
        rows.append((args.pimc, args.pimc_deals, "auto", "  (scaled)"))
    for player, deals, engine, note in rows:
        seconds, cpu, report = timed(player, deals, args.workers, engine, args.threads, args.opponent, args.device)
        table = report["tables"][0]
        diff = table["pairs"][0]["score_diff"]
        per10k = seconds * 10_000 / deals
        if table["engine"] == "python" and not note:
            note = "  (target 60 s)"
        print(f"{os.path.basename(player):<16} {table['engine']:<8} {deals:>7} {2 * deals:>7} {seconds:>9.1f} "
              f"{per10k:>16.1f} {cpu:>10.1f} {diff['mean']:>+9.2f} ± {diff['half_width']:.2f}{note}")


if __name__ == "__main__":
    main()
