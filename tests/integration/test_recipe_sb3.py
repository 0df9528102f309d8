"""The SB3 recipe (examples/sb3_maskable_ppo.py) on a tiny budget: it runs to the end, every
action MaskablePPO took was legal, and the rewards it saw add up to the hands' score
differences. Needs the ``sb3`` extra (``pip install -e ".[sb3]"``); CI installs it."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import gymnasium
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "sb3_maskable_ppo.py"


def load_recipe():
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Referee(gymnasium.Wrapper):
    """Between the library and the env: checks each action against the mask the library was
    shown, and per finished episode the return it saw against the hand's final difference."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.illegal, self.episodes, self._return, self._mask = 0, [], 0.0, None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._return, self._mask = 0.0, obs["action_mask"].copy()
        return obs, info

    def step(self, action):
        self.illegal += not self._mask[int(action)]
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        self._mask = obs["action_mask"].copy()
        if terminated or truncated:
            scores, side = self.env.unwrapped.game.match_scores, info["side"]
            self.episodes.append((self._return, scores[side] - scores[1 - side]))
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def test_sb3_maskable_ppo_recipe_trains_legally_and_its_returns_are_the_score_differences():
    recipe = load_recipe()
    env = Referee(recipe.make_env("greedy", seed=3))
    model = recipe.train(env, steps=512, seed=3, n_steps=128, batch_size=64, n_epochs=1)
    assert env.illegal == 0
    assert len(env.episodes) >= 10
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-9)
    results = recipe.margins(model, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())
