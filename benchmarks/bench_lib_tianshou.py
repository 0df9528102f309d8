"""Tianshou's PPO on its two doors, measured in one run: learner steps/s and the share of the
time spent inside our env against inside the library.

    pip install -e ".[tianshou]"
    python benchmarks/bench_lib_tianshou.py                  # --steps 32768 on each door
    python benchmarks/bench_lib_tianshou.py --steps 65536 --envs 1024 --steps-per-env 16

* **step**: Tianshou's ``PettingZooEnv`` over ``pisti_v0`` (the Python engine, one game per
  ``DummyVectorEnv`` worker), trained as ``examples/tianshou_pettingzoo_selfplay.py`` trains
  (self-play: every decision of every seat is a learner decision; that recipe's settings).
* **batched**: [`PistiTianshouVectorEnv`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv]
  (``--envs`` games on the batched engine, the learner against ``greedy``), trained as
  ``examples/tianshou_masked.py`` trains (its PPO settings, ``--steps-per-env`` per rollout).
* **engine**: the reference: ``PistiVectorEnv`` alone, ``--envs`` games, random legal actions,
  no library (the batched door's ceiling on this machine now).

All play 2-player single hands. The env's time is everything inside our env's ``reset`` and
``step`` (timed at the boundary: ``pisti_v0``'s AEC methods under ``PettingZooEnv``; the
door's own methods for the batched door, its NumPy/``Batch`` adapter included); the library's
is the rest (collector, replay buffer, the policy's forward passes, GAE, the PPO updates). Each
door runs at least ``--steps`` learner decisions (whole collections); the one-off start
(building the networks, first imports) is not counted. Speeds depend on the machine and its
load: compare the lines of one run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tianshou.env import DummyVectorEnv

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import tianshou_masked as batched_recipe  # noqa: E402  (the batched door's recipe)
import tianshou_pettingzoo_selfplay as step_recipe  # noqa: E402  (the step-by-step door's recipe)

from lib_timing import Stopwatch  # noqa: E402  (benchmarks/, beside this script)
from pisti_env.envs.vector import PistiVectorEnv  # noqa: E402


def step_door(steps: int, seed: int) -> tuple[int, float, float]:
    """The step-by-step door: ``(learner steps, seconds, seconds inside pisti_v0)``."""
    clock = Stopwatch()

    def make() -> Any:
        env = step_recipe.make_env()
        clock.patch(env.env, "reset", "step", "last")  # what PettingZooEnv calls on the AEC env (last() observes)
        return env

    envs = DummyVectorEnv([make for _ in range(8)])
    torch.manual_seed(seed)
    algorithm = step_recipe.build(step_recipe.make_env())
    clock.seconds = 0.0
    stats = step_recipe.train(algorithm, envs, steps, seed=seed)
    return stats["steps"], stats["seconds"], clock.seconds


def batched_door(steps: int, num_envs: int, steps_per_env: int, seed: int) -> tuple[int, float, float]:
    """The batched door: ``(learner steps, seconds, seconds inside the door)``."""
    clock = Stopwatch()
    envs = batched_recipe.make_env(num_envs)
    clock.patch(envs, "reset", "step")
    torch.manual_seed(seed)
    algorithm = batched_recipe.build(envs)
    clock.seconds = 0.0
    stats = batched_recipe.train(algorithm, envs, steps, steps_per_env=steps_per_env, seed=seed)
    return stats["steps"], stats["seconds"], clock.seconds


def engine_alone(steps: int, num_envs: int, seed: int) -> tuple[int, float, float]:
    """The reference: ``PistiVectorEnv`` with random legal actions, no library."""
    env = PistiVectorEnv(num_envs, opponent="greedy", **batched_recipe.SETTINGS)
    rng = np.random.default_rng(seed)
    observation, _ = env.reset(seed=seed)
    done, start = 0, time.perf_counter()
    while done < steps:
        mask = observation["action_mask"].astype(bool)
        observation, *_ = env.step((rng.random(mask.shape) * mask).argmax(1))
        done += num_envs
    seconds = time.perf_counter() - start
    return done, seconds, seconds


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=32_768, help="learner decisions per door (at least; whole collections)")
    parser.add_argument("--envs", type=int, default=512, help="games of the batched door and the engine reference")
    parser.add_argument("--steps-per-env", type=int, default=32, help="vector steps per rollout on the batched door")
    parser.add_argument("--doors", nargs="+", default=["engine", "batched", "step"], choices=["engine", "batched", "step"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.envs < 1 or args.steps_per_env < 1:
        parser.error("--steps, --envs and --steps-per-env must be at least 1")
    torch.set_num_threads(args.threads)

    runs = {
        "engine": lambda: engine_alone(args.steps, args.envs, args.seed),
        "batched": lambda: batched_door(args.steps, args.envs, args.steps_per_env, args.seed),
        "step": lambda: step_door(args.steps, args.seed),
    }
    results = {door: runs[door]() for door in args.doors}
    print(f"Tianshou PPO, 2-player single hands, torch threads {args.threads}")
    print(f"{'door':<8} {'steps':>9} {'seconds':>8} {'steps/s':>9} {'in env':>7} {'in library':>10}")
    for door, (steps, seconds, in_env) in results.items():
        share = in_env / seconds
        print(f"{door:<8} {steps:>9,} {seconds:>8.1f} {steps / seconds:>9,.0f} {share:>7.0%} {1 - share:>10.0%}")
    if "batched" in results and "step" in results:
        (b_steps, b_seconds, _), (s_steps, s_seconds, _) = results["batched"], results["step"]
        print(f"batched / step: {(b_steps / b_seconds) / (s_steps / s_seconds):.1f}x learner steps/s")


if __name__ == "__main__":
    main()
