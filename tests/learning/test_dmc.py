"""Deep Monte-Carlo (training/algorithms/dmc.py) on a tiny budget: the snapshots the protocol
asks for are written at the right step counts and play only legal cards, the same seed gives the
same snapshots and another seed other ones, the Q network's factored form is the concatenated
MLP, the loss and the exploration on hand-made cases, and bad flags are argparse errors."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import pytest
import torch
from torch import nn

from pisti_env import make_settings
from pisti_env.agents.exported import load_exported
from pisti_env.batched import BatchedPisti
from pisti_env.views.observation import ObservationLayout
from training.algorithms import dmc
from training.algorithms.recipe import snapshot_name

GAMES = 64  # 48 * 64 = 3,072 steps per update
UPDATE = 48 * GAMES
TINY = ["--steps", "12000", "--num-games", str(GAMES), "--batch-size", "512", "--hidden", "32", "32",
        "--threads", "1", "--quiet"]


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """One thread, as main sets it (more spin on a shared CPU); then put the count back."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def train_tiny(directory: Path, seed: int, *extra: str) -> dict:
    return dmc.main([*TINY, "--seed", str(seed), "--snapshot-steps", "3000", "7000", "12000",
                     "--snapshot-dir", str(directory), *extra])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Seed 3 twice (the second with the final evaluation on a few deals), seed 4 once."""
    root = tmp_path_factory.mktemp("dmc")
    threads = torch.get_num_threads()
    try:
        first = train_tiny(root / "a", 3, "--deals", "0", "--export", str(root / "final.pt"))
        again = train_tiny(root / "b", 3, "--deals", "4")
        other = train_tiny(root / "c", 4, "--deals", "0")
    finally:
        torch.set_num_threads(threads)
    return root, first, again, other


def probe_batch(count: int = 256, seed: int = 11) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and masks of real 2-player positions, a few steps into random hands (fresh
    copies of a cached batch)."""
    observation, mask = _probe_batch(count, seed)
    return observation.clone(), mask.clone()


