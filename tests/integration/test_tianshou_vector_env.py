"""Tianshou's vector-env door on the batched engine (``pisti_env.integrations.tianshou_batched``):
the games, observations, masks and rewards of ``PistiVectorEnv`` byte for byte, its same-step
autoreset mapped onto Tianshou's ``reset(env_id)`` without dealing a game twice or skipping one,
Tianshou's own ``Collector`` storing only legal actions and episodes whose rewards add up to the
hand's score difference, and clear errors for what the batched engine cannot do. Needs the
``tianshou`` extra."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tianshou")

import torch  # noqa: E402
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import BaseVectorEnv  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402

from pisti_env.integrations.tianshou_batched import MaskedActor, ObsTrunk, PistiTianshouVectorEnv  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402
from pisti_env.envs.vector import PistiVectorEnv  # noqa: E402

SETTINGS = dict(num_players=2, target=None)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One legal action per row, uniformly."""
    return (rng.random(mask.shape) * mask).argmax(1)


def spy_on_episodes(env: PistiTianshouVectorEnv) -> list[list[float]]:
    """Per game, the final score difference of the learner's side for each episode that ends,
    read from the underlying vector env's final infos (the game's own scores), not from the
    rewards."""
    finals: list[list[float]] = [[] for _ in range(len(env))]
    step = env.vector.step

    def recording_step(actions):
        out = step(actions)
        done, infos = out[2] | out[3], out[4]
        for game in np.flatnonzero(done):
            final = infos["final_info"]
            finals[game].append(side_difference(final["match_scores"][game].tolist(), int(final["side"][game])))
        return out

    env.vector.step = recording_step
    return finals


def test_it_is_a_tianshou_vector_env_of_n_games():
    env = PistiTianshouVectorEnv(6, **SETTINGS)
    assert isinstance(env, BaseVectorEnv) and len(env) == 6 and env.env_num == 6
    assert env.action_space == [env.vector.single_action_space] * 6  # per game, as DummyVectorEnv gives
    assert env.get_env_attr("num_actions", [1, 2]) == [52, 52]
    obs, infos = env.reset(seed=3)
    assert obs.obs.shape == (6, env.vector.single_observation_space["observation"].shape[0])
    assert obs.obs.dtype == np.float32 and obs.mask.dtype == np.bool_ and obs.mask.shape == (6, 52)
    assert infos.dtype == object and infos.shape == (6,) and all(info == {} for info in infos)
    env.close()
    with pytest.raises(AssertionError, match="after close"):
        env.reset()


@pytest.mark.parametrize("num_players", [2, 3])
def test_same_games_observations_and_rewards_as_the_vector_env_with_tianshou_resets(num_players):
    """The door in Tianshou's loop (reset the finished games, then step) and PistiVectorEnv on
    its own, same seed and actions: the same observations, masks, rewards and terminations at
    every step. A finished game's reset hands back the observation its last step returned
    (the next episode, dealt once), and the two envs finish the same number of episodes."""
    settings = dict(num_players=num_players, target=None)
    door = PistiTianshouVectorEnv(5, infos=True, **settings)
    reference = PistiVectorEnv(5, **settings)
    rng = np.random.default_rng(num_players)
    obs, infos = door.reset(seed=11)
    ref_obs, ref_infos = reference.reset(seed=11)
    assert [info["seat"] for info in infos] == ref_infos["seat"].tolist()
    episodes = 0
    for _ in range(120):
        np.testing.assert_array_equal(obs.obs, ref_obs["observation"])
        np.testing.assert_array_equal(obs.mask, ref_obs["action_mask"].astype(bool))
        actions = random_legal(obs.mask, rng)
        obs, rewards, terminated, truncated, infos = door.step(actions)
        ref_obs, ref_rewards, ref_terminated, ref_truncated, ref_infos = reference.step(actions)
        np.testing.assert_array_equal(rewards, ref_rewards)
        np.testing.assert_array_equal(terminated, ref_terminated)
        assert not truncated.any() and not ref_truncated.any()
        assert [info["env_id"] for info in infos] == list(range(5))
        done = np.flatnonzero(terminated)
        if done.size:
            episodes += done.size
            final = ref_infos["final_info"]
            assert [infos[g]["seat"] for g in done] == final["seat"][done].tolist()  # the finished episode's seat
            held = obs[done]
            new_obs, new_infos = door.reset(env_id=done)
            np.testing.assert_array_equal(new_obs.obs, held.obs)  # handed over, not dealt again
            np.testing.assert_array_equal(new_obs.mask, held.mask)
            assert [info["seat"] for info in new_infos] == ref_infos["seat"][done].tolist()
            obs[done] = new_obs
    assert episodes >= 5


