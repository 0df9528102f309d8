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
import copy
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from pisti_env.actions import BELIEVE
from pisti_env.batched import BatchedPisti, BatchState

from .checkpoint import (
    HISTORY, LATEST, LOG_FILE, METADATA_FILE, MODEL_FILE, TRAINER_FILE, CheckpointError, check_hidden_sizes, checked_file,
    check_play, latest_run_checkpoint, load_policy_weights, load_tensors, network_shapes, play_mode, prune_run_checkpoints,
    publish_run_checkpoint, read_metadata, save_checkpoint, solved_claims_metadata, tensor_shapes,
    validate_trainer_metadata, write_atomic,
)
from .average import HeadAverage
from .config import RESUMABLE, TrainConfig
from .distributed import LOCAL, Shard
from .network import (
    ActorCritic, PolicyNetwork, actor_critic, autocast, entropy, log_probs, resolve_precision, without_claim_heads,
)
from .policy import CheckpointPlayer
from .pool import Opponent, OpponentPool
from .ppo import assign_seat_rewards, gae, magnet_kl, ppo_losses
from .rollout import SelfPlayCollector


def _actor_critic(config: TrainConfig, hidden_information_size: int) -> ActorCritic:
    """The networks ``config`` trains (untrained): the value network reads
    ``hidden_information_size`` entries of hidden information besides the observation (0: none)."""
    return actor_critic(config.settings, config.hidden_sizes, hidden_information_size, config.value_hidden_sizes,
                        config.answer_hidden_sizes, config.claim_hidden_sizes, config.solved_claims,
                        config.claim_capture_value, config.claim_capture_value_last_deal)


# R29's heads of their own (TrainConfig fields), each with what a game without bluffs lacks.
_HEADS = {"answer_hidden_sizes": "nothing is answered", "claim_hidden_sizes": "nothing is claimed"}


def _trains(config: TrainConfig, name: str) -> bool:
    """Whether the optimizer updates the run's parameter ``name`` (an :class:`ActorCritic`
    parameter name): every one but a frozen answer head (``freeze_answer_head``), which
    therefore has no optimizer state in a checkpoint either."""
    return not (config.freeze_answer_head and name.startswith("policy.answer_head."))