@functools.cache
def _probe_batch(count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    engine = BatchedPisti(count, seed=seed, num_players=2, target=None)
    out = engine.reset()
    generator = torch.Generator().manual_seed(seed)
    observations, masks = [], []
    for _ in range(6):
        observations.append(out.observation.clone())
        masks.append(out.action_mask.clone())
        action = torch.rand(out.action_mask.shape, generator=generator).masked_fill(~out.action_mask, -1).argmax(1)
        out = engine.step(action)
    return torch.cat(observations), torch.cat(masks)


def test_snapshots_at_the_requested_steps_play_legal_cards(runs):
    root, first, _, _ = runs
    steps = [3072, 9216, 12288]  # the first update ends at or past 3000, 7000, 12000
    assert sorted(p.name for p in (root / "a").iterdir()) == [snapshot_name(s) for s in steps]
    assert first["steps"] == 12288 and first["margins"] is None
    observation, mask = probe_batch()
    for path in [*(root / "a" / snapshot_name(s) for s in steps), root / "final.pt"]:
        player = load_exported(path, settings=make_settings(num_players=2, target=None))
        actions = player.act_batch(observation, mask)
        assert bool(mask.gather(1, actions[:, None]).all()), path


def test_the_export_plays_the_argmax_of_q(runs):
    root, *_ = runs
    observation, mask = probe_batch(64, seed=5)
    player = load_exported(root / "final.pt")
    log_probs = player.action_log_probs(observation, mask)
    assert torch.isfinite(log_probs[mask]).all()
    assert bool((log_probs[~mask] < -1e30).all())


def test_same_seed_same_snapshots_other_seed_others(runs):
    root, _, again, _ = runs
    observation, mask = probe_batch(128, seed=7)
    for name in [snapshot_name(s) for s in (3072, 9216, 12288)]:
        a, b, c = (load_exported(root / run / name).action_log_probs(observation, mask) for run in "abc")
        assert torch.equal(a, b), name
        assert not torch.equal(a, c), name
    assert set(again["margins"]) == {"random", "greedy"}
    assert all(math.isfinite(m["mean"]) for m in again["margins"].values())


def small_network(players: int = 2) -> tuple[dmc.QNetwork, ObservationLayout]:
    layout = ObservationLayout(make_settings(num_players=players, target=None))
    torch.manual_seed(0)
    return dmc.QNetwork(layout, [16, 8]), layout


def test_the_factored_network_is_the_concatenated_mlp():
    """Q(s, a) = MLP([s; action features; card and rank slices]) with the first layer's weights
    side by side, for every action (forward) and for chosen ones (q)."""
    network, layout = small_network()
    observation, mask = probe_batch(32)
    features = network.action_features
    slices = network.card_slices(observation)  # (B, 52, 2K)
    rows = torch.cat([observation[:, None, :].expand(-1, features.shape[0], -1),
                      features[None].expand(observation.shape[0], -1, -1), slices], dim=2)
    first = nn.Linear(rows.shape[2], 16)
    with torch.no_grad():
        first.weight.copy_(torch.cat([network.state_in.weight, network.action_in.weight, network.slice_in.weight], 1))
        first.bias.copy_(network.state_in.bias)
        expected = network.body(first(rows)).squeeze(2)
        assert torch.allclose(network(observation), expected, atol=1e-5)
        legal, valid = dmc.legal_cards(mask)
        assert torch.allclose(network.q(observation, legal), expected.gather(1, legal), atol=1e-5)
    assert bool(valid.any(1).all()) and bool(mask.gather(1, legal)[valid].all())


def test_card_and_rank_slices():
    """Card id = suit * 13 + rank (R2): the rank slice sums a feature over the four suits."""
    network, layout = small_network()
    observation = torch.zeros(1, layout.size)
    hand = layout.feature_index["hand"]
    K = layout.num_card_features
    for card in (0, 13, 26 + 5):  # A♣, A♦ in hand; 6♥ too
        observation[0, card * K + hand] = 1.0
    slices = network.card_slices(observation)[0]
    assert slices[0, hand] == 1 and slices[39, hand] == 0  # A♣ in hand, A♠ not
    assert slices[39, K + hand] == 2 and slices[0, K + hand] == 2  # two Aces in hand
    assert slices[5, K + hand] == 1 and slices[5, hand] == 0  # 6♣: its rank's 6♥ is in hand
    assert slices[1, K + hand] == 0


class Fixed(nn.Module):
    """A stand-in network whose Q is the action id times a weight."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.tensor(1.0))

    def q(self, observation: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return actions.float() * self.weight


def test_the_loss_on_known_numbers():
    """DouZero's compute_loss: mean((Q - return)^2): Q = 1, 2 against returns 0, 4 gives 2.5."""
    loss = dmc.dmc_loss(Fixed(), torch.zeros(2, 3), torch.tensor([1, 2]), torch.tensor([0.0, 4.0]))
    assert loss.item() == pytest.approx(2.5)


def test_learn_fits_the_returns():
    """Gradient steps on one batch of known returns move Q toward them."""
    network, layout = small_network()
    observation, mask = probe_batch(64)
    action = dmc.greedy_actions(network, observation, mask)
    target = torch.linspace(-2.0, 2.0, observation.shape[0])
    args = dmc.parse_args(["--batch-size", "128", "--epochs", "15", "--lr", "1e-2"])
    before = dmc.dmc_loss(network, observation, action, target).item()
    metrics = dmc.learn(network, dmc.make_optimizer(network, args), observation, action, target, args,
                        torch.Generator().manual_seed(0))
    assert metrics["gradient_steps"] == 15 * math.ceil(observation.shape[0] / 128)
    assert dmc.dmc_loss(network, observation, action, target).item() < 0.5 * before


def test_epsilon_greedy_explores_legal_cards_only():
    network, _ = small_network()
    observation, mask = probe_batch(256)
    generator = torch.Generator().manual_seed(1)
    greedy = dmc.greedy_actions(network, observation, mask)
    with torch.no_grad():
        assert torch.equal(dmc.epsilon_greedy(network, observation, mask, 0.0, generator), greedy)
        q = network(observation).masked_fill(~mask, -math.inf)
        assert torch.equal(q.gather(1, greedy[:, None]).squeeze(1), q.max(1).values)
        explored = dmc.epsilon_greedy(network, observation, mask, 1.0, generator)
    assert bool(mask.gather(1, explored[:, None]).all())
    assert not torch.equal(explored, greedy)


@pytest.mark.parametrize("flags", [
    ["--epsilon", "1.5"],
    ["--lr", "0"],
    ["--players", "5"],
    ["--num-games", "0"],
    ["--optimizer", "sgd"],
    ["--snapshot-steps", "1000"],  # no --snapshot-dir
    ["--steps", "100000", "--snapshot-steps", "50000", "60000", "--snapshot-dir", "{tmp}"],  # closer than one update
])
def test_bad_flags_are_argparse_errors(flags, tmp_path):
    with pytest.raises(SystemExit) as raised:
        dmc.parse_args([flag.format(tmp=tmp_path) for flag in flags])
    assert raised.value.code == 2
