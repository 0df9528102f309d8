"""The wrapper of ``pisti_v0.env()``: PettingZoo's ``OrderEnforcingWrapper`` with its hot path
made direct (issue 17).

PettingZoo's wrapper reaches every attribute of the wrapped env (``agents``,
``agent_selection``, ``rewards``, ...) through ``__getattr__``: each read first fails on the
wrapper and then goes through two Python functions. ``last()`` makes five such reads,
``agent_iter`` two a turn and ``step()`` one, and together they cost more than a do-nothing
env's whole turn. `FastOrderEnforcingWrapper` is an ``OrderEnforcingWrapper`` (a
subclass: ``isinstance`` checks and every other method are PettingZoo's) whose ``last()``,
``step()`` and ``agent_iter()`` read the wrapped env directly. The checks, errors and warnings
are PettingZoo's own, word for word:

* ``last()`` before ``reset()``: ``AttributeError("agent_selection cannot be accessed before
  reset")``, as PettingZoo's ``last()`` raises when it reads ``agent_selection``;
* ``step()`` before ``reset()``: ``EnvLogger.error_step_before_reset()``; after every agent has
  left: ``EnvLogger.warn_step_after_terminated_truncated()`` and nothing else;
* ``agent_iter()`` before ``reset()``: ``EnvLogger.error_agent_iter_before_reset()``; a turn of
  the loop without ``step()``: the same ``AssertionError`` as PettingZoo's iterator.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator


class FastOrderEnforcingWrapper(OrderEnforcingWrapper):
    """``OrderEnforcingWrapper`` whose per-turn calls read the wrapped env directly.

    Args:
        env: the AEC env to wrap (any ``AECEnv``; ``pisti_v0.env()`` wraps a ``raw_env``).
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The wrapped env's ``last(observe)``; the ``AttributeError`` of PettingZoo's wrapper
        before the first ``reset()``."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        """The wrapped env's ``step(action)``, with PettingZoo's order checks."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        """PettingZoo's ``agent_iter`` loop, reading the wrapped env's agents directly."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Iterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo's wrapper prints itself: the env's name


class _Iterable(AECOrderEnforcingIterable):
    def __iter__(self) -> AECOrderEnforcingIterator:
        return _Iterator(self.env, self.max_iter)


class _Iterator(AECOrderEnforcingIterator):
    """PettingZoo's ``AECOrderEnforcingIterator.__next__`` (and ``AECIterator``'s under it) in one
    function, reading ``agents`` and ``agent_selection`` from the wrapped env."""

    def __next__(self) -> Any:
        wrapper = self.env
        env = wrapper.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = env.agent_selection
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return agent
