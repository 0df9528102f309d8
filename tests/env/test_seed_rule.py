"""One seed rule for every env (issue 48): `reset(seed=...)` takes an int >= 0 or `None`; a
negative seed is a `ValueError` naming `seed` and the range in the AEC env (which accepted it),
the Gymnasium env (which raised `gymnasium.error.Error` from its own seeding) and the
self-play wrapper alike, and leaves the env as it was."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import pisti_env  # noqa: F401  (registers pisti/Pisti-v0)
from pisti_env.envs.env import env as aec_env
from pisti_env.integrations.selfplay import SelfPlayEnv

MESSAGE = r"seed must be an int >= 0 or None, got -1"


def test_the_aec_env_refuses_a_negative_seed_and_keeps_its_game():
    e = aec_env()
    e.reset(seed=3)
    before = e.observe(e.agent_selection)["observation"].copy()
    with pytest.raises(ValueError, match=MESSAGE):
        e.reset(seed=-1)
    assert np.array_equal(e.observe(e.agent_selection)["observation"], before)


def test_the_gymnasium_env_refuses_a_negative_seed_with_the_same_error():
    e = gymnasium.make("pisti/Pisti-v0")
    with pytest.raises(ValueError, match=MESSAGE):
        e.reset(seed=-1)
    e.reset(seed=0)


def test_the_selfplay_wrapper_refuses_a_negative_seed_with_the_same_error():
    e = SelfPlayEnv()
    with pytest.raises(ValueError, match=MESSAGE):
        e.reset(seed=-1)


@pytest.mark.parametrize("seed", [1.5, "3", True])
def test_a_seed_that_is_not_an_int_is_a_type_error_in_both(seed):
    for e in (aec_env(), gymnasium.make("pisti/Pisti-v0")):
        with pytest.raises(TypeError, match=r"seed must be an int >= 0 or None"):
            e.reset(seed=seed)
