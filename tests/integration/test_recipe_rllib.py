"""The RLlib adapter (pisti_env/integrations/rllib.py) and recipe (examples/rllib_ppo.py):
RLlib's own env check passes on every variant; over random games each seat's rewards add up
to its side's final score difference (R20–R26) and the seats' to zero; a tiny PPO run takes
only legal actions, and in RLlib's own episodes and metrics every episode's seat returns are
the score differences and add up to zero. Needs the ``rllib`` extra (its own environment: ray
pins gymnasium); CI installs it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from pisti_env.integrations.rllib import (  # noqa: E402
    ACTION_MASK,
    OBSERVATIONS,
    PistiMultiAgentEnv,
    ppo_config,
)
from pisti_env.game.rewards import side_difference, win_rewards  # noqa: E402
from training.harness import ray_backend  # noqa: E402

from helpers import cases, example_module  # noqa: E402


# Every table (R3, R4, R27) and the rule variants (R14, R16, R17, R24–R29), hands and matches.
VARIANTS = cases(
    "2p hand",
    "3p hand",
    "4p-solo hand",
    "4p-partners hand",
    "2p hand bluff jack-double",
    "4p-partners hand bluff stock-bottom",
    "5p-2decks hand double10 last-card-off",
    "6p-2decks hand bluff bonus3",
    "2p 151 margin2",
    "3p 51",
)



def expected_returns(env: PistiMultiAgentEnv) -> dict[str, float]:
    """Each seat's side's final score difference (R20–R26), or its win reward."""
    game, settings = env.aec.unwrapped.game, env.settings
    per_side = (
        [side_difference(game.match_scores, s) for s in range(settings.num_sides)]
        if env.aec.unwrapped.reward_mode == "diff" else win_rewards(game)
    )
    return {a: per_side[settings.side_of(i)] for i, a in enumerate(env.possible_agents)}


def play_random_game(env: PistiMultiAgentEnv, rng: np.random.Generator, seed: int) -> dict[str, float]:
    """One episode with random legal actions; checks the turn protocol at every step and
    returns each seat's summed rewards."""
    observations, infos = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    acted: set[str] = set()
    while True:
        (agent,) = observations  # only the seat to move is observed
        assert set(infos) == {agent}
        mask = observations[agent][ACTION_MASK]
        assert observations[agent][OBSERVATIONS].shape == env.observation_spaces[agent][OBSERVATIONS].shape
        action = int(rng.choice(np.flatnonzero(mask)))
        observations, rewards, terminateds, truncateds, infos = env.step({agent: action})
        acted.add(agent)
        assert truncateds == {"__all__": False}
        for seat, reward in rewards.items():
            totals[seat] += reward
        if terminateds["__all__"]:
            assert set(observations) == set(rewards) == set(env.possible_agents)
            assert all(terminateds[a] for a in env.possible_agents)
            assert not any(observations[a][ACTION_MASK].any() for a in env.possible_agents)
            return totals
        # a reward goes out only to a seat that has acted, or RLlib would leave it out
        assert set(rewards) <= acted


@pytest.mark.parametrize("settings_case", VARIANTS)
def test_adapter_seat_rewards_are_the_final_score_differences_and_sum_to_zero(settings_case):
    """R20–R26 over many random games: no reward is dropped or given to the wrong seat."""
    env = PistiMultiAgentEnv(settings_case.kwargs)
    rng = np.random.default_rng(7)
    games = 6 if settings_case.kwargs.get("target") else 100
    for seed in range(games):
        totals = play_random_game(env, rng, seed)
        expected = expected_returns(env)
        for agent in env.possible_agents:
            assert totals[agent] == pytest.approx(expected[agent], abs=1e-9)
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)


def test_adapter_win_rewards_reach_every_seat():
    """reward="win" (R25): the end-of-match reward of every seat, none held back."""
    env = PistiMultiAgentEnv({"num_players": 3, "target": None}, reward="win")
    rng = np.random.default_rng(3)
    for seed in range(20):
        totals = play_random_game(env, rng, seed)
        assert totals == pytest.approx(expected_returns(env))


