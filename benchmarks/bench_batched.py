"""Steps per second of the batched torch engine under random legal play, observations included.

A step is one move in one game, so a batch step of B games counts B. For each configuration
(players × variant × observation format) and batch size the script plays random legal actions
for a fixed time and prints steps/s, with the wrapped AEC env (``pisti_env.env()`` of the same
settings, one move at a time) measured in the same run as the reference.

The observations are written into one preallocated buffer, as a trainer writes them into its
rollout storage (``step(actions, observation_out=...)``); ``--fresh`` lets the engine allocate
new observation tensors each step instead. Formats: ``float`` (the default observation,
float32) and ``uint8`` ([`BatchedPisti.step`][pisti_env.batched.BatchedPisti.step] with ``observation_format="uint8"``: the
card block as 0/1 bytes plus the float rest, see `pisti_env.batched.compact`).

Torch runs with ``--threads`` threads (1 by default: the figures on the docs' performance page are one
thread's); the header prints the thread count, the device (the GPU's name on CUDA, where every
timing is bracketed by ``torch.cuda.synchronize``) and the load average at the start.

Usage: ``python benchmarks/bench_batched.py [--players 2 4] [--variants plain bluff]
[--formats float uint8] [--sizes 64 256 1024 4096] [--seconds 2] [--device cpu] [--threads 1]
[--fresh]``; on a GPU for instance ``--device cuda --sizes 4096 65536 262144``.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

import pisti_env
from pisti_env.batched import BatchedPisti

try:
    import bench_env
except ImportError:  # imported as benchmarks.bench_batched
    from benchmarks import bench_env

VARIANTS = {"plain": {}, "bluff": {"bluff": True}}
FORMATS = ("float", "uint8")


def random_legal_actions(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random legal action per game: the (k+1)-th legal one, k uniform below the
    count (found by a binary search in the running count of legal actions)."""
    # Small integer types: the int64 default makes this policy cost as much as the engine step.
    flags = mask.view(torch.uint8) if mask.dtype == torch.bool else mask.to(torch.uint8)  # a bool mask: no copy
    running = flags.cumsum(1, dtype=torch.uint8)  # at most 106 legal actions
    k = (torch.rand(mask.shape[0], generator=generator, device=mask.device) * running[:, -1]).to(torch.uint8)
    return torch.searchsorted(running, k[:, None], right=True).squeeze(1)


def batched_steps_per_second(
    batch: int,
    seconds: float,
    device: str,
    num_players: int,
    fresh: bool,
    seed: int = 0,
    observation_format: str = "float",
    **settings,
) -> float:
    """Steps/s of ``batch`` games of random legal play for about ``seconds`` seconds."""
    engine = BatchedPisti(batch, seed=seed, device=device, num_players=num_players, target=None, **settings)
    buffer = None if fresh else engine.observation_buffer(observation_format)
    step = (
        (lambda a: engine.step(a, buffer))
        if observation_format == "float"
        else (lambda a: engine.step(a, buffer, observation_format=observation_format))
    )
    generator = torch.Generator(device=device).manual_seed(seed)
    out = engine.reset()
    for _ in range(3):  # warm-up
        out = step(random_legal_actions(out.action_mask, generator))
    steps = 0
    sync = torch.cuda.synchronize if engine.device.type == "cuda" else (lambda: None)
    sync()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            out = step(random_legal_actions(out.action_mask, generator))
        steps += 10 * batch
        sync()
    return steps / (time.perf_counter() - start)


def env_decisions_per_second(make_env, seconds: float) -> float:
    """Decisions/s of the AEC env ``make_env()`` under random legal play (bench_env's loop)."""
    loop = bench_env.AecLoop(make_env)
    loop.run(seconds)
    return loop.rate


def device_name(device: str) -> str:
    """The device in words: the GPU's name on CUDA."""
    if torch.device(device).type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    return device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--variants", nargs="+", choices=tuple(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--fresh", action="store_true", help="allocate new observation tensors every step")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    torch.set_num_threads(args.threads)

    print(
        f"Pişti batched engine, random legal play with observations, device {device_name(args.device)}, "
        f"torch {torch.__version__} with {torch.get_num_threads()} thread(s), load average at start "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    for players in args.players:
        for variant in args.variants:
            settings = VARIANTS[variant]
            reference = env_decisions_per_second(
                lambda: pisti_env.env(num_players=players, target=None, **settings), args.seconds
            )
            for fmt in args.formats:
                print(f"\n{players} players, {variant}, {fmt} observations")
                print(f"{'batch':>8} {'steps/s':>14} {'vs env()':>9}")
                print(f"{'env()':>8} {reference:>14,.0f} {1.0:>8.1f}x")
                for batch in args.sizes:
                    rate = batched_steps_per_second(
                        batch, args.seconds, args.device, players, args.fresh, observation_format=fmt, **settings
                    )
                    print(f"{batch:>8} {rate:>14,.0f} {rate / reference:>8.1f}x", flush=True)


if __name__ == "__main__":
    main()
