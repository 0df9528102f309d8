"""The RLlib adapter (pisti_env/integrations/rllib.py) and recipe (examples/rllib_ppo.py):
RLlib's own env check passes on every variant; over random games each seat's rewards add up
to its side's final score difference (R20–R26) and the seats' to zero; a tiny PPO run takes
only legal actions, and in RLlib's own episodes and metrics every episode's seat returns are
the score differences and add up to zero. Needs the ``rllib`` extra (its own environment: ray
pins gymnasium); CI installs it."""

from __future__ import annotations

import importlib.util
import math
import warnings
from pathlib import Path

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
from pisti_env.rewards import side_difference, win_rewards  # noqa: E402

from helpers import cases  # noqa: E402

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "rllib_ppo.py"

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


def load_recipe():
    spec = importlib.util.spec_from_file_location("rllib_ppo", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    """A small private Ray instance on loopback, shut down however the tests end."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=200 * 1024**2,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


class EpisodeReferee:
    """``on_episode_end`` callback: per finished episode (all of its chunks), whether every
    action was legal under the mask the module was shown, each seat's return in RLlib's
    episode, and each seat's final score difference from its last info."""

    def __init__(self) -> None:
        self.illegal, self.actions, self.episodes = 0, 0, []

    def __call__(self, *, episode, prev_episode_chunks=None, **kwargs) -> None:
        returns, expected = {}, {}
        for chunk in [*(prev_episode_chunks or []), episode]:
            for agent, seat_episode in chunk.agent_episodes.items():
                returns[agent] = returns.get(agent, 0.0) + seat_episode.get_return()
                observations, actions = seat_episode.get_observations(), seat_episode.get_actions()
                masks = (
                    observations[ACTION_MASK] if isinstance(observations, dict)
                    else np.stack([o[ACTION_MASK] for o in observations])
                )
                for mask, action in zip(masks, actions):
                    self.actions += 1
                    self.illegal += not mask[int(action)]
                last = seat_episode.get_infos(-1)
                if "match_scores" in last:
                    expected[agent] = side_difference(last["match_scores"], last["side"])
        self.episodes.append((returns, expected))


@pytest.mark.parametrize(
    "batch_mode, fragment",
    [("complete_episodes", "auto"), ("truncate_episodes", 7)],
    ids=["recipe-complete-episodes", "episodes-cut-into-chunks"],
)
def test_rllib_ppo_recipe_is_legal_and_seat_returns_are_the_score_differences(ray_session, batch_mode, fragment):
    recipe = load_recipe()
    referee = EpisodeReferee()
    config = (
        recipe.make_config(seed=3, train_batch_size=400, minibatch_size=128, num_epochs=1, hidden=(32,))
        .env_runners(batch_mode=batch_mode, rollout_fragment_length=fragment)
        .callbacks(on_episode_end=referee)
    )
    results = []
    algo = recipe.train(config, steps=800, on_result=results.append)
    try:
        assert referee.actions >= 800 and referee.illegal == 0
        assert len(referee.episodes) >= 10
        for returns, expected in referee.episodes:
            assert set(returns) == set(expected) == {"player_0", "player_1"}
            assert sum(returns.values()) == pytest.approx(0.0, abs=1e-9)
            for agent in returns:
                assert returns[agent] == pytest.approx(expected[agent], abs=1e-9)
        # RLlib's own metrics: the seats' mean returns over the same episodes sum to zero
        seats = results[-1]["env_runners"]["agent_episode_returns_mean"]
        assert set(seats) == {"player_0", "player_1"}
        assert sum(seats.values()) == pytest.approx(0.0, abs=1e-6)
        assert results[-1]["env_runners"]["episode_return_mean"] == pytest.approx(0.0, abs=1e-6)
        if batch_mode == "complete_episodes":
            margins = recipe.margins(algo, deals=4, seed=1)
            assert set(margins) == {"random", "greedy"}
            assert all(math.isfinite(m["mean"]) for m in margins.values())
    finally:
        algo.stop()
