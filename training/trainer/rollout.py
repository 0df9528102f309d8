"""Collecting self-play rollouts on the batched engine.

Each game of the batch has, per seat, a controller: the learner (the policy being trained) or
one opponent of the pool. A share of the games is pure self-play (every seat is the learner);
in the others the learner holds one side, at a random seat, and one pool opponent holds every
other seat. Controllers are drawn again whenever a game restarts. An extension's seat controller
(`SeatController`, e.g. the head average of
`training.bluff.average`) may decide some seats' moves with other weights; those decisions
are not the learner's (``Rollout.learner`` is false for them).

A rollout records one decision per batch step and game: the mover's observation, mask, card,
log-probability and value, its seat, whether the learner made it, and (for a privileged value
network) the hidden information the value read; plus every seat's
rewards and the done flags, from which `training.trainer.ppo.assign_seat_rewards` credits each
decision with its own seat's rewards.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import torch

from pisti_env.batched import BatchedPisti
from pisti_env.policies.network import log_probs, sample

from .extension import SeatController
from .network import ActorCritic, autocast
from .pool import OpponentPool

LEARNER = -1  # controller code of the learner (pool entries are 0, 1, ...)


@dataclass
class Rollout:
    """(T, B, ...) tensors of one rollout; see the module docstring."""

    observation: torch.Tensor
    mask: torch.Tensor
    hidden: torch.Tensor  # (T, B, H) what the value network read beyond the observation (H may be 0)
    action: torch.Tensor
    logp: torch.Tensor
    value: torch.Tensor
    seat: torch.Tensor
    learner: torch.Tensor
    rewards: torch.Tensor  # (T, B, n)
    done: torch.Tensor
    end_values: torch.Tensor  # (B, n): each seat's value at the end, for cut-off decisions


class SelfPlayCollector:
    """Plays the batched engine with the learner and the pool; see the module docstring.

    Args:
        engine: the batched engine (already constructed, not reset).
        pool: the opponents.
        self_play_share: share of games where every seat is the learner.
        rollout_steps: batch steps per rollout.
        generator: all sampling (cards, controllers) draws from it.
        precision: ``"bf16"`` or ``"fp32"`` matrix products in the networks.
        privileged: the value network reads the hidden information too.
        seats: an extension's seat controller (decides some seats' moves), or ``None``.
    """

    def __init__(
        self,
        engine: BatchedPisti,
        pool: OpponentPool,
        self_play_share: float,
        rollout_steps: int,
        generator: torch.Generator,
        precision: str = "fp32",
        privileged: bool = False,
        seats: SeatController | None = None,
    ) -> None:
        self.engine = engine
        self.seats = seats
        self.pool = pool
        self.self_play_share = self_play_share
        self.rollout_steps = rollout_steps
        self.generator = generator
        self.precision = precision
        self.privileged = privileged
        B, n, dev = engine.batch_size, engine.num_players, engine.device
        T = rollout_steps
        self.storage = Rollout(
            observation=torch.zeros(T + 1, B, engine.observation_size, device=dev),
            mask=torch.zeros(T, B, engine.settings.num_actions, dtype=torch.bool, device=dev),
            hidden=torch.zeros(T, B, engine.hidden_information_size if privileged else 0, device=dev),
            action=torch.zeros(T, B, dtype=torch.long, device=dev),
            logp=torch.zeros(T, B, device=dev),
            value=torch.zeros(T, B, device=dev),
            seat=torch.zeros(T, B, dtype=torch.long, device=dev),
            learner=torch.zeros(T, B, dtype=torch.bool, device=dev),
            rewards=torch.zeros(T, B, n, device=dev),
            done=torch.zeros(T, B, dtype=torch.bool, device=dev),
            end_values=torch.zeros(B, n, device=dev),
        )
        self.controller = torch.full((B, n), LEARNER, dtype=torch.long, device=dev)
        self.episode_return = torch.zeros(B, n, device=dev)
        self.out = engine.reset(observation_out=self.storage.observation[0])
        self._assign_controllers(torch.ones(B, dtype=torch.bool, device=dev))
        # Statistics since the last call to ``pop_stats``; seconds spent choosing actions (the
        # learner's networks and the pool's opponents), the rest of ``collect`` is the engine.
        self._finished: list[float] = []
        self.inference_seconds = 0.0

    def resume_from(self, state, controller: torch.Tensor, episode_return: torch.Tensor) -> None:
        """Continue from a saved engine state and controllers (a resumed training run; the seat
        controller restores its own tensors)."""
        dev = self.engine.device
        self.engine.state = state
        self.controller = controller.to(dev)
        self.episode_return = episode_return.to(dev)
        self.out = self.engine.peek(state, observation_out=self.storage.observation[0])

    def _assign_controllers(self, games: torch.Tensor) -> None:
        """New controllers for the games in ``games`` (a bool mask)."""
        idx = games.nonzero().squeeze(1)
        if idx.numel() == 0:
            return
        n, dev = self.engine.num_players, self.engine.device
        k = idx.numel()
        self_play = torch.rand(k, generator=self.generator, device=dev) < self.self_play_share
        opponent = self.pool.draw(k, self.generator).to(dev) if self.pool.entries else torch.zeros(k, dtype=torch.long, device=dev)
        learner_seat = torch.randint(0, n, (k,), generator=self.generator, device=dev)
        side_of = self.engine.side_of
        learner_side = side_of[learner_seat]
        on_learner_side = side_of[None, :] == learner_side[:, None]  # (k, n)
        if not self.engine.settings.partnerships:
            on_learner_side = torch.arange(n, device=dev)[None, :] == learner_seat[:, None]
        controllers = torch.where(on_learner_side, LEARNER, opponent[:, None])
        self_play = self_play | (not self.pool.entries)
        controllers = torch.where(self_play[:, None], LEARNER, controllers)
        self.controller[idx] = controllers
        if self.seats is not None:
            self.seats.assign(idx, self_play, on_learner_side)

    @torch.no_grad()
    def collect(self, networks: ActorCritic) -> Rollout:
        """Play ``rollout_steps`` batch steps; returns the (reused) storage."""
        st, engine = self.storage, self.engine
        B = engine.batch_size
        games = torch.arange(B, device=engine.device)
        if self.out.observation.data_ptr() != st.observation[0].data_ptr():
            # The last rollout ended in its final slot; this one starts there. (Copied here, not
            # at the end of the last one: its learner still reads slot 0 after collecting.)
            st.observation[0].copy_(self.out.observation)
            self.out = dataclasses.replace(self.out, observation=st.observation[0])
        for t in range(self.rollout_steps):
            out = self.out
            obs, mask, seat = st.observation[t], out.action_mask, out.seat
            started = time.perf_counter()
            if self.privileged:
                st.hidden[t] = engine.hidden_information(engine.state)
            with autocast(engine.device, self.precision):
                logits = networks.policy(obs)
                value = networks.value(obs, st.hidden[t] if self.privileged else None)
            others = None  # the rows a seat controller decided
            if self.seats is not None:
                with autocast(engine.device, self.precision):
                    others = self.seats.override(networks.policy, obs, mask, seat, logits)
            action = sample(logits, mask, self.generator)
            controller = self.controller[games, seat]
            with autocast(engine.device, self.precision):  # the pool's opponents: one call (snapshots stacked)
                self.pool.act_all(controller, action, obs, mask, self.generator, engine.state)
            self.inference_seconds += time.perf_counter() - started
            st.mask[t] = mask
            st.action[t] = action
            st.logp[t] = log_probs(logits, mask).gather(1, action[:, None]).squeeze(1)
            st.value[t] = value
            st.seat[t] = seat
            st.learner[t] = controller == LEARNER
            if others is not None:
                st.learner[t] &= ~others
            self.out = out = engine.step(action, observation_out=st.observation[t + 1])
            st.rewards[t] = out.rewards
            st.done[t] = out.done
            self._on_rewards(out.rewards, out.done)
        # Every seat's value where the rollout stops, for decisions it cut short.
        state = engine.state
        for s in range(engine.num_players):
            seat = torch.full((B,), s, device=engine.device)
            seat_obs = engine.observe(state, seat=seat)
            hidden = engine.hidden_information(state, seat) if self.privileged else None
            with autocast(engine.device, self.precision):
                st.end_values[:, s] = networks.value(seat_obs, hidden)
        return st

    def _on_rewards(self, rewards: torch.Tensor, done: torch.Tensor) -> None:
        self.episode_return += rewards
        if not bool(done.any()):
            return
        # The finished games' seats and the learner's return, read in one transfer (not a few
        # per game: on a GPU each is a sync), then recorded game by game in order.
        games = done.nonzero().squeeze(1)
        controllers = self.controller.index_select(0, games)
        learner = controllers == LEARNER
        first_learner_seat = learner.to(torch.uint8).argmax(1, keepdim=True)
        returns = self.episode_return.index_select(0, games).gather(1, first_learner_seat).squeeze(1)
        margins = torch.where(learner.any(1), returns, torch.zeros_like(returns))
        for seats, margin in zip(controllers.tolist(), margins.tolist()):
            opponents = sorted({c for c in seats if c != LEARNER})
            for index in opponents:
                self.pool.record(index, margin)
            if opponents:
                self._finished.append(margin)
        self.episode_return[done] = 0.0
        self._assign_controllers(done)

    def pop_stats(self) -> dict[str, float]:
        """Mean score difference of the learner in finished games against the pool."""
        finished, self._finished = self._finished, []
        if not finished:
            return {}
        return {"charts/learner_margin_vs_pool": sum(finished) / len(finished), "charts/pool_games": float(len(finished))}
