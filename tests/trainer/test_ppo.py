"""The PPO pieces against hand-computed values: credit assignment per seat, GAE, the clipped
losses, action masking."""

from __future__ import annotations

import math

import pytest
import torch

from pisti_env.rules.settings import Settings
from pisti_env.policies.network import log_probs, masked_logits, policy_network, sample
from training.trainer.network import entropy
from training.trainer.ppo import assign_seat_rewards, gae, ppo_losses


def test_each_decision_gets_its_own_seats_rewards_until_its_next_move():
    # One game, seats 0 and 1 alternate; the episode ends at step 3; step 4 starts a new one.
    seats = torch.tensor([[0], [1], [0], [1], [0]])
    rewards = torch.tensor([[[0.0, 0.0]], [[2.0, -2.0]], [[0.0, 0.0]], [[1.0, -1.0]], [[0.5, -0.5]]])
    dones = torch.tensor([[False], [False], [False], [True], [False]])
    credit = assign_seat_rewards(seats, rewards, dones)
    # seat 0 moved at 0: steps 0-1 bring it 0 + 2; seat 1 moved at 1: steps 1-2 bring -2 + 0;
    # seat 0 at 2: steps 2-3 (the end) bring 0 + 1; seat 1 at 3: -1; seat 0 at 4: 0.5 so far.
    assert credit.reward[:, 0].tolist() == [2.0, -2.0, 1.0, -1.0, 0.5]
    assert credit.next_index[:, 0].tolist() == [2, 3, -1, -1, -1]
    assert credit.terminal[:, 0].tolist() == [False, False, True, True, False]


def test_three_seats_and_a_seat_that_never_moves_again_before_the_end():
    seats = torch.tensor([[0], [1], [2], [0]])
    rewards = torch.zeros(4, 1, 3)
    rewards[2, 0] = torch.tensor([-5.0, -5.0, 10.0])  # seat 2 makes a pişti
    dones = torch.zeros(4, 1, dtype=torch.bool)
    credit = assign_seat_rewards(seats, rewards, dones)
    assert credit.reward[:, 0].tolist() == [-5.0, -5.0, 10.0, 0.0]
    assert credit.next_index[:, 0].tolist() == [3, -1, -1, -1]  # seats 1, 2 cut by the rollout end
    assert not credit.terminal.any()


def test_gae_on_a_short_sequence_with_a_terminal():
    seats = torch.tensor([[0], [1], [0], [1], [0]])
    rewards = torch.tensor([[[0.0, 0.0]], [[2.0, -2.0]], [[0.0, 0.0]], [[1.0, -1.0]], [[0.5, -0.5]]])
    dones = torch.tensor([[False], [False], [False], [True], [False]])
    credit = assign_seat_rewards(seats, rewards, dones)
    values = torch.tensor([[0.5], [0.1], [0.2], [0.3], [0.4]])
    end_values = torch.tensor([[9.0, 7.0]])
    gamma, lam = 0.9, 0.8
    adv, ret = gae(values, seats, credit, end_values, gamma, lam)
    # Seat 0: decisions 0 -> 2 -> (terminal). Seat 1: 1 -> 3 -> (terminal). Decision 4: cut.
    d2 = 1.0 + 0.0 - 0.2
    d0 = 2.0 + gamma * 0.2 - 0.5
    d3 = -1.0 - 0.3
    d1 = -2.0 + gamma * 0.3 - 0.1
    d4 = 0.5 + gamma * 9.0 - 0.4
    expected = [d0 + gamma * lam * d2, d1 + gamma * lam * d3, d2, d3, d4]
    assert adv[:, 0].tolist() == pytest.approx(expected)
    assert ret[:, 0].tolist() == pytest.approx([a + v for a, v in zip(expected, [0.5, 0.1, 0.2, 0.3, 0.4])])


def test_clipped_policy_and_value_losses():
    old_logp = torch.log(torch.tensor([0.5, 0.5]))
    new_logp = torch.log(torch.tensor([0.8, 0.2]))  # ratios 1.6 and 0.4
    adv = torch.tensor([1.0, -1.0])
    values = torch.tensor([1.0, 0.0])
    old_values = torch.tensor([0.0, 0.0])
    returns = torch.tensor([2.0, 0.0])
    ent = torch.tensor([0.3, 0.1])
    losses = ppo_losses(new_logp, old_logp, adv, values, old_values, returns, ent, 0.2, True, 0.01, 0.5)
    # ratio 1.6 with A=+1 is clipped to 1.2 -> -1.2; ratio 0.4 with A=-1: max(0.4, 0.8) = 0.8.
    assert float(losses.policy) == pytest.approx((-1.2 + 0.8) / 2)
    # value 1.0 is clipped to 0.2: max((1-2)^2, (0.2-2)^2) = 3.24; second sample 0.
    assert float(losses.value) == pytest.approx(0.5 * (3.24 + 0.0) / 2)
    assert float(losses.entropy) == pytest.approx(0.2)
    assert float(losses.total) == pytest.approx(float(losses.policy) - 0.01 * 0.2 + 0.5 * float(losses.value))
    kl = ((1.6 - 1) - math.log(1.6) + (0.4 - 1) - math.log(0.4)) / 2
    assert float(losses.approx_kl) == pytest.approx(kl)
    assert float(losses.clip_fraction) == 1.0


def test_masking_gives_illegal_cards_zero_probability_and_no_nans():
    logits = torch.tensor([[5.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]).repeat(1, 13)
    mask = torch.zeros(2, 52, dtype=torch.bool)
    mask[0, [1, 2]] = True
    mask[1, 7] = True
    logp = log_probs(logits, mask)
    p = logp.exp()
    assert torch.allclose(p.sum(1), torch.ones(2))
    assert float(p[0, 0]) == 0.0 and float(p[0, 3]) == 0.0
    assert float(p[0, 1]) == pytest.approx(math.e / (math.e + 1))
    assert float(p[1, 7]) == 1.0
    ent = entropy(logp, mask)
    assert torch.isfinite(ent).all()
    q = math.e / (math.e + 1)
    assert float(ent[0]) == pytest.approx(-(q * math.log(q) + (1 - q) * math.log(1 - q)))
    assert float(ent[1]) == 0.0
    g = torch.Generator().manual_seed(0)
    draws = torch.stack([sample(logits, mask, g) for _ in range(200)])
    assert set(draws[:, 0].tolist()) <= {1, 2} and set(draws[:, 1].tolist()) == {7}
    # Gradients through masked log-probs stay finite.
    net = policy_network(Settings(), (8,))
    out = net(torch.randn(2, net.observation_size))
    loss = -log_probs(out, mask).gather(1, torch.tensor([[1], [7]])).sum() - entropy(log_probs(out, mask), mask).sum()
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)
    assert torch.equal(masked_logits(logits, mask)[0, 0], torch.tensor(torch.finfo(torch.float32).min))
