"""``observation_format="flat"`` (issue 50): the observation vector alone, the legal-action mask
in ``infos[agent]["action_mask"]``, for wrappers that only take a Box (SuperSuit's; see
``tests/integration/test_supersuit.py``).

The flat form is the Dict form taken apart and nothing else: the same seed and actions give, at
every step and for every agent, the Dict's ``"observation"`` as the observation and its
``"action_mask"`` as the info's mask, the other infos and the rewards unchanged; its space is the
Dict's ``"observation"`` Box; PettingZoo's ``api_test`` and ``seed_test`` pass; the no-leak
checks of R30/R31 (``no_leak_support.py``) hold for it too. The single-agent and vector
Gymnasium envs take the same option.
"""

from __future__ import annotations

import random
from functools import partial

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import pisti_env
from pisti_env.envs import pisti_v0
from pisti_env.envs.single_agent import PistiEnv
from pisti_env.envs.spaces import OBSERVATION_FORMATS

from helpers import cases
from no_leak_support import check_plain, check_with_face_down

# Matches (a hand's result in every agent's info until its next move, R24) and bluffs (R29: an
# answer is a turn of its own), beside the single hands of the default matrix.
MATCH_CASES = cases("2p 51", "3p 51 stock-bottom", "4p-partners 51 bluff", "4p-solo 51 bluff", "5p-2decks 51")
API_CASES = cases("2p hand", "3p 151", "4p-partners hand bluff", "4p-solo 51 stock-bottom bluff", "6p-2decks hand")
BAD_FORMATS = ["Flat", "vector", "", None, 1, ["dict"], b"flat"]


def lockstep(kw: dict, seed: int, **env_kw) -> int:
    """One random episode through the Dict env and the flat env side by side (the same seed, the
    actions drawn from the flat env's info mask): checks every agent's observation and mask at
    every step and everything ``last()`` gives. Returns the number of moves."""
    ed = pisti_env.env(**env_kw, **kw)
    ef = pisti_env.env(observation_format="flat", **env_kw, **kw)
    ed.reset(seed=seed)
    ef.reset(seed=seed)
    space = ef.observation_space(ef.possible_agents[0])
    assert space == ed.observation_space(ed.possible_agents[0])["observation"]
    rng = random.Random(seed)
    moves = 0
    for agent, agent_d in zip(ef.agent_iter(), ed.agent_iter()):
        assert agent == agent_d
        for a in ef.agents:  # every agent, not only the one to move
            dict_obs, flat_obs = ed.observe(a), ef.observe(a)
            assert flat_obs.dtype == np.float32 and flat_obs.tobytes() == dict_obs["observation"].tobytes()
            assert ef.observation_space(a).contains(flat_obs)
            mask = ef.infos[a]["action_mask"]
            assert mask.dtype == np.int8 and mask.tobytes() == dict_obs["action_mask"].tobytes()
        obs, reward, term, trunc, info = ef.last()
        obs_d, reward_d, term_d, trunc_d, info_d = ed.last()
        assert obs.tobytes() == obs_d["observation"].tobytes()
        assert (reward, term, trunc) == (reward_d, term_d, trunc_d)
        assert {k: v for k, v in info.items() if k != "action_mask"} == info_d  # hand results kept
        if term or trunc:
            assert not info["action_mask"].any()
            ef.step(None)
            ed.step(None)
            continue
        action = rng.choice(np.flatnonzero(info["action_mask"]).tolist())
        ef.step(action)
        ed.step(action)
        moves += 1
    assert not ef.agents and not ed.agents
    return moves


def test_R30_flat_observation_is_the_dict_vector_at_every_step(settings_case) -> None:
    """Single hands over the default settings matrix (every table, the shown stock bottom R28,
    bluffs R29): the flat observation is the Dict's vector, the info mask the Dict's mask."""
    for seed in (0, 1):
        assert lockstep(settings_case.kwargs, seed) > 0


