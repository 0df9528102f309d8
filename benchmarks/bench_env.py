"""Decisions per second of the Pişti engine and the AEC env under random legal play.

Prints, measured in the same run so the ratios survive a noisy machine:

* a do-nothing AEC env (the floor PettingZoo's API itself costs: same spaces, a cached
  observation, no game) bare and behind PettingZoo's ``OrderEnforcingWrapper``, and for
  reference behind ``env()``'s own wrapper (``FastOrderEnforcingWrapper``, the same checks
  without ``__getattr__`` on the hot path) and behind the full classic wrapper chain;
* ``pisti_env.env()`` and ``pisti_env.raw_env()`` (agent_iter / last / step, observations and
  masks included, the action drawn uniformly from the mask);
* the bare engine (``Game.legal_actions`` / ``Game.step``, no observations);
* issue 17's two ratios: ``env()`` / do-nothing behind ``OrderEnforcingWrapper`` (target
  >= 0.6) and ``raw_env()`` / bare do-nothing (target >= 0.5); then, for reference, ``env()``
  / do-nothing behind the same wrapper as ``env()``.

The contenders take turns in short slices (``--rounds`` rounds of ``--seconds / --rounds``
each), so a burst of load elsewhere on the machine hits them alike; each figure is the total
decisions over the total time of its slices.

Usage: ``python benchmarks/bench_env.py [--seconds 3] [--rounds 10] [--players 2] [--profile]``
(``--profile`` prints cProfile's top functions of ``raw_env()``'s loop instead).
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.envs.order_enforcing import FastOrderEnforcingWrapper

HAND_DECISIONS = 48  # a 2-player hand: 52 - 4 table cards


class DoNothingEnv(AECEnv):
    """The cheapest conforming AEC env: same spaces as pisti_v0, no game, a cached observation."""

    metadata = {"name": "do_nothing_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, num_players: int = 2, episode_length: int = HAND_DECISIONS) -> None:
        super().__init__()
        template = pisti_env.raw_env(num_players=num_players)
        self.possible_agents = list(template.possible_agents)
        self.observation_spaces = template.observation_spaces
        self.action_spaces = template.action_spaces
        size = template.encoder.layout.size
        self._obs = {"observation": np.zeros(size, np.float32), "action_mask": np.ones(52, np.int8)}
        self.episode_length = episode_length

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        return self._obs

    def reset(self, seed=None, options=None):
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._t = 0

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._t += 1
        if self._t >= self.episode_length:
            self.terminations = {a: True for a in self.agents}
        i = self.possible_agents.index(agent)
        self.agent_selection = self.possible_agents[(i + 1) % len(self.possible_agents)]
        self._accumulate_rewards()


class Loop:
    """Random legal play, resumable in slices: counts decisions (steps of live agents) and the
    time spent, whole episodes at a time. Subclasses play one seeded episode in ``episode``."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.episodes = 0
        self.decisions = 0
        self.elapsed = 0.0

    def episode(self, seed: int) -> int:
        """Play one episode from ``seed``; returns its decisions."""
        raise NotImplementedError

    def run(self, seconds: float) -> None:
        """Play whole episodes until ``seconds`` have passed."""
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            self.decisions += self.episode(self.seed + self.episodes)
            self.episodes += 1
        self.elapsed += time.perf_counter() - start

    @property
    def rate(self) -> float:
        return self.decisions / self.elapsed


class AecLoop(Loop):
    """agent_iter / last / step, the action drawn uniformly from the mask."""

    def __init__(self, make_env: Callable[[], AECEnv], seed: int = 0) -> None:
        super().__init__(seed)
        self.env = make_env()

    def episode(self, seed: int) -> int:
        env, flatnonzero, choice = self.env, np.flatnonzero, self.rng.choice
        decisions = 0
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(choice(flatnonzero(obs["action_mask"]).tolist()))
            decisions += 1
        return decisions


class EngineLoop(Loop):
    """The bare engine: ``Game.legal_actions`` / ``Game.step``."""

    def __init__(self, num_players: int, seed: int = 0) -> None:
        super().__init__(seed)
        self.settings = make_settings(num_players=num_players, target=None)

    def episode(self, seed: int) -> int:
        choice = self.rng.choice
        decisions = 0
        game = Game(self.settings, seed=seed)
        while not game.done:
            game.step(choice(game.legal_actions()))
            decisions += 1
        return decisions


def profile_raw_env(num_players: int, seconds: float) -> None:
    """cProfile of ``raw_env()``'s loop: the functions that take the most time of their own."""
    import cProfile
    import pstats

    loop = AecLoop(lambda: pisti_env.raw_env(num_players=num_players, target=None))
    profiler = cProfile.Profile()
    profiler.runcall(loop.run, seconds)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per contender, all rounds together")
    parser.add_argument("--rounds", type=int, default=10, help="slices each contender's time is cut into")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="profile raw_env()'s loop instead")
    args = parser.parse_args()
    n, t = args.players, args.seconds
    if args.profile:
        profile_raw_env(n, t)
        return
    kw = dict(num_players=n, target=None)
    episode = HAND_DECISIONS

    loops = {
        "do-nothing AEC env, bare": AecLoop(lambda: DoNothingEnv(n, episode)),
        "do-nothing AEC env, OrderEnforcingWrapper": AecLoop(
            lambda: wrappers.OrderEnforcingWrapper(DoNothingEnv(n, episode))),
        "do-nothing AEC env, FastOrderEnforcingWrapper": AecLoop(
            lambda: FastOrderEnforcingWrapper(DoNothingEnv(n, episode))),
        "do-nothing AEC env, full classic wrapper chain": AecLoop(
            lambda: wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
                wrappers.TerminateIllegalWrapper(DoNothingEnv(n, episode), -1.0)))),
        "pisti_env.env()": AecLoop(lambda: pisti_env.env(**kw)),
        "pisti_env.raw_env()": AecLoop(lambda: pisti_env.raw_env(**kw)),
        "engine alone": EngineLoop(n),
    }
    for _ in range(args.rounds):
        for loop in loops.values():
            loop.run(t / args.rounds)
    print(f"Pişti decisions per second, {n} players, random legal play, {t:g} s each in {args.rounds} slices")
    print(f"{'what':<50} {'decisions/s':>12}")
    for name, loop in loops.items():
        print(f"{name:<50} {loop.rate:>12,.0f}")
    rate = {name: loop.rate for name, loop in loops.items()}
    wrapped = rate["pisti_env.env()"] / rate["do-nothing AEC env, OrderEnforcingWrapper"]
    raw = rate["pisti_env.raw_env()"] / rate["do-nothing AEC env, bare"]
    print(f"ratio env()     / do-nothing behind OrderEnforcingWrapper: {wrapped:.2f}  (issue 17 target >= 0.60)")
    print(f"ratio raw_env() / do-nothing bare:                         {raw:.2f}  (issue 17 target >= 0.50)")
    same = rate["pisti_env.env()"] / rate["do-nothing AEC env, FastOrderEnforcingWrapper"]
    print(f"(for reference: env() / do-nothing behind env()'s own FastOrderEnforcingWrapper: {same:.2f})")


if __name__ == "__main__":
    main()
