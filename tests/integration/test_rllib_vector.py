"""RLlib's batched door (``PistiVectorRLlibEnv``, ``single_agent_ppo_config``) and its recipe
(``examples/rllib_ppo_vector.py``): the env is the vector env with next-step autoreset under
RLlib's observation keys; a tiny PPO run, with the env runner in this process and on a Ray
actor, steps N games per runner, takes only legal actions (each checked against the mask it
was shown), and in RLlib's own episodes every return is the hand's final score difference
(R20–R23). Needs the ``rllib`` extra (its own environment: ray pins gymnasium); CI installs it.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import torch  # noqa: E402

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.agents import SeatView  # noqa: E402
from pisti_env.integrations.rllib import (  # noqa: E402
    ACTION_MASK,
    OBSERVATIONS,
    PistiVectorRLlibEnv,
    RLModulePlayer,
    single_agent_ppo_config,
    train,
)
from pisti_env.game.rewards import side_difference  # noqa: E402
from pisti_env.envs.vector import PistiVectorEnv  # noqa: E402
from training.harness import ray_backend  # noqa: E402

from helpers import example_module  # noqa: E402

GAME = {"num_players": 2, "target": None}


def test_the_env_is_the_vector_env_with_next_step_autoreset_and_rllibs_keys():
    env = PistiVectorRLlibEnv({"num_envs": 3, "opponent": "random", **GAME})
    assert isinstance(env.unwrapped, PistiVectorEnv) and env.num_envs == 3
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert set(env.single_observation_space) == {OBSERVATIONS, ACTION_MASK}
    plain = PistiVectorEnv(num_envs=3, opponent="random", **GAME)
    assert env.single_observation_space[OBSERVATIONS] == plain.single_observation_space["observation"]
    observations, _ = env.reset(seed=4)
    expected, _ = plain.reset(seed=4)
    assert set(observations) == {OBSERVATIONS, ACTION_MASK}
    assert np.array_equal(observations[OBSERVATIONS], expected["observation"])  # the same games, byte for byte
    assert np.array_equal(observations[ACTION_MASK], expected["action_mask"])
    assert observations in env.observation_space


def test_the_env_refuses_bad_configs_with_clear_errors():
    with pytest.raises(TypeError, match="config must be a mapping"):
        PistiVectorRLlibEnv(["opponent", "greedy"])
    with pytest.raises(ValueError, match="autoreset_mode"):
        PistiVectorRLlibEnv({"autoreset_mode": "SameStep"})
    with pytest.raises(ValueError, match="output"):
        PistiVectorRLlibEnv({"output": "torch"})
    with pytest.raises(ValueError, match="unknown setting"):
        PistiVectorRLlibEnv({"players": 2})
    with pytest.raises(ValueError, match="pimc"):
        single_agent_ppo_config({"opponent": "pimc"})  # no batched form: refused in the caller
    with pytest.raises(ValueError, match="num_envs_per_env_runner"):
        single_agent_ppo_config(num_envs_per_env_runner=0)
    with pytest.raises(ValueError, match="hidden"):
        single_agent_ppo_config(hidden=[])
    with pytest.raises(ValueError, match="budget"):
        train(single_agent_ppo_config())


class RefereedVectorEnv(PistiVectorRLlibEnv):
    """The batched door's env, counting what RLlib sends it: every action of a game that is
    not restarting (a restarting game's action is ignored, next-step autoreset) is checked
    against the mask that game was shown. Counts are class attributes (the env runner that
    builds this env runs in this process)."""

    actions = illegal = 0
    sizes: set[int] = set()

    def __init__(self, config=None):
        super().__init__(config)
        RefereedVectorEnv.sizes.add(self.num_envs)
        self._masks = None
        self._restarting = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed=None, options=None):
        observations, infos = super().reset(seed=seed, options=options)
        self._masks, self._restarting[:] = observations[ACTION_MASK].copy(), False
        return observations, infos

    def step(self, actions):
        actions = np.asarray(actions)
        counted = ~self._restarting
        RefereedVectorEnv.actions += int(counted.sum())
        RefereedVectorEnv.illegal += int((self._masks[np.arange(self.num_envs), actions] == 0)[counted].sum())
        observations, rewards, terminated, truncated, infos = super().step(actions)
        self._masks, self._restarting = observations[ACTION_MASK].copy(), terminated.copy()
        return observations, rewards, terminated, truncated, infos


def episode_referee(episodes: list):
    """``on_episode_end``: appends (RLlib's return of the whole episode, all of its chunks; the
    final score difference from the episode's last info) per finished episode, and logs the
    largest gap between them as the metric ``return_gap`` (what an env runner on an actor
    reports back). RLlib copies its config with the callbacks; a function is not copied, so
    ``episodes`` is the caller's list where the runner is in the caller's process."""

    def on_episode_end(*, episode, prev_episode_chunks=None, metrics_logger=None, **kwargs) -> None:
        returns = sum(chunk.get_return() for chunk in [*(prev_episode_chunks or []), episode])
        last = episode.get_infos(-1)  # the finished hand's infos (next-step autoreset: in place)
        difference = side_difference(last["match_scores"], int(last["side"]))
        episodes.append((returns, difference))
        metrics_logger.log_value("return_gap", abs(returns - difference), reduce="max")
        metrics_logger.log_value("refereed_episodes", 1, reduce="sum")

    return on_episode_end


@pytest.fixture(scope="module")
def ray_session():
    """A small private Ray instance on loopback (``--ray local``'s), shut down however the
    tests end."""
    ray.shutdown()
    # Ray's workers cannot import this test module: its env and callbacks travel by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        ray_backend.start_local(ray, num_cpus=2, object_store_memory=200 * 1024**2, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.parametrize("runners", [0, 1], ids=["runner-in-driver", "runner-on-a-ray-actor"])
def test_rllib_ppo_on_the_batched_door_is_legal_and_returns_are_score_differences(ray_session, runners):
    """The recipe's config, with a tiny network and batch: N games per runner, every action
    legal, and RLlib's episodes (and its return metric) hold the hands' score differences."""
    recipe = example_module("rllib_ppo_vector")
    envs = 16
    episodes = []
    RefereedVectorEnv.actions = RefereedVectorEnv.illegal = 0
    RefereedVectorEnv.sizes = set()
    config = (
        recipe.make_config(
            env_runners=runners, envs_per_runner=envs, seed=3, train_batch_size=512, minibatch_size=256,
            num_epochs=1, hidden=(32,),
        )
        .environment(RefereedVectorEnv, env_config={"opponent": "greedy", **recipe.GAME})
        .callbacks(on_episode_end=episode_referee(episodes))
    )
    results = []
    algo = train(config, steps=1000, on_result=results.append)
    try:
        runner = results[-1]["env_runners"]
        assert runner["num_env_steps_sampled_lifetime"] >= 1000
        # RLlib's own episodes, wherever the runner ran: returns are the score differences
        assert sum(r["env_runners"].get("refereed_episodes", 0) for r in results) >= 20
        assert max(r["env_runners"].get("return_gap", 0.0) for r in results) < 1e-4
        assert math.isfinite(runner["episode_return_mean"])
        if runners == 0:  # the env ran here: every action was checked against its mask
            assert RefereedVectorEnv.sizes == {envs}
            assert RefereedVectorEnv.actions >= 1000 and RefereedVectorEnv.illegal == 0
            assert len(episodes) >= 20
            assert all(r == pytest.approx(d, abs=1e-4) for r, d in episodes)
        margins = recipe.margins(algo, deals=4, seed=1)
        assert set(margins) == {"random", "greedy"}
        assert all(math.isfinite(m["mean"]) for m in margins.values())
    finally:
        algo.stop()


def test_the_module_as_a_player_plays_legal_moves_the_same_in_both_forms(ray_session):
    """``RLModulePlayer``: its batched form (what the harness's batched engine and the vector
    env's opponents call) picks a legal action in every game, and its per-seat form (``act`` on
    a seat's view, R30) picks the same one on the same position."""
    algo = single_agent_ppo_config({"opponent": "random", **GAME}, num_envs_per_env_runner=4, hidden=(16,)).build_algo()
    try:
        player = RLModulePlayer(algo.get_module())
        env = PistiVectorEnv(num_envs=32, opponent="random", output="torch", **GAME)
        observations, _ = env.reset(seed=0)
        chosen = player.act_batch(observations["observation"], observations["action_mask"].bool(), None)
        assert bool(observations["action_mask"][range(32), chosen].all())

        game = Game(make_settings(**GAME), seed=5)
        while not game.done:
            view = SeatView(game, game.turn)
            seen = view.observation()
            batched = player.act_batch(torch.from_numpy(seen["observation"])[None],
                                       torch.from_numpy(seen["action_mask"]).bool()[None], None)
            action = player.act(view)
            assert action == int(batched[0]) and action in game.legal_actions()
            game.step(action)
    finally:
        algo.stop()
