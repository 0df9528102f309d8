"""The vector env's next-step autoreset (``PistiVectorEnv(autoreset_mode=AutoresetMode.NEXT_STEP)``,
what RLlib's env runners expect): every game's decisions, observations, masks, rewards and
terminations are those of the default same-step mode, decision for decision; the step after a
game ends only reports its new episode's start (its action ignored, reward 0); the finished
episode's infos come in place, and its rewards add up to its final score difference (R20–R23).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

from pisti_env.game.rewards import side_difference
from pisti_env.envs.vector import PistiVectorEnv

# A deterministic opponent (the lowest legal id): no random draws, so both modes' games stay
# the same whatever the order of the engine's calls.
from helpers import Lowest

SAME, NEXT = AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP
# Tables (R3, R4) and a match (R24: episodes of several hands).
SETTINGS = {
    "2p hand": {"num_players": 2, "target": None},
    "3p hand": {"num_players": 3, "target": None},
    "4p-partners hand": {"num_players": 4, "partnerships": True, "target": None},
    "2p match to 51": {"num_players": 2, "target": 51},
}


def choose(observation: np.ndarray, mask: np.ndarray) -> int:
    """The learner: a legal action that depends on the observation only (so the same in both
    modes when the games are the same), spread over the legal ones."""
    legal = np.flatnonzero(mask)
    return int(legal[int(observation.sum() * 7) % len(legal)])


def play(mode: AutoresetMode, settings: dict, num_envs: int, seat: int | None, episodes: int):
    """Each game's episodes, each a list of (observation, mask, action, reward, terminated)
    per decision; with NEXT_STEP also checks each restart step and each episode's sum."""
    env = PistiVectorEnv(num_envs=num_envs, opponent=Lowest(), seat=seat, autoreset_mode=mode, **settings)
    assert env.metadata["autoreset_mode"] is mode
    observations, _ = env.reset(seed=11)
    done = [[] for _ in range(num_envs)]
    current = [[] for _ in range(num_envs)]
    restarting = np.zeros(num_envs, dtype=bool)
    while min(len(d) for d in done) < episodes:
        obs, masks = observations["observation"], observations["action_mask"]
        actions = np.array([choose(obs[i], masks[i]) for i in range(num_envs)])
        # a restarting game's action is ignored: send an illegal one to show it
        for i in np.flatnonzero(restarting):
            actions[i] = int(np.flatnonzero(masks[i] == 0)[0])
        observations, rewards, terminated, truncated, infos = env.step(actions)
        assert not truncated.any()
        for i in range(num_envs):
            if restarting[i]:
                assert rewards[i] == 0.0 and not terminated[i]
                assert np.array_equal(observations["observation"][i], obs[i])  # the start it was shown
                assert "hand_result" not in infos or not infos["_hand_result"][i]
                continue
            current[i].append((obs[i].copy(), masks[i].copy(), int(actions[i]), float(rewards[i]), bool(terminated[i])))
            if terminated[i]:
                if mode is NEXT:
                    assert "final_info" not in infos and infos["_match_scores"][i]
                    total = sum(step[3] for step in current[i])
                    diff = side_difference(infos["match_scores"][i], int(infos["side"][i]))
                    assert total == pytest.approx(diff, abs=1e-5)
                done[i].append(current[i])
                current[i] = []
        restarting = terminated.copy() if mode is NEXT else restarting
    return [d[:episodes] for d in done]


def same(a, b) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) and x[2:] == y[2:] for x, y in zip(a, b)
    )


@pytest.mark.parametrize("name", list(SETTINGS))
@pytest.mark.parametrize("num_envs, seat", [(1, None), (5, 0)], ids=["1-game-drawn-seats", "5-games-seat-0"])
def test_next_step_plays_the_same_decisions_as_same_step(name, num_envs, seat):
    episodes = 2 if SETTINGS[name]["target"] else 4
    same_step = play(SAME, SETTINGS[name], num_envs, seat, episodes)
    next_step = play(NEXT, SETTINGS[name], num_envs, seat, episodes)
    for game in range(num_envs):
        for a, b in zip(same_step[game], next_step[game], strict=True):
            assert same(a, b)


def test_autoreset_mode_is_checked():
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        PistiVectorEnv(num_envs=2, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="autoreset_mode must be one of"):
        PistiVectorEnv(num_envs=2, autoreset_mode=AutoresetMode.DISABLED)
    assert PistiVectorEnv(num_envs=2, autoreset_mode="NextStep").autoreset_mode is NEXT
    assert PistiVectorEnv(num_envs=2).metadata["autoreset_mode"] is SAME


def test_reset_forgets_a_pending_restart():
    """After a reset, no game is restarting: every action counts (an illegal one raises)."""
    env = PistiVectorEnv(num_envs=1, opponent=Lowest(), autoreset_mode=NEXT, num_players=2, target=None)
    observations, _ = env.reset(seed=0)
    terminated = np.zeros(1, dtype=bool)
    while not terminated[0]:
        action = choose(observations["observation"][0], observations["action_mask"][0])
        observations, _, terminated, _, _ = env.step([action])
    observations, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(observations["action_mask"][0] == 0)[0])
    with pytest.raises(ValueError):
        env.step([illegal])
