"""The SB3 recipe (examples/sb3_maskable_ppo.py) on a tiny budget: it runs to the end, every
action MaskablePPO took was legal, and the rewards it saw add up to the hands' score
differences. Needs the ``sb3`` extra (``pip install -e ".[sb3]"``); CI installs it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("sb3_contrib")

from helpers import MaskReferee, example_module  # noqa: E402


def test_sb3_maskable_ppo_recipe_trains_legally_and_its_returns_are_the_score_differences():
    recipe = example_module("sb3_maskable_ppo")
    env = MaskReferee(recipe.make_env("greedy", seed=3), game_of=lambda env: env.unwrapped.game)
    model = recipe.train(env, steps=512, seed=3, n_steps=128, batch_size=64, n_epochs=1)
    assert env.illegal == 0
    assert len(env.episodes) >= 10
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-9)
    results = recipe.margins(model, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())
