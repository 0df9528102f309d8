"""SuperSuit's wrappers on ``pisti_v0``'s flat form (``observation_format="flat"``, issue 50).

SuperSuit's observation wrappers take a Box, not ``pisti_v0``'s default Dict; the flat form gives
the observation vector alone and the legal-action mask in ``infos[agent]["action_mask"]``, which
every wrapper passes through. Random legal games are played through each wrapper that makes
sense for a turn-based AEC env and through a chain of them, the actions drawn from the info's
mask: every observation lies in the wrapped space with the expected shape and dtype (and is the
expected transform of the env's own vector), the info's mask is the game's legal actions now,
every card is accounted for at the end (R19, R23), and each agent's rewards add up to the env's
step rewards under the wrapper's reward transform (unchanged: to the final score difference).

Left out, as they do not fit a turn-based card game: ``sticky_actions_v0`` and ``frame_skip_v0``
(they repeat an earlier action, illegal once the card is played; ``frame_skip_v0`` also rebuilds
the infos and drops the mask), ``clip_actions_v0`` and ``scale_actions_v0`` (Box actions only),
``black_death_v3`` and the vector constructors (parallel envs; ``pisti_v0`` is not
parallelizable), ``color_reduction_v0`` and ``resize_v1`` (images).
Needs the ``supersuit`` extra (``pip install -e ".[supersuit]"``, part of ``integrations``); CI
installs it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

ss = pytest.importorskip("supersuit")

from pisti_env.envs import pisti_v0  # noqa: E402

from helpers import cases, final_diff  # noqa: E402

Transform = Callable[[np.ndarray, Any], np.ndarray]


def scaled(low: float, high: float) -> Transform:
    """``normalize_obs_v0(env_min=low, env_max=high)``'s transform of the env's vector."""
    def transform(vector: np.ndarray, space: Any) -> np.ndarray:
        return (vector - space.low) / (space.high - space.low) * (high - low) + low

    return transform


@dataclass(frozen=True)
class Wrapping:
    """One way to wrap the flat env: ``wrap(env)``; the wrapped observation's shape from the
    vector's size and the number of agents, its dtype; ``current``: the wrapped observation's
    newest part (its last ``size`` entries) from the env's vector and space (``None``: not
    checked, e.g. a delayed observation); ``reward``: what the wrapper makes of a step reward."""

    wrap: Callable[[Any], Any]
    shape: Callable[[int, int], tuple[int, ...]] = lambda size, agents: (size,)
    dtype: Any = np.float32
    current: Transform | None = lambda vector, space: vector
    reward: Callable[[float], float] = lambda r: r


STACK = 4
WRAPPINGS = {
    "flatten_v0": Wrapping(ss.flatten_v0),
    "dtype_v0": Wrapping(lambda e: ss.dtype_v0(e, np.float64), dtype=np.float64),
    "normalize_obs_v0": Wrapping(lambda e: ss.normalize_obs_v0(e, env_min=-1.0, env_max=1.0), current=scaled(-1.0, 1.0)),
    "frame_stack_v1": Wrapping(lambda e: ss.frame_stack_v1(e, STACK), shape=lambda size, agents: (STACK * size,)),
    "reshape_v0": Wrapping(lambda e: ss.reshape_v0(e, (1, e.observation_space(e.possible_agents[0]).shape[0])),
                           shape=lambda size, agents: (1, size)),
    "delay_observations_v0": Wrapping(lambda e: ss.delay_observations_v0(e, 2), current=None),
    "max_observation_v0": Wrapping(lambda e: ss.max_observation_v0(e, 2), current=None),
    "pad_observations_v0": Wrapping(ss.pad_observations_v0),
    "pad_action_space_v0": Wrapping(ss.pad_action_space_v0),
    # SuperSuit's indicator is the largest bound of the space but its space's bound the smallest:
    # after normalize_obs_v0 both are 1, so the observations stay inside the space.
    "agent_indicator_v0": Wrapping(lambda e: ss.agent_indicator_v0(ss.normalize_obs_v0(e)),
                                   shape=lambda size, agents: (size + agents,), current=None),
    "observation_lambda_v0": Wrapping(lambda e: ss.observation_lambda_v0(e, lambda obs, space: obs * 2),
                                      current=lambda vector, space: vector * 2),
    "action_lambda_v1": Wrapping(lambda e: ss.action_lambda_v1(e, lambda action, space: action, lambda space: space)),
    "clip_reward_v0": Wrapping(lambda e: ss.clip_reward_v0(e, lower_bound=-1, upper_bound=1),
                               reward=lambda r: max(min(r, 1.0), -1.0)),
    "reward_lambda_v0": Wrapping(lambda e: ss.reward_lambda_v0(e, lambda r: r / 10), reward=lambda r: r / 10),
}
# A chain a learner on the AEC env might use: float64 in [-1, 1], the last four of its own turns
# stacked, step rewards clipped to [-1, 1].
CHAIN = Wrapping(
    lambda e: ss.clip_reward_v0(ss.frame_stack_v1(ss.normalize_obs_v0(ss.dtype_v0(ss.flatten_v0(e), np.float64),
                                                                      env_min=-1.0, env_max=1.0), STACK)),
    shape=lambda size, agents: (STACK * size,), dtype=np.float64, current=scaled(-1.0, 1.0),
    reward=lambda r: max(min(r, 1.0), -1.0),
)
CASES = cases("2p hand", "3p 51 bluff", "4p-partners hand bluff", "4p-solo hand stock-bottom")


def play(wrapping: Wrapping, kw: dict, seed: int) -> int:
    """One random legal game of ``pisti_v0.env(observation_format="flat", **kw)`` through
    ``wrapping``, checked as the module docstring says. Returns the number of moves."""
    e = wrapping.wrap(pisti_v0.env(observation_format="flat", **kw))
    raw = e.unwrapped
    flat_space = raw.observation_space(raw.possible_agents[0])
    size, agents = flat_space.shape[0], len(raw.possible_agents)
    e.reset(seed=seed)
    rng = random.Random(seed)
    totals = dict.fromkeys(raw.possible_agents, 0.0)  # what last() handed out
    expected = dict.fromkeys(raw.possible_agents, 0.0)  # the env's step rewards, transformed
    finals: dict[str, dict] = {}
    moves = 0
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        space = e.observation_space(agent)
        assert obs.shape == wrapping.shape(size, agents) and obs.dtype == wrapping.dtype
        assert space.shape == obs.shape and space.contains(obs), f"{agent}: observation outside its space"
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (raw.num_actions,)
        if term or trunc:
            assert not mask.any()
            finals[agent] = info
            e.step(None)
            continue
        legal = np.flatnonzero(mask).tolist()
        assert legal == sorted(raw.game.legal_actions()), "the info's mask is not the game's legal actions now"
        if wrapping.current is not None:
            newest = obs.reshape(-1)[-size:]
            assert np.allclose(newest, wrapping.current(raw.observe(agent), flat_space), atol=1e-6)
        e.step(rng.choice(legal))
        moves += 1
        for a, r in raw.rewards.items():
            expected[a] += wrapping.reward(r)
    game = raw.game
    assert game.done and not e.agents and set(finals) == set(raw.possible_agents)
    # Every card accounted for at the last hand's end (R19, R23), in every agent's last info.
    for info in finals.values():
        assert sum(side["cards"] for side in info["hand_result"]) == game.settings.num_cards
    side_of = game.settings.side_of
    for a, seat in raw.agent_name_mapping.items():
        assert totals[a] == pytest.approx(expected[a], abs=1e-9)
        if wrapping.reward(3.0) == 3.0:  # rewards untouched: they add up to the score difference
            assert totals[a] == pytest.approx(final_diff(game, side_of(seat)), abs=1e-9)
    return moves


@pytest.mark.parametrize("name", sorted(WRAPPINGS))
@pytest.mark.parametrize("settings_case", CASES[:2])
def test_supersuit_wrapper_on_flat_env(name: str, settings_case) -> None:
    assert play(WRAPPINGS[name], settings_case.kwargs, seed=1) > 0


@pytest.mark.parametrize("settings_case", CASES)
def test_supersuit_chain_on_flat_env(settings_case) -> None:
    for seed in (0, 1):
        assert play(CHAIN, settings_case.kwargs, seed) > 0


def test_supersuit_refuses_the_dict_observation() -> None:
    """Why the flat form exists: SuperSuit's Box wrappers fail on the default Dict."""
    with pytest.raises((AssertionError, AttributeError, TypeError, ValueError)):
        e = ss.normalize_obs_v0(pisti_v0.env(target=None))
        e.reset(seed=0)
        e.last()
