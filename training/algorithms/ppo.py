"""PPO, the project's own trainer ([training.trainer][]), under the learning protocol's contract.

    python -m training.algorithms.ppo --seed 0 --steps 5e6 --snapshot-steps 625000 1250000 --snapshot-dir DIR

This is ``pisti-train`` with its defaults (the run behind the shipped ``pisti-2p`` policy, cut to
the protocol's budget): self-play PPO (Schulman et al. 2017, "Proximal Policy Optimization
Algorithms"; the update as CleanRL's ``ppo.py`` writes it) on 2,048 batched games, 70% of them
pure self-play and the rest against a pool of the learner's own snapshots and ``random`` and
``greedy``; a policy network whose card scorer shares weights across cards, a privileged critic
that also reads the hidden cards during training only; matches to 151 (R24), so the match
context in the observation is what the policy meets in play. Every hyperparameter is
[TrainConfig][training.trainer.config.TrainConfig]'s default, whose docstring says where each
comes from; the learning rate anneals to 0 over the protocol's budget, as ``pisti-train
--steps N`` does. No tuning for the protocol.

A step is a move in the training games, whoever made it (``pisti-train``'s count): the pool's
moves count against PPO's budget though it does not learn from them, about 15% of the moves
with the defaults. The budget is rounded up to whole updates (2,048 x 32 = 65,536 moves), and a
snapshot is the shipped policy (played by argmax) after the first update that reaches each
requested step.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from typing import Sequence

from pisti_env.rules.settings import Settings

from .recipe import Progress, Snapshots, add_algorithm_flags, check_algorithm_args, positive_int

NAME = "ppo"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.algorithms.ppo", description=__doc__.splitlines()[0])
    add_algorithm_flags(parser, steps=5_000_000)
    from training.trainer.config import TrainConfig

    defaults = TrainConfig()
    parser.add_argument("--num-envs", type=positive_int, default=defaults.num_envs,
                        help="games played side by side (pisti-train's --num-envs)")
    parser.add_argument("--rollout-steps", type=positive_int, default=defaults.rollout_steps,
                        help="batch steps per rollout (pisti-train's --rollout-steps)")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_algorithm_args(parser, args)

    import torch

    from training.harness.recipes import report
    from training.trainer.config import TrainConfig
    from training.trainer.train import Trainer

    settings = Settings(num_players=args.players, partnerships=args.partnerships)  # matches to 151, as pisti-train
    batch = args.num_envs * args.rollout_steps
    updates = math.ceil(args.steps / batch)
    with tempfile.TemporaryDirectory(prefix="pisti-ppo-") as scratch:  # the trainer writes nothing here
        config = TrainConfig(settings=settings, seed=args.seed, total_steps=updates * batch, device=args.device,
                             num_envs=args.num_envs, rollout_steps=args.rollout_steps,
                             torch_threads=args.threads, eval_every=0, checkpoint_every=0, checkpoint_minutes=0.0,
                             out_dir=scratch)
        trainer = Trainer(config)
    snapshots = Snapshots(args.snapshot_steps, args.snapshot_dir, settings.to_dict(), NAME, "training.algorithms.ppo",
                          batch)
    progress = Progress(NAME, steps=updates * batch, enabled=not args.quiet)
    start = time.perf_counter()
    while trainer.update < updates:
        metrics = trainer.train_update()
        snapshots.after_update(trainer.shipped_policy(), trainer.step)
        progress.update(trainer.step, {"policy_loss": metrics.get("losses/policy", math.nan),
                                       "entropy": metrics.get("losses/entropy", math.nan)})
    seconds = time.perf_counter() - start
    policy = trainer.shipped_policy().eval()
    if args.export:
        snapshots.write(policy, trainer.step, path=args.export)

    def margins():
        from training.harness.margins import baseline_margins
        from pisti_env.agents import make_player

        with tempfile.TemporaryDirectory(prefix="pisti-ppo-") as folder:
            path = snapshots.write(policy, trainer.step, path=f"{folder}/ppo.pt")
            player = make_player(path, settings=Settings(num_players=args.players, partnerships=args.partnerships,
                                                        target=None))
            return baseline_margins(player, deals=args.deals, num_players=args.players,
                                    partnerships=args.partnerships)

    with torch.no_grad():
        report(trainer.step, seconds, args.deals, margins)


if __name__ == "__main__":
    main()
