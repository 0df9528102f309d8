"""Shared by the RL-library integration tests (a support module, not a test module): a fixture
that keeps torch on one thread, and the check that a library policy's harness player plays what
the library's policy itself would. Needs torch; only test modules that need it import this."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView


@pytest.fixture
def one_thread():
    """Tiny networks on a shared 2-core machine: torch's thread pool only adds contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def assert_player_follows(player: Any, expected: Callable[[dict], int], seed: int = 4) -> None:
    """``player`` plays every seat of one 2-player single hand (dealt by ``seed``); at each
    decision its action must be ``expected(observation)`` (the library policy's own
    deterministic choice for that seat's observation, R30) and legal under the mask."""
    game = Game(make_settings(num_players=2, target=None), seed=seed)
    while not game.done:
        observation = SeatView(game, game.turn).observation()
        action = player.act(SeatView(game, game.turn))
        assert action == expected(observation) and observation["action_mask"][action] == 1
        game.step(action)
