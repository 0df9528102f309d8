"""TorchRL self-play on the batched engine: one masked PPO policy plays every seat of N games,
TorchRL's multi-agent (MAPPO-style) loop, then plays the evaluation harness's duplicate deals.

    pip install -e ".[torchrl]"
    python examples/torchrl_selfplay.py --minutes 10        # or --minutes 0 --frames 2000000

The env is `pisti_env.integrations.torchrl_batched.PistiSelfPlayTorchRLEnv`: every seat
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

import sys
import time
from pathlib import Path
from typing import Any, Sequence

import torch
from tensordict import TensorDictBase

from pisti_env.integrations.torchrl_batched import PistiSelfPlayTorchRLEnv
from training.harness import recipes
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from torchrl_masked import add_ppo_flags  # noqa: E402
from torchrl_pettingzoo import DEFAULTS, GROUP, margins, train  # noqa: E402,F401  (the loop, shared; GROUP for callers)

# The loop's PPO settings on this door (train()'s docstring in torchrl_pettingzoo.py explains
# each; every one is a flag). A batch is --num-envs x --steps-per-batch plays, so
# frames_per_batch is not one of them. Against the step-by-step recipe's settings: networks
# half as wide, half the epochs, a higher learning rate and a shorter GAE horizon, which make
# about 5x the plays in the same 10 minutes on 2 cores and beat `greedy` there (the step-by-step
# settings, at a tenth of the plays, did not).
PPO: dict[str, Any] = {**{k: v for k, v in DEFAULTS.items() if k != "frames_per_batch"},
                       "minibatch_size": 2048, "hidden": 128, "epochs": 2, "learning_rate": 1e-3, "lmbda": 0.8}


def make_env(num_envs: int = 256, seed: int | None = 0, device: str = "cpu", **settings: Any) -> PistiSelfPlayTorchRLEnv:
    """``num_envs`` self-play games (default: 2 players, single hands), seeded ``seed``."""
    return PistiSelfPlayTorchRLEnv(num_envs, seed=seed, device=device, **settings)


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none; then --frames)")
    parser.add_argument("--frames", type=int, default=None, help="plays to train for at most (all games and seats together)")
    parser.add_argument("--num-envs", type=int, default=512, help="games stepped together")
    parser.add_argument("--steps-per-batch", type=int, default=16, help="plays per game per PPO batch (48: a 2-player hand)")
    recipes.add_run_flags(parser, seed=0, save="where to save the actor's state_dict (.pt)")
    add_ppo_flags(parser, PPO)
    args = parser.parse_args(argv)
    if args.minutes < 0:
        parser.error("--minutes must be >= 0")
    if not args.minutes and args.frames is None:
        parser.error("give --minutes > 0 or --frames: training needs a budget")
    if args.frames is None:
        args.frames = 10**12  # the clock stops it
    for name in ("frames", "num_envs", "steps_per_batch", "minibatch_size", "epochs", "hidden", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    torch.set_num_threads(args.threads)
    start, seen = time.perf_counter(), [0]
    progress = recipes.Progress("torchrl_selfplay", steps=args.frames if args.frames < 10**12 else None,
                                seconds=args.minutes * 60.0, unit="plays")

    def collected(batch: TensorDictBase) -> None:
        seen[0] += batch.numel()
        progress.update(seen[0])

    env = make_env(args.num_envs, seed=args.seed)
    batch = args.num_envs * args.steps_per_batch
    ppo = {name: getattr(args, name) for name in PPO}
    ppo["minibatch_size"] = min(ppo["minibatch_size"], batch)
    actor = train(env, args.frames, seed=args.seed, on_batch=collected, minutes=args.minutes, frames_per_batch=batch, **ppo)
    seconds = time.perf_counter() - start
    if args.save:
        torch.save(actor.state_dict(), args.save)
    recipes.report(seen[0], seconds, args.deals, lambda: margins(actor, args.deals, args.seed), "plays")


if __name__ == "__main__":
    main()
