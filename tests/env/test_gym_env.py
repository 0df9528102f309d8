"""The single-agent Gymnasium env ``pisti/Pisti-v0`` (`pisti_env.envs.single_agent`): Gymnasium's
own checker, registration and arguments, the learner's observations against ``pisti_v0``'s for
the same game, rewards that add up to the final score difference, seeding, seats, partners,
illegal and non-integer actions, infos at hand ends, and a checkpoint opponent.
"""

from __future__ import annotations

import random
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pisti_env
from pisti_env import PistiEnv, make_settings
from pisti_env.agents import RandomAgent, SeatView, make_player

from helpers import cases, matrix

ID = "pisti/Pisti-v0"


def final_diff(env: PistiEnv) -> float:
    """Learner's side's final total − mean of the other sides' (the ``"diff"`` episode return)."""
    scores = env.game.match_scores
    own = scores[env.settings.side_of(env.seat)]
    return own - (sum(scores) - own) / (len(scores) - 1)


def play_episode(env: PistiEnv, seed: int, rng: random.Random) -> tuple[list[float], list[int], dict]:
    """One episode with random legal learner actions: rewards, actions and the last info."""
    obs, info = env.reset(seed=seed)
    rewards, actions, done = [], [], False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        assert np.array_equal(np.flatnonzero(obs["action_mask"]), legal)
        action = int(rng.choice(legal))
        obs, reward, done, truncated, info = env.step(action)
        assert not truncated
        rewards.append(reward)
        actions.append(action)
    return rewards, actions, info


# ------------------------------------------------------------------ Gymnasium's checker, registration
@pytest.mark.parametrize("kwargs", [{}, dict(bluff=True), dict(num_players=4, partnerships=True), dict(num_players=3, target=None, reward="win")])
def test_check_env_passes(kwargs):
    check_env(gymnasium.make(ID, **kwargs).unwrapped, skip_render_check=True)


def test_registered_on_import_once_without_torch():
    code = (
        "import sys, importlib, gymnasium, pisti_env; importlib.reload(pisti_env);"
        "assert 'pisti/Pisti-v0' in gymnasium.registry; assert 'torch' not in sys.modules;"
        "assert gymnasium.registry['pisti/Pisti-v0'].max_episode_steps is None"
    )
    subprocess.run([sys.executable, "-W", "error", "-c", code], check=True)


def test_make_with_settings_and_opponent_specs():
    env = gymnasium.make(ID, opponent="pimc:n=2", num_players=3, target=None, bluff=True, seat=1)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert env.action_space.n == make_settings(bluff=True).num_actions
    assert info == {"side": 1, "seat": 1}
    assert env.unwrapped.settings == make_settings(num_players=3, target=None, bluff=True)
    assert env.unwrapped.observation_space == pisti_env.raw_env(num_players=3, target=None, bluff=True).observation_space("player_0")


# ------------------------------------------------------------------ the same observations as pisti_v0
class Recorder:
    """A player that plays like ``inner`` and records every action it takes, in order."""

    name = "recorder"

    def __init__(self, inner) -> None:
        self.inner, self.actions = inner, []

    def reset(self, seed=None) -> None:
        self.inner.reset(seed)

    def act(self, view: SeatView) -> int:
        # R31: another seat decides from its own SeatView only (never the learner's, never the game).
        assert isinstance(view, SeatView) and view.is_my_turn and not hasattr(view, "game")
        action = self.inner.act(view)
        self.actions.append(action)
        return action


