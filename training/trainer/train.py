"""Self-play PPO on the batched engine, top to bottom (CleanRL's ``ppo.py`` is the model).

One update: collect a rollout (:mod:`training.trainer.rollout`), credit every decision with
its own seat's rewards and run GAE along each seat's decisions (:mod:`training.trainer.ppo`),
then a few epochs of clipped-PPO minibatch steps on the learner's decisions. Snapshots of the
policy join the opponent pool every ``snapshot_every`` updates. Checkpoints
(:mod:`training.trainer.checkpoint`) hold everything needed to resume exactly. :func:`run`
trains a whole run with logs; ``pisti-train`` (:mod:`training.trainer.cli`) is its command line.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from pisti_env.batched import BatchedPisti, BatchState

from .checkpoint import (
    MODEL_FILE, TRAINER_FILE, CheckpointError, check_settings, load_tensors, read_metadata, save_checkpoint,
)
from .config import TrainConfig
from .distributed import LOCAL, Shard
from .network import ActorCritic, autocast, entropy, log_probs, resolve_precision
from .policy import CheckpointPlayer
from .pool import Opponent, OpponentPool
from .ppo import assign_seat_rewards, gae, ppo_losses
from .rollout import SelfPlayCollector


class Trainer:
    """Holds the run: engine, network, optimizer, opponent pool, collector and counters.

    ``shard``: this process's part of a distributed run (:mod:`training.trainer.distributed`:
    its games, its seed stream, the all-reduce of the gradients); default the whole run.
    """

    def __init__(self, config: TrainConfig, shard: Shard | None = None) -> None:
        c = dataclasses.replace(config, precision=resolve_precision(config.precision, config.device))
        self.config = c
        self.shard = shard or LOCAL
        if c.torch_threads:
            torch.set_num_threads(c.torch_threads)
        torch.manual_seed(c.seed)  # network initialisation
        self.settings = c.settings
        self.device = torch.device(self.shard.device(c.device))
        num_envs, game_seed = self.shard.games(c.num_envs, c.seed)
        self.engine = BatchedPisti(num_envs, seed=game_seed, device=self.device, reward="diff", **c.settings.to_dict())
        hidden_size = self.engine.hidden_information_size if c.privileged_value else 0
        self.network = ActorCritic(
            self.engine.observation_size, self.engine.encoder.layout.num_card_features, c.hidden_sizes,
            hidden_size, c.value_hidden_sizes, self.settings.num_actions,
        ).to(self.device)
        if c.init_from is not None:
            self._warm_start(c.init_from)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=c.learning_rate, eps=c.adam_eps)
        self.generator = torch.Generator(device=self.device).manual_seed(game_seed)
        self.pool = OpponentPool(
            self.settings, tuple(c.baselines), c.pool_size, c.pool_temperature, self.device, c.pool_uniform_share,
            c.pool_margin_decay,
        )
        self.collector = SelfPlayCollector(
            self.engine, self.pool, c.self_play_share, c.rollout_steps, self.generator, c.precision, c.privileged_value
        )
        self.step = 0  # environment steps (moves) so far
        self.update = 0
        self.num_updates = max(1, c.total_steps // c.batch_decisions)

    def _warm_start(self, directory: str | os.PathLike) -> None:
        """Load ``init_from``'s policy weights (and value weights of this run's shape, if it has
        them); see :class:`TrainConfig`. Raises :class:`CheckpointError` on another game or shape."""
        from .policy import GAME_DEFINING

        metadata = read_metadata(directory)
        wanted = self.settings.to_dict()
        check_settings(metadata, {k: wanted[k] for k in GAME_DEFINING}, directory)
        hidden = [int(h) for h in metadata.get("hidden_sizes", [])]
        if hidden != list(self.config.hidden_sizes):
            raise CheckpointError(
                f"{directory}: its policy has hidden_sizes {hidden}, this run builds {list(self.config.hidden_sizes)} "
                f"(pass --hidden-sizes {' '.join(map(str, hidden))} to warm-start from it)"
            )
        weights = load_tensors(directory, MODEL_FILE, metadata)
        expected = self.network.state_dict()

        def fitting(prefix: str) -> dict[str, torch.Tensor] | None:
            """The checkpoint's weights of one network, if they fit this run's exactly."""
            part = {k: v for k, v in weights.items() if k.startswith(prefix)}
            if set(part) != {k for k in expected if k.startswith(prefix)}:
                return None
            return part if all(part[k].shape == expected[k].shape for k in part) else None

        policy = fitting("policy.")
        if policy is None:
            raise CheckpointError(f"{directory}: its policy weights do not fit this run's policy network (observation size?)")
        value = fitting("value.") or {}  # a policy-only checkpoint (or another value shape): a fresh value network
        self.network.load_state_dict({**expected, **policy, **value})

    # ------------------------------------------------------------------ one update
    def train_update(self) -> dict[str, float]:
        """Collect one rollout and learn from it; returns the update's metrics."""
        c = self.config
        if c.anneal_lr:
            frac = 1.0 - self.update / self.num_updates
            self.optimizer.param_groups[0]["lr"] = max(frac, 0.0) * c.learning_rate
        start = time.perf_counter()
        rollout = self.collector.collect(self.network)
        collected = time.perf_counter()

        credit = assign_seat_rewards(rollout.seat, rollout.rewards * c.reward_scale, rollout.done)
        advantages, returns = gae(rollout.value, rollout.seat, credit, rollout.end_values, c.gamma, c.gae_lambda)
        # The learner's decisions, as indices into the flattened (T * B) rollout: each minibatch
        # gathers its rows straight from the rollout (one copy, not one per network).
        learner = rollout.learner.reshape(-1).nonzero().squeeze(1)
        T, B = rollout.seat.shape
        obs = rollout.observation[:T].reshape(T * B, -1)
        hidden = rollout.hidden.reshape(T * B, -1)
        mask = rollout.mask.reshape(T * B, -1)
        action = rollout.action.reshape(-1)
        old_logp = rollout.logp.reshape(-1)
        old_values = rollout.value.reshape(-1)
        advantages = advantages.reshape(-1)
        returns = returns.reshape(-1)

        shard = self.shard  # one process, or this rank's share of each global minibatch
        n = shard.total(learner.numel())
        generator = shard.learn_generator(self)
        stats: dict[str, list[float]] = {k: [] for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction")}
        for _epoch in range(c.update_epochs):
            for mb in shard.minibatches(learner, (T, B), c.num_minibatches, generator):
                mb_obs, mb_mask = obs[mb], mask[mb]
                with autocast(self.device, c.precision):
                    logits = self.network.policy(mb_obs)
                    new_values = self.network.value(mb_obs, hidden[mb] if c.privileged_value else None)
                logp = log_probs(logits, mb_mask)
                new_logp = logp.gather(1, action[mb][:, None]).squeeze(1)
                mb_adv = advantages[mb]
                if c.norm_adv:
                    mb_adv = shard.normalize(mb_adv)
                losses = ppo_losses(
                    new_logp, old_logp[mb], mb_adv, new_values, old_values[mb], returns[mb],
                    entropy(logp, mb_mask), c.clip_coef, c.clip_value, c.ent_coef, c.vf_coef, shard.mean,
                )
                self.optimizer.zero_grad()
                losses.total.backward()
                figures = torch.stack([getattr(losses, key).detach().float() for key in stats])
                figures = shard.reduce(self.network.parameters(), figures)  # gradients (and figures) summed over ranks
                torch.nn.utils.clip_grad_norm_(self.network.parameters(), c.max_grad_norm)
                self.optimizer.step()
                for key, value in zip(stats, figures.tolist()):
                    stats[key].append(value)
            if c.target_kl is not None and stats["approx_kl"][-1] > c.target_kl:
                break
        learned = time.perf_counter()

        self.step += T * B * shard.world
        self.update += 1
        if c.snapshot_every and self.update % c.snapshot_every == 0:
            self.pool.add_snapshot(self.network.policy, f"snapshot@{self.step}")
        learner_returns = returns[learner]
        variance = learner_returns.var()
        explained = 1.0 - (learner_returns - old_values[learner]).var() / variance if variance > 0 else torch.tensor(0.0)
        inference = self.collector.inference_seconds
        self.collector.inference_seconds = 0.0
        metrics = {
            "global_step": float(self.step),
            "losses/policy": float(np.mean(stats["policy"])),
            "losses/value": float(np.mean(stats["value"])),
            "losses/entropy": float(np.mean(stats["entropy"])),
            "losses/approx_kl": float(np.mean(stats["approx_kl"])),
            "losses/clip_fraction": float(np.mean(stats["clip_fraction"])),
            "losses/explained_variance": float(explained),
            "charts/learning_rate": float(self.optimizer.param_groups[0]["lr"]),
            "charts/learner_decisions": float(n),
            "charts/steps_per_second": T * B * shard.world / (learned - start),
            "time/env_seconds": (collected - start) - inference,
            "time/inference_seconds": inference,
            "time/update_seconds": learned - collected,
        }
        metrics.update(self.collector.pop_stats())
        return metrics

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: str | os.PathLike, with_trainer_state: bool = True) -> Path:
        """Write a checkpoint: the policy and value networks and everything needed to resume,
        or (``with_trainer_state`` false) the policy network alone, all that playing needs."""
        c = self.config
        metadata: dict[str, Any] = {
            "name": Path(directory).name,
            "settings": self.settings.to_dict(),
            "observation_size": self.engine.observation_size,
            "card_features": self.network.policy.card_features,
            "hidden_sizes": list(c.hidden_sizes),
            "step": self.step,
            "update": self.update,
            "config": c.to_dict(),
            "torch_version": torch.__version__,
        }
        weights = self.network.state_dict()
        trainer_state = None
        if with_trainer_state:
            trainer_state, extra = self._trainer_state()
            metadata["trainer"] = extra
        else:
            weights = {k: v for k, v in weights.items() if k.startswith("policy.")}
        return save_checkpoint(directory, weights, metadata, trainer_state)

    def _trainer_state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        tensors: dict[str, torch.Tensor] = {}
        optimizer = self.optimizer.state_dict()
        for index, state in optimizer["state"].items():
            for key, value in state.items():
                tensors[f"optimizer.{index}.{key}"] = torch.as_tensor(value)
        for field in BatchState.__dataclass_fields__:
            tensors[f"engine.{field}"] = getattr(self.engine.state, field)
        tensors["collector.controller"] = self.collector.controller
        tensors["collector.episode_return"] = self.collector.episode_return
        tensors["generator"] = self.generator.get_state()
        tensors["torch_rng"] = torch.get_rng_state()
        entries = []
        for i, entry in enumerate(self.pool.entries):
            entries.append({"name": entry.name, "margin": entry.margin, "games": entry.games, "snapshot": entry.network is not None})
            if entry.network is not None:
                for key, value in entry.network.state_dict().items():
                    tensors[f"pool.{i}.{key}"] = value
        extra = {"optimizer_param_groups": optimizer["param_groups"], "pool": entries}
        return tensors, extra

    @classmethod
    def resume(cls, directory: str | os.PathLike, total_steps: int | None = None, shard: Shard | None = None) -> "Trainer":
        """A trainer in exactly the state a checkpoint saved. ``total_steps`` extends the run's
        budget (the learning rate then anneals to 0 over the new total, from where the new
        schedule stands); by default the saved run's own budget stands. ``shard``: a rank of a
        distributed run (:meth:`training.trainer.distributed.Shard.keeps_games` says whose
        games in flight come back)."""
        metadata = read_metadata(directory)
        if "trainer" not in metadata:
            raise ValueError(f"{directory} is a policy-only checkpoint: it cannot resume training")
        config = TrainConfig.from_dict(metadata["config"])
        if total_steps is not None:
            if total_steps < int(metadata["step"]):
                raise ValueError(f"{directory} has trained {metadata['step']} steps already: --steps {total_steps} is less")
            config = dataclasses.replace(config, total_steps=total_steps)
        trainer = cls(config, shard=(shard or LOCAL).resumed(int(metadata["update"])))
        weights = load_tensors(directory, MODEL_FILE, metadata)
        expected = trainer.network.state_dict()
        if set(weights) != set(expected) or any(weights[k].shape != v.shape for k, v in expected.items()):
            raise CheckpointError(
                f"{directory}: its networks' weights do not have the layout this trainer builds from its config "
                f"(a checkpoint from an older trainer?); missing {sorted(set(expected) - set(weights))[:4]}, "
                f"unexpected {sorted(set(weights) - set(expected))[:4]}"
            )
        trainer.network.load_state_dict(weights)
        tensors = load_tensors(directory, TRAINER_FILE, metadata)
        extra = metadata["trainer"]
        optimizer_state: dict[int, dict[str, torch.Tensor]] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, index, name = key.split(".", 2)
                optimizer_state.setdefault(int(index), {})[name] = value
        trainer.optimizer.load_state_dict({"state": optimizer_state, "param_groups": extra["optimizer_param_groups"]})
        if trainer.shard.keeps_games(int(tensors["engine.slot"].shape[0]), trainer.engine.batch_size):
            trainer.engine.state = BatchState(
                **{f: tensors[f"engine.{f}"].to(trainer.device) for f in BatchState.__dataclass_fields__}
            )
            trainer.collector.resume_from(trainer.engine.state, tensors["collector.controller"], tensors["collector.episode_return"])
            trainer.generator.set_state(tensors["generator"])
            torch.set_rng_state(tensors["torch_rng"])
        trainer.pool.entries = []
        for i, entry in enumerate(extra["pool"]):
            if entry["snapshot"]:
                player = trainer.pool.snapshot_player(trainer.network.policy, entry["name"])
                player.network.load_state_dict(
                    {k.split(".", 2)[2]: v for k, v in tensors.items() if k.startswith(f"pool.{i}.")}
                )
                player.network.requires_grad_(False)
            else:
                player = trainer.pool.baseline(entry["name"])
            trainer.pool.entries.append(Opponent(entry["name"], player, entry["margin"], entry["games"], entry["snapshot"]))
        trainer.step = int(metadata["step"])
        trainer.update = int(metadata["update"])
        return trainer


