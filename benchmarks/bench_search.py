"""Seconds per decision of the ``search`` player (issue 49), by number of worlds.

The search plays whole hands against the shipped policy (2 players, single hands); every
decision with two or more legal cards is timed, as wall-clock and as this process's CPU time
(on a machine busy with other jobs the CPU time is what an idle machine's wall clock would
read, on one thread). The first decision, which loads the policy, is left out. Reports the
mean, median, 95th percentile and largest, and the mean at the hand's first decision (the
longest rollouts: 47 steps with 2 players).

    python benchmarks/bench_search.py                        # worlds 32, 1 thread, 4 hands
    python benchmarks/bench_search.py --worlds 8 32 128 --threads 2 --hands 8
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_player


def measure(worlds: int, hands: int, device: str) -> dict[str, float]:
    settings = make_settings(num_players=2, target=None)
    search = make_player(f"search:worlds={worlds},device={device}", seed=1, settings=settings)
    policy = make_player("pisti-2p", seed=1, settings=settings)
    wall, cpu, first = [], [], []
    for hand in range(hands):
        game = Game(settings, seed=hand)
        while not game.done:
            view = SeatView(game, game.turn)
            if game.turn == hand % 2 or len(view.legal_actions) == 1:
                game.step(policy.act(view) if game.turn != hand % 2 else view.legal_actions[0])
                continue
            opening = game.stock_pos == 12 and game.in_hands == 8
            w, c = time.perf_counter(), time.process_time()
            action = search.act(view)
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
            if opening:
                first.append(cpu[-1])
            game.step(action)
    wall, cpu = wall[1:], cpu[1:]  # the first decision loads the policy
    cpu_sorted = sorted(cpu)
    return {
        "decisions": len(cpu),
        "wall_mean": statistics.fmean(wall),
        "cpu_mean": statistics.fmean(cpu),
        "cpu_median": statistics.median(cpu),
        "cpu_p95": cpu_sorted[int(0.95 * (len(cpu_sorted) - 1))],
        "cpu_max": cpu_sorted[-1],
        "cpu_first": statistics.fmean(first[1:] or first) if first else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, nargs="+", default=[32], help="worlds per decision (default 32)")
    parser.add_argument("--hands", type=int, default=4, help="hands per setting (default 4)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--device", default="cpu", help="where the rollouts run (default cpu)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"search decision time, 2 players, {args.threads} torch thread(s), {args.device}; seconds")
    print("worlds  decisions  wall mean  cpu mean  cpu median  cpu p95  cpu max  cpu at the hand's first")
    for worlds in args.worlds:
        r = measure(worlds, args.hands, args.device)
        print(f"{worlds:6d}  {r['decisions']:9d}  {r['wall_mean']:9.3f}  {r['cpu_mean']:8.3f}  {r['cpu_median']:10.3f}  "
              f"{r['cpu_p95']:7.3f}  {r['cpu_max']:7.3f}  {r['cpu_first']:8.3f}")


if __name__ == "__main__":
    main()