@pytest.mark.parametrize("case", cases("2p 51", "3p hand bluff", "4p-partners hand", "4p-solo hand stock-bottom", "2p hand bluff"))
def test_R30_learner_observations_equal_pisti_v0s_step_by_step(case):
    recorder = Recorder(make_player("expert", seed=1))
    env = PistiEnv(opponent=recorder, **case.kwargs)
    rng = random.Random(7)
    obs, _ = env.reset(seed=11)
    seen, learner_actions, done = [obs], [], False
    while not done:
        learner_actions.append(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        obs, _, done, _, _ = env.step(learner_actions[-1])
        seen.append(obs)
    # The same game through pisti_v0, with the recorded actions of the other seats.
    aec = pisti_env.env(**case.kwargs)
    aec.reset(seed=11)
    learner = f"player_{env.seat}"
    others, mine, k = iter(recorder.actions), iter(learner_actions), 0
    for agent in aec.agent_iter():
        observation, _, terminated, _, _ = aec.last()
        if agent == learner:
            assert np.array_equal(observation["observation"], seen[k]["observation"])
            assert np.array_equal(observation["action_mask"], seen[k]["action_mask"])
            k += 1
        if terminated:
            aec.step(None)
            continue
        aec.step(next(mine) if agent == learner else next(others))
    assert k == len(seen)
    assert next(others, None) is None and next(mine, None) is None


# ------------------------------------------------------------------ rewards
@pytest.mark.parametrize(
    "case",
    matrix(tables=("2p", "3p", "4p-partners", "4p-solo"), variants=("hand", "51", "hand jack-double", "51 double10 bonus3")),
)
def test_rewards_add_up_to_the_final_score_difference(case):
    kwargs = dict(case.kwargs)
    if kwargs.get("bluff_jack_double") and not kwargs.get("bluff"):
        kwargs["bluff"] = True
    env = PistiEnv(opponent="random", **kwargs)
    rng = random.Random(case.id)
    for seed in range(6):
        rewards, _, _ = play_episode(env, seed, rng)
        assert sum(rewards) == final_diff(env)


@pytest.mark.parametrize("case", cases("2p hand", "3p hand", "4p-partners 51", "2p 51 bluff"))
def test_win_rewards_are_plus_minus_one_at_the_end_only(case):
    env = PistiEnv(opponent="greedy", reward="win", **case.kwargs)
    rng = random.Random(1)
    for seed in range(8):
        rewards, _, _ = play_episode(env, seed, rng)
        assert all(r == 0 for r in rewards[:-1])
        game, side = env.game, env.settings.side_of(env.seat)
        if game.winner is not None:
            assert rewards[-1] == (1.0 if side == game.winner else -1.0)
        else:
            best = max(game.match_scores)
            assert rewards[-1] == (0.0 if game.match_scores[side] == best else -1.0)


# ------------------------------------------------------------------ seeding and seats
def test_same_seed_same_episode_different_seed_different():
    env = PistiEnv(opponent="expert", num_players=3)
    a = play_episode(env, 5, random.Random(0))
    b = play_episode(env, 5, random.Random(0))
    c = play_episode(env, 6, random.Random(0))
    assert a[0] == b[0] and a[1] == b[1]
    assert (a[0], a[1]) != (c[0], c[1])


def test_seeded_reset_and_deck_options_deal_as_pisti_v0():
    deck = list(range(52))[::-1]
    for options in (None, {"deck": deck, "dealer": 1}):
        env, aec = PistiEnv(seat=0, target=51), pisti_env.raw_env(target=51)
        for seed in (0, 1, 99):
            env.reset(seed=seed, options=options)
            aec.reset(seed=seed, options=options)
            # The same deal (the learner's first decision may come after the other seat's first
            # play, so compare the deck and the learner's untouched hand).
            assert env.game.deck == aec.game.deck and env.game.dealer == aec.game.dealer
            assert env.game.hands[0] == aec.game.hands[0]
        if options:
            assert env.game.dealer == 1


def test_seat_fixed_or_drawn():
    fixed = PistiEnv(seat=1)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(10)} == {1}
    drawn = PistiEnv(num_players=3)
    assert {drawn.reset(seed=s)[1]["seat"] for s in range(30)} == {0, 1, 2}
    assert drawn.reset(seed=3)[1]["seat"] == drawn.reset(seed=3)[1]["seat"]
    assert drawn.reset(seed=3, options={"seat": 2})[1] == {"seat": 2, "side": 2}


