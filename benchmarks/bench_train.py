"""End-to-end throughput of self-play PPO training (collection + updates), with the split.

Runs the trainer (``training.trainer.train.Trainer``) on its default config (or the flags given), with
its opponent pool full of snapshots as in most of a run, for ``--updates`` updates after one
warm-up update and prints environment steps per second end to end and where the time went:
the batched engine (rollout), choosing actions while collecting (the learner's networks, and
within it the pool's opponents: ``OpponentPool.act_all``, the snapshots in one stacked call),
and the PPO update. As a reference measured in the same run it
prints the samples per second of forward + backward + Adam of a plain MLP of two 256-wide
layers at batch 4096 (float32), so figures from a busy machine can still be compared as ratios.

Usage: ``python benchmarks/bench_train.py [--updates 10] [--players 2] [--bluff] [--envs N] [--rollout T]
[--precision auto|bf16|fp32] [--device cpu]``
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from torch import nn

from pisti_env.rules.settings import Settings
from training.trainer.config import TrainConfig
from training.trainer.network import cpu_has_fast_bf16
from training.trainer.train import Trainer


def reference_mlp_samples_per_second(seconds: float = 3.0, batch: int = 4096, size: int = 556) -> float:
    """Forward + backward + Adam step of a 2x256 tanh MLP on random data, float32."""
    net = nn.Sequential(nn.Linear(size, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 52))
    optimizer = torch.optim.Adam(net.parameters())
    x = torch.randn(batch, size)
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        loss = net(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        done += batch
    return done / (time.perf_counter() - start)


def pool_call_seconds(trainer: Trainer, repeats: int = 50) -> tuple[float, float]:
    """Seconds per batch step of the pool's opponents on the collector's current step: one
    ``act_all`` call (the snapshots stacked) against the entries called one by one (``act``,
    as before issue 17), in the same run."""
    from training.trainer.network import autocast
    from training.trainer.rollout import LEARNER

    collector, engine = trainer.collector, trainer.engine
    out = collector.out
    controller = collector.controller[torch.arange(engine.batch_size, device=engine.device), out.seat]
    obs, mask = out.observation, out.action_mask
    action = torch.zeros(engine.batch_size, dtype=torch.long, device=engine.device)
    generator = torch.Generator(device=engine.device).manual_seed(0)

    def one_by_one() -> None:
        for index in controller.unique().tolist():
            if index != LEARNER:
                rows = (controller == index).nonzero().squeeze(1)
                action[rows] = trainer.pool.act(index, obs[rows], mask[rows], generator, engine.state, rows)

    def together() -> None:
        trainer.pool.act_all(controller, action, obs, mask, generator, engine.state)

    seconds = []
    for call in (one_by_one, together):
        with autocast(engine.device, trainer.config.precision):
            call()
            start = time.perf_counter()
            for _ in range(repeats):
                call()
        seconds.append((time.perf_counter() - start) / repeats)
    return seconds[0], seconds[1]


def main() -> None:
    defaults = TrainConfig()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--updates", type=int, default=10)
    p.add_argument("--players", type=int, default=defaults.settings.num_players)
    p.add_argument("--bluff", action="store_true", help="the bluff variant (R29), the trainer's defaults otherwise")
    p.add_argument("--envs", type=int, default=defaults.num_envs)
    p.add_argument("--rollout", type=int, default=defaults.rollout_steps)
    p.add_argument("--precision", default=defaults.precision)
    p.add_argument("--device", default=defaults.device)
    p.add_argument("--threads", type=int, default=defaults.torch_threads)
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as out:
        config = TrainConfig(
            settings=Settings(num_players=args.players, bluff=args.bluff), num_envs=args.envs, rollout_steps=args.rollout, precision=args.precision,
            device=args.device, torch_threads=args.threads, eval_every=0, checkpoint_every=0, out_dir=out,
            total_steps=(args.updates + 1) * args.envs * args.rollout,
        )
        trainer = Trainer(config)
        # A full opponent pool, as for most of a real run (snapshots join every
        # ``snapshot_every`` updates): every snapshot is one more network acting while collecting.
        for i in range(config.pool_size):
            trainer.pool.add_snapshot(trainer.network.policy, f"bench-snapshot-{i}")
        pool_seconds = [0.0]
        act_all = trainer.pool.act_all

        def timed_act_all(*a, **k):  # the pool's share of the action choice
            started = time.perf_counter()
            act_all(*a, **k)
            pool_seconds[0] += time.perf_counter() - started

        trainer.pool.act_all = timed_act_all
        trainer.train_update()  # warm-up
        pool_seconds[0] = 0.0
        totals = {"env": 0.0, "inference": 0.0, "update": 0.0}
        steps = 0
        start = time.perf_counter()
        for _ in range(args.updates):
            m = trainer.train_update()
            totals["env"] += m["time/env_seconds"]
            totals["inference"] += m["time/inference_seconds"]
            totals["update"] += m["time/update_seconds"]
            steps += config.batch_decisions
        wall = time.perf_counter() - start
        totals["  of it pool"] = pool_seconds[0]
        loop, together = pool_call_seconds(trainer)
    reference = reference_mlp_samples_per_second()
    c = trainer.config
    fast_bf16 = ""  # why "auto" chose what it did on a CPU (bf16 pays only with AMX)
    if args.precision == "auto" and trainer.device.type == "cpu":
        fast_bf16 = f" (auto: this CPU {'has' if cpu_has_fast_bf16() else 'lacks'} fast bf16)"
    print(f"trainer: {c.settings.num_players} players{', bluff variant' if c.settings.bluff else ''}, {c.num_envs} games x {c.rollout_steps} steps per update, "
          f"{c.update_epochs} epochs x {c.num_minibatches} minibatches, precision {c.precision}{fast_bf16}, "
          f"{torch.get_num_threads()} threads")
    print(f"end to end: {steps / wall:,.0f} environment steps/s over {args.updates} updates ({wall:.1f} s)")
    for name, seconds in totals.items():
        print(f"  {name:<12} {seconds / args.updates:6.3f} s per update  {100 * seconds / wall:5.1f}%")
    print(f"pool per batch step, same run: {1e3 * loop:.2f} ms entries one by one (before), "
          f"{1e3 * together:.2f} ms act_all (x{c.rollout_steps} steps per update)")
    print(f"reference: 2x256 MLP forward+backward+Adam, batch 4096, fp32: {reference:,.0f} samples/s "
          f"(training steps/s = {steps / wall / reference:.3f} x reference)")


if __name__ == "__main__":
    main()
