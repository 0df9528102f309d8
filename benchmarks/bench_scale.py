"""Scaling out (issue 14): an evaluation on Ray with 1 and 2 worker CPUs, the cost of one Ray
task, and training on 1 and 2 processes (``pisti-train`` and ``pisti-train --nproc 2``).

* ``eval``: ``evaluate(players, deals=D, matches=0)`` locally in this process, then on a local
  Ray instance started with ``num_cpus`` 1 and 2 (a fresh instance each; start-up not counted,
  the first task's worker start-up is).
* ``overhead``: ``random`` vs ``random`` deals on Ray (2 CPUs, workers started) as 2 tasks and
  as one task per deal: (difference in seconds) / (difference in tasks).
* ``train``: ``pisti-train`` with ``--steps S --envs E --rollout T --threads 1`` as one process
  and as ``--nproc 2`` (torchrun, gloo), wall-clock seconds of the whole command.

Usage: ``python benchmarks/bench_scale.py [eval|overhead|train] [--players pimc:n=8 greedy]
[--deals 40] [--steps 65536] [--envs 256] [--rollout 16]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def _ray_session(cpus: int):
    import atexit
    import shutil

    import ray

    temp = tempfile.mkdtemp(prefix="rb-", dir="/tmp")  # short: Ray's socket paths have a length limit
    atexit.register(shutil.rmtree, temp, True)
    ray.init(num_cpus=cpus, include_dashboard=False, object_store_memory=80 * 2**20, _temp_dir=temp,
             log_to_driver=False, logging_level="WARNING")
    return ray


def bench_eval(players: list[str], deals: int) -> None:
    from training.harness.evaluate import evaluate

    t0 = time.perf_counter()
    local = evaluate(players, deals=deals, matches=0, bootstrap=0, workers=1)
    print(f"local, 1 process: {time.perf_counter() - t0:.1f} s")
    for cpus in (1, 2):
        ray = _ray_session(cpus)
        t0 = time.perf_counter()
        report = evaluate(players, deals=deals, matches=0, bootstrap=0, ray="local")
        print(f"ray, {cpus} CPU(s): {time.perf_counter() - t0:.1f} s")
        same = [t["pairs"] for t in report["tables"]] == [t["pairs"] for t in local["tables"]]
        print(f"  same figures as local: {same}")
        ray.shutdown()


def bench_overhead(deals: int) -> None:
    from pisti_env import make_settings
    from training.harness.duplicate import Table, make_seatings, run_games

    settings = make_settings(num_players=2, target=None)
    table = Table(("random", "random"), make_seatings([0, 1], settings), settings)
    ray = _ray_session(2)
    run_games(table, 4, 1, ray="local", chunk=1)  # start the worker processes
    t0 = time.perf_counter()
    run_games(table, deals, 0, ray="local", chunk=deals // 2)
    two = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_games(table, deals, 0, ray="local", chunk=1)
    many = time.perf_counter() - t0
    ray.shutdown()
    print(f"{deals} deals on ray (2 CPUs): 2 tasks {two:.2f} s, {deals} tasks {many:.2f} s; "
          f"overhead {(many - two) / (deals - 2) * 1000:.1f} ms per task")


def bench_train(steps: int, envs: int, rollout: int) -> None:
    flags = ["--steps", str(steps), "--envs", str(envs), "--rollout", str(rollout), "--threads", "1",
             "--eval-every", "0", "--checkpoint-every", "0", "--quiet"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for nproc in (None, 2):
        out = tempfile.mkdtemp(prefix="bench-train-")
        cmd = [sys.executable, "-m", "training.trainer", *flags, "--out", out]
        if nproc:
            cmd[3:3] = ["--nproc", str(nproc)]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        print(f"{'1 process' if nproc is None else f'{nproc} ranks'}: {time.perf_counter() - t0:.1f} s "
              f"for {steps} steps ({envs} games x {rollout} steps per update)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("eval", "overhead", "train"))
    parser.add_argument("--players", nargs="+", default=["pimc:n=8", "greedy"])
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--steps", type=int, default=65536)
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--rollout", type=int, default=16)
    args = parser.parse_args()
    if args.what == "eval":
        bench_eval(args.players, args.deals)
    elif args.what == "overhead":
        bench_overhead(args.deals)
    else:
        bench_train(args.steps, args.envs, args.rollout)


if __name__ == "__main__":
    main()
