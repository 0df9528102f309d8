"""Learner steps per second of the vector env (``gymnasium.make_vec("pisti/Pisti-v0", ...)``).

A learner step is one decision of one learner: a vector step of N games counts N, and includes
every opponent move until each game is at its learner's turn again. The learner plays a random
legal action from the mask (drawn in torch, outputs kept as torch tensors, as a torch trainer
would use them; ``--numpy`` measures the numpy outputs instead). The single-agent env
(``gymnasium.make``, the Python engine) against the same opponent is measured in the same run,
and the ratio printed.

Usage: ``python benchmarks/bench_vector.py [--players 2] [--opponent greedy] [--seconds 3]
[--sizes 256 1024 4096] [--device cpu] [--numpy]``
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import torch

import pisti_env  # noqa: F401  (registers pisti/Pisti-v0)

try:
    from bench_batched import random_legal_actions
except ImportError:  # run from the repository root
    from benchmarks.bench_batched import random_legal_actions


def vector_steps_per_second(
    num_envs: int, seconds: float, opponent: str, device: str, output: str, settings: dict
) -> float:
    env = gymnasium.make_vec(
        "pisti/Pisti-v0", num_envs=num_envs, opponent=opponent, device=device, output=output, **settings
    )
    generator = torch.Generator(device=device).manual_seed(0)
    env.reset(seed=0)

    def one_step() -> None:
        mask = env.action_masks()
        mask = mask if isinstance(mask, torch.Tensor) else torch.from_numpy(mask)
        env.step(random_legal_actions(mask, generator))

    for _ in range(3):  # warm-up
        one_step()
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    sync()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        one_step()
        steps += num_envs
    sync()
    return steps / (time.perf_counter() - start)


def single_steps_per_second(seconds: float, opponent: str, settings: dict) -> float:
    env = gymnasium.make("pisti/Pisti-v0", opponent=opponent, **settings)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--numpy", action="store_true", help="numpy outputs (default: torch tensors)")
    args = parser.parse_args()
    settings = dict(num_players=args.players)
    output = "numpy" if args.numpy else "torch"

    reference = single_steps_per_second(args.seconds, args.opponent, settings)
    print(
        f"Pişti vector env, {args.players} players vs {args.opponent}, random legal learner, {output} outputs, "
        f"device {args.device}, torch {torch.__version__} with {torch.get_num_threads()} threads"
    )
    print(f"{'num_envs':>10} {'learner steps/s':>16} {'vs single':>10}")
    print(f"{'single':>10} {reference:>16,.0f} {1.0:>9.1f}x")
    for n in args.sizes:
        rate = vector_steps_per_second(n, args.seconds, args.opponent, args.device, output, settings)
        print(f"{n:>10} {rate:>16,.0f} {rate / reference:>9.1f}x")


if __name__ == "__main__":
    main()