def test_step_order_follows_id():
    """``id`` may list the games in any order: actions are taken and results given in it."""
    rng = np.random.default_rng(0)
    door, reference = PistiTianshouVectorEnv(4, **SETTINGS), PistiTianshouVectorEnv(4, **SETTINGS)
    obs, _ = door.reset(seed=2)
    reference.reset(seed=2)
    actions = random_legal(obs.mask, rng)
    order = np.array([2, 0, 3, 1])
    out = door.step(actions[order], id=order)
    expected = reference.step(actions)
    np.testing.assert_array_equal(out[0].obs, expected[0].obs[order])
    np.testing.assert_array_equal(out[1], expected[1][order])


def test_seeding_repeats_the_deals():
    a, b, c = (PistiTianshouVectorEnv(3, **SETTINGS) for _ in range(3))
    a.seed(7)
    b.seed([7, 8, 9])  # one engine: the first seed of a per-game list
    first, _ = a.reset()
    np.testing.assert_array_equal(first.obs, b.reset()[0].obs)
    np.testing.assert_array_equal(first.obs, c.reset(seed=7)[0].obs)
    assert not np.array_equal(first.obs, a.reset()[0].obs)  # the seed is used once, then the stream goes on


def test_what_the_batched_engine_cannot_do_is_a_clear_error():
    env = PistiTianshouVectorEnv(3, **SETTINGS)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, dtype=int))
    obs, _ = env.reset(seed=1)
    with pytest.raises(ValueError, match="move together"):
        env.step(np.zeros(2, dtype=int), id=[0, 1])
    with pytest.raises(ValueError, match="twice"):
        env.step(np.zeros(3, dtype=int), id=[0, 1, 1])
    with pytest.raises(ValueError, match=r"games 0\.\.2"):
        env.reset(env_id=[5])
    with pytest.raises(ValueError, match="just ended"):
        env.reset(env_id=[1])  # mid-episode: the engine cannot restart one game on its own
    with pytest.raises(ValueError, match="one action per game"):
        env.step(np.zeros((3, 1), dtype=int))
    illegal = (~obs.mask).argmax(1)
    with pytest.raises(ValueError, match="legal"):
        env.step(illegal)
    # Nothing changed: the next legal step gives what it gives on an untouched env.
    reference = PistiTianshouVectorEnv(3, **SETTINGS)
    reference.reset(seed=1)
    rng = np.random.default_rng(1)
    legal = random_legal(obs.mask, rng)
    obs = env.step(legal)[0]
    np.testing.assert_array_equal(obs.obs, reference.step(legal)[0].obs)
    for _ in range(60):
        obs, _, terminated, _, _ = env.step(random_legal(obs.mask, rng))
        if terminated.any():
            break
    assert terminated.any()
    with pytest.raises(RuntimeError, match="reset"):  # Tianshou resets a finished game before stepping it
        env.step(random_legal(obs.mask, rng))
    with pytest.raises(ValueError, match="seed"):
        env.reset(env_id=np.flatnonzero(terminated)[:1], seed=3)  # seeds deal all games anew, not one
    with pytest.raises(TypeError, match="infos"):
        PistiTianshouVectorEnv(2, infos="yes", **SETTINGS)
    with pytest.raises(NotImplementedError):
        env.set_env_attr("reward_mode", "win")


def test_tianshou_collector_stores_legal_actions_and_episodes_that_add_up_to_the_score_difference():
    """Tianshou's Collector (n_step, the on-policy recipes' mode) with a masked stochastic policy:
    every stored action is legal under the stored mask, and each finished episode's stored
    rewards add up to its learner's final score difference, read from the game."""
    torch.manual_seed(0)
    env = PistiTianshouVectorEnv(8, **SETTINGS)
    finals = spy_on_episodes(env)
    obs_dim = env.observation_space[0]["observation"].shape[0]
    actor = MaskedActor(ObsTrunk(obs_dim, (32,)), 52)
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space[0])
    steps = 8 * 60
    collector = Collector(policy, env, VectorReplayBuffer(steps, 8))
    env.seed(4)
    collector.reset()
    with policy_within_training_step(policy):
        stats = collector.collect(n_step=steps)
    assert stats.n_collected_steps == steps and stats.n_collected_episodes >= 8
    buffer = collector.buffer
    checked = 0
    for game, part in enumerate(buffer.buffers):
        rows = part[np.arange(len(part))]
        assert rows.obs.mask[np.arange(len(rows)), rows.act].all()
        ends = np.flatnonzero(rows.terminated)
        starts = np.r_[0, ends[:-1] + 1]
        returns = [rows.rew[a : b + 1].sum() for a, b in zip(starts, ends)]  # the unfinished tail left out
        assert len(finals[game]) == len(ends)  # every episode the game finished is in the buffer
        assert list(returns) == pytest.approx(finals[game], abs=1e-9)
        checked += len(ends)
    assert checked == stats.n_collected_episodes
    assert sorted(stats.returns.tolist()) == pytest.approx(sorted(x for f in finals for x in f), abs=1e-9)