def test_adapter_holds_a_reward_that_comes_before_a_seats_first_action():
    """The issue's case: the first player captures on the first move (R10), so the second
    seat loses points before it has acted. RLlib would leave that reward out of the seat's
    return; the adapter holds it and passes it on with the seat's first action."""
    for seed in range(200):
        env = PistiMultiAgentEnv()
        observations, _ = env.reset(seed=seed)
        (first,) = observations
        for action in np.flatnonzero(observations[first][ACTION_MASK]):
            env.reset(seed=seed)
            observations, rewards, *_ = env.step({first: int(action)})
            (second,) = observations
            before = env.aec.unwrapped.rewards[second]
            if before == 0.0:
                continue
            assert second not in rewards and rewards[first] == -before
            legal = int(np.flatnonzero(observations[second][ACTION_MASK])[0])
            _, rewards, *_ = env.step({second: legal})
            assert rewards[second] == pytest.approx(before + env.aec.unwrapped.rewards[second])
            return
    pytest.fail("no first move captured in 200 deals")


@pytest.mark.parametrize("settings_case", VARIANTS)
def test_rllibs_env_check_passes(settings_case):
    """RLlib's own check (unmasked sampled actions: an illegal one ends the game with the
    penalty instead of raising)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the illegal-action warning
        check_multiagent_environments(PistiMultiAgentEnv(settings_case.kwargs))


def test_adapter_refuses_bad_input_with_clear_errors():
    with pytest.raises(TypeError, match="config must be a mapping"):
        PistiMultiAgentEnv(["num_players", 2])
    with pytest.raises(ValueError, match="unknown setting"):
        PistiMultiAgentEnv({"players": 2})
    with pytest.raises(ValueError, match="num_players"):
        PistiMultiAgentEnv({"num_players": 9})
    with pytest.raises(ValueError, match="given both"):
        PistiMultiAgentEnv({"bluff": True}, bluff=False)
    with pytest.raises(ValueError, match="render_mode"):
        PistiMultiAgentEnv(render_mode="human")
    env = PistiMultiAgentEnv()
    with pytest.raises(ValueError, match="reset"):
        env.step({"player_0": 0})
    observations, _ = env.reset(seed=0)
    (agent,) = observations
    other = next(a for a in env.possible_agents if a != agent)
    with pytest.raises(ValueError, match=f"{agent}'s turn"):
        env.step({other: 0})
    with pytest.raises(ValueError, match="only"):
        env.step({agent: 0, other: 0})
    with pytest.raises(TypeError, match="action_dict"):
        env.step([0])
    with pytest.raises(TypeError, match="float"):
        env.step({agent: 1.5})
    with pytest.raises(ValueError, match="num_env_runners"):
        ppo_config(num_env_runners=-1)
    with pytest.raises(ValueError, match="hidden"):
        ppo_config(hidden=())
    with pytest.raises(ValueError, match="unknown setting"):
        ppo_config({"colour": "red"})


def test_illegal_action_ends_the_game_and_the_penalty_reaches_both_seats():
    """An unmasked illegal action (what RLlib's env check plays): the episode ends, the
    offender is penalised, the other seat gets the opposite, both in the rewards."""
    env = PistiMultiAgentEnv()
    rng = np.random.default_rng(0)
    observations, _ = env.reset(seed=1)
    for _ in range(3):  # let both seats act first
        (agent,) = observations
        observations, *_ = env.step({agent: int(np.flatnonzero(observations[agent][ACTION_MASK])[0])})
    (agent,) = observations
    illegal = int(rng.choice(np.flatnonzero(observations[agent][ACTION_MASK] == 0)))
    with pytest.warns(UserWarning, match="illegal action"):
        observations, rewards, terminateds, _, infos = env.step({agent: illegal})
    assert terminateds["__all__"] and infos[agent]["illegal_move"]
    assert rewards[agent] < 0 and sum(rewards.values()) == pytest.approx(0.0, abs=1e-9)


# ---------------------------------------------------------------------------- PPO in RLlib
@pytest.fixture(scope="module")
def ray_session():
    """A small private Ray instance on loopback (``--ray local``'s), shut down however the
    tests end."""
    ray.shutdown()
    try:
        ray_backend.start_local(ray, num_cpus=2, object_store_memory=200 * 1024**2, log_to_driver=False)
        yield
    finally:
        ray.shutdown()


class RefereedEnv(PistiMultiAgentEnv):
    """The adapter, counting every action RLlib sends it, the illegal ones (checked against
    the seat's mask before the step), and the rewards that reached a seat before its first
    action (the issue's case, which RLlib's episode would leave out of the seat's return). The
    counts are class attributes: RLlib builds its envs from the class (the local env runner's,
    in this process)."""

    actions = illegal = early_rewards = 0

    def step(self, action_dict):
        (agent,) = action_dict
        mask = self.aec.observe(agent)[ACTION_MASK]
        RefereedEnv.actions += 1
        RefereedEnv.illegal += not mask[int(action_dict[agent])]
        out = super().step(action_dict)
        rewards = self.aec.unwrapped.rewards
        RefereedEnv.early_rewards += sum(rewards[a] != 0 for a in self.possible_agents if a not in self._acted)
        return out


def episode_referee(episodes: list):
    """An ``on_episode_end`` callback that appends, per finished episode (all of its chunks),
    each seat's return in RLlib's episode and its final score difference from its last info.
    (RLlib deep-copies its config with the callbacks; a function is not copied, so the list
    it writes into is the caller's.)"""

    def on_episode_end(*, episode, prev_episode_chunks=None, **kwargs) -> None:
        returns, expected = {}, {}
        for chunk in [*(prev_episode_chunks or []), episode]:
            for agent, seat_episode in chunk.agent_episodes.items():
                returns[agent] = returns.get(agent, 0.0) + seat_episode.get_return()
        for agent, seat_episode in episode.agent_episodes.items():
            last = seat_episode.get_infos(-1)  # the final info: the hand's result (R20–R23)
            expected[agent] = side_difference(last["match_scores"], last["side"])
        episodes.append((returns, expected))

    return on_episode_end


@pytest.mark.parametrize(
    "game, batch_mode, fragment, envs",
    [
        (None, "complete_episodes", "auto", 16),
        ({"num_players": 4, "partnerships": False, "target": None}, "complete_episodes", "auto", 16),
        ({"num_players": 4, "partnerships": False, "target": None}, "truncate_episodes", 10, 4),
    ],
    ids=["recipe-2p", "4p-solo", "4p-solo-episodes-cut-into-chunks"],
)
def test_rllib_ppo_is_legal_and_seat_returns_are_the_score_differences(ray_session, game, batch_mode, fragment, envs):
    """The recipe's config (and with 4 seats, where a seat is often rewarded before its first
    action: an opponent captures from the table, R10): RLlib's episodes and metrics hold every
    seat's score difference (R20–R23), summing to zero, and no action was illegal."""
    recipe = example_module("rllib_ppo")
    episodes = []
    RefereedEnv.actions = RefereedEnv.illegal = RefereedEnv.early_rewards = 0
    config = (
        recipe.make_config(
            envs_per_runner=envs, seed=3, train_batch_size=400, minibatch_size=128, num_epochs=1, hidden=(32,)
        )
        .environment(RefereedEnv, env_config=game or recipe.GAME, disable_env_checking=True)  # checked above
        .env_runners(batch_mode=batch_mode, rollout_fragment_length=fragment)
        .callbacks(on_episode_end=episode_referee(episodes))
    )
    results = []
    algo = recipe.train(config, steps=800, on_result=results.append)
    try:
        assert RefereedEnv.actions >= 800 and RefereedEnv.illegal == 0
        assert len(episodes) >= 10
        for returns, expected in episodes:
            assert set(returns) == set(expected) == set(PistiMultiAgentEnv(game or recipe.GAME).possible_agents)
            assert sum(returns.values()) == pytest.approx(0.0, abs=1e-9)
            for agent in returns:
                assert returns[agent] == pytest.approx(expected[agent], abs=1e-9)
        # RLlib's own metrics: the seats' mean returns over the same episodes sum to zero
        seats = results[-1]["env_runners"]["agent_episode_returns_mean"]
        assert len(seats) == len(returns)
        assert sum(seats.values()) == pytest.approx(0.0, abs=1e-6)
        assert results[-1]["env_runners"]["episode_return_mean"] == pytest.approx(0.0, abs=1e-6)
        if game is not None:  # the case the adapter holds rewards for occurred (the test sees it)
            assert RefereedEnv.early_rewards >= 1
        else:
            margins = recipe.margins(algo, deals=4, seed=1)
            assert set(margins) == {"random", "greedy"}
            assert all(math.isfinite(m["mean"]) for m in margins.values())
    finally:
        algo.stop()