class Trainer:
    """Holds the run: engine, network, optimizer, opponent pool, collector and counters.

    ``shard``: this process's part of a distributed run (:mod:`training.trainer.distributed`:
    its games, its seed stream, the all-reduce of the gradients); default the whole run.
    ``from_checkpoint``: the weights will be loaded from a run's checkpoint (:meth:`resume`),
    so ``config.init_from`` is not read.
    """

    def __init__(self, config: TrainConfig, shard: Shard | None = None, *, from_checkpoint: bool = False) -> None:
        c = dataclasses.replace(config, precision=resolve_precision(config.precision, config.device))
        check_hidden_sizes(c.hidden_sizes, "hidden_sizes")  # what a checkpoint may hold (read back bounded)
        check_hidden_sizes(c.value_hidden_sizes, "value_hidden_sizes")
        for field, without in _HEADS.items():  # before the engine is built
            if getattr(c, field):
                check_hidden_sizes(getattr(c, field), field)
                if not c.settings.bluff:
                    raise ValueError(f"{field} needs the bluff variant (R29): without it {without}")
        if c.freeze_answer_head and not c.answer_hidden_sizes:
            raise ValueError("freeze_answer_head needs answer_hidden_sizes (an answer head to freeze)")
        if c.average_heads_every and not (c.answer_hidden_sizes and c.claim_hidden_sizes):
            raise ValueError("average_heads_every needs an answer head and a claim head (answer_hidden_sizes, "
                             "claim_hidden_sizes): those are the decisions it averages")
        if c.average_heads_every and c.freeze_answer_head:
            raise ValueError("average_heads_every trains the answers against the average claims: not with "
                             "freeze_answer_head")
        if c.average_heads_magnet and not (c.average_heads_every and c.magnet_coef > 0):
            raise ValueError("average_heads_magnet needs average_heads_every and magnet_coef > 0 (the average is "
                             "the magnet's heads)")
        if c.solved_claims and not c.settings.bluff:
            raise ValueError("solved_claims needs the bluff variant (R29): without it nothing is claimed")
        if c.solved_claims and (c.answer_hidden_sizes or c.claim_hidden_sizes or c.freeze_answer_head
                                or c.average_heads_every):
            raise ValueError("solved_claims plays the claims and answers itself: not with answer_hidden_sizes, "
                             "claim_hidden_sizes, freeze_answer_head or average_heads_every")
        if (c.claim_capture_value or c.claim_capture_value_last_deal is not None) and not c.solved_claims:
            raise ValueError("claim_capture_value and claim_capture_value_last_deal are the solved claims' capture "
                             "values: they need solved_claims")
        if c.average_heads_size < 2:
            raise ValueError(f"average_heads_size must be >= 2, got {c.average_heads_size!r}")
        if c.freeze_answer_head and c.init_from is None and not from_checkpoint:
            raise ValueError("freeze_answer_head needs init_from: a policy with an answer head (a fresh head would "
                             "stay at its random start)")
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
        self.network = _actor_critic(c, hidden_size).to(self.device)
        initial_average: PolicyNetwork | None = None  # an averaged init_from: its members start the average
        if c.init_from is not None and not from_checkpoint:
            initial_average = self._warm_start(c.init_from)
        # What the optimizer updates (a checkpoint's optimizer state is indexed over these).
        self.trainable = []
        for name, parameter in self.network.named_parameters():
            parameter.requires_grad_(_trains(c, name))
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
        # Fictitious play for R29's claims and answers (training.trainer.average).
        self.average = None
        if c.average_heads_every:
            self.average = HeadAverage(initial_average or self.network.policy, c.average_heads_size)
        self.collector = SelfPlayCollector(
            self.engine, self.pool, c.self_play_share, c.rollout_steps, self.generator, c.precision, c.privileged_value,
            averaged_seats=self.average is not None,
        )
        self.step = 0  # environment steps (moves) so far
        self.update = 0
        self.num_updates = max(1, c.total_steps // c.batch_decisions)

    def _warm_start(self, directory: str | os.PathLike) -> PolicyNetwork | None:
        """Load ``init_from``'s policy weights (and value weights of this run's shape, if it has
        them); see :class:`TrainConfig`. Raises :class:`CheckpointError` on another game or shape.
        The checkpoint is read and checked by the one policy-weights reader (as ``load_policy``).
        A policy with averaged heads (``average_heads``) starts this run's heads from its newest
        member; it is returned (its members then start this run's average), else ``None``."""
        metadata, policy = load_policy_weights(directory, self.settings)
        averaged = None
        if metadata.get("average_heads") and not self.config.solved_claims:  # (solved: no heads, no average)
            from .checkpoint import network_of

            averaged = network_of(metadata).to(self.device)
            averaged.load_state_dict(policy)
            answer, claim = HeadAverage.member_heads(averaged, averaged.average_heads - 1)  # the newest
            policy = without_claim_heads(policy)
            policy.update({f"answer_head.{k}": v for k, v in answer.state_dict().items()})
            policy.update({f"claim_head.{k}": v for k, v in claim.state_dict().items()})
        hidden = list(metadata["hidden_sizes"])
        if hidden != list(self.config.hidden_sizes):
            raise CheckpointError(
                f"{directory}: its policy has hidden_sizes {hidden}, this run builds {list(self.config.hidden_sizes)} "
                f"(pass --hidden-sizes {' '.join(map(str, hidden))} to warm-start from it)"
            )
        if self.config.solved_claims:  # the claim game is solved here: the start's heads are not used
            policy = without_claim_heads(policy)
        for field in _HEADS:
            theirs, mine = list(metadata.get(field, [])), list(getattr(self.config, field))
            if theirs and theirs != mine and not self.config.solved_claims:
                raise CheckpointError(
                    f"{directory}: its policy has {field} {theirs}, this run builds {mine} "
                    f"(pass --{field.replace('_', '-')} {' '.join(map(str, theirs))})"
                )
        heads = ("answer_head.",) * bool(self.config.answer_hidden_sizes) + ("claim_head.",) * bool(self.config.claim_hidden_sizes)
        try:
            # A run with an answer or claim head may start from a policy without one: the head starts fresh.
            missing, _ = self.network.policy.load_state_dict(policy, strict=not heads)
        except RuntimeError:  # pragma: no cover - same game and widths give the same shapes
            raise CheckpointError(f"{directory}: its policy weights do not fit this run's policy network") from None
        if any(not key.startswith(heads) for key in missing):  # pragma: no cover - checked shapes
            raise CheckpointError(f"{directory}: its policy lacks {sorted(missing)[:3]}")
        if any(key.startswith("answer_head.") for key in missing) and self.config.freeze_answer_head:
            raise CheckpointError(f"{directory}: its policy has no answer head to freeze (freeze_answer_head)")
        # Value weights: only of exactly this run's value network (a policy-only checkpoint, or
        # another value shape: the value network starts fresh).
        value = {f"value.{k}": tuple(v.shape) for k, v in self.network.value.state_dict().items()}
        header = tensor_shapes(Path(directory) / MODEL_FILE)
        stored = {k: shape for k, (shape, _dtype) in header.items() if k.startswith("value.")}
        if stored == value:
            weights = load_tensors(directory, MODEL_FILE, metadata, value, exact=False)
            self.network.value.load_state_dict({k.removeprefix("value."): v for k, v in weights.items()})
        return averaged

    def shipped_policy(self) -> PolicyNetwork:
        """The policy this run ships and evaluates: the network with the head average in place
        of its own heads in a fictitious-play run (``average_heads_every``), else the network's
        policy itself."""
        if self.average is None:
            return self.network.policy
        return self.average.policy(self.network.policy)

    # ------------------------------------------------------------------ one update
    def train_update(self) -> dict[str, float]:
        """Collect one rollout and learn from it; returns the update's metrics."""
        c = self.config
        if c.anneal_lr:
            frac = 1.0 - self.update / self.num_updates
            self.optimizer.param_groups[0]["lr"] = max(frac, 0.0) * c.learning_rate
        start = time.perf_counter()
        rollout = self.collector.collect(self.network, self.average)
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
                if c.answer_ent_coef is not None and c.answer_ent_coef != c.ent_coef and c.settings.bluff:
                    # The answers' entropy weighted answer_ent_coef rather than ent_coef.
                    answers = mb_mask[:, BELIEVE]
                    total = total - (c.answer_ent_coef - c.ent_coef) * shard.mean(mb_entropy * answers)
                if self.magnet is not None:
                    with torch.no_grad(), autocast(self.device, c.precision):
                        heads = self.average.heads() if c.average_heads_magnet else None
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
        if self.average is not None and self.update % c.average_heads_every == 0:
            self.average.offer(self.network.policy)
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
        or (``with_trainer_state`` false) the policy network alone, all that playing needs.
        ``play``: how the saved policy plays when loaded (metadata ``play``, one of
        :data:`~training.trainer.checkpoint.PLAY_MODES`); default
        :func:`~training.trainer.checkpoint.play_mode` of the game.
        The directory is complete before it appears (:func:`~training.trainer.checkpoint.save_checkpoint`)."""
        weights, metadata, trainer_state = self.checkpoint_contents(Path(directory).name, with_trainer_state)
        if play is not None:
            metadata["play"] = check_play(play)
        return save_checkpoint(directory, weights, metadata, trainer_state)

    def checkpoint_contents(
        self, name: str, with_trainer_state: bool = True
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any], dict[str, torch.Tensor] | None]:
        """What a checkpoint named ``name`` holds: (weights, metadata, trainer state or ``None``)."""
        c = self.config
        metadata: dict[str, Any] = {
            "name": name,
            "settings": self.settings.to_dict(),
            "observation_size": self.engine.observation_size,
            "card_features": self.network.policy.card_features,
            "hidden_sizes": list(c.hidden_sizes),
            **({"answer_hidden_sizes": list(c.answer_hidden_sizes)} if c.answer_hidden_sizes else {}),
            **({"claim_hidden_sizes": list(c.claim_hidden_sizes)} if c.claim_hidden_sizes else {}),
            **(solved_claims_metadata(c.claim_capture_value, c.claim_capture_value_last_deal)
               if c.solved_claims else {}),
            "step": self.step,
            "update": self.update,
            "config": c.to_dict(),
            "torch_version": torch.__version__,
            "play": play_mode(self.settings),
        }
        if self.shard.world > 1:  # a rank's trainer state holds its share of the games: num_envs / world
            metadata["world"] = self.shard.world
        trainer_state = None
        if with_trainer_state:  # the run as it stands (its own heads; the average is trainer state)
            weights = self.network.state_dict()
            trainer_state, extra = self._trainer_state()
            metadata["trainer"] = extra
        else:  # the policy as it ships: with the head average in a fictitious-play run
            policy = self.shipped_policy()
            weights = {f"policy.{k}": v for k, v in policy.state_dict().items()}
            if policy.average_heads:
                metadata["average_heads"] = policy.average_heads
        return weights, metadata, trainer_state

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
        if self.average is not None:
            tensors["collector.averaged"] = self.collector.averaged
        tensors["generator"] = self.generator.get_state()
        tensors["torch_rng"] = torch.get_rng_state()
        entries = []
        for i, entry in enumerate(self.pool.entries):
            entries.append({"name": entry.name, "margin": entry.margin, "games": entry.games, "snapshot": entry.network is not None})
            if entry.network is not None:
                for key, value in entry.network.state_dict().items():
                    tensors[f"pool.{i}.{key}"] = value
        if self.magnet is not None:
            tensors.update({f"magnet.{key}": value for key, value in self.magnet.state_dict().items()})
        extra = {"optimizer_param_groups": optimizer["param_groups"], "pool": entries}
        if self.average is not None:
            average, extra["average"] = self.average.state()
            tensors.update(average)
        return tensors, extra

    @classmethod
    def resume(
        cls,
        directory: str | os.PathLike,
        total_steps: int | None = None,
        changes: Mapping[str, Any] | None = None,
        shard: Shard | None = None,
    ) -> "Trainer":
        """A trainer in exactly the state a checkpoint saved, with the checkpoint's own config.

        Args:
            directory: a training checkpoint (with ``trainer.safetensors``).
            total_steps: extends the run's budget (the learning rate then anneals to 0 over the
                new total, from where the new schedule stands); by default the saved run's own
                budget stands. Less than already trained: ``ValueError``.
            changes: config or game-setting values asked for (flags given with ``--resume``);
                only the fields of :data:`~training.trainer.config.RESUMABLE` may differ from
                the checkpoint's (:func:`resume_config`), any other difference is a
                ``ValueError`` naming them.
            shard: a rank of a distributed run (:mod:`training.trainer.distributed`;
                :meth:`~training.trainer.distributed.Shard.keeps_games` says whose games in
                flight come back: a distributed run's checkpoint holds rank 0's share).

        Everything is checked before it is built: the metadata's schema, the saved config (its
        game the checkpoint's, its network sizes bounded), the weights' and the trainer
        state's shapes (from the files' headers) against what this config builds; a failure is
        a :class:`CheckpointError` naming the file and the field.
        """
        directory = Path(directory)
        metadata = read_metadata(directory)
        path = directory / METADATA_FILE
        saved = saved_config(metadata, path)
        if total_steps is not None:
            changes = {**(changes or {}), "total_steps": total_steps}
        config = resume_config(saved, changes or {}, metadata.get("step", 0), directory)
        # The networks this config builds, on the meta device, against the weights' header.
        hidden_information = BatchedPisti(1, **config.settings.to_dict()).hidden_information_size
        shapes = network_shapes(lambda: _actor_critic(config, hidden_information if config.privileged_value else 0))
        extra = validate_trainer_metadata(metadata, path, sum(_trains(config, k) for k in shapes))
        weights = load_tensors(directory, MODEL_FILE, metadata, shapes)
        # The engine's batch (the only size the trainer state sets) before the engine is built:
        # the config's num_envs, shared by the run's processes (a distributed run saves rank 0's share).
        state_header = tensor_shapes(checked_file(directory, TRAINER_FILE, metadata))
        batch = {shape[0] if shape else None for key, (shape, _) in state_header.items() if key.startswith("engine.")}
        saved_games = next(iter(batch)) if len(batch) == 1 else None
        if saved_games is None or saved_games * metadata.get("world", 1) != config.num_envs:
            raise CheckpointError(
                f"{directory / TRAINER_FILE}: its engine state is not for num_envs={config.num_envs} (the config's, "
                "or a rank's share of it)"
            )
        shard = (shard or LOCAL).resumed(int(metadata["update"]))
        trainer = cls(config, shard=shard, from_checkpoint=True)
        trainer.network.load_state_dict(weights)
        if (trainer.average is not None) != ("average" in extra):
            raise CheckpointError(f"{path}: field 'trainer.average': "
                                  + ("missing for a run with average_heads_every" if trainer.average is not None
                                     else "present, but the run's config has no average_heads_every"))
        expected, dtypes = trainer._trainer_state_layout(
            extra["pool"], any(k.startswith("optimizer.") for k in state_header), saved_games, extra.get("average")
        )
        tensors = load_tensors(directory, TRAINER_FILE, metadata, expected, dtypes=dtypes)
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
            trainer.collector.resume_from(trainer.engine.state, tensors["collector.controller"],
                                          tensors["collector.episode_return"], tensors.get("collector.averaged"))
            trainer.generator.set_state(tensors["generator"])
            torch.set_rng_state(tensors["torch_rng"])
        if trainer.magnet is not None:
            trainer.magnet.load_state_dict({k.removeprefix("magnet."): v for k, v in tensors.items() if k.startswith("magnet.")})
        if trainer.average is not None:
            trainer.average.restore(tensors, extra["average"])
        trainer.pool.entries = []
        for i, entry in enumerate(extra["pool"]):
            if entry["snapshot"]:
                player = trainer.pool.snapshot_player(trainer.network.policy, entry["name"])
                player.network.load_state_dict(
                    {k.split(".", 2)[2]: v for k, v in tensors.items() if k.startswith(f"pool.{i}.")}
                )
                player.network.requires_grad_(False)
            else:
                try:
                    player = trainer.pool.baseline(entry["name"])
                except (ValueError, TypeError) as error:
                    raise CheckpointError(f"{path}: field 'trainer.pool[{i}].name': {error}") from None
            trainer.pool.entries.append(Opponent(entry["name"], player, entry["margin"], entry["games"], entry["snapshot"]))
        trainer.step = int(metadata["step"])
        trainer.update = int(metadata["update"])
        return trainer

    def _trainer_state_layout(
        self, pool: Sequence[Mapping[str, Any]], with_optimizer: bool, games: int | None = None,
        average: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, tuple[int, ...]], dict[str, torch.dtype]]:
        """The (shape, dtype) of every tensor a checkpoint's trainer state must hold for this
        trainer: its own state's (engine, collector, generators), the optimizer's moments (if
        ``with_optimizer``: none before the first update), and a policy's per snapshot of ``pool``.
        ``games``: the saved games in flight (the batch of the engine and collector tensors), if
        not this trainer's (a distributed run's checkpoint holds rank 0's share). ``average``: the
        saved head average's schedule (its members' weights), in a fictitious-play run."""
        fresh, _extra = self._trainer_state()
        layout = {k: (tuple(v.shape), v.dtype) for k, v in fresh.items()
                  if not k.startswith(("optimizer.", "pool.", "average."))}
        if self.average is not None and average is not None:
            layout.update({k: (shape, torch.float32) for k, shape in self.average.layout(average).items()})
        if games is not None:
            for k, (shape, dtype) in layout.items():
                if k.startswith(("engine.", "collector.")):
                    layout[k] = ((games, *shape[1:]), dtype)
        if with_optimizer:
            for index, parameter in enumerate(self.trainable):
                layout[f"optimizer.{index}.step"] = ((), torch.float32)
                layout[f"optimizer.{index}.exp_avg"] = (tuple(parameter.shape), torch.float32)
                layout[f"optimizer.{index}.exp_avg_sq"] = (tuple(parameter.shape), torch.float32)
        policy = {k: (tuple(v.shape), v.dtype) for k, v in self.network.policy.state_dict().items()}
        for i, entry in enumerate(pool):
            if entry["snapshot"]:
                layout.update({f"pool.{i}.{k}": v for k, v in policy.items()})
        return {k: shape for k, (shape, _) in layout.items()}, {k: dtype for k, (_, dtype) in layout.items()}


def saved_config(metadata: Mapping[str, Any], path: Path) -> TrainConfig:
    """The config a training checkpoint (``path``: its metadata file) records, checked: a valid
    config, for the checkpoint's own game and network widths, within the sizes a checkpoint may
    hold. Raises :class:`CheckpointError` naming the field."""
    if "config" not in metadata:
        raise CheckpointError(f"{path}: field 'config': missing (a training checkpoint records its config)")
    try:
        config = TrainConfig.from_dict(metadata["config"])
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{path}: field 'config': {error}") from None
    from pisti_env.rules import make_settings

    if config.settings.to_dict() != make_settings(**metadata["settings"]).to_dict():
        raise CheckpointError(f"{path}: field 'config.settings': not the checkpoint's settings")
    if list(config.hidden_sizes) != list(metadata["hidden_sizes"]):
        raise CheckpointError(f"{path}: field 'config.hidden_sizes': not the checkpoint's hidden_sizes")
    for field in _HEADS:
        if list(getattr(config, field)) != list(metadata.get(field, [])):
            raise CheckpointError(f"{path}: field 'config.{field}': not the checkpoint's {field}")
    try:
        check_hidden_sizes(config.value_hidden_sizes, "value_hidden_sizes", path)
    except CheckpointError as error:
        raise CheckpointError(str(error).replace("'value_hidden_sizes'", "'config.value_hidden_sizes'")) from None
    return config


def resume_config(
    saved: TrainConfig, changes: Mapping[str, Any], trained_steps: int, directory: str | os.PathLike
) -> TrainConfig:
    """The config a resumed run continues with: ``saved`` (the checkpoint's) with ``changes``
    applied, config or game-setting names to the values asked for. Only the fields of
    :data:`~training.trainer.config.RESUMABLE` may change; a value of any other field that
    differs from the checkpoint's is a ``ValueError`` naming each such flag. ``total_steps``
    below ``trained_steps`` is a ``ValueError`` too."""
    from pisti_env.rules import Settings, make_settings

    from .network import resolve_precision

    game = {f.name for f in dataclasses.fields(Settings)}
    fields = {f.name for f in dataclasses.fields(TrainConfig)} - {"settings"}
    unknown = sorted(set(changes) - game - fields)
    if unknown:
        raise ValueError(f"unknown config field(s) {unknown}")
    conflicts = []
    asked = {k: v for k, v in changes.items() if k in game}
    trained = saved.settings.to_dict()
    try:
        merged = make_settings(**{**trained, **asked}).to_dict()
    except (ValueError, TypeError):
        merged = {**trained, **asked}
    for key in sorted(asked):
        if merged[key] != trained[key]:
            conflicts.append(f"--{key.replace('_', '-')} {asked[key]!r} (the checkpoint's: {trained[key]!r})")
    values = {}
    for key in sorted(set(changes) & fields):
        value = tuple(changes[key]) if isinstance(changes[key], list) else changes[key]
        if key in RESUMABLE:
            values[key] = value
            continue
        if key == "precision" and value in ("auto", saved.precision):
            value = resolve_precision(value, saved.device)
        if value != getattr(saved, key):
            conflicts.append(f"--{key.replace('_', '-')} {value!r} (the checkpoint's: {getattr(saved, key)!r})")
    if conflicts:
        allowed = ", ".join("--" + k.replace("_", "-") for k in RESUMABLE)
        raise ValueError(
            f"--resume continues {directory} with its own settings and config; these flags contradict it: "
            f"{'; '.join(conflicts)}. Only {allowed} may change on resume (or start a new run with another --out)"
        )
    total = values.get("total_steps")
    if total is not None and total < trained_steps:
        raise ValueError(f"{directory} has trained {trained_steps} steps already: --steps {total} is less")
    return dataclasses.replace(saved, **values)


# ---------------------------------------------------------------------- the run
RUN_FILES = (LATEST, HISTORY, "metrics.csv", "tensorboard", "policy", "config.json", "evaluation.json")


def run(
    config: TrainConfig,
    resume: bool = False,
    progress: bool = True,
    resume_steps: int | None = None,
    resume_changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
) -> Trainer:
    """Train to ``config.total_steps``, logging and checkpointing into ``config.out_dir`` (OUT).

    A fresh run (``resume`` false) refuses an OUT that already holds a run's files
    (``ValueError``: continue it with ``resume``, or choose another OUT). With ``resume``, the
    run continues from OUT's newest complete checkpoint with its own config
    (:func:`open_run`); ``resume_steps`` extends its budget and ``resume_changes`` are the
    values asked for (:func:`resume_config`: only :data:`~training.trainer.config.RESUMABLE`
    fields may differ from the checkpoint's); no complete checkpoint in OUT is a
    :class:`CheckpointError` naming it. Checkpoints go to ``OUT/checkpoints`` every
    ``checkpoint_every`` updates and at the end, ``OUT/checkpoint`` links to the newest
    (:func:`save_run_checkpoint`), the final policy to ``OUT/policy``. After a resume the logs
    (``metrics.csv``, TensorBoard) hold each update once: they are cut back to what they held
    when the checkpoint was written. ``shard``: this rank of a distributed run
    (:mod:`training.trainer.distributed`); only rank 0 writes (logs, checkpoints, evaluations)."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    trainer, saved_update = open_run(config, resume, resume_steps, resume_changes, shard)
    if not shard.main:  # another rank: it learns, rank 0 writes
        while trainer.update < trainer.num_updates:
            trainer.train_update()
        shard.barrier()  # leave with rank 0 (below): no rank tears down the process group alone
        return trainer
    logs = RunLogs(out, trainer.config)
    bar = _progress(trainer, progress)
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
            logs.write(trainer.update, trainer.step, metrics)
            if c.checkpoint_every and trainer.update % c.checkpoint_every == 0:
                save_run_checkpoint(trainer, out, logs)
                saved_update = trainer.update
            if bar is not None:
                bar.update(int(metrics["global_step"]) - bar.n)
                bar.set_postfix_str(f"{metrics['charts/steps_per_second']:,.0f} steps/s {latest_eval}")
        if saved_update != trainer.update:
            save_run_checkpoint(trainer, out, logs)
    finally:
        if bar is not None:
            bar.close()
        logs.close()
    trainer.save(out / "policy", with_trainer_state=False)
    c = trainer.config
    if c.eval_every and c.eval_deals:  # the evaluation summary of the final policy
        summary = {"step": trainer.step, "deals": c.eval_deals, **evaluate_against_baselines(trainer)}
        write_atomic(out / "evaluation.json", lambda tmp: Path(tmp).write_text(json.dumps(summary, indent=2), encoding="utf-8"))
        if progress:
            print("final policy, mean score difference per hand over duplicate deals: " + ", ".join(
                f"vs {b} {summary[f'eval/{b}_margin']:+.2f} ± {summary[f'eval/{b}_ci95']:.2f}" for b in c.eval_baselines
            ) + f" ({c.eval_deals} deals; `pisti-eval` for more)")
    # Every rank waits here until rank 0 has written everything, then all leave the process
    # group together: a rank tearing gloo down while rank 0 still worked was seen to abort.
    shard.barrier()
    return trainer


def open_run(
    config: TrainConfig,
    resume: bool,
    resume_steps: int | None = None,
    resume_changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
) -> tuple[Trainer, int | None]:
    """The trainer of a run in ``config.out_dir`` and the update of its latest checkpoint
    (``None`` for a fresh run); see :func:`run` for what is refused. On resume the newest
    complete checkpoint is taken (newer incomplete ones are passed over with a note on stderr,
    what killed saves left is removed) and the logs are cut back to that checkpoint. In a
    distributed run (``shard``) rank 0 alone checks OUT, chooses and cleans up; the other ranks
    wait for it, then build their trainers from the checkpoint it chose."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    if isinstance(config.keep_checkpoints, bool) or not isinstance(config.keep_checkpoints, int) or config.keep_checkpoints < 1:
        raise ValueError(f"keep_checkpoints must be an int >= 1, got {config.keep_checkpoints!r}")
    changes = {**(resume_changes or {}), "out_dir": str(out)}
    if not shard.main:
        shard.barrier()  # rank 0 has checked OUT, chosen its checkpoint and cleaned up
        if not resume:
            return Trainer(config, shard=shard), None
        path, _ = latest_run_checkpoint(out)  # the one rank 0 chose: newer ones are gone
        if path is None:
            raise CheckpointError(f"--resume: {out} holds no complete checkpoint to continue")
        trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
        return trainer, trainer.update
    if resume:
        if not out.is_dir():
            raise CheckpointError(f"--resume: {out} does not exist: there is no run to continue (check --out)")
        path, notes = latest_run_checkpoint(out)
        for note in notes:
            print(f"pisti-train: {note}", file=sys.stderr)
        if path is None:
            raise CheckpointError(
                f"--resume: {out} holds no complete checkpoint to continue (looked in {out / HISTORY}); a run killed "
                "before its first checkpoint leaves none: remove it or choose another --out to start afresh"
            )
        trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
        trim_logs(out, read_metadata(path).get("log_sizes", {}))
        prune_run_checkpoints(out, path, trainer.config.keep_checkpoints)
        saved: int | None = trainer.update
    else:
        existing = [name for name in RUN_FILES if os.path.lexists(out / name)]
        if existing:
            raise ValueError(
                f"{out} already holds a run ({', '.join(existing)}): continue it with --resume, "
                "or choose another --out (or remove it)"
            )
        out.mkdir(parents=True, exist_ok=True)
        trainer = Trainer(config, shard=shard)
        saved = None
    text = json.dumps(trainer.config.to_dict(), indent=2)
    write_atomic(out / "config.json", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    shard.barrier()
    return trainer, saved


def save_run_checkpoint(trainer: Trainer, out: str | os.PathLike, logs: "RunLogs | None" = None) -> Path:
    """Save the run's checkpoint after its current update into ``OUT/checkpoints`` and point
    ``OUT/checkpoint`` at it (:func:`~training.trainer.checkpoint.publish_run_checkpoint`; the
    config's ``keep_checkpoints`` newest are kept), recording the logs' sizes (flushed first)
    so that a resume cuts them back to this instant."""
    weights, metadata, state = trainer.checkpoint_contents(LATEST)
    if logs is not None:
        metadata["log_sizes"] = logs.sizes()
    return publish_run_checkpoint(out, trainer.update, weights, metadata, state, trainer.config.keep_checkpoints)


class RunLogs:
    """A run's logs: ``OUT/metrics.csv`` (one row per update) and TensorBoard scalars in
    ``OUT/tensorboard`` (optional: without the tensorboard package, the CSV alone)."""

    def __init__(self, out: str | os.PathLike, config: TrainConfig) -> None:
        self.out = Path(out)
        self.csv_path = self.out / "metrics.csv"
        self.fields = metric_names(config)
        self.writer = _tensorboard(self.out / "tensorboard")

    def write(self, update: int, step: int, metrics: Mapping[str, float]) -> None:
        """One update's row and scalars (at x = ``step``)."""
        new_file = not self.csv_path.exists() or self.csv_path.stat().st_size == 0
        with open(self.csv_path, "a", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=self.fields, restval="")
            if new_file:
                w.writeheader()
            w.writerow({"update": update, **metrics})
        if self.writer is not None:
            for key, value in metrics.items():
                self.writer.add_scalar(key, value, step)

    def sizes(self) -> dict[str, int]:
        """Every log file's size (OUT-relative names), after flushing them to disk."""
        if self.writer is not None:
            self.writer.flush()
        sizes = {}
        files = [self.csv_path, *sorted((self.out / "tensorboard").glob("events.out.tfevents.*"))]
        for path in files:
            name = path.relative_to(self.out).as_posix()
            if path.is_file() and LOG_FILE.fullmatch(name):
                with open(path, "rb") as f:
                    os.fsync(f.fileno())
                sizes[name] = path.stat().st_size
        return sizes

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def trim_logs(out: str | os.PathLike, sizes: Mapping[str, int]) -> None:
    """Cut a run's logs back to ``sizes`` (a checkpoint's record, :meth:`RunLogs.sizes`): each
    file to its recorded size, and TensorBoard event files made after it removed. (A checkpoint
    of an older trainer records none: its logs are left as they are.)"""
    out = Path(out)
    if not sizes:
        return
    for path in [out / "metrics.csv", *(out / "tensorboard").glob("events.out.tfevents.*")]:
        name = path.relative_to(out).as_posix()
        if not path.is_file() or path.is_symlink():
            continue
        if name not in sizes:
            if name.startswith("tensorboard/"):
                path.unlink()
            continue
        if path.stat().st_size > sizes[name]:
            os.truncate(path, sizes[name])


def metric_names(config: TrainConfig) -> list[str]:
    """The columns of metrics.csv: every figure an update can report."""
    names = [
        "update", "global_step", "losses/policy", "losses/value", "losses/entropy", "losses/approx_kl",
        "losses/clip_fraction", "losses/explained_variance", "charts/learning_rate", "charts/learner_decisions",
        "charts/steps_per_second", "time/env_seconds", "time/inference_seconds", "time/update_seconds",
        "charts/learner_margin_vs_pool", "charts/pool_games",
    ]
    if config.magnet_coef > 0:
        names.insert(names.index("losses/explained_variance"), "losses/magnet_kl")
    for baseline in config.eval_baselines:
        names += [f"eval/{baseline}_margin", f"eval/{baseline}_ci95"]
    return names


def evaluate_against_baselines(
    trainer: Trainer, deals: int | None = None, seed: int | None = None
) -> dict[str, float]:
    """Duplicate-deal evaluation (the harness) of the current policy against each of the
    config's ``eval_baselines``, over ``deals`` (default: the config's ``eval_deals``) deals
    seeded with ``seed`` (default: the update number): per baseline, the mean score difference per hand
    (``eval/<spec>_margin``) and its 95% half-width (``eval/<spec>_ci95``). A baseline with a
    batched form (``random``, ``greedy``, ...) plays on the batched engine, on the trainer's
    device and threads (:mod:`training.harness.batched_play`); any other through the Python
    engine, in this process."""
    from pisti_env.agents import make_player
    from training.harness.evaluate import evaluate

    c = trainer.config
    learner = CheckpointPlayer(trainer.shipped_policy(), {"settings": trainer.settings.to_dict(), "name": "learner"},
                               play=play_mode(trainer.settings))  # as it will be saved

    def loader(spec: str):
        return learner if spec == "learner" else make_player(spec, settings=trainer.settings)

    results: dict[str, float] = {}
    s = trainer.settings
    variants = {k: v for k, v in s.to_dict().items() if k not in ("num_players", "partnerships", "target")}
    for baseline in c.eval_baselines:
        report = evaluate(
            ["learner", baseline], num_players=s.num_players, partnerships=s.partnerships,
            deals=c.eval_deals if deals is None else deals, matches=0,
            seed=trainer.update if seed is None else seed, workers=1, bootstrap=0, loader=loader,
            threads=torch.get_num_threads(), device=str(trainer.device), **variants,
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
