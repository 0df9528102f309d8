"""``pisti_v0.env()``'s wrapper, `pisti_env.envs.order_enforcing.FastOrderEnforcingWrapper`
(issue 17), behaves exactly as PettingZoo's ``OrderEnforcingWrapper``: the same results, and the
same errors and warnings when calls come in the wrong order. Each test runs the same calls
through both wrappers around the same raw env and compares what comes out.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

import pisti_env
from pisti_env.envs.order_enforcing import FastOrderEnforcingWrapper

WRAPPERS = [OrderEnforcingWrapper, FastOrderEnforcingWrapper]


def wrapped(wrapper, **kw):
    return wrapper(pisti_env.raw_env(illegal_action="penalty", **kw))


def outcome(call) -> tuple[str, str]:
    """``(exception type, message)`` of ``call()``, or ``("ok", repr of the result)``."""
    try:
        return "ok", repr(call())
    except Exception as exc:  # the point is to compare whatever is raised
        return type(exc).__name__, str(exc)


def test_env_uses_the_fast_wrapper_which_is_an_order_enforcing_wrapper():
    e = pisti_env.env()
    assert type(e) is FastOrderEnforcingWrapper and isinstance(e, OrderEnforcingWrapper)
    assert str(e) == str(OrderEnforcingWrapper(pisti_env.raw_env())) == "pisti_v0"


@pytest.mark.parametrize(
    "call",
    [
        lambda e: e.last(),
        lambda e: e.last(observe=False),
        lambda e: e.step(0),
        lambda e: e.agent_iter(),
        lambda e: e.observe("player_0"),
        lambda e: e.agents,
        lambda e: e.agent_selection,
        lambda e: e.rewards,
    ],
    ids=["last", "last-no-observe", "step", "agent_iter", "observe", "agents", "agent_selection", "rewards"],
)
def test_calls_before_reset_fail_the_same_way(call):
    got = [outcome(lambda: call(wrapped(w))) for w in WRAPPERS]
    assert got[0][0] != "ok"
    assert got[0] == got[1]


def test_step_after_every_agent_left_warns_the_same_way_and_changes_nothing():
    messages = []
    for w in WRAPPERS:
        e = wrapped(w, target=None)
        e.reset(seed=3)
        rng = random.Random(3)
        for _agent in e.agent_iter():
            obs, _r, term, trunc, _info = e.last()
            e.step(None if term or trunc else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        assert e.agents == []
        EnvLogger.flush()
        e.step(0)
        messages.append(list(EnvLogger.mqueue))
        EnvLogger.flush()
        assert e.agents == []
    assert messages[0] == messages[1] and messages[0]


def test_agent_iter_without_step_fails_the_same_way():
    got = []
    for w in WRAPPERS:
        e = wrapped(w)
        e.reset(seed=0)
        it = iter(e.agent_iter())
        next(it)
        got.append(outcome(lambda: next(it)))
    assert got[0][0] == "AssertionError" and got[0] == got[1]


@pytest.mark.parametrize("max_iter", [0, 1, 7])
def test_agent_iter_max_iter_and_every_output_match(max_iter):
    """``agent_iter(max_iter)`` stops after the same turns; every ``last()`` tuple, ``rewards``
    and ``agent_selection`` along a whole episode (an illegal action's penalty included) match."""
    runs = []
    for w in WRAPPERS:
        e = wrapped(w, num_players=3, target=51)
        e.reset(seed=11)
        turns = []
        for agent in e.agent_iter(max_iter):
            turns.append(agent)
            e.step(int(e.last()[0]["action_mask"].argmax()))
        runs.append(turns)
        e.reset(seed=12)
        rng, trace = random.Random(12), []
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc, repr(info)))
            if term or trunc:
                e.step(None)
            elif len(trace) == 40:
                with pytest.warns(UserWarning, match="illegal action"):
                    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
            else:
                e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            trace.append((dict(e.rewards), e.agent_selection))
        runs.append(trace)
    assert len(runs[0]) == max_iter
    assert runs[0] == runs[2] and runs[1] == runs[3]
