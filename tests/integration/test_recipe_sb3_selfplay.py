"""The SB3 self-play recipe (examples/sb3_selfplay.py) on a tiny budget: it runs to the end with
snapshots of the learner joining the pool and playing, every action MaskablePPO took was
legal (the snapshots' too: SelfPlayEnv refuses an illegal one), the rewards it saw add up to
the hands' score differences, and the evaluation runs. Needs the ``sb3`` extra
(``pip install -e ".[sb3]"``); CI installs it."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from helpers import MaskReferee, example_module  # noqa: E402

@pytest.fixture
def recipe():
    return example_module("sb3_selfplay")  # it imports its sibling sb3_maskable_ppo.py



def test_sb3_selfplay_recipe_trains_legally_against_its_snapshots_and_returns_are_score_differences(recipe):
    env, pool = recipe.make_env(pool_size=2, seed=3)
    referee = MaskReferee(env, game_of=lambda env: env.unwrapped.aec.unwrapped.game)
    callback = recipe.SnapshotCallback(pool, every=128)
    model = recipe.train(referee, steps=640, seed=3, callback=callback, n_steps=128, batch_size=64, n_epochs=1)
    assert pool.added >= 4 and len(pool.snapshots) == 2
    assert all(isinstance(p, recipe.ModelPlayer) for p in pool.snapshots)
    assert referee.illegal == 0
    assert len(referee.episodes) >= 15 and referee.seats == {0, 1}
    for seen, final in referee.episodes:
        assert seen == pytest.approx(final, abs=1e-9)
    results = example_module("sb3_maskable_ppo").margins(model, deals=4, seed=1)  # what report() prints
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


def test_snapshot_is_frozen(recipe):
    env, pool = recipe.make_env(pool_size=1, seed=0)
    model = recipe.train(env, steps=64, seed=0, n_steps=64, batch_size=32, n_epochs=1)
    frozen = recipe.snapshot(model)
    before = [p.detach().clone() for p in frozen.model.parameters()]
    model.learn(64)
    after = [p.detach() for p in frozen.model.parameters()]
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(before, after))
    live = [p.detach() for p in model.policy.parameters()]
    assert not all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(before, live))  # the learner moved on
    assert frozen.deterministic is False


def test_main_runs_end_to_end_on_a_vector_env(recipe, capsys):
    """The command line: 2 envs in SB3's DummyVecEnv, each with its own pool fed by the callback."""
    recipe.main(["--steps", "512", "--envs", "2", "--n-steps", "256", "--snapshot-every", "128", "--pool", "2", "--deals", "2"])
    out = capsys.readouterr().out
    assert "trained 512 steps" in out and "4 snapshots" in out
    assert "vs random:" in out and "vs greedy:" in out
