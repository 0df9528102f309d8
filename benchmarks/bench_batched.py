"""Steps per second of the batched torch engine under random legal play, observations included.

A step is one move in one game, so a batch step of B games counts B. For each batch size the
script plays random legal cards for a fixed time and prints steps/s, with the wrapped AEC env
(``pisti_env.env()``, one move at a time) measured in the same run as the reference.

The observations are written into one preallocated buffer, as a trainer writes them into its
rollout storage (``step(actions, observation_out=...)``); ``--fresh`` lets the engine allocate
new observation tensors each step instead.

Usage: ``python benchmarks/bench_batched.py [--players 2] [--seconds 2] [--device cpu]
[--sizes 1 64 1024 4096 16384] [--fresh]``
"""

from __future__ import annotations

import argparse
import time

import torch

import pisti_env
from pisti_env.batched import BatchedPisti

try:
    from bench_env import aec_decisions_per_second
except ImportError:  # run from the repository root
    from benchmarks.bench_env import aec_decisions_per_second


def random_legal_actions(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random legal card per game: the k-th legal card, k uniform below the count."""
    # Small integer types: the int64 default makes this policy cost as much as the engine step.
    counts = mask.sum(1, dtype=torch.int16)
    k = (torch.rand(mask.shape[0], generator=generator, device=mask.device) * counts).to(torch.int16)
    return (mask.cumsum(1, dtype=torch.int16) > k[:, None]).to(torch.uint8).argmax(1)


def batched_steps_per_second(
    batch: int, seconds: float, device: str, num_players: int, fresh: bool, seed: int = 0
) -> float:
    engine = BatchedPisti(batch, seed=seed, device=device, num_players=num_players, target=None)
    buffer = None if fresh else torch.empty(batch, engine.observation_size, device=device)
    generator = torch.Generator(device=device).manual_seed(seed)
    out = engine.reset(observation_out=buffer)
    for _ in range(3):  # warm-up
        out = engine.step(random_legal_actions(out.action_mask, generator), buffer)
    steps = 0
    sync = torch.cuda.synchronize if engine.device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            out = engine.step(random_legal_actions(out.action_mask, generator), buffer)
        steps += 10 * batch
        sync()
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096, 16384])
    parser.add_argument("--fresh", action="store_true", help="allocate new observation tensors every step")
    args = parser.parse_args()

    reference = aec_decisions_per_second(lambda: pisti_env.env(num_players=args.players, target=None), args.seconds)
    print(
        f"Pişti batched engine, {args.players} players, random legal play with observations, device "
        f"{args.device}, torch {torch.__version__} with {torch.get_num_threads()} threads"
    )
    print(f"{'batch':>8} {'steps/s':>14} {'vs env()':>9}")
    print(f"{'env()':>8} {reference:>14,.0f} {1.0:>8.1f}x")
    for batch in args.sizes:
        rate = batched_steps_per_second(batch, args.seconds, args.device, args.players, args.fresh)
        print(f"{batch:>8} {rate:>14,.0f} {rate / reference:>8.1f}x")


if __name__ == "__main__":
    main()