@pytest.mark.parametrize("settings_case", MATCH_CASES)
def test_R24_R29_flat_observation_in_matches(settings_case) -> None:
    """Whole matches: hand results stay in the infos beside the mask until each agent's move."""
    assert lockstep(settings_case.kwargs, 7, reward="win") > 0


def test_flat_infos_are_replaced_not_edited() -> None:
    """An info a caller holds never changes under it: the mover's mask becomes all zeros in a
    new info, the held one keeps the mask it had."""
    e = pisti_env.env(observation_format="flat", target=None)
    e.reset(seed=3)
    agent = e.agent_selection
    held = e.last()[4]
    before = held["action_mask"].copy()
    e.step(int(np.flatnonzero(held["action_mask"])[0]))
    assert held["action_mask"].tobytes() == before.tobytes() and before.any()
    assert not e.infos[agent]["action_mask"].any()
    assert e.infos[e.agent_selection]["action_mask"].any()


@pytest.mark.filterwarnings("ignore:illegal action")
def test_flat_illegal_action_penalty_keeps_the_masks() -> None:
    """``illegal_action="penalty"`` ends the episode: the offender's info says so and every
    agent's mask is all zeros."""
    e = pisti_env.env(observation_format="flat", target=None)
    e.reset(seed=5)
    agent = e.agent_selection
    illegal = int(np.flatnonzero(e.infos[agent]["action_mask"] == 0)[0])
    e.step(illegal)
    assert e.infos[agent]["illegal_move"] is True
    assert all(info["action_mask"].shape == (52,) and not info["action_mask"].any() for info in e.infos.values())
    assert all(e.terminations.values())


# api_test's reset option {"options": ...}, which pisti_v0 ignores with a warning.
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@pytest.mark.parametrize("settings_case", API_CASES)
def test_R29_pettingzoo_api_test_flat(settings_case) -> None:
    """PettingZoo's ``api_test`` on the flat env (it draws its actions from ``info["action_mask"]``)."""
    api_test(pisti_v0.env(observation_format="flat", **settings_case.kwargs), num_cycles=300)


@pytest.mark.parametrize("settings_case", API_CASES[:3])
def test_pettingzoo_seed_test_flat(settings_case) -> None:
    seed_test(partial(pisti_env.env, observation_format="flat", **settings_case.kwargs), num_cycles=300)


def test_R30_R31_flat_observation_does_not_leak(settings_case) -> None:
    """The no-leak checks of ``test_no_leak.py`` on the flat form: deal what a seat cannot know
    differently, replay the same plays: its flat observation, its info mask and its rewards do
    not change; a change it can see shows."""
    if settings_case.bluff:
        check_with_face_down(settings_case.kwargs, observation_format="flat")
    else:
        check_plain(settings_case.kwargs, observation_format="flat")


def test_dict_is_the_default() -> None:
    """Without the option every env gives the Dict (its mask not in the info)."""
    e = pisti_env.env(target=None)
    e.reset(seed=0)
    assert e.unwrapped.observation_format == "dict"
    assert set(e.observe(e.agent_selection)) == {"observation", "action_mask"}
    assert "action_mask" not in e.infos[e.agent_selection]
    g = PistiEnv(target=None)
    obs, info = g.reset(seed=0)
    assert set(obs) == {"observation", "action_mask"} and "action_mask" not in info


@pytest.mark.parametrize("value", BAD_FORMATS, ids=repr)
def test_bad_observation_format_is_refused(value) -> None:
    """Every constructor names the allowed values."""
    message = r"observation_format must be one of \('dict', 'flat'\)"
    assert OBSERVATION_FORMATS == ("dict", "flat")
    for make in (pisti_env.env, pisti_env.raw_env, pisti_v0.env, pisti_v0.raw_env, PistiEnv):
        with pytest.raises(ValueError, match=message):
            make(observation_format=value)
    with pytest.raises(ValueError, match=message):
        gymnasium.make("pisti/Pisti-v0", observation_format=value)


