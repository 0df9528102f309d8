"""The library-free self-play pieces the batched library doors share
(``pisti_env.integrations.snapshots``: frozen policy snapshots and the batched snapshot pool;
``pisti_env.integrations.doors``: the vector env behind each door). No RL library needed."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView
from pisti_env.integrations.doors import door_vector_env
from pisti_env.integrations.snapshots import ModuleSnapshot, SnapshotPool
from pisti_env.envs.vector import PistiVectorEnv

ACTIONS = 52


class Preference(torch.nn.Module):
    """Scores every action by a fixed vector (ignores the observation): its argmax among the
    legal actions is known in advance."""

    def __init__(self, scores: torch.Tensor) -> None:
        super().__init__()
        self.scores = torch.nn.Parameter(scores.clone())

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return self.scores.expand(observation.shape[0], -1)


def lowest() -> ModuleSnapshot:
    return ModuleSnapshot(Preference(-torch.arange(ACTIONS, dtype=torch.float32)), deterministic=True, name="low")


def highest() -> ModuleSnapshot:
    return ModuleSnapshot(Preference(torch.arange(ACTIONS, dtype=torch.float32)), deterministic=True, name="high")


def random_masks(rows: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    mask = torch.rand(rows, ACTIONS, generator=generator) < 0.2
    mask[torch.arange(rows), torch.randint(ACTIONS, (rows,), generator=generator)] = True  # never empty
    return mask


def legal_ids(mask: torch.Tensor) -> torch.Tensor:
    return torch.arange(ACTIONS).expand_as(mask)


def test_importing_the_shared_pieces_imports_no_rl_library():
    code = ("import sys, pisti_env.integrations.snapshots, pisti_env.integrations.doors; "
            "print(sorted(m for m in ('stable_baselines3', 'sb3_contrib', 'tianshou', 'torchrl', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_module_snapshot_is_frozen_and_plays_only_legal_actions():
    net = Preference(torch.arange(ACTIONS, dtype=torch.float32))
    greedy, sampled = ModuleSnapshot(net, deterministic=True), ModuleSnapshot(net)
    with torch.no_grad():
        net.scores.neg_()  # the learner trains on; the snapshots keep the weights they were taken with
    mask = random_masks(200, seed=1)
    observation = torch.zeros(200, 5)
    best = torch.where(mask, legal_ids(mask), -1).max(1).values  # the highest legal id wins
    assert torch.equal(greedy.act_batch(observation, mask, torch.Generator()), best)
    a = sampled.act_batch(observation, mask, torch.Generator().manual_seed(7))
    b = sampled.act_batch(observation, mask, torch.Generator().manual_seed(7))
    assert torch.equal(a, b) and bool(mask[torch.arange(200), a].all())
    assert not any(p.requires_grad for p in greedy.module.parameters())


def test_module_snapshot_single_game_form_matches_the_batched_form():
    snapshot = lowest()
    game = Game(make_settings(num_players=2, target=None), seed=3)
    while not game.done:
        view = SeatView(game, game.turn)
        observation = view.observation()
        mask = torch.as_tensor(observation["action_mask"]).bool()[None]
        expected = int(snapshot.act_batch(torch.as_tensor(observation["observation"])[None], mask, torch.Generator())[0])
        action = snapshot.act(view)
        assert action == expected and observation["action_mask"][action] == 1
        game.step(action)


def test_pool_plays_first_until_a_snapshot_then_one_member_per_game_until_it_changes():
    pool = SnapshotPool(first=highest(), size=2)
    mask, observation = random_masks(64, seed=2), torch.zeros(64, 5)
    low = torch.where(mask, legal_ids(mask), ACTIONS).min(1).values
    high = torch.where(mask, legal_ids(mask), -1).max(1).values
    generator = torch.Generator().manual_seed(0)
    assert torch.equal(pool.act_batch(observation, mask, generator), high)  # `first` plays alone
    pool.add(lowest())  # `first` leaves the pool
    assert len(pool.members) == 1 and torch.equal(pool.act_batch(observation, mask, generator), low)
    pool.add(highest())
    first = pool.act_batch(observation, mask, generator)
    played_low = (first == low) & (low != high)
    played_high = (first == high) & (low != high)
    assert bool((first == low).logical_or(first == high).all())
    assert bool(played_low.any()) and bool(played_high.any())  # both members drawn across 64 games
    again = pool.act_batch(observation, mask, generator)
    assert torch.equal(again, first)  # each game keeps its member between moves
    pool.add(lowest())  # size 2: the oldest (the low one) goes; games draw again
    assert pool.added == 3 and [m.name for m in pool.members] == ["high", "low"]


def test_pool_refuses_bad_sizes_and_members():
    with pytest.raises(ValueError, match="size must be an int >= 1"):
        SnapshotPool(size=0)
    with pytest.raises(TypeError, match="act_batch"):
        SnapshotPool().add(object())


def test_pool_plays_every_opponent_seat_of_the_vector_env():
    pool = SnapshotPool(first="random", size=3)
    pool.add(lowest())
    pool.add(highest())
    env = PistiVectorEnv(16, opponent=pool, num_players=2, target=None)
    observation, _ = env.reset(seed=4)
    for _ in range(60):  # more than two hands: the pool plays, the env stays consistent
        mask = observation["action_mask"].astype(bool)
        observation, *_ = env.step(mask.argmax(1))


@pytest.mark.parametrize("option", ["output", "autoreset_mode"])
def test_a_door_refuses_the_vector_env_options_it_sets_itself(option):
    with pytest.raises(TypeError, match=f"MyDoor sets {option} itself"):
        door_vector_env("MyDoor", 2, "numpy", {option: "torch" if option == "output" else "NextStep"})
    vector = door_vector_env("MyDoor", 3, "torch", {"opponent": "random", "num_players": 3, "target": None})
    assert vector.num_envs == 3 and vector.settings.num_players == 3
