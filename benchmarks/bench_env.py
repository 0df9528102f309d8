"""Decisions per second of the Pişti engine and the AEC env under random legal play.

Prints, measured in the same run so the ratios survive a noisy machine:

* a do-nothing AEC env (the floor PettingZoo's API itself costs) behind ``OrderEnforcingWrapper``
  alone and behind the full classic wrapper chain;
* ``pisti_env.env()`` and ``pisti_env.raw_env()`` (agent_iter / last / step, observations and
  masks included, the action drawn uniformly from the mask);
* the bare engine (``Game.legal_actions`` / ``Game.step``, no observations).

Usage: ``python benchmarks/bench_env.py [--seconds 3] [--players 2]``
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Callable

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

import pisti_env
from pisti_env import Game, make_settings

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


def aec_decisions_per_second(make_env: Callable[[], AECEnv], seconds: float, seed: int = 0) -> float:
    """Random legal play through agent_iter/last/step; counts decisions (steps of live agents)."""
    env = make_env()
    rng = random.Random(seed)
    decisions = 0
    episode = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + episode)
        episode += 1
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def engine_decisions_per_second(num_players: int, seconds: float, seed: int = 0) -> float:
    settings = make_settings(num_players=num_players, target=None)
    rng = random.Random(seed)
    decisions = 0
    game_index = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game = Game(settings, seed=seed + game_index)
        game_index += 1
        while not game.done:
            game.step(rng.choice(game.legal_actions()))
            decisions += 1
    return decisions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args()
    n, t = args.players, args.seconds
    kw = dict(num_players=n, target=None)
    episode = {2: 48, 3: 48, 4: 48}.get(n, 48)

    rows = [
        ("do-nothing AEC env, OrderEnforcingWrapper only",
         aec_decisions_per_second(lambda: wrappers.OrderEnforcingWrapper(DoNothingEnv(n, episode)), t)),
        ("do-nothing AEC env, full classic wrapper chain",
         aec_decisions_per_second(lambda: wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
             wrappers.TerminateIllegalWrapper(DoNothingEnv(n, episode), -1.0))), t)),
        ("pisti_env.env()      (target 30,000)", aec_decisions_per_second(lambda: pisti_env.env(**kw), t)),
        ("pisti_env.raw_env()  (target 50,000)", aec_decisions_per_second(lambda: pisti_env.raw_env(**kw), t)),
        ("engine alone         (target 300,000)", engine_decisions_per_second(n, t)),
    ]
    floor = rows[0][1]
    print(f"Pişti decisions per second, {n} players, random legal play, {t:g} s each")
    print(f"{'what':<50} {'decisions/s':>12} {'vs floor':>9}")
    for name, rate in rows:
        print(f"{name:<50} {rate:>12,.0f} {rate / floor:>8.2f}x")


if __name__ == "__main__":
    main()
