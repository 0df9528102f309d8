"""The policy network's shared feature head, and the hidden information a privileged value
network reads (never a policy: R30–R31)."""

from __future__ import annotations

import pytest
import torch

from pisti_env.batched import BatchedPisti
from pisti_env.views.observation import ObservationLayout
from pisti_env.rules.settings import make_settings
from pisti_env.rules.settings import Settings
from pisti_env.policies.network import PolicyNetwork, policy_network
from pisti_env.policies.spec import NetworkSpec
from training.trainer.network import ValueNetwork


@pytest.mark.parametrize("bluff", [False, True])
def test_feature_head_scores_every_card_with_its_own_and_its_ranks_features(bluff):
    """The fast form (sums over suits, products) equals the definition written out card by card:
    logit = action head + features(card) · weights(context), features = own K, then the K
    summed over the card's rank; face-down plays (R29) have weights of their own."""
    torch.manual_seed(0)
    net = policy_network(Settings(bluff=bluff), (32, 16))
    k, num_actions = net.card_features, net.num_actions
    x = torch.rand(5, net.observation_size)
    got = net(x)
    context = torch.tanh(net.context(x))
    expected = net.card_head(context)
    weights = net.feature_head(context)
    cards = x[:, : 52 * k].view(5, 52, k)
    for card in range(52):
        same_rank = [c for c in range(52) if c % 13 == card % 13]
        features = torch.cat([cards[:, card], cards[:, same_rank].sum(1)], 1)
        for play in range(num_actions // 52):
            w = weights[:, play * 2 * k : (play + 1) * 2 * k]
            expected[:, play * 52 + card] += (features * w).sum(1)
    assert got.shape == (5, num_actions)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)


def test_network_spec_rejects_sizes_it_cannot_build():
    """The one check of a network's description (NetworkSpec): bounded widths, a game."""
    with pytest.raises(ValueError, match="hidden_sizes must be a list of 1..8 layer widths"):
        NetworkSpec(Settings(), ())
    with pytest.raises(ValueError, match="hidden_sizes must hold widths in 1..4096"):
        NetworkSpec(Settings(), (0,))
    with pytest.raises(ValueError, match="settings must be a pisti_env.rules.Settings"):
        NetworkSpec({"num_players": 2}, (8,))
    spec = NetworkSpec(Settings(), [8])
    assert spec.hidden_sizes == (8,) and PolicyNetwork(spec).observation_size == spec.layout.size
    with pytest.raises(ValueError, match="privileged"):
        ValueNetwork(10, 4)(torch.zeros(1, 10))


@pytest.mark.parametrize("settings", [dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False)])
def test_hidden_information_is_exactly_what_the_seat_cannot_see(settings):
    """R30–R31: the categories (each other hand, the stock, never-turned table cards) cover
    exactly the cards the seat's observation marks unseen; the next seat's hand category is
    that seat's hand (its action mask when it moves); the stock category counts the stock."""
    engine = BatchedPisti(64, seed=3, target=None, **settings)
    n = engine.num_players
    layout = ObservationLayout(make_settings(target=None, **settings))
    out = engine.reset()
    generator = torch.Generator().manual_seed(0)
    for _ in range(60):
        state = engine.state
        for seat in range(n):
            seats = torch.full((64,), seat)
            hidden = engine.hidden_information(state, seats).view(64, 52, n + 1)
            unseen = engine.observe(state, seats)[:, layout["unseen"]]
            assert torch.equal(hidden.sum(2), unseen), seat
            stock = hidden[:, :, n - 1].sum(1)
            assert torch.equal(stock, (52 - state.stock_pos).float())
        previous = (state.turn - 1) % n
        next_hand = engine.hidden_information(state, previous).view(64, 52, n + 1)[:, :, 0]
        assert torch.equal(next_hand > 0, out.action_mask)
        noise = torch.rand(out.action_mask.shape, generator=generator).masked_fill(~out.action_mask, -1)
        out = engine.step(noise.argmax(1))
    assert engine.hidden_information_size == 52 * (n + 1)
