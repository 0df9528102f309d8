"""Whole hands of self-play on the batched engine, the data of the value-based learners.

Without the bluff variant a single hand with one deck has the same number of decisions in
every game: the cards dealt to the hands (all but the table's first cards, R6 and R18), one
card played per decision, the seats moving in turn (R3). So games that start together stay in
lockstep: every game of the batch ends its hand at the same step, and a seat's next decision
is always ``num_players`` steps after its last. One call of [HandPlayer.play][] plays one hand
in every game and returns its decisions as ``(T, B, ...)`` tensors, from which a Monte-Carlo
learner reads each decision's return ([HandBatch.returns][]) and a temporal-difference learner
each decision's transition to its seat's next decision ([HandBatch.transitions][]).

Every seat is played by the callable handed to ``play`` (self-play); an algorithm that wants
other players at some seats (a frozen copy, an average policy) decides inside that callable from
the ``seat`` it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from pisti_env.batched import BatchedPisti
from pisti_env.rules.cards import NUM_CARD_IDS, TABLE_SIZE

# Decisions in one single hand with one deck (R6, R18): every card but the table's first ones.
HAND_DECISIONS = NUM_CARD_IDS - TABLE_SIZE

# choose(observation (B, O) float32, action_mask (B, A) bool, seat (B,) long) -> actions (B,) long
Chooser = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class Transitions:
    """One transition per decision, flattened to ``(N, ...)``: a seat's decision, the reward its
    seat got until its next decision (or the hand's end), and that next decision's observation
    and mask (zeros where ``done``)."""

    observation: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_observation: torch.Tensor
    next_mask: torch.Tensor
    done: torch.Tensor


@dataclass
class HandBatch:
    """One hand of every game: ``T = HAND_DECISIONS`` steps of ``B`` games.

    Attributes:
        observation: ``(T, B, O)`` the mover's observation.
        mask: ``(T, B, A)`` bool, the mover's legal actions.
        action: ``(T, B)`` the actions played.
        seat: ``(T, B)`` the mover's seat.
        rewards: ``(T, B, n)`` every seat's reward for the step (the engine's ``rewards``).
    """

    observation: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    seat: torch.Tensor
    rewards: torch.Tensor

    @property
    def num_players(self) -> int:
        return self.rewards.shape[2]

    @property
    def decisions(self) -> int:
        """Decisions in the batch (``T * B``): the environment steps it cost."""
        return self.action.numel()

    def returns(self) -> torch.Tensor:
        """``(T, B)``: each decision's Monte-Carlo return, the sum of its seat's rewards from that
        step to the hand's end (undiscounted: the hand's points are what is played for)."""
        to_go = self.rewards.flip(0).cumsum(0).flip(0)  # (T, B, n): sum over t' >= t
        return to_go.gather(2, self.seat[:, :, None]).squeeze(2)

    def seat_scores(self) -> torch.Tensor:
        """``(B, n)``: each seat's reward summed over the hand (its final score difference)."""
        return self.rewards.sum(0)

    def transitions(self) -> Transitions:
        """Every decision with its seat's next decision ``n`` steps later (the seats move in
        turn, R3), the reward between them summed, ``done`` for a seat's last decision."""
        T, B = self.action.shape
        n = self.num_players
        step = torch.arange(T, device=self.action.device)
        nxt = torch.clamp(step + n, max=T - 1)
        done = step + n >= T
        if not bool((self.seat[nxt[~done]] == self.seat[~done]).all()):
            raise RuntimeError("the seats did not move in turn: HandBatch.transitions needs hands without claims (R29)")
        seat = self.seat[:, :, None]
        cum = torch.cat([torch.zeros_like(self.rewards[:1]), self.rewards.cumsum(0)])  # (T+1, B, n)
        end = torch.clamp(step + n, max=T)
        reward = (cum[end] - cum[step]).gather(2, seat).squeeze(2)  # rewards of steps t .. t+n-1 (or the end)
        keep = (~done).to(self.observation.dtype)[:, None, None]
        next_observation = self.observation[nxt] * keep
        next_mask = self.mask[nxt] & (~done)[:, None, None]
        return Transitions(
            observation=self.observation.reshape(T * B, -1),
            mask=self.mask.reshape(T * B, -1),
            action=self.action.reshape(-1),
            reward=reward.reshape(-1),
            next_observation=next_observation.reshape(T * B, -1),
            next_mask=next_mask.reshape(T * B, -1),
            done=done[:, None].expand(T, B).reshape(-1),
        )


class HandPlayer:
    """Plays whole hands on a [BatchedPisti][pisti_env.batched.BatchedPisti] engine.

    Args:
        engine: a batched engine for single hands without the bluff variant (``target=None``,
            ``bluff=False``): anything else has hands of varying length, a ``ValueError``.

    The engine restarts every game when its hand ends (all at once, in lockstep), so calls to
    [play][training.algorithms.hands.HandPlayer.play] follow each other without a reset.
    Buffers are reused: a returned batch is valid until the next call.
    """

    def __init__(self, engine: BatchedPisti) -> None:
        s = engine.settings
        if s.target is not None or s.bluff:
            raise ValueError(f"HandPlayer plays single hands without the bluff variant (R29): got target={s.target}, "
                             f"bluff={s.bluff}")
        self.engine = engine
        T, B, dev = HAND_DECISIONS, engine.batch_size, engine.device
        self.batch = HandBatch(
            observation=torch.zeros(T, B, engine.observation_size, device=dev),
            mask=torch.zeros(T, B, s.num_actions, dtype=torch.bool, device=dev),
            action=torch.zeros(T, B, dtype=torch.long, device=dev),
            seat=torch.zeros(T, B, dtype=torch.long, device=dev),
            rewards=torch.zeros(T, B, engine.num_players, device=dev),
        )
        self._next_observation = torch.zeros(B, engine.observation_size, device=dev)
        self.out = engine.reset(observation_out=self._next_observation)
        self.hands = 0

    @torch.no_grad()
    def play(self, choose: Chooser) -> HandBatch:
        """Play one hand in every game, every move chosen by ``choose(observation, mask, seat)``."""
        hb, engine = self.batch, self.engine
        last = HAND_DECISIONS - 1
        for t in range(HAND_DECISIONS):
            out = self.out
            hb.observation[t].copy_(out.observation)
            hb.mask[t].copy_(out.action_mask)
            hb.seat[t].copy_(out.seat)
            action = choose(hb.observation[t], hb.mask[t], hb.seat[t])
            hb.action[t].copy_(action)
            self.out = out = engine.step(action, observation_out=self._next_observation)
            hb.rewards[t].copy_(out.rewards)
            ended = out.done.all() if t == last else out.done.any()
            if bool(ended) != (t == last):
                raise RuntimeError(f"a hand ended at step {t + 1}, not {HAND_DECISIONS}: the games left lockstep")
        self.hands += 1
        return hb
