"""SB3 (sb3-contrib's MaskablePPO) on its two doors, measured in one run: learner steps/s and
the share of the time spent inside our env against inside the library.

    pip install -e ".[sb3]"
    python benchmarks/bench_lib_sb3.py                   # --steps 32768 on each door
    python benchmarks/bench_lib_sb3.py --steps 65536 --num-envs 1024

* **step**: the step-by-step env (``pisti/Pisti-v0``, [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv],
  the Python engine) as ``examples/sb3_maskable_ppo.py --door step`` trains on it (SB3 wraps it
  in a one-game ``DummyVecEnv``; that recipe's PPO settings).
* **batched**: [`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv] (``--num-envs`` games on the
  batched engine) in ``VecMonitor``, with the recipe's batched PPO settings.

Both play 2-player single hands against ``greedy``. The env's time is everything inside the
env's ``reset``/``step`` and its ``action_masks`` (timed by a thin wrapper); the library's is
the rest of ``learn`` (rollout bookkeeping, the policy's forward passes, the PPO updates). The
one-off start (building the model, torch's first imports) is not counted. Each door runs
``--steps`` learner decisions (rounded up to whole rollouts); ``--threads`` torch threads.
Speeds depend on the machine and its load: compare the two doors' lines of one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import torch
from sb3_contrib import MaskablePPO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import sb3_maskable_ppo as recipe  # noqa: E402  (the recipe's doors and PPO settings)
from lib_timing import Stopwatch  # noqa: E402  (benchmarks/, beside this script)


def measure(door: str, steps: int, num_envs: int, seed: int = 0) -> dict[str, float]:
    """One door's learner steps/s and env share over ``steps`` decisions."""
    timer = Stopwatch()
    if door == "batched":
        env: Any = recipe.make_vec_env(num_envs)
        timer.patch(env.venv, "reset", "step_async", "step_wait", "env_method")  # under VecMonitor; env_method: the masks
        options = dict(recipe.BATCHED_PPO)
    else:
        env = recipe.make_env("greedy", seed)
        timer.patch(env, "reset", "step")  # SB3 wraps it in DummyVecEnv(Monitor), which calls these
        timer.patch(env.unwrapped, "action_masks")
        options = dict(recipe.STEP_PPO)
    model = MaskablePPO("MultiInputPolicy", env, seed=seed, verbose=0, **options)
    timer.seconds = 0.0
    start = time.perf_counter()
    model.learn(steps)
    seconds = time.perf_counter() - start
    return {"steps": model.num_timesteps, "seconds": seconds, "env": timer.seconds / seconds}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=32768, help="learner decisions per door (whole rollouts)")
    parser.add_argument("--num-envs", type=int, default=1024, help="games of the batched door")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--doors", nargs="+", choices=("step", "batched"), default=["step", "batched"])
    args = parser.parse_args(argv)
    if args.steps < 1 or args.num_envs < 1 or args.threads < 1:
        parser.error("--steps, --num-envs and --threads must be positive")
    torch.set_num_threads(args.threads)
    print(f"MaskablePPO, 2-player single hands vs greedy, {args.steps:,} steps per door, torch threads {args.threads}")
    results = {}
    for door in args.doors:
        r = results[door] = measure(door, args.steps, args.num_envs)
        label = "step-by-step env (PistiEnv)" if door == "step" else f"batched door ({args.num_envs} games)"
        print(f"{label:32s} {r['steps'] / r['seconds']:9,.0f} learner steps/s   env {r['env']:5.1%}   "
              f"library {1 - r['env']:5.1%}   ({r['steps']:,} steps in {r['seconds']:.1f} s)", flush=True)
    if len(results) == 2:
        ratio = (results["batched"]["steps"] / results["batched"]["seconds"]) / (results["step"]["steps"] / results["step"]["seconds"])
        print(f"batched / step-by-step: {ratio:.1f}x")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
