"""Learner steps per second of the TorchRL PPO recipes, old door and new door, in one run.

* **old door**: ``examples/torchrl_pettingzoo.py``: TorchRL's ``PettingZooWrapper`` over the
  turn-based ``pisti_v0`` (``--tables`` games, ``SerialEnv``), self-play, every play a learner
  decision;
* **new door**: ``examples/torchrl_masked.py``: ``PistiTorchRLEnv``, ``--num-envs`` games of the
  batched engine in one ``EnvBase``, the learner against ``greedy``;
* **self-play, new door**: ``examples/torchrl_selfplay.py``: ``PistiSelfPlayTorchRLEnv``,
  ``--selfplay-envs`` games, the old door's loop (every play a learner decision);
* **reference**: ``examples/cleanrl_ppo_vector.py``, the CleanRL-style loop on the same vector
  env with the same batch shape, so the new door's figure reads as a ratio to it.

Each runs its recipe's own ``train`` for a fixed number of learner decisions (whole batches;
the collection and the PPO updates both count) and reports steps/s and the share of the time
spent inside our env (``pisti_v0``'s ``step``/``reset`` for the old door, our ``EnvBase``'s
``_step``/``_reset`` for the new doors, the vector env's for the reference); the rest is the
library (collector, tensordicts, TorchRL's env layer, policy, GAE, loss and optimiser) or the
script's own loop.

Usage: ``python benchmarks/bench_lib_torchrl.py [--steps 65536] [--num-envs 1024]
[--selfplay-steps 36864] [--selfplay-envs 256] [--old-steps 9600] [--tables 8] [--threads 1]``.
Run it alone on the machine (its figures are wall-clock times).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

import torch
from pettingzoo.utils.wrappers import BaseWrapper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import cleanrl_ppo_vector  # noqa: E402
import torchrl_masked  # noqa: E402
import torchrl_pettingzoo  # noqa: E402
import torchrl_selfplay  # noqa: E402
from lib_timing import Stopwatch  # noqa: E402  (benchmarks/, beside this script)


class TimedAEC(BaseWrapper):
    """``pisti_v0`` with its ``step`` and ``reset`` timed."""

    def __init__(self, env, watch: Stopwatch) -> None:
        super().__init__(env)
        self._step, self._reset = watch.wrap(env.step), watch.wrap(env.reset)

    def step(self, action) -> None:
        self._step(action)

    def reset(self, seed=None, options=None) -> None:
        self._reset(seed=seed, options=options)


def old_door(steps: int, tables: int) -> tuple[int, float, float]:
    watch = Stopwatch()
    env = torchrl_pettingzoo.make_env(tables, seed=0, wrap=lambda aec: TimedAEC(aec, watch))
    batch = 2400 if steps >= 2400 else steps
    start = time.perf_counter()
    torchrl_pettingzoo.train(env, frames=steps, seed=0, frames_per_batch=batch, minibatch_size=batch // 5)
    return steps, time.perf_counter() - start, watch.seconds


def new_door(steps: int, num_envs: int) -> tuple[int, float, float]:
    watch = Stopwatch()
    env = torchrl_masked.make_env(num_envs, seed=0)
    watch.patch(env, "_step", "_reset")  # our EnvBase's own work, TorchRL's env layer left out
    start = time.perf_counter()
    _, figures = torchrl_masked.train(env, frames=steps, seed=0)
    return figures["frames"], time.perf_counter() - start, watch.seconds


def selfplay_door(steps: int, num_envs: int) -> tuple[int, float, float]:
    watch = Stopwatch()
    env = torchrl_selfplay.make_env(num_envs, seed=0)
    watch.patch(env, "_step", "_reset")  # our EnvBase's own work, TorchRL's env layer left out
    batch = num_envs * 48  # a 2-player hand per game and batch
    frames = max(steps // batch, 1) * batch
    start = time.perf_counter()
    torchrl_pettingzoo.train(env, frames=frames, seed=0, frames_per_batch=batch, minibatch_size=min(3840, batch))
    return frames, time.perf_counter() - start, watch.seconds


def reference(steps: int, num_envs: int, threads: int) -> tuple[int, float, float]:
    watch = Stopwatch()
    args = cleanrl_ppo_vector.Args(
        seed=0, num_envs=num_envs, total_timesteps=steps, minutes=0.0, log_every=0, eval_deals=0, threads=threads
    )
    envs = cleanrl_ppo_vector.make_envs(args)
    watch.patch(envs.unwrapped if hasattr(envs, "unwrapped") else envs, "step", "reset")
    start = time.perf_counter()
    _, history = cleanrl_ppo_vector.train(args, envs=envs)
    return len(history) * args.batch_size, time.perf_counter() - start, watch.seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=65_536, help="learner decisions per batched run (whole batches of num_envs * 32)")
    parser.add_argument("--num-envs", type=int, default=1024, help="games of the batched runs")
    parser.add_argument("--old-steps", type=int, default=9_600, help="plays of the old door's run (it is ~20x slower)")
    parser.add_argument("--selfplay-envs", type=int, default=256, help="games of the batched self-play run")
    parser.add_argument("--selfplay-steps", type=int, default=36_864, help="plays of the self-play run (whole batches of selfplay-envs * 48)")
    parser.add_argument("--tables", type=int, default=8, help="pisti_v0 tables of the old door (SerialEnv)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    for name in ("steps", "num_envs", "selfplay_envs", "selfplay_steps", "old_steps", "tables", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    runs: list[tuple[str, Callable[[], tuple[int, float, float]]]] = [
        ("TorchRL, old door (PettingZooWrapper on pisti_v0)", lambda: old_door(args.old_steps, args.tables)),
        ("TorchRL, new door (PistiTorchRLEnv, batched)", lambda: new_door(args.steps, args.num_envs)),
        ("TorchRL self-play, new door (PistiSelfPlayTorchRLEnv)", lambda: selfplay_door(args.selfplay_steps, args.selfplay_envs)),
        ("CleanRL-style loop on the vector env (reference)", lambda: reference(args.steps, args.num_envs, args.threads)),
    ]
    rows = []
    for name, run in runs:
        # TorchRL's SerialEnv (the old door) sets torch's thread count for the whole process (to
        # 2 here); on a shared CPU that slows every later loop severalfold, so each run starts
        # from --threads again.
        torch.set_num_threads(args.threads)
        rows.append((name, run()))
    base = rows[-1][1][0] / rows[-1][1][1]
    print(f"{'loop':56} {'steps':>8} {'seconds':>8} {'steps/s':>9} {'vs ref':>7} {'in env':>7}")
    for name, (steps, seconds, in_env) in rows:
        rate = steps / seconds
        print(f"{name:56} {steps:8,} {seconds:8.1f} {rate:9,.0f} {rate / base:6.2f}x {in_env / seconds:6.1%}")
    print("in env: share of the loop's wall-clock time inside our env's step/reset; the rest is the library "
          "(collector, tensordicts, policy, GAE, loss, optimiser) or the script's own loop")


if __name__ == "__main__":
    main()