@pytest.mark.parametrize("settings_case", cases("2p", "3p hand bluff", "4p-partners hand"))
def test_single_agent_flat_matches_dict(settings_case) -> None:
    """``pisti/Pisti-v0``: the flat observation is the Dict's vector, ``info["action_mask"]`` its
    mask (all zeros at the end), the rewards and ends the same; Gymnasium's checker passes."""
    kw = settings_case.kwargs
    flat = gymnasium.make("pisti/Pisti-v0", observation_format="flat", **kw)
    dict_env = gymnasium.make("pisti/Pisti-v0", **kw)
    gymnasium.utils.env_checker.check_env(PistiEnv(observation_format="flat", **kw), skip_render_check=True)
    assert flat.observation_space == dict_env.observation_space["observation"]
    obs, info = flat.reset(seed=11)
    obs_d, info_d = dict_env.reset(seed=11)
    assert obs.tobytes() == obs_d["observation"].tobytes() and info["action_mask"].tobytes() == obs_d["action_mask"].tobytes()
    rng = random.Random(11)
    term = False
    while not term:
        action = rng.choice(np.flatnonzero(info["action_mask"]).tolist())
        obs, reward, term, trunc, info = flat.step(action)
        obs_d, reward_d, term_d, trunc_d, info_d = dict_env.step(action)
        assert (reward, term, trunc) == (reward_d, term_d, trunc_d)
        assert obs.tobytes() == obs_d["observation"].tobytes() and flat.observation_space.contains(obs)
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].tobytes() == obs_d["action_mask"].tobytes()
        assert {k: v for k, v in info.items() if k != "action_mask"} == info_d
    assert not info["action_mask"].any()  # the episode is over


@pytest.mark.parametrize("output, autoreset_mode", [("numpy", "SameStep"), ("torch", "SameStep"), ("numpy", "NextStep")])
def test_vector_env_flat_matches_dict(output: str, autoreset_mode: str) -> None:
    """``gymnasium.make_vec("pisti/Pisti-v0")``: the (N, size) vectors, the masks in
    ``infos["action_mask"]`` (as the observations: NumPy or torch) with an all-true
    ``"_action_mask"``, across episode ends in both autoreset modes."""
    torch = pytest.importorskip("torch")
    kw = dict(num_envs=6, output=output, autoreset_mode=autoreset_mode, target=None, num_players=3, bluff=True)
    flat = gymnasium.make_vec("pisti/Pisti-v0", observation_format="flat", **kw)
    dict_env = gymnasium.make_vec("pisti/Pisti-v0", **kw)
    assert flat.single_observation_space == dict_env.single_observation_space["observation"]
    obs, info = flat.reset(seed=2)
    obs_d, info_d = dict_env.reset(seed=2)
    generator = np.random.default_rng(2)
    ended = 0
    for _ in range(60):
        as_numpy = (lambda x: x.cpu().numpy()) if output == "torch" else np.asarray
        mask = as_numpy(info["action_mask"])
        assert mask.dtype == np.int8 and info["_action_mask"].all()
        assert np.array_equal(as_numpy(obs), as_numpy(obs_d["observation"]))
        assert np.array_equal(mask, as_numpy(obs_d["action_mask"]))
        assert flat.observation_space.contains(as_numpy(obs))
        actions = np.array([generator.choice(np.flatnonzero(row)) for row in mask])
        if output == "torch":
            actions = torch.as_tensor(actions)
        obs, reward, term, _, info = flat.step(actions)
        obs_d, reward_d, term_d, _, info_d = dict_env.step(actions)
        assert np.array_equal(as_numpy(reward), as_numpy(reward_d)) and np.array_equal(as_numpy(term), as_numpy(term_d))
        ended += int(as_numpy(term).sum())
    assert ended > 0


def test_selfplay_env_refuses_the_flat_format_with_a_clear_error():
    from pisti_env.integrations.selfplay import SelfPlayEnv

    with pytest.raises(ValueError, match="observation_format"):
        SelfPlayEnv(env=pisti_env.env(observation_format="flat"))
    with pytest.raises(ValueError, match="observation_format"):
        SelfPlayEnv(observation_format="flat")
