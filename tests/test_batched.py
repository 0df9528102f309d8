"""The batched torch engine against the pure-Python engine and AEC env, game for game.

The differential tests run thousands of random games: each slot of the batch is mirrored by a
``pisti_env.raw_env`` dealt the same deck by the same dealer and fed the same random legal
cards; at every step the seat to move, the action mask, the observation (byte for byte), every
seat's reward, the done flags, the hand results and the engine states (``where``/``played_by``)
must agree.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import torch

import pisti_env
from pisti_env.batched import BatchedPisti, BatchState

SETTINGS = [
    pytest.param(dict(num_players=2, target=None), 400, id="2p-hand"),
    pytest.param(dict(num_players=3, target=None), 250, id="3p-hand"),
    pytest.param(dict(num_players=4, target=None), 250, id="4p-partners-hand"),
    pytest.param(dict(num_players=4, partnerships=False, target=None), 200, id="4p-solo-hand"),
    pytest.param(
        dict(num_players=2, target=None, double_pisti=10, last_card_pisti=False, ten_diamonds_pisti_bonus=3),
        300,
        id="2p-variants-a",
    ),
    pytest.param(dict(num_players=2, target=None, double_pisti=0, show_stock_bottom=True), 300, id="2p-variants-b"),
    pytest.param(dict(num_players=3, target=None, show_stock_bottom=True, last_card_pisti=False), 200, id="3p-variants"),
    pytest.param(dict(num_players=2, target=51), 80, id="2p-match-51"),
    pytest.param(dict(num_players=4, target=61, win_margin=2), 40, id="4p-match-margin"),
    pytest.param(dict(num_players=3, target=41, reward="win"), 60, id="3p-match-win-reward"),
    pytest.param(dict(num_players=2, target=None, reward="win"), 200, id="2p-hand-win-reward"),
]


class ScriptedShuffle(random.Random):
    """Stands in for a Game's generator: the next hand of a match is dealt from the deck the
    batched engine drew (the two engines draw their decks differently; the rules are what is
    compared)."""

    def __init__(self, deck: list[int]) -> None:
        super().__init__(0)
        self.deck = deck

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        x[:] = self.deck


def mirror_env(engine: BatchedPisti, b: int, settings: dict) -> pisti_env.raw_env:
    env = pisti_env.raw_env(**settings)
    env.reset(options={"deck": engine.state.deck[b].tolist(), "dealer": int(engine.state.dealer[b])})
    return env


def check_same(engine: BatchedPisti, out, envs: list, step: int) -> None:
    state = engine.state
    for b, env in enumerate(envs):
        game = env.unwrapped.game
        where = np.frombuffer(game.where, dtype=np.uint8)
        played_by = np.frombuffer(game.played_by, dtype=np.uint8)
        assert int(out.seat[b]) == game.turn, (step, b)
        assert np.array_equal(state.where[b].numpy(), where), (step, b)
        assert np.array_equal(state.played_by[b].numpy(), played_by), (step, b)
        obs = env.observe(env.agent_selection)
        assert np.array_equal(obs["action_mask"].astype(bool), out.action_mask[b].numpy()), (step, b)
        assert obs["observation"].tobytes() == out.observation[b].numpy().tobytes(), (step, b)


def run_differential(settings: dict, episodes: int, batch: int = 24, seed: int = 0) -> int:
    kw = dict(settings)
    engine = BatchedPisti(batch, seed=seed, **kw)
    out = engine.reset()
    envs = [mirror_env(engine, b, kw) for b in range(batch)]
    rng = np.random.default_rng(seed)
    finished = 0
    step = 0
    while finished < episodes:
        check_same(engine, out, envs, step)
        actions = [int(rng.choice(np.flatnonzero(out.action_mask[b].numpy()))) for b in range(batch)]
        out = engine.step(torch.tensor(actions))
        for b, env in enumerate(envs):
            if bool(out.hand_over[b]) and not bool(out.done[b]):
                env.unwrapped.game.rng = ScriptedShuffle(engine.state.deck[b].tolist())
            hands_before = env.unwrapped.game.hands_completed
            env.step(actions[b])
            game = env.unwrapped.game
            rewards = [env.rewards[a] for a in env.possible_agents]
            assert np.allclose(rewards, out.rewards[b].numpy(), atol=1e-5), (step, b, rewards, out.rewards[b])
            assert bool(out.done[b]) == game.done, (step, b)
            assert bool(out.hand_over[b]) == (game.hands_completed > hands_before), (step, b)
            if bool(out.hand_over[b]):
                result = game.last_hand_result
                for key in result[0]:
                    assert [r[key] for r in result] == out.hand_result[key][b].tolist(), (step, b, key)
            if bool(out.done[b]):
                assert out.match_scores[b].tolist() == game.match_scores
                assert int(out.winner[b]) == (-1 if game.winner is None else game.winner)
                finished += 1
                envs[b] = mirror_env(engine, b, kw)
        step += 1
    return finished


@pytest.mark.parametrize("settings, episodes", SETTINGS)
def test_batched_engine_matches_python_engine(settings, episodes):
    assert run_differential(settings, episodes) >= episodes


def test_hand_over_flags_every_hand_end_in_match_play():
    engine = BatchedPisti(8, seed=3, num_players=2, target=51)
    out = engine.reset()
    g = torch.Generator().manual_seed(0)
    hands = done = 0
    for _ in range(48 * 12):
        mask = out.action_mask
        k = (torch.rand(8, generator=g) * mask.sum(1)).long()
        out = engine.step((mask.cumsum(1) > k[:, None]).int().argmax(1))
        hands += int(out.hand_over.sum())
        done += int(out.done.sum())
        assert not (out.done & ~out.hand_over).any()  # an episode only ends with a hand
        totals = out.hand_result["total"]
        assert (totals[~out.hand_over] == 0).all()
    # 2 players: a hand is exactly 48 moves, so 8 games played 12 hands each.
    assert hands == 8 * 12
    assert 0 < done < hands


def random_legal(mask: torch.Tensor, slot_seeds: list[random.Random]) -> torch.Tensor:
    """One random legal card per game, each game from its own generator."""
    return torch.tensor([rng.choice(np.flatnonzero(m.numpy()).tolist()) for rng, m in zip(slot_seeds, mask)])


def trajectory(batch: int, slots: int, steps: int, seed: int = 11, **settings) -> list:
    engine = BatchedPisti(batch, seed=seed, **settings)
    out = engine.reset()
    rngs = [random.Random(1000 + i) for i in range(batch)]
    record = []
    for _ in range(steps):
        record.append([(out.observation[i].clone(), out.rewards[i].clone(), bool(out.done[i])) for i in range(slots)])
        out = engine.step(random_legal(out.action_mask, rngs))
    return record


def test_batch_independence_game_i_does_not_depend_on_batch_size_or_neighbours():
    small = trajectory(batch=3, slots=3, steps=150, num_players=3, target=None)
    large = trajectory(batch=17, slots=3, steps=150, num_players=3, target=None)
    for t, (a, b) in enumerate(zip(small, large)):
        for i in range(3):
            assert torch.equal(a[i][0], b[i][0]), (t, i)
            assert torch.equal(a[i][1], b[i][1]), (t, i)
            assert a[i][2] == b[i][2]


def test_same_seed_same_games_different_seed_different_games():
    a = trajectory(batch=4, slots=4, steps=60, seed=5, num_players=2, target=51)
    b = trajectory(batch=4, slots=4, steps=60, seed=5, num_players=2, target=51)
    c = trajectory(batch=4, slots=4, steps=60, seed=6, num_players=2, target=51)
    assert all(torch.equal(x[i][0], y[i][0]) for x, y in zip(a, b) for i in range(4))
    assert not all(torch.equal(x[i][0], y[i][0]) for x, y in zip(a, c) for i in range(4))


def test_decks_are_uniform_enough_and_dealers_vary():
    """The counter-based shuffle: each card lands on each deck position about equally often."""
    engine = BatchedPisti(2000, seed=1, num_players=2, target=None)
    engine.reset()
    deck = engine.state.deck
    assert all(sorted(row) == list(range(52)) for row in deck.tolist()[:50])
    counts = torch.zeros(52, 52)
    counts.index_put_((deck.flatten(), torch.arange(52).repeat(2000)), torch.ones(2000 * 52), accumulate=True)
    expected = 2000 / 52
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    dof = 51 * 51
    assert chi2 < dof + 6 * (2 * dof) ** 0.5  # far inside a 6-sigma band
    dealers = engine.state.dealer.bincount(minlength=2)
    assert abs(int(dealers[0]) - 1000) < 150


def test_step_state_is_pure():
    engine = BatchedPisti(6, seed=2, num_players=4, target=61)
    out = engine.reset()
    state = engine.state
    before = {f.name: getattr(state, f.name).clone() for f in dataclasses.fields(BatchState)}
    actions = random_legal(out.action_mask, [random.Random(i) for i in range(6)])
    new_state, _ = engine.step_state(state, actions)
    for f in dataclasses.fields(BatchState):
        assert torch.equal(getattr(state, f.name), before[f.name]), f.name
    # Stepping the same state twice gives the same result.
    again, _ = engine.step_state(state, actions)
    for f in dataclasses.fields(BatchState):
        assert torch.equal(getattr(new_state, f.name), getattr(again, f.name)), f.name


def test_given_decks_and_dealers_are_dealt_as_in_the_python_engine():
    rng = random.Random(4)
    decks = []
    for _ in range(3):
        d = list(range(52))
        rng.shuffle(d)
        decks.append([pisti_env.card_to_text(c) for c in d])
    engine = BatchedPisti(3, seed=0, num_players=3, target=None)
    out = engine.reset(decks=decks, dealers=[0, 1, 2])
    for b in range(3):
        env = pisti_env.raw_env(num_players=3, target=None)
        env.reset(options={"deck": decks[b], "dealer": b})
        assert engine.state.deck[b].tolist() == env.unwrapped.game.deck
        assert env.observe(env.agent_selection)["observation"].tobytes() == out.observation[b].numpy().tobytes()


def test_observation_out_is_written_in_place():
    engine = BatchedPisti(5, seed=0, num_players=2, target=None)
    buf = torch.full((5, engine.observation_size), -1.0)
    out = engine.reset(observation_out=buf)
    assert out.observation.data_ptr() == buf.data_ptr()
    plain = BatchedPisti(5, seed=0, num_players=2, target=None).reset()
    assert torch.equal(buf, plain.observation)
    with pytest.raises(ValueError, match=r"observation_out must be a float32 tensor of shape \(5, 556\)"):
        engine.step(out.action_mask.int().argmax(1), observation_out=torch.zeros(5, 10))


# --------------------------------------------------------------------------- bad input


def test_illegal_action_raises_and_changes_nothing():
    engine = BatchedPisti(4, seed=0, num_players=2, target=None)
    out = engine.reset()
    before = engine.state
    actions = out.action_mask.int().argmax(1)
    bad = actions.clone()
    bad[2] = int(torch.nonzero(~out.action_mask[2])[0])
    with pytest.raises(ValueError, match=r"illegal action \d+ in game 2: seat \d may play only \[\d+, \d+, \d+, \d+\]"):
        engine.step(bad)
    assert engine.state is before
    with pytest.raises(ValueError, match="illegal action 52 in game 0"):
        engine.step(torch.tensor([52, 0, 0, 0]))
    with pytest.raises(ValueError, match="illegal action -1 in game 1"):
        engine.step(torch.cat([actions[:1], torch.tensor([-1]), actions[2:]]))
    with pytest.raises(ValueError, match=r"actions must have shape \(4,\)"):
        engine.step(actions[:3])
    with pytest.raises(TypeError, match="integer tensor of card ids"):
        engine.step(actions.float())
    assert engine.state is before
    engine.step(actions)  # and the engine still plays


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(num_players=5, decks=2), ValueError, "supports one deck"),
        (dict(bluff=True), ValueError, "not supported yet"),
        (dict(num_players=7), ValueError, "num_players"),
        (dict(reward="score"), ValueError, "reward must be 'diff' or 'win'"),
        (dict(seed=-1), ValueError, "seed must be a non-negative int"),
        (dict(colour="red"), ValueError, "unknown setting"),
    ],
)
def test_bad_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        BatchedPisti(4, **kwargs)


def test_bad_batch_size_decks_and_dealers():
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        BatchedPisti(0)
    engine = BatchedPisti(2, num_players=2)
    good = [list(range(52)), list(range(51, -1, -1))]
    with pytest.raises(ValueError, match="one deck per game"):
        engine.reset(decks=good[:1])
    with pytest.raises(ValueError, match="deck of game 1 must hold 52 cards"):
        engine.reset(decks=[good[0], good[1][:51]])
    with pytest.raises(ValueError, match="deck of game 0 must hold every card exactly once"):
        engine.reset(decks=[[0] * 52, good[1]])
    jacks_first = ["JC", "JD", "JH", "JS"] + [pisti_env.card_to_text(c) for c in range(52) if c % 13 != 10]
    with pytest.raises(ValueError, match="four Jacks to the table"):
        engine.reset(decks=[good[0], jacks_first])
    with pytest.raises(ValueError, match="dealer of game 1 must be a seat 0..1"):
        engine.reset(decks=good, dealers=[0, 2])
    with pytest.raises(ValueError, match="call reset"):
        BatchedPisti(2).step(torch.zeros(2, dtype=torch.int64))


def test_python_engine_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, pisti_env; pisti_env.env(); assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
def test_cuda_matches_cpu():
    cpu = BatchedPisti(64, seed=9, num_players=4, target=61)
    gpu = BatchedPisti(64, seed=9, num_players=4, target=61, device="cuda")
    a, b = cpu.reset(), gpu.reset()
    for _ in range(300):
        assert torch.equal(a.observation, b.observation.cpu())
        assert torch.equal(a.rewards, b.rewards.cpu())
        actions = a.action_mask.int().argmax(1)
        a, b = cpu.step(actions), gpu.step(actions.cuda())
