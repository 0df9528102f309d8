"""The SB3 self-play recipe (examples/sb3_selfplay.py) on a tiny budget, on both doors: it runs
to the end with snapshots of the learner joining the pool and playing, every action
MaskablePPO took was legal (the snapshots' too: the engines refuse an illegal one), the returns
it saw are the hands' score differences, and the evaluation runs. Needs the ``sb3`` extra
(``pip install -e ".[sb3]"``); CI installs it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("sb3_contrib")

from helpers import MaskReferee, example_module  # noqa: E402
from sb3_support import VecReferee  # noqa: E402

from pisti_env.integrations.sb3 import PolicySnapshot, SnapshotCallback  # noqa: E402


@pytest.fixture
def recipe():
    return example_module("sb3_selfplay")  # it imports its sibling sb3_maskable_ppo.py


def test_batched_door_trains_legally_against_its_snapshots(recipe):
    venv, pool = recipe.make_selfplay_vec_env(num_envs=64, pool_size=2)
    env = VecReferee(venv)
    model = recipe.train(env, steps=64 * 32 * 4, seed=3, callback=SnapshotCallback(pool, every=64 * 32), batch_size=512, n_epochs=1)
    assert pool.added >= 3 and len(pool.members) == 2
    assert all(isinstance(m, PolicySnapshot) for m in pool.members)
    assert env.illegal == 0
    assert len(env.episodes) >= 256 and env.seats == {0, 1}
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-4)
    results = example_module("sb3_maskable_ppo").margins(model, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


def test_step_door_trains_legally_against_its_snapshots(recipe):
    env, pool = recipe.make_env(pool_size=2, seed=3)
    referee = MaskReferee(env, game_of=lambda env: env.unwrapped.aec.unwrapped.game)
    callback = recipe.StepSnapshotCallback(pool, every=128)
    recipe.train(referee, steps=640, seed=3, callback=callback, n_steps=128, batch_size=64, n_epochs=1)
    assert pool.added >= 4 and len(pool.snapshots) == 2
    assert all(isinstance(p, PolicySnapshot) and not p.deterministic for p in pool.snapshots)
    assert referee.illegal == 0
    assert len(referee.episodes) >= 15 and referee.seats == {0, 1}
    for seen, final in referee.episodes:
        assert seen == pytest.approx(final, abs=1e-9)


@pytest.mark.parametrize("door", ["batched", "step"])
def test_main_runs_end_to_end(recipe, capsys, door):
    """The command line on either door, snapshots joining every 128 steps."""
    common = ["--door", door, "--steps", "512", "--snapshot-every", "128", "--pool", "2", "--deals", "2"]
    extra = ["--num-envs", "16"] if door == "batched" else ["--envs", "2", "--rollout", "256"]
    recipe.main(common + extra)
    out = capsys.readouterr().out
    assert "trained 512 steps" in out and "4 snapshots" in out
    assert "vs random:" in out and "vs greedy:" in out
