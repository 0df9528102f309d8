"""TorchRL self-play on the batched engine: one masked PPO policy plays every seat of N games,
TorchRL's multi-agent (MAPPO-style) loop, then plays the evaluation harness's duplicate deals.

    pip install -e ".[torchrl]"
    python examples/torchrl_selfplay.py --frames 2000000 --num-envs 256

The env is :class:`pisti_env.integrations.torchrl_batched.PistiSelfPlayTorchRLEnv`: every seat
of every game is an agent of the group ``"agents"`` (shape ``(num_envs, players)``), one seat
per game moves at each step (the group's ``"mask"``), and every seat is rewarded at every step
with the change of its score difference, so its rewards add up over an episode to its final
score difference. That is the group layout of TorchRL's ``PettingZooWrapper`` over
``pisti_v0``, so the training loop is ``examples/torchrl_pettingzoo.py``'s, unchanged (its
``train`` docstring explains the loss: the actor learns from the seat that moved, the critic
from every seat's view at every step); only the env is the batched one, N games in one
``EnvBase`` instead of N Python tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import torch
from tensordict import TensorDictBase

from pisti_env.integrations.torchrl_batched import PistiSelfPlayTorchRLEnv
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from torchrl_pettingzoo import DEFAULTS, GROUP, margins, train  # noqa: E402,F401  (the loop, shared; GROUP for callers)


def make_env(num_envs: int = 256, seed: int | None = 0, device: str = "cpu", **settings: Any) -> PistiSelfPlayTorchRLEnv:
    """``num_envs`` self-play games (default: 2 players, single hands), seeded ``seed``."""
    return PistiSelfPlayTorchRLEnv(num_envs, seed=seed, device=device, **settings)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2_000_000, help="plays to train for (all games together)")
    parser.add_argument("--num-envs", type=int, default=256, help="games stepped together")
    parser.add_argument("--steps-per-batch", type=int, default=48, help="plays per game per PPO batch (48: a 2-player hand)")
    parser.add_argument("--minibatch-size", type=int, default=DEFAULTS["minibatch_size"] * 8, help="plays per gradient step")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--save", default=None, help="where to save the actor's state_dict (.pt)")
    args = parser.parse_args(argv)
    for name in ("frames", "num_envs", "steps_per_batch", "minibatch_size", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    torch.set_num_threads(args.threads)
    start, seen = time.perf_counter(), [0]

    def progress(batch: TensorDictBase) -> None:
        seen[0] += batch.numel()
        print(f"{seen[0]:,} plays, {time.perf_counter() - start:.0f} s", flush=True)

    env = make_env(args.num_envs, seed=args.seed)
    batch = args.num_envs * args.steps_per_batch
    actor = train(env, args.frames, seed=args.seed, on_batch=progress, frames_per_batch=batch,
                  minibatch_size=min(args.minibatch_size, batch))
    seconds = time.perf_counter() - start
    print(f"trained {seen[0]:,} plays in {seconds:.0f} s ({seen[0] / seconds:,.0f} steps/s)")
    if args.save:
        torch.save(actor.state_dict(), args.save)
    if args.deals:
        for baseline, diff in margins(actor, args.deals, args.seed).items():
            print(f"vs {baseline}: {diff['mean']:+.2f} ± {diff['half_width']:.2f} points per hand ({args.deals} duplicate deals)")


if __name__ == "__main__":
    main()
