"""The vector env on the batched engine (``pisti_env.envs.vector.PistiVectorEnv``): registration,
Gymnasium's vector API, and game-for-game agreement with the single-agent env (R1–R29 through
both engines), plus the batched engine's ``active`` stepping it relies on."""

from __future__ import annotations

import random
import sys
import subprocess

import gymnasium
import numpy as np
import pytest
import torch

import pisti_env
from pisti_env.batched import BatchedPisti
from pisti_env.batched.state import FIELDS
from pisti_env.envs.single_agent import PistiEnv
from pisti_env.envs.vector import PistiVectorEnv
from helpers import Highest, Lowest, random_decks

CHECKPOINT_2P = "checkpoints/pisti-2p"


def test_import_does_not_load_torch():
    code = "import sys, pisti_env; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_make_vec_returns_the_vector_env_and_steps():
    env = gymnasium.make_vec("pisti/Pisti-v0", num_envs=5, opponent="greedy", target=None)
    assert isinstance(env, PistiVectorEnv)
    assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        masks = env.action_masks()
        assert masks.dtype == np.bool_ and masks.any(1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert obs in env.observation_space
        assert rewards.dtype == np.float32 and not truncated.any()
        if terminated.any():
            assert (info["_final_info"] == terminated).all() and (info["_final_obs"] == terminated).all()
        ended += int(terminated.sum())
    assert ended >= 5
    env.close()


def test_same_seed_same_games():
    def run(seed):
        env = PistiVectorEnv(4, opponent="random", num_players=3, target=None)
        obs, _ = env.reset(seed=seed)
        trace = [obs["observation"].copy()]
        for _ in range(20):
            obs, r, t, _, _ = env.step(np.argmax(env.action_masks(), 1))
            trace += [obs["observation"].copy(), r.copy(), t.copy()]
        return trace

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_torch_output_mode():
    env = PistiVectorEnv(3, opponent="greedy", output="torch", device="cpu", num_players=2, target=None)
    obs, _ = env.reset(seed=0)
    assert isinstance(obs["observation"], torch.Tensor) and obs["observation"].dtype == torch.float32
    assert obs["action_mask"].dtype == torch.int8
    actions = env.action_masks().to(torch.uint8).argmax(1)
    obs, r, t, tr, _ = env.step(actions)
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float32 and t.dtype == torch.bool


def test_illegal_learner_action_names_the_game_and_changes_nothing():
    env = PistiVectorEnv(3, opponent="greedy", num_players=2, target=None)
    obs, _ = env.reset(seed=0)
    actions = np.argmax(env.action_masks(), 1)
    bad = actions.copy()
    bad[1] = int(np.flatnonzero(~env.action_masks()[1])[0])
    with pytest.raises(ValueError, match="game 1"):
        env.step(bad)
    assert np.array_equal(env._observation()["observation"], obs["observation"])
    env.step(actions)


@pytest.mark.parametrize("spec, bluff", [("expert", True), ("pimc:n=2", False)])
def test_players_without_batched_form_are_refused(spec, bluff):
    """pimc has no batched form; expert has one without the bluff variant only (R29)."""
    with pytest.raises(ValueError, match="no batched form"):
        PistiVectorEnv(2, opponent=spec, bluff=bluff)
    with pytest.raises(ValueError, match="no batched form"):
        PistiVectorEnv(2, opponent="greedy", partner=spec, num_players=4, partnerships=True, bluff=bluff)


def test_expert_plays_through_its_batched_form():
    env = PistiVectorEnv(8, opponent="expert", partner="expert", num_players=4, partnerships=True, target=None)
    obs, _ = env.reset(seed=0)
    episodes = 0
    for _ in range(40):
        obs, rewards, terminated, truncated, info = env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
        episodes += int(terminated.sum())
    assert episodes > 0 and np.isfinite(rewards).all()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_envs"):
        PistiVectorEnv(0)
    with pytest.raises(ValueError, match="output"):
        PistiVectorEnv(2, output="jax")
    with pytest.raises(ValueError, match="seat"):
        PistiVectorEnv(2, seat=2)
    with pytest.raises(ValueError, match="partner"):
        PistiVectorEnv(2, partner="greedy")
    with pytest.raises(ValueError, match="one deck"):
        PistiVectorEnv(2, num_players=5, decks=2)


# --------------------------------------------------------------------------- differential
DIFFERENTIAL = {
    "2p-checkpoint": (dict(num_players=2, target=None), CHECKPOINT_2P, None),
    "3p": (dict(num_players=3, target=None), Lowest(), None),
    "4p-partners": (dict(num_players=4, partnerships=True, target=None), Lowest(), Highest()),
    "2p-bluff": (dict(num_players=2, bluff=True, target=None), Lowest(), None),
    "3p-bluff": (dict(num_players=3, bluff=True, target=None), Lowest(), None),
    "4p-solo-stock-bottom": (dict(num_players=4, partnerships=False, show_stock_bottom=True, target=None), Lowest(), None),
}


@pytest.mark.parametrize("name", list(DIFFERENTIAL))
def test_vector_env_matches_single_agent_env_game_for_game(name):
    """R1–R29: on the same first-hand decks, dealers and seats, with the same (deterministic)
    players and learner (highest legal id), every learner decision of every game gives the
    same observation bytes, mask and reward, and the episode ends at the same step; each
    episode's rewards add up to its final score difference."""
    settings, opponent, partner = DIFFERENTIAL[name]
    N = 6
    rng = random.Random(name)
    n = settings["num_players"]
    decks = random_decks(N, rng)
    dealers = [rng.randrange(n) for _ in range(N)]
    seats = [b % n for b in range(N)]
    vec = PistiVectorEnv(N, opponent=opponent, partner=partner, **settings)
    obs, info = vec.reset(seed=0, options={"decks": decks, "dealers": dealers, "seats": seats})
    assert list(info["seat"]) == seats
    singles, single_obs = [], []
    for b in range(N):
        env = PistiEnv(opponent=opponent, partner=partner, **settings)
        o, i = env.reset(seed=1, options={"deck": decks[b], "dealer": dealers[b], "seat": seats[b]})
        singles.append(env)
        single_obs.append(o)
    live = np.ones(N, dtype=bool)
    totals = np.zeros(N)
    steps = 0
    while live.any():
        steps += 1
        assert steps < 500
        actions = np.array([np.flatnonzero(m).max() for m in vec.action_masks()])
        for b in np.flatnonzero(live):
            assert obs["observation"][b].tobytes() == single_obs[b]["observation"].tobytes(), (b, steps)
            assert np.array_equal(obs["action_mask"][b], single_obs[b]["action_mask"]), (b, steps)
            assert actions[b] == max(singles[b].game.legal_actions())
        obs, rewards, terminated, truncated, info = vec.step(actions)
        assert not truncated.any()
        for b in np.flatnonzero(live):
            o, r, t, tr, i = singles[b].step(int(actions[b]))
            single_obs[b] = o
            assert rewards[b] == pytest.approx(r, abs=1e-5), (b, steps)  # float32 sums of thirds
            assert bool(terminated[b]) == t, (b, steps)
            totals[b] += rewards[b]
            if t:
                live[b] = False
                final = info["final_info"]
                assert final["seat"][b] == seats[b]
                scores = final["match_scores"][b]
                assert list(scores) == list(i["match_scores"])
                own = scores[singles[b].settings.side_of(seats[b])]
                diff = own - (scores.sum() - own) / (len(scores) - 1)
                assert totals[b] == pytest.approx(diff, abs=1e-4)
            elif "hand_result" in i:
                assert info["_hand_result"][b]
                assert [int(x) for x in info["match_scores"][b]] == list(i["match_scores"])


@pytest.mark.parametrize("reward", ["diff", "win"])
def test_match_rewards_add_up_to_the_final_score_difference(reward):
    """R24–R26: over whole matches (several hands, drawn seats, 4p partnerships, a partner
    player), each episode's rewards add up to its final difference (or ±1/0 with ``"win"``)."""
    N = 8
    env = PistiVectorEnv(N, opponent="greedy", partner="random", reward=reward, num_players=4, partnerships=True, target=51)
    env.reset(seed=2)
    totals = np.zeros(N)
    finished = 0
    generator = np.random.default_rng(1)
    while finished < N:
        masks = env.action_masks()
        obs, rewards, terminated, _, info = env.step(np.array([generator.choice(np.flatnonzero(m)) for m in masks]))
        totals += rewards
        for b in np.flatnonzero(terminated):
            scores = info["final_info"]["match_scores"][b]
            side = info["final_info"]["side"][b]
            assert info["final_info"]["seat"][b] % 2 == side
            diff = scores[side] - scores[1 - side]
            assert totals[b] == (diff if reward == "diff" else np.sign(diff))
            totals[b] = 0
            finished += 1


def test_checkpoint_act_matches_act_batch():
    """The 2p checkpoint chooses the same from a SeatView as from the batched engine's tensors."""
    from pisti_env.agents import SeatView, make_player

    player = make_player(CHECKPOINT_2P, settings=pisti_env.make_settings(num_players=2, target=None))
    game = pisti_env.Game(pisti_env.make_settings(num_players=2, target=None), seed=5)
    rng = random.Random(0)
    while not game.done:
        view = SeatView(game, game.turn)
        o = view.observation()
        choice = player.act_batch(torch.from_numpy(o["observation"])[None], torch.from_numpy(o["action_mask"] > 0)[None], None)
        assert player.act(view) == int(choice)
        game.step(rng.choice(game.legal_actions()))


# --------------------------------------------------------------------------- active stepping
@pytest.mark.parametrize("settings", [dict(num_players=3, target=51), dict(num_players=2, bluff=True, target=None)])
def test_active_mask_leaves_inactive_games_bit_for_bit(settings):
    engine = BatchedPisti(16, seed=4, **settings)
    out = engine.reset()
    generator = torch.Generator().manual_seed(0)
    for _ in range(120):
        active = torch.rand(16, generator=generator) < 0.5
        actions = torch.rand(out.action_mask.shape, generator=generator).masked_fill(~out.action_mask, -1).argmax(1)
        before = engine.state
        snapshot = {f: getattr(before, f).clone() for f in FIELDS}
        full_state, full = engine.step_state(before, actions)
        state, step = engine.step_state(before, actions, active=active)
        for f in FIELDS:
            assert torch.equal(getattr(before, f), snapshot[f])  # pure
            new, whole, old = getattr(state, f), getattr(full_state, f), snapshot[f]
            assert torch.equal(new[active], whole[active]) and torch.equal(new[~active], old[~active]), f
        assert torch.equal(step.rewards[active], full.rewards[active]) and not step.rewards[~active].any()
        assert torch.equal(step.done, full.done & active) and torch.equal(step.hand_over, full.hand_over & active)
        assert torch.equal(step.observation[active], full.observation[active])
        engine.state = state
        out = step


def test_active_entries_of_inactive_games_are_ignored_and_bad_active_refused():
    engine = BatchedPisti(4, seed=1, num_players=2, target=None)
    out = engine.reset()
    legal = out.action_mask.to(torch.uint8).argmax(1)
    active = torch.tensor([True, False, True, False])
    bad = legal.clone()
    bad[1] = 999
    engine.step_state(engine.state, bad, active=active)
    with pytest.raises(ValueError, match="active"):
        engine.step_state(engine.state, legal, active=torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="active"):
        engine.step_state(engine.state, legal, active=[True] * 4)


def test_bad_reset_options_are_refused_and_change_nothing():
    env = PistiVectorEnv(2, opponent="random", num_players=2, target=None)
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"deck": None})
    with pytest.raises(TypeError, match="options"):
        env.reset(options=[1])
    with pytest.raises(ValueError, match="seats"):
        env.reset(options={"seats": [0, 2]})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert np.array_equal(env._observation()["observation"], obs["observation"])


def test_drawn_seats_vary_and_a_fixed_seat_stays():
    drawn = PistiVectorEnv(64, opponent="random", num_players=4, partnerships=True, target=None)
    _, info = drawn.reset(seed=0)
    assert set(info["seat"]) == {0, 1, 2, 3} and np.array_equal(info["side"], info["seat"] % 2)
    fixed = PistiVectorEnv(8, opponent="random", seat=2, num_players=3, target=None)
    _, info = fixed.reset(seed=0)
    for _ in range(30):
        assert (info["seat"] == 2).all()
        _, _, _, _, info = fixed.step(np.argmax(fixed.action_masks(), 1))
