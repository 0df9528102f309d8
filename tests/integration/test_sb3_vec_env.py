"""SB3's batched door (pisti_env.integrations.sb3.PistiSB3VecEnv): game for game what the
step-by-step env gives (observations, masks, rewards, dones, terminal observations, infos),
SB3's VecEnv conventions (autoreset, seeding, env_method("action_masks"), VecMonitor), and
MaskablePPO training on it legally with returns equal to the score differences. Needs the
``sb3`` extra (``pip install -e ".[sb3]"``); CI installs it."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from pisti_env.integrations.sb3 import PistiSB3VecEnv, PolicySnapshot, SnapshotCallback, SnapshotPool  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402
from pisti_env.envs.single_agent import PistiEnv  # noqa: E402
from helpers import Highest, Lowest, random_decks  # noqa: E402  (deterministic test players, decks)
from sb3_support import VecReferee  # noqa: E402


GAMES = {
    "2p": (dict(num_players=2, target=None), Lowest(), None),
    "3p": (dict(num_players=3, target=None), Lowest(), None),
    "4p-partners": (dict(num_players=4, partnerships=True, target=None), Lowest(), Highest()),
    "2p-bluff": (dict(num_players=2, bluff=True, target=None), Lowest(), None),
    "4p-solo-stock-bottom": (dict(num_players=4, partnerships=False, show_stock_bottom=True, target=None), Highest(), None),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_each_game_is_the_step_by_step_envs_game_terminal_observation_included(name):
    """R1–R31: single hands (the two engines deal later hands from different generators): on
    the same decks, dealers and seats, with the same deterministic
    players and learner (highest legal id), every step of every game gives PistiEnv's
    observation bytes, mask, reward and done; at the end SB3's ``terminal_observation`` is
    PistiEnv's last observation (all-zero mask) and the infos hold the finished episode's seat,
    side and scores; each episode's rewards add up to its final score difference."""
    settings, opponent, partner = GAMES[name]
    N, n = 4, settings["num_players"]
    rng = random.Random(name)
    decks = random_decks(N, rng)
    dealers = [rng.randrange(n) for _ in range(N)]
    seats = [b % n for b in range(N)]
    env = PistiSB3VecEnv(N, opponent=opponent, partner=partner, **settings)
    env.set_options({"decks": decks, "dealers": dealers, "seats": seats})
    obs = env.reset()
    assert [info["seat"] for info in env.reset_infos] == seats
    singles, single_obs = [], []
    for b in range(N):
        single = PistiEnv(opponent=opponent, partner=partner, **settings)
        single_obs.append(single.reset(seed=1, options={"deck": decks[b], "dealer": dealers[b], "seat": seats[b]})[0])
        singles.append(single)
    live, totals, steps = np.ones(N, dtype=bool), np.zeros(N), 0
    while live.any():
        steps += 1
        assert steps < 1000
        masks = np.stack(env.env_method("action_masks"))
        actions = np.array([np.flatnonzero(m).max() for m in masks])
        for b in np.flatnonzero(live):
            assert obs["observation"][b].tobytes() == single_obs[b]["observation"].tobytes(), (b, steps)
            assert np.array_equal(obs["action_mask"][b], single_obs[b]["action_mask"]), (b, steps)
            assert np.array_equal(masks[b], single_obs[b]["action_mask"].astype(bool))
        obs, rewards, dones, infos = env.step(actions)
        assert rewards.dtype == np.float32 and dones.dtype == np.bool_
        for b in np.flatnonzero(live):
            o, r, terminated, truncated, i = singles[b].step(int(actions[b]))
            single_obs[b] = o
            assert rewards[b] == pytest.approx(r, abs=1e-5), (b, steps)
            assert bool(dones[b]) == terminated and infos[b]["TimeLimit.truncated"] is False
            assert (infos[b]["seat"], infos[b]["side"]) == (i["seat"], i["side"])
            if "hand_result" in i:
                assert infos[b]["hand_result"] == i["hand_result"]
                assert infos[b]["match_scores"] == i["match_scores"]
            else:
                assert "hand_result" not in infos[b]
            totals[b] += rewards[b]
            if terminated:
                live[b] = False
                terminal = infos[b]["terminal_observation"]
                assert set(terminal) == {"observation", "action_mask"}
                assert terminal["observation"].tobytes() == o["observation"].tobytes()
                assert np.array_equal(terminal["action_mask"], o["action_mask"]) and not terminal["action_mask"].any()
                assert totals[b] == pytest.approx(side_difference(i["match_scores"], i["side"]), abs=1e-4)
            else:
                assert "terminal_observation" not in infos[b]


def test_match_hand_results_come_mid_episode_and_returns_are_the_final_differences():
    """R24–R26: over whole matches (4 players in partnerships), a hand ending before the match
    does gives its results in that step's infos without ending the episode, and each episode's
    rewards add up to the match's final score difference."""
    env = VecReferee(PistiSB3VecEnv(6, opponent="greedy", partner="random", num_players=4, partnerships=True, target=51))
    env.seed(4)
    env.reset()
    rng = np.random.default_rng(0)
    mid_match_hands = 0
    while len(env.episodes) < 6:
        masks = np.stack(env.env_method("action_masks"))
        _, _, dones, infos = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        for b in np.flatnonzero(~dones):
            if "hand_result" in infos[b]:
                mid_match_hands += 1
                assert len(infos[b]["hand_result"]) == 2
    assert mid_match_hands > 0 and env.illegal == 0
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-4)


