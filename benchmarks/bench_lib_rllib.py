"""RLlib PPO's learner throughput on its two doors to pisti, measured in one run, and where the
time goes (inside our env vs inside RLlib).

    pip install -e ".[rllib]"          # in RLlib's own venv (ray pins gymnasium)
    python benchmarks/bench_lib_rllib.py                 # ~3 minutes
    python benchmarks/bench_lib_rllib.py --seconds 60    # longer, steadier figures

Doors (both with the recipes' PPO settings, the sampling in the driver, one torch thread):

* ``multi-agent AEC``: [`PistiMultiAgentEnv`][pisti_env.integrations.rllib.PistiMultiAgentEnv] (``pisti_v0``
  step by step, one shared module for both seats; ``examples/rllib_ppo.py``), 16 games per
  env runner. Every decision is a learner step.
* ``batched vector``: [`PistiVectorRLlibEnv`][pisti_env.integrations.rllib.PistiVectorRLlibEnv] (the vector
  env on the batched engine, ``greedy`` batched at the other seat; ``examples/rllib_ppo_vector.py``),
  256 games per env runner. A learner step is one of the learner's decisions.

A third line, ``self-play recipe``, is the multi-agent door with ``examples/rllib_ppo.py``'s own
PPO settings (smaller minibatches, more epochs), and splits RLlib's share further with RLlib's
own timers: sampling (env runner, connectors, episodes, forward passes) and the learner update.

For each door: learner steps per second of whole training iterations (sampling and PPO
updates, after one warm-up iteration), and the share of that time spent inside the env's
``reset``/``step`` (timed by a subclass; the rest is RLlib: its env runner, connectors, module
forward passes, episode bookkeeping and the learner). The reference line is the vector env
alone (random legal actions, no library) in the same run, and each door's figure is also given
as a ratio to it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import ray
import torch

from pisti_env.integrations.rllib import PistiMultiAgentEnv, PistiVectorRLlibEnv, ppo_config, single_agent_ppo_config
from pisti_env.envs.vector import PistiVectorEnv
from training.harness import ray_backend
from lib_timing import Stopwatch  # benchmarks/, beside this script

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import rllib_ppo  # noqa: E402  (the self-play recipe's config)

GAME = {"num_players": 2, "target": None}


CLOCK = Stopwatch()  # seconds inside the timed envs' reset/step (the env runner runs in this process)


class Timed:
    """Mixed in before an env class: its ``reset`` and ``step`` add their time to `CLOCK`."""

    def reset(self, **kwargs):
        return CLOCK.call(super().reset, **kwargs)

    def step(self, actions):
        return CLOCK.call(super().step, actions)


class TimedMultiAgentEnv(Timed, PistiMultiAgentEnv):
    pass


class TimedVectorEnv(Timed, PistiVectorRLlibEnv):
    pass


def ppo_settings(**overrides: Any) -> dict[str, Any]:
    """The recipes' PPO settings, so the two doors learn with the same update."""
    return dict(lr=1e-3, train_batch_size_per_learner=8192, minibatch_size=2048, num_epochs=2, gamma=1.0,
                lambda_=0.8, clip_param=0.2, entropy_coeff=0.01, vf_clip_param=float("inf"), use_kl_loss=False,
                **overrides)


def measure(config, seconds: float) -> dict[str, float]:
    """Learner steps/s of whole iterations after a warm-up one, and the env's share of it."""
    algo = config.build_algo()
    sampling = learning = 0.0
    try:
        first = algo.train()["env_runners"]["num_env_steps_sampled_lifetime"]
        CLOCK.seconds = 0.0
        start = time.perf_counter()
        while True:
            result = algo.train()
            steps = result["env_runners"]["num_env_steps_sampled_lifetime"] - first
            sampling += result["timers"].get("env_runner_sampling_timer", 0.0)
            learning += result["timers"].get("learner_update_timer", 0.0)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
    finally:
        algo.stop()
    return {"steps": steps, "seconds": elapsed, "rate": steps / elapsed, "env_share": CLOCK.seconds / elapsed,
            "sampling": sampling / elapsed, "learning": learning / elapsed}


def vector_env_alone(num_envs: int, seconds: float) -> float:
    """Learner steps/s of the vector env alone: random legal actions, no library."""
    env = PistiVectorEnv(num_envs=num_envs, opponent="greedy", output="torch", **GAME)
    observations, _ = env.reset(seed=0)
    generator = torch.Generator().manual_seed(0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        mask = observations["action_mask"].float()
        observations, *_ = env.step(torch.multinomial(mask, 1, generator=generator).squeeze(1))
        steps += num_envs
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="timed training per door, after a warm-up iteration")
    parser.add_argument("--envs-per-runner", type=int, default=256, help="games per env runner on the batched door")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ray_backend.connect(ray_backend.LOCAL)

    doors = {
        "multi-agent AEC (PistiMultiAgentEnv, 16 games per runner)": ppo_config(GAME, hidden=(128, 128), num_envs_per_env_runner=16)
        .environment(TimedMultiAgentEnv, env_config=GAME, disable_env_checking=True)
        .training(**ppo_settings()),
        f"batched vector (PistiVectorRLlibEnv, {args.envs_per_runner} games per runner)": single_agent_ppo_config(
            {"opponent": "greedy", **GAME}, hidden=(128, 128), activation="tanh", num_envs_per_env_runner=args.envs_per_runner
        )
        .environment(TimedVectorEnv, env_config={"opponent": "greedy", **GAME})
        .training(**ppo_settings()),
        "self-play recipe (examples/rllib_ppo.py's config, multi-agent AEC)": rllib_ppo.make_config()
        .environment(TimedMultiAgentEnv, env_config=GAME, disable_env_checking=True),
    }
    load = os.getloadavg()[0]
    reference = vector_env_alone(args.envs_per_runner, min(args.seconds, 10.0))
    print(f"load average at start: {load:.2f}; torch threads 1; sampling in the driver")
    print(f"{'door':<62} {'learner steps/s':>15} {'vs env alone':>13} {'in env':>7} {'in RLlib':>9}")
    print(f"{'reference: the vector env alone (' + str(args.envs_per_runner) + ' games, no library)':<62} {reference:>15,.0f} {1.0:>12.3f}x {'100%':>7} {'-':>9}")
    for name, config in doors.items():
        figures = measure(config, args.seconds)
        print(f"{name:<62} {figures['rate']:>15,.0f} {figures['rate'] / reference:>12.3f}x "
              f"{figures['env_share']:>7.0%} {1 - figures['env_share']:>9.0%}   (RLlib's timers: sampling "
              f"{figures['sampling']:.0%}, learner {figures['learning']:.0%})", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
