"""Self-play PPO on the batched engine, top to bottom (CleanRL's ``ppo.py`` is the model).

One update (`Trainer.train_update`): collect a rollout (`training.trainer.rollout`),
credit every decision with its own seat's rewards and run GAE along each seat's decisions
(`training.trainer.ppo`), then a few epochs of clipped-PPO minibatch steps on the
learner's decisions. Snapshots of the policy join the opponent pool every ``snapshot_every``
updates. Research plugs in through the hooks of `training.trainer.extension`.

Elsewhere: the trainer state a checkpoint holds (`.state`), resuming (`.resume`),
warm starts (`.warm_start`), the run with its directory, logs and evaluations
(`.runner`), the command line (`.cli`).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import torch

from pisti_env.batched import BatchedPisti
from pisti_env.policies.metadata import check_play, play_mode
from pisti_env.policies.network import PolicyNetwork, log_probs

from .config import TrainConfig
from .distributed import LOCAL, Shard
from .extension import extensions_for
from .network import ActorCritic, autocast, entropy, resolve_precision
from .pool import OpponentPool
from .ppo import assign_seat_rewards, gae, magnet_kl, ppo_losses
from .rollout import SelfPlayCollector
from .weights import save_checkpoint


class Trainer:
    """Holds the run: engine, network, optimizer, opponent pool, collector and counters.

    ``shard``: this process's part of a distributed run (`training.trainer.distributed`:
    its games, its seed stream, the all-reduce of the gradients); default the whole run.
    ``from_checkpoint``: the weights will be loaded from a run's checkpoint (`resume`),
    so ``config.init_from`` is not read.
    """

    def __init__(self, config: TrainConfig, shard: Shard | None = None, *, from_checkpoint: bool = False) -> None:
        c = dataclasses.replace(config, precision=resolve_precision(config.precision, config.device))
        if c.freeze_answer_head and c.init_from is None and not from_checkpoint:
            raise ValueError("freeze_answer_head needs init_from: a policy with an answer head (a fresh head would "
                             "stay at its random start)")
        self.config = c
        self.spec = c.network_spec()
        self.extensions = extensions_for(c)
        self.shard = shard or LOCAL
        if c.torch_threads:
            torch.set_num_threads(c.torch_threads)
        torch.manual_seed(c.seed)  # network initialisation
        self.settings = c.settings
        self.device = torch.device(self.shard.device(c.device))
        num_envs, game_seed = self.shard.games(c.num_envs, c.seed)
        self.engine = BatchedPisti(num_envs, seed=game_seed, device=self.device, reward="diff", **c.settings.to_dict())
        hidden_size = self.engine.hidden_information_size if c.privileged_value else 0
        self.network = ActorCritic(self.spec, hidden_size, c.value_hidden_sizes).to(self.device)
        if c.init_from is not None and not from_checkpoint:
            from .warm_start import warm_start

            warm_start(self, c.init_from)
        # What the optimizer updates (a checkpoint's optimizer state is indexed over these).
        self.trainable = []
        for name, parameter in self.network.named_parameters():
            parameter.requires_grad_(self.trains(name))
            if parameter.requires_grad:
                self.trainable.append(parameter)
        # The reference policy of the KL regulariser (TrainConfig.magnet_coef): a frozen copy.
        self.magnet = copy.deepcopy(self.network.policy).requires_grad_(False) if c.magnet_coef > 0 else None
        self.optimizer = torch.optim.Adam(self.trainable, lr=c.learning_rate, eps=c.adam_eps)
        self.generator = torch.Generator(device=self.device).manual_seed(game_seed)
        self.pool = OpponentPool(
            self.settings, tuple(c.baselines), c.pool_size, c.pool_temperature, self.device, c.pool_uniform_share,
            c.pool_margin_decay,
        )
        for extension in self.extensions:
            extension.setup(self)
        seats = [s for s in (e.seat_controller(self) for e in self.extensions) if s is not None]
        self.collector = SelfPlayCollector(
            self.engine, self.pool, c.self_play_share, c.rollout_steps, self.generator, c.precision, c.privileged_value,
            seats=seats[0] if seats else None,
        )
        self.step = 0  # environment steps (moves) so far
        self.update = 0
        self.num_updates = max(1, c.total_steps // c.batch_decisions)

    def trains(self, name: str) -> bool:
        """Whether the optimizer updates the network's parameter ``name`` (every one but those an
        extension freezes)."""
        return all(extension.trains(name) for extension in self.extensions)

    def shipped_policy(self) -> PolicyNetwork:
        """The policy this run ships and evaluates: the network's policy, as the extensions
        make it (the head average in a fictitious-play run)."""
        policy = self.network.policy
        for extension in self.extensions:
            policy = extension.shipped_policy(policy)
        return policy

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
        stats: dict[str, list[float]] = {k: [] for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction", "magnet_kl")}
        for _epoch in range(c.update_epochs):
            for mb in shard.minibatches(learner, (T, B), c.num_minibatches, generator):
                # index_select, not obs[mb]: the same rows, copied whole (4x faster on a CPU).
                mb_obs, mb_mask = obs.index_select(0, mb), mask.index_select(0, mb)
                with autocast(self.device, c.precision):
                    logits = self.network.policy(mb_obs)
                    new_values = self.network.value(mb_obs, hidden.index_select(0, mb) if c.privileged_value else None)
                logp = log_probs(logits, mb_mask)
                new_logp = logp.gather(1, action.index_select(0, mb)[:, None]).squeeze(1)
                mb_adv = advantages.index_select(0, mb)
                if c.norm_adv:
                    mb_adv = shard.normalize(mb_adv)
                mb_entropy = entropy(logp, mb_mask)
                losses = ppo_losses(
                    new_logp, old_logp.index_select(0, mb), mb_adv, new_values, old_values.index_select(0, mb),
                    returns.index_select(0, mb),
                    mb_entropy, c.clip_coef, c.clip_value, c.ent_coef, c.vf_coef, shard.mean,
                )
                total, pull = losses.total, torch.zeros((), device=self.device)
                for extension in self.extensions:
                    extra = extension.extra_loss(self, logp, mb_entropy, mb_mask)
                    if extra is not None:
                        total = total + extra
                if self.magnet is not None:
                    heads = next((h for h in (e.magnet_heads() for e in self.extensions) if h is not None), None)
                    with torch.no_grad(), autocast(self.device, c.precision):
                        magnet_logits = self.magnet(mb_obs, heads=heads)  # float32 (PolicyNetwork.forward)
                    pull = shard.mean(magnet_kl(logp, log_probs(magnet_logits, mb_mask), mb_mask))
                    total = total + c.magnet_coef * pull
                self.optimizer.zero_grad()
                total.backward()
                terms = [getattr(losses, key) for key in stats if key != "magnet_kl"] + [pull]
                figures = torch.stack([term.detach().float() for term in terms])
                figures = shard.reduce(self.trainable, figures)  # gradients (and figures) summed over ranks
                torch.nn.utils.clip_grad_norm_(self.trainable, c.max_grad_norm)
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
        for extension in self.extensions:
            extension.after_update(self)
        if self.magnet is not None and c.magnet_every and self.update % c.magnet_every == 0:
            self.magnet.load_state_dict(self.network.policy.state_dict())
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
            **({"losses/magnet_kl": float(np.mean(stats["magnet_kl"]))} if self.magnet is not None else {}),
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
    def save(self, directory: str | os.PathLike, with_trainer_state: bool = True, play: str | None = None) -> Path:
        """Write a checkpoint: the policy and value networks and everything needed to resume,
        or (``with_trainer_state`` false) the shipped policy alone, all that playing needs.
        ``play``: how the saved policy plays when loaded (metadata ``play``, one of
        `PLAY_MODES`); default
        `play_mode` of the game.
        The directory is complete before it appears (`save_checkpoint`)."""
        weights, metadata, trainer_state = self.checkpoint_contents(Path(directory).name, with_trainer_state)
        if play is not None:
            metadata["play"] = check_play(play)
        return save_checkpoint(directory, weights, metadata, trainer_state)

    def checkpoint_contents(
        self, name: str, with_trainer_state: bool = True
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any], dict[str, torch.Tensor] | None]:
        """What a checkpoint named ``name`` holds: (weights, metadata, trainer state or ``None``).
        The network fields of the metadata are the spec of the policy saved
        (`to_metadata`)."""
        from .state import collect_state

        policy = self.network.policy if with_trainer_state else self.shipped_policy()
        metadata: dict[str, Any] = {
            "name": name,
            **policy.spec.to_metadata(),
            "step": self.step,
            "update": self.update,
            "config": self.config.to_dict(),
            "torch_version": torch.__version__,
            "play": play_mode(self.settings),
        }
        if self.shard.world > 1:  # a rank's trainer state holds its share of the games: num_envs / world
            metadata["world"] = self.shard.world
        trainer_state = None
        if with_trainer_state:  # the run as it stands (its own heads; an average is trainer state)
            weights = self.network.state_dict()
            trainer_state, metadata["trainer"] = collect_state(self)
        else:  # the policy as it ships
            weights = {f"policy.{k}": v for k, v in policy.state_dict().items()}
        return weights, metadata, trainer_state

    @classmethod
    def resume(
        cls,
        directory: str | os.PathLike,
        total_steps: int | None = None,
        changes: Mapping[str, Any] | None = None,
        shard: Shard | None = None,
    ) -> "Trainer":
        """A trainer in exactly the state a checkpoint saved, with the checkpoint's own config
        (`training.trainer.resume.resume_trainer`, which documents the arguments)."""
        from .resume import resume_trainer

        return resume_trainer(cls, directory, total_steps, changes, shard)
