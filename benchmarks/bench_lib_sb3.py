"""SB3 (sb3-contrib's MaskablePPO) on its two doors, measured in one run: learner steps/s and
the share of the time spent inside our env against inside the library.

    pip install -e ".[sb3]"
    python benchmarks/bench_lib_sb3.py                   # --steps 32768 on each door
    python benchmarks/bench_lib_sb3.py --steps 65536 --num-envs 1024

* **step**: the step-by-step env (``pisti/Pisti-v0``, :class:`~pisti_env.single_agent.PistiEnv`,
  the Python engine) as ``examples/sb3_maskable_ppo.py --door step`` trains on it (SB3 wraps it
  in a one-game ``DummyVecEnv``; that recipe's PPO settings).
* **batched**: :class:`~pisti_env.integrations.sb3.PistiSB3VecEnv` (``--num-envs`` games on the
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

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnvWrapper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import sb3_maskable_ppo as recipe  # noqa: E402  (the recipe's doors and PPO settings)


class EnvTimer(gymnasium.Wrapper):
    """Times a Gymnasium env's ``reset``, ``step`` and ``action_masks`` (seconds in ``spent``)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.spent = 0.0

    def reset(self, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.env.reset(**kwargs)
        finally:
            self.spent += time.perf_counter() - start

    def step(self, action: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.env.step(action)
        finally:
            self.spent += time.perf_counter() - start

    def action_masks(self) -> np.ndarray:
        start = time.perf_counter()
        try:
            return self.env.unwrapped.action_masks()
        finally:
            self.spent += time.perf_counter() - start


class VecEnvTimer(VecEnvWrapper):
    """Times a VecEnv's ``reset``, ``step_async``/``step_wait`` and ``env_method`` (the masks)."""

    def __init__(self, venv: Any) -> None:
        super().__init__(venv)
        self.spent = 0.0

    def _timed(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            self.spent += time.perf_counter() - start

    def reset(self) -> Any:
        return self._timed(self.venv.reset)

    def step_async(self, actions: np.ndarray) -> None:
        self._timed(self.venv.step_async, actions)

    def step_wait(self) -> Any:
        return self._timed(self.venv.step_wait)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        return self._timed(self.venv.env_method, method_name, *args, indices=indices, **kwargs)


def measure(door: str, steps: int, num_envs: int, seed: int = 0) -> dict[str, float]:
    """One door's learner steps/s and env share over ``steps`` decisions."""
    if door == "batched":
        env: Any = VecEnvTimer(recipe.make_vec_env(num_envs))
        options = dict(recipe.BATCHED_PPO)
    else:
        env = EnvTimer(recipe.make_env("greedy", seed))
        options = dict(recipe.STEP_PPO)
    model = MaskablePPO("MultiInputPolicy", env, seed=seed, verbose=0, **options)
    timer = env if door == "batched" else model.get_env().envs[0]  # SB3 wraps a Gym env in DummyVecEnv(Monitor)
    while not isinstance(timer, (EnvTimer, VecEnvTimer)):
        timer = timer.env
    timer.spent = 0.0
    start = time.perf_counter()
    model.learn(steps)
    seconds = time.perf_counter() - start
    return {"steps": model.num_timesteps, "seconds": seconds, "env": timer.spent / seconds}


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
