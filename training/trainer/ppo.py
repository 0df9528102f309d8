"""The PPO maths, as plain functions on tensors: per-seat credit assignment, GAE, the losses.

Self-play is a multi-agent game, so a rollout of ``T`` batch steps over ``B`` games holds one
decision per (step, game), made by whichever seat was to move. Each seat is its own
trajectory: a decision's reward is everything that seat received from its move up to its next
move (``assign_seat_rewards``), and GAE runs along each seat's own decisions (``gae``), so no
sample is ever credited with another seat's reward or bootstrapped from another seat's value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class SeatCredit:
    """Per-decision credit of a rollout, all (T, B).

    ``reward``: what the deciding seat received from its move up to its next move (or the end
    of the episode, or of the rollout). ``next_index``: the step of that seat's next decision in
    the same episode and game, or -1. ``terminal``: the episode ended before that seat moved
    again. A decision with ``next_index == -1`` and not ``terminal`` is cut by the rollout's end
    and bootstraps from its seat's value at the end.
    """

    reward: torch.Tensor
    next_index: torch.Tensor
    terminal: torch.Tensor


def assign_seat_rewards(seats: torch.Tensor, rewards: torch.Tensor, dones: torch.Tensor) -> SeatCredit:
    """Credit each decision with its own seat's rewards.

    Args:
        seats: (T, B) the seat that decided at each step of each game.
        rewards: (T, B, n) every seat's reward returned by that step.
        dones: (T, B) the episode ended at that step (the game restarted after it).
    """
    T, B = seats.shape
    n = rewards.shape[2]
    device = seats.device
    games = torch.arange(B, device=device)
    pending = torch.zeros(B, n, dtype=rewards.dtype, device=device)  # received since the last move
    open_step = torch.full((B, n), -1, dtype=torch.long, device=device)  # that move's step, or -1
    reward = torch.zeros(T, B, dtype=rewards.dtype, device=device)
    next_index = torch.full((T, B), -1, dtype=torch.long, device=device)
    terminal = torch.zeros(T, B, dtype=torch.bool, device=device)

    def close(step: torch.Tensor, game: torch.Tensor, value: torch.Tensor, nxt: torch.Tensor | None) -> None:
        reward[step, game] = value
        if nxt is not None:
            next_index[step, game] = nxt

    for t in range(T):
        seat = seats[t]
        previous = open_step[games, seat]
        again = previous >= 0  # this seat's previous move, in the same episode, is now followed up
        close(previous[again], games[again], pending[games, seat][again], torch.full_like(previous[again], t))
        pending[games, seat] = 0.0
        open_step[games, seat] = t
        pending += rewards[t]
        ended = dones[t]
        if bool(ended.any()):
            g, s = (ended[:, None] & (open_step >= 0)).nonzero(as_tuple=True)
            close(open_step[g, s], g, pending[g, s], None)
            terminal[open_step[g, s], g] = True
            pending[ended] = 0.0
            open_step[ended] = -1
    # Moves still open at the end of the rollout keep what they got so far and bootstrap.
    g, s = (open_step >= 0).nonzero(as_tuple=True)
    close(open_step[g, s], g, pending[g, s], None)
    return SeatCredit(reward=reward, next_index=next_index, terminal=terminal)


def gae(
    values: torch.Tensor,
    seats: torch.Tensor,
    credit: SeatCredit,
    end_values: torch.Tensor,
    gamma: float,
    gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation along each seat's own decisions.

    Args:
        values: (T, B) value estimates of the decisions.
        seats: (T, B) the deciding seats.
        credit: from `assign_seat_rewards`.
        end_values: (B, n) each seat's value estimate at the end of the rollout (used by
            decisions the rollout cut short).
        gamma, gae_lambda: discount and GAE λ, per decision of the seat.

    Returns ``(advantages, returns)``, both (T, B).
    """
    T, B = values.shape
    games = torch.arange(B, device=values.device)
    advantages = torch.zeros_like(values)
    cut_value = end_values[games[None, :].expand(T, B), seats]  # (T, B)
    for t in reversed(range(T)):
        nxt = credit.next_index[t]
        has_next = nxt >= 0
        follow = nxt.clamp(min=0)
        next_value = torch.where(has_next, values[follow, games], torch.where(credit.terminal[t], 0.0, cut_value[t]))
        next_advantage = torch.where(has_next, advantages[follow, games], 0.0)
        delta = credit.reward[t] + gamma * next_value - values[t]
        advantages[t] = delta + gamma * gae_lambda * next_advantage
    return advantages, advantages + values


@dataclass(frozen=True)
class PPOLosses:
    """The terms of the PPO objective for one minibatch, and diagnostics."""

    total: torch.Tensor
    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor
    approx_kl: torch.Tensor
    clip_fraction: torch.Tensor


def ppo_losses(
    new_logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    new_values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    entropy: torch.Tensor,
    clip_coef: float,
    clip_value: bool,
    ent_coef: float,
    vf_coef: float,
    mean: Callable[[torch.Tensor], torch.Tensor] = torch.mean,
) -> PPOLosses:
    """Clipped surrogate policy loss, (clipped) value loss and entropy bonus (CleanRL's form).

    ``approx_kl`` is the low-variance estimator ``E[(r - 1) - log r]`` of KL(old || new).
    ``mean`` averages each term over the minibatch; a rank of a distributed run passes its
    share of the global minibatch's mean (`training.trainer.distributed.Shard.mean`).
    """
    log_ratio = new_logp - old_logp
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = mean((ratio - 1) - log_ratio)
        clip_fraction = mean(((ratio - 1.0).abs() > clip_coef).float())
    policy_loss = mean(torch.max(-advantages * ratio, -advantages * ratio.clamp(1 - clip_coef, 1 + clip_coef)))
    if clip_value:
        clipped = old_values + (new_values - old_values).clamp(-clip_coef, clip_coef)
        value_loss = 0.5 * mean(torch.max((new_values - returns) ** 2, (clipped - returns) ** 2))
    else:
        value_loss = 0.5 * mean((new_values - returns) ** 2)
    entropy_mean = mean(entropy)
    total = policy_loss - ent_coef * entropy_mean + vf_coef * value_loss
    return PPOLosses(total, policy_loss, value_loss, entropy_mean, approx_kl, clip_fraction)


def magnet_kl(logp: torch.Tensor, magnet_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per row ``KL(policy || magnet)`` over the legal actions (both arguments masked
    log-probabilities, `log_probs`): the pull toward the
    reference policy of ``TrainConfig.magnet_coef``. Illegal actions have probability exactly 0
    in both, so they add nothing."""
    return (logp.exp() * (logp - magnet_logp)).masked_fill(~mask, 0.0).sum(-1)