def test_same_seed_same_games_and_seed_is_used_once():
    """``seed(s)`` then ``reset()`` plays the same games for the same actions; a later reset
    without a seed plays other games (SB3 forgets the seed after one reset)."""

    def play(env, seed):
        if seed is not None:
            env.seed(seed)
        obs, trace = env.reset(), []
        for _ in range(30):
            actions = np.array([np.flatnonzero(m)[0] for m in env.env_method("action_masks")])
            obs, rewards, dones, _ = env.step(actions)
            trace.append((obs["observation"].copy(), rewards.copy(), dones.copy()))
        return trace

    a = PistiSB3VecEnv(8, opponent="greedy", num_players=2, target=None)
    b = PistiSB3VecEnv(8, opponent="greedy", num_players=2, target=None)
    first, again = play(a, 5), play(b, 5)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(first, again))
    assert a.seed(3) == list(range(3, 11))
    unseeded = play(b, None)
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(first, unseeded))


def test_vec_env_api_masks_monitor_and_bad_actions():
    """sb3-contrib finds the masks; VecMonitor's episode returns are the score differences; an
    illegal action raises ValueError naming the game and changes nothing."""
    env = PistiSB3VecEnv(16, opponent="random", num_players=2, target=None, terminal_observation=False)
    monitor = VecMonitor(env)
    assert is_masking_supported(monitor)
    obs = monitor.reset()
    masks = get_action_masks(monitor)
    assert masks.shape == (16, 52) and masks.dtype == np.bool_
    assert np.array_equal(masks, obs["action_mask"].astype(bool))
    assert monitor.env_method("action_masks", indices=[3])[0].tolist() == masks[3].tolist()
    assert monitor.get_attr("num_envs") == [16] * 16 and monitor.env_is_wrapped(VecMonitor) == [False] * 16
    bad = np.array([np.flatnonzero(~m)[0] for m in masks])
    with pytest.raises(ValueError, match="illegal action"):
        monitor.step(bad)
    assert np.array_equal(get_action_masks(monitor), masks)  # unchanged
    finished = 0
    while finished < 16:
        actions = np.array([np.flatnonzero(m)[-1] for m in get_action_masks(monitor)])
        obs, rewards, dones, infos = monitor.step(actions)
        for b in np.flatnonzero(dones):
            episode = infos[b]["episode"]
            assert episode["r"] == pytest.approx(side_difference(infos[b]["match_scores"], infos[b]["side"]), abs=1e-4)
            assert episode["l"] == 24  # R5, R18: 2 players, 24 cards each per single hand
            assert "terminal_observation" not in infos[b]
            finished += 1
    with pytest.raises(TypeError, match="terminal_observation"):
        PistiSB3VecEnv(2, terminal_observation=1)
    with pytest.raises(RuntimeError, match="reset"):
        PistiSB3VecEnv(2).step_wait()
    monitor.close()


def test_maskable_ppo_trains_legally_and_its_returns_are_the_score_differences():
    """MaskablePPO on the door (drawn seats, greedy opponent): every action it took was legal
    against the mask it was shown, and every return it saw is the hand's score difference."""
    torch.set_num_threads(1)
    env = VecReferee(PistiSB3VecEnv(32, opponent="greedy", num_players=2, target=None))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=256, n_epochs=1, gamma=1.0, seed=0)
    model.learn(32 * 32 * 2)
    assert env.illegal == 0
    assert len(env.episodes) >= 64 and env.seats == {0, 1}
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-4)


def test_self_play_snapshots_are_frozen_batched_and_refreshed_by_the_callback():
    """The pool plays the opponent seats with frozen copies of the learner (every action legal:
    the engine refuses an illegal one), a new snapshot every ``every`` steps."""
    torch.set_num_threads(1)
    pool = SnapshotPool(first="random", size=2)
    env = VecReferee(PistiSB3VecEnv(32, opponent=pool, num_players=2, target=None))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=256, n_epochs=1, gamma=1.0, seed=0)
    model.learn(32 * 16 * 4, callback=SnapshotCallback(pool, every=32 * 16))
    assert pool.added >= 3 and len(pool.members) == 2
    assert all(isinstance(m, PolicySnapshot) for m in pool.members)
    assert env.illegal == 0 and len(env.episodes) >= 32
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-4)
    frozen = pool.members[-1]
    before = [p.detach().clone() for p in frozen.policy.parameters()]
    model.learn(32 * 16)
    assert all(torch.equal(a, b) for a, b in zip(before, frozen.policy.parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))  # the learner moved on
    with pytest.raises(TypeError, match="act_batch"):
        pool.add(object())
    with pytest.raises(ValueError, match="size"):
        SnapshotPool(size=0)


def test_policy_snapshot_batched_and_single_forms_agree():
    """A deterministic snapshot chooses the same legal action per game in its batched form and
    one game at a time (what the harness's evaluation uses)."""
    env = PistiSB3VecEnv(8, opponent="random", num_players=2, target=None)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=64, seed=1)
    snapshot = PolicySnapshot(model.policy, deterministic=True)
    obs = env.reset()
    mask = torch.as_tensor(obs["action_mask"]).bool()
    chosen = snapshot.act_batch(torch.as_tensor(obs["observation"]), mask, torch.Generator())
    assert mask[torch.arange(8), chosen].all()
    predicted, _ = model.predict(obs, action_masks=mask.numpy(), deterministic=True)
    assert chosen.tolist() == predicted.tolist()


def test_sb3_contrib_evaluate_policy_runs_on_the_door():
    """sb3-contrib's masked ``evaluate_policy`` reads the masks and VecMonitor's episodes."""
    from sb3_contrib.common.maskable.evaluation import evaluate_policy

    env = VecMonitor(PistiSB3VecEnv(8, opponent="greedy", num_players=2, target=None))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=64, seed=0)
    returns, lengths = evaluate_policy(model, env, n_eval_episodes=16, use_masking=True, return_episode_rewards=True)
    assert len(returns) == 16 and set(lengths) == {24}