# ---------------------------------------------------------------------- the run
def run(config: TrainConfig, resume: bool = False, progress: bool = True, resume_steps: int | None = None,
        shard: Shard | None = None) -> Trainer:
    """Train to ``config.total_steps``, logging and checkpointing into ``config.out_dir``. With
    ``resume``, continue ``OUT/checkpoint`` with its own config (``resume_steps``, if given,
    extends its budget) when there is one. ``shard``: this rank of a distributed run
    (:mod:`training.trainer.distributed`); only rank 0 writes (logs, checkpoints, evaluations)."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    latest = out / "checkpoint"
    if resume and (latest / "metadata.json").exists():
        trainer = Trainer.resume(latest, total_steps=resume_steps, shard=shard)
    else:
        out.mkdir(parents=True, exist_ok=True)
        trainer = Trainer(config, shard=shard)
    if not shard.main:  # another rank: it learns, rank 0 writes
        while trainer.update < trainer.num_updates:
            trainer.train_update()
        return trainer
    (out / "config.json").write_text(json.dumps(trainer.config.to_dict(), indent=2), encoding="utf-8")
    writer = _tensorboard(out / "tensorboard")
    csv_path = out / "metrics.csv"
    bar = _progress(trainer, progress)
    fields: list[str] | None = None
    latest_eval = ""
    try:
        while trainer.update < trainer.num_updates:
            metrics = trainer.train_update()
            c = trainer.config
            if c.eval_every and trainer.update % c.eval_every == 0:
                metrics.update(evaluate_against_baselines(trainer))
                latest_eval = " ".join(
                    f"{k.split('/')[-1]} {v:+.2f}" for k, v in metrics.items() if k.startswith("eval/") and k.endswith("margin")
                )
            if fields is None:
                fields = metric_names(c)
                new_file = not csv_path.exists()
            with open(csv_path, "a", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=fields, restval="")
                if new_file:
                    w.writeheader()
                    new_file = False
                w.writerow({"update": trainer.update, **metrics})
            if writer is not None:
                for key, value in metrics.items():
                    writer.add_scalar(key, value, trainer.step)
            if c.checkpoint_every and trainer.update % c.checkpoint_every == 0:
                trainer.save(latest)
            if bar is not None:
                bar.update(int(metrics["global_step"]) - bar.n)
                bar.set_postfix_str(f"{metrics['charts/steps_per_second']:,.0f} steps/s {latest_eval}")
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    trainer.save(latest)
    trainer.save(out / "policy", with_trainer_state=False)
    c = trainer.config
    if c.eval_every and c.eval_deals:  # the evaluation summary of the final policy
        summary = {"step": trainer.step, "deals": c.eval_deals, **evaluate_against_baselines(trainer)}
        (out / "evaluation.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        if progress:
            print("final policy, mean score difference per hand over duplicate deals: " + ", ".join(
                f"vs {b} {summary[f'eval/{b}_margin']:+.2f} ± {summary[f'eval/{b}_ci95']:.2f}" for b in c.eval_baselines
            ) + f" ({c.eval_deals} deals; `pisti-eval` for more)")
    return trainer


def metric_names(config: TrainConfig) -> list[str]:
    """The columns of metrics.csv: every figure an update can report."""
    names = [
        "update", "global_step", "losses/policy", "losses/value", "losses/entropy", "losses/approx_kl",
        "losses/clip_fraction", "losses/explained_variance", "charts/learning_rate", "charts/learner_decisions",
        "charts/steps_per_second", "time/env_seconds", "time/inference_seconds", "time/update_seconds",
        "charts/learner_margin_vs_pool", "charts/pool_games",
    ]
    for baseline in config.eval_baselines:
        names += [f"eval/{baseline}_margin", f"eval/{baseline}_ci95"]
    return names


def evaluate_against_baselines(
    trainer: Trainer, deals: int | None = None, seed: int | None = None
) -> dict[str, float]:
    """Duplicate-deal evaluation (the harness) of the current policy against each of the
    config's ``eval_baselines``, over ``deals`` (default: the config's ``eval_deals``) deals
    seeded with ``seed`` (default: the update number): per baseline, the mean score difference per hand
    (``eval/<spec>_margin``) and its 95% half-width (``eval/<spec>_ci95``)."""
    from pisti_env.agents import make_player
    from training.harness.evaluate import evaluate

    c = trainer.config
    learner = CheckpointPlayer(trainer.network.policy, {"settings": trainer.settings.to_dict(), "name": "learner"})

    def loader(spec: str):
        return learner if spec == "learner" else make_player(spec, settings=trainer.settings)

    results: dict[str, float] = {}
    s = trainer.settings
    variants = {k: v for k, v in s.to_dict().items() if k not in ("num_players", "partnerships", "target")}
    for baseline in c.eval_baselines:
        report = evaluate(
            ["learner", baseline], num_players=s.num_players, partnerships=s.partnerships,
            deals=c.eval_deals if deals is None else deals, matches=0,
            seed=trainer.update if seed is None else seed, workers=1, bootstrap=0, loader=loader, **variants,
        )
        diff = report["tables"][0]["pairs"][0]["score_diff"]  # learner − baseline, per hand
        results[f"eval/{baseline}_margin"] = float(diff["mean"])
        results[f"eval/{baseline}_ci95"] = float(diff["half_width"])
    trainer.network.train()
    return results


def _tensorboard(path: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is optional: the CSV file has every figure too
        return None
    return SummaryWriter(str(path))


def _progress(trainer: Trainer, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    total = trainer.num_updates * trainer.config.batch_decisions
    return tqdm(total=total, initial=trainer.step, unit="step", unit_scale=True, desc="pisti-train")