def test_partner_spec_plays_the_partner_seat():
    partner = Recorder(make_player("greedy", seed=0))
    opponent = Recorder(make_player("random", seed=0))
    env = PistiEnv(opponent=opponent, partner=partner, num_players=4, seat=0)
    play_episode(env, 0, random.Random(0))
    assert partner.actions and opponent.actions
    assert env._others.of(0, 2) is partner
    assert env._others.of(0, 1) is opponent and env._others.of(0, 3) is opponent


def test_specs_build_one_player_per_seat():
    env = PistiEnv(opponent="greedy", num_players=4, partnerships=False)
    players = [env._others.of((s + 1) % 4, s) for s in range(4)]
    assert len({id(p) for p in players}) == 4


# ------------------------------------------------------------------ bad arguments and actions
@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(opponent="nobody"), ValueError, "registered players"),
        (dict(opponent=3), TypeError, "player spec"),
        (dict(partner="greedy"), ValueError, "partnerships"),
        (dict(seat=2), ValueError, "seat must be a seat 0..1"),
        (dict(seat="0"), TypeError, "seat must be an int"),
        (dict(reward="score"), ValueError, "reward must be one of"),
        (dict(illegal_action="penalty"), ValueError, "illegal_action must be one of"),
        (dict(illegal_penalty=0.5), ValueError, "negative"),
        (dict(render_mode="rgb"), ValueError, "render_mode"),
        (dict(num_player=3), ValueError, "unknown setting"),
        (dict(num_players=7), ValueError, "num_players"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        PistiEnv(**kwargs)


def test_bad_reset_options_leave_the_env_unchanged():
    env = PistiEnv(seat=0)
    env.reset(seed=1)
    game = env.game
    for options, error in [({"seet": 1}, ValueError), ({"seat": 5}, ValueError), ({"deck": [1, 2]}, ValueError), ("x", TypeError)]:
        with pytest.raises(error):
            env.reset(seed=2, options=options)
        assert env.game is game
    with pytest.raises(TypeError, match="seed"):
        env.reset(seed=1.5)


def test_illegal_action_refused_with_penalty_or_raised():
    env = PistiEnv(seat=0, target=None, illegal_penalty=-2)
    obs, _ = env.reset(seed=4)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs2, reward, done, truncated, info = env.step(illegal)
    assert (reward, done, truncated, info["illegal_action"]) == (-2.0, False, False, True)
    assert np.array_equal(obs2["observation"], obs["observation"])
    raising = PistiEnv(seat=0, target=None, illegal_action="raise")
    obs, _ = raising.reset(seed=4)
    with pytest.raises(ValueError, match="legal"):
        raising.step(illegal)
    with pytest.raises(ValueError, match="out of range"):
        raising.step(52)
    assert np.array_equal(raising._observation()["observation"], obs["observation"])


@pytest.mark.parametrize("mode", ["refuse", "raise"])
@pytest.mark.parametrize("bluff", [False, True])
def test_ids_outside_the_action_space_are_value_errors_in_every_mode(mode, bluff):
    """As in pisti_v0: "refuse" is for illegal moves inside the action space; an id outside it
    (-1, 52 without the bluff variant or 106 with it, 2**70) is a ValueError, nothing changed."""
    env = gymnasium.make("pisti/Pisti-v0", seat=0, target=None, bluff=bluff, illegal_action=mode).unwrapped
    obs, _ = env.reset(seed=4)
    for action in (-1, env.action_space.n, 2**70, np.int64(-5)):
        with pytest.raises(ValueError, match="out of range"):
            env.step(action)
        assert np.array_equal(env._observation()["observation"], obs["observation"])
        assert np.array_equal(env._observation()["action_mask"], obs["action_mask"])
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    env.step(legal)  # the episode goes on as if nothing had been tried


@pytest.mark.parametrize("mode", ["refuse", "raise"])
def test_integer_like_actions_accepted_others_type_error(mode):
    env = PistiEnv(seat=0, target=None, illegal_action=mode)
    for convert in (int, np.int64, np.uint8, np.array, lambda a: np.array([a]), lambda a: np.array([[a]], dtype=np.int16)):
        obs, _ = env.reset(seed=0)
        action = int(np.flatnonzero(obs["action_mask"])[0])
        _, _, _, _, info = env.step(convert(action))
        assert "illegal_action" not in info
    for bad in (1.0, True, np.array([1, 2]), np.array(1.0), "3", None):
        with pytest.raises(TypeError, match="action must be an int"):
            env.step(bad)


def test_tensor_actions():
    torch = pytest.importorskip("torch")
    env = PistiEnv(seat=0, target=None)
    obs, _ = env.reset(seed=0)
    _, _, _, _, info = env.step(torch.tensor([int(np.flatnonzero(obs["action_mask"])[0])]))
    assert "illegal_action" not in info
    with pytest.raises(TypeError, match="Tensor of shape"):
        env.step(torch.tensor([1.0]))


def test_action_masks_reachable_through_gymnasium_wrappers():
    env = gymnasium.make(ID, target=None)
    obs, _ = env.reset(seed=0)
    mask = env.get_wrapper_attr("action_masks")()  # what SB3's DummyVecEnv.env_method calls
    assert mask.dtype == np.bool_ and np.array_equal(mask, obs["action_mask"].astype(bool))


def test_unseeded_resets_after_a_seed_are_reproducible():
    env = PistiEnv(opponent="expert", target=None)
    runs = []
    for _ in range(2):
        env.reset(seed=8)
        runs.append([play_episode_unseeded(env) for _ in range(3)])
    assert runs[0] == runs[1]
    assert len({tuple(r) for r in runs[0]}) == 3


def play_episode_unseeded(env: PistiEnv) -> list[float]:
    obs, _ = env.reset()
    rewards, done = [], False
    while not done:
        obs, reward, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        rewards.append(reward)
    return rewards + [env.seat, *env.game.deck]


def test_step_before_reset_and_after_the_end():
    env = PistiEnv(target=None)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    play_episode(env, 0, random.Random(0))
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="over"):
        env.step(0)


