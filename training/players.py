"""Players for the harness: scripted baselines by name, trained checkpoints by path.

Every player the harness holds has ``act(view) -> card id`` and ``reset(seed)`` (see
:class:`pisti_env.agents.Player`). A trained policy only needs the smaller :class:`Policy`
interface — ``act(observation) -> card id`` on the environment's observation dict — and is
wrapped by :class:`PolicyPlayer`, which builds that dict from the seat's view.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Protocol, runtime_checkable

from pisti_env.agents import SeatView, agent_names, make_agent, parse_agent_spec
from pisti_env.agents.base import Player
from pisti_env.game import action_to_text

CHECKPOINT_LOADER = "training.load_policy"
# Modules searched for a ``load_policy(path)`` function, after the ``training`` package itself.
CHECKPOINT_MODULES = ("training.load_policy", "training.policy")


@runtime_checkable
class Policy(Protocol):
    """A trained policy: ``act({"observation": float32 vector, "action_mask": int8[52]})``
    returns a card id whose mask entry is 1. ``reset(seed)`` is optional."""

    def act(self, observation: dict[str, Any]) -> int:
        ...


class PolicyPlayer:
    """Adapts a :class:`Policy` to the player interface.

    Args:
        policy: the policy; its ``act`` gets ``view.observation()``.
        name: a label for error messages and reports.

    ``act`` raises ``ValueError`` if the policy returns a card the seat may not play.
    """

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"a policy needs an act(observation) -> int method, got {type(policy).__name__}")
        self.policy = policy
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset(seed)

    def act(self, view: SeatView) -> int:
        legal = view.legal_actions
        action = self.policy.act(view.observation())
        if isinstance(action, bool) or not hasattr(action, "__index__"):
            raise TypeError(f"policy {self.name!r} returned {type(action).__name__} {action!r}; expected an int card id")
        action = int(action)
        if action not in legal:
            raise ValueError(
                f"policy {self.name!r} played illegal action {action}; legal: {legal} "
                f"({', '.join(action_to_text(c) for c in legal)})"
            )
        return action


def is_baseline_spec(spec: str) -> bool:
    """Whether ``spec`` names a registered scripted player (possibly with options)."""
    try:
        parse_agent_spec(spec)
    except ValueError:
        return False
    return True


def load_player(spec: str, seed: int | None = None) -> Player:
    """A player from a spec: a baseline name (``"greedy"``, ``"pimc:n=32"``, see
    :func:`pisti_env.agents.make_agent`) or the path of a trained checkpoint.

    Checkpoints are read by the trainer's ``load_policy(path)`` (``training.load_policy``, or
    the one in ``training.policy``), which returns a :class:`Policy`; until the trainer
    provides it, a path raises ``RuntimeError``.

    Args:
        spec: the player spec.
        seed: seeds the player's randomness (it is reseeded per hand by the harness anyway).

    Raises ``ValueError`` for a spec that is neither a known player nor an existing path.
    """
    if not isinstance(spec, str):
        raise TypeError(f"a player spec must be a string, got {type(spec).__name__}")
    name = spec.partition(":")[0].strip().lower()
    if name in agent_names():
        return make_agent(spec, seed=seed)
    if not os.path.exists(spec):
        raise ValueError(
            f"unknown player {spec!r}: expected one of {agent_names()} (options as 'pimc:n=32') "
            "or the path of a trained checkpoint"
        )
    loader = _checkpoint_loader()
    policy = loader(spec)
    player = PolicyPlayer(policy, name=os.path.basename(os.path.normpath(spec)))
    player.reset(seed)
    return player


def _checkpoint_loader():
    """The trainer's ``load_policy``: an attribute of the ``training`` package, or a function
    of that name in one of :data:`CHECKPOINT_MODULES`."""
    loader = getattr(importlib.import_module("training"), "load_policy", None)
    for name in CHECKPOINT_MODULES:
        if callable(loader):
            break
        try:
            loader = getattr(importlib.import_module(name), "load_policy", None)
        except ModuleNotFoundError as err:
            if err.name != name:
                raise  # the trainer is there but one of its own imports is missing
    if not callable(loader):
        raise RuntimeError(
            f"checkpoint loading needs the trainer ({CHECKPOINT_LOADER}): no load_policy(path) is available yet; "
            f"evaluate the baselines {agent_names()} meanwhile"
        )
    return loader