# ------------------------------------------------------------------ infos
def test_hand_result_info_at_every_hand_end_of_a_match():
    env = PistiEnv(opponent="greedy", num_players=2, target=51)
    obs, info = env.reset(seed=2)
    rng, done, results = random.Random(2), False, []
    while not done:
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert info["side"] == env.settings.side_of(env.seat) and info["seat"] == env.seat
        if "hand_result" in info:
            results.append(info["hand_result"])
            assert info["match_scores"] == list(env.game.match_scores)
            assert info["hand_result"] is not env.game.last_hand_result
            assert info["hand_result"] == env.game.last_hand_result
    assert len(results) == env.game.hands_completed >= 2
    assert results == env.game.hand_results


def test_render_modes():
    env = PistiEnv(render_mode="ansi", seat=0)
    assert "reset" in env.render()
    env.reset(seed=0)
    assert "player_0 (learner)" in env.render()


def test_checkpoint_path_opponent():
    pytest.importorskip("torch")
    env = gymnasium.make(ID, opponent="checkpoints/pisti-2p", target=None)
    rewards, _, _ = play_episode(env.unwrapped, 0, random.Random(0))
    assert sum(rewards) == final_diff(env.unwrapped)


def test_player_object_opponent():
    env = PistiEnv(opponent=RandomAgent(seed=1), num_players=3, target=None)
    rewards, _, _ = play_episode(env, 0, random.Random(0))
    assert sum(rewards) == final_diff(env)
