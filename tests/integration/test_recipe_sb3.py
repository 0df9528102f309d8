"""The SB3 recipe (examples/sb3_maskable_ppo.py) on a tiny budget, on both doors: it runs to
the end, every action MaskablePPO took was legal against the mask it was shown, and the returns
it saw are the hands' score differences. Needs the ``sb3`` extra (``pip install -e ".[sb3]"``);
CI installs it."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("sb3_contrib")

from helpers import MaskReferee, example_module  # noqa: E402
from sb3_support import VecReferee  # noqa: E402


@pytest.fixture
def recipe():
    return example_module("sb3_maskable_ppo")


def test_batched_door_trains_legally_and_its_returns_are_the_score_differences(recipe):
    env = VecReferee(recipe.make_vec_env(num_envs=64))
    model = recipe.train(env, steps=64 * 32 * 2, seed=3, batch_size=512, n_epochs=1)
    assert model.num_timesteps == 64 * 32 * 2
    assert env.illegal == 0
    assert len(env.episodes) >= 128 and env.seats == {0, 1}
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-4)
    results = recipe.margins(model, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


def test_step_door_trains_legally_and_its_returns_are_the_score_differences(recipe):
    env = MaskReferee(recipe.make_env("greedy", seed=3), game_of=lambda env: env.unwrapped.game)
    recipe.train(env, steps=512, seed=3, n_steps=128, batch_size=64, n_epochs=1)
    assert env.illegal == 0
    assert len(env.episodes) >= 10
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-9)


def test_main_runs_with_a_time_budget(recipe, capsys):
    """The command line: a wall-clock budget ends training (long before --steps)."""
    recipe.main(["--minutes", "0.002", "--num-envs", "32", "--deals", "2"])
    out = capsys.readouterr().out
    trained = int(out.split("trained ")[1].split(" steps")[0].replace(",", ""))
    assert 0 < trained < 100_000_000
    assert "vs random:" in out and "vs greedy:" in out


def test_deals_0_skips_the_evaluation_and_a_negative_count_is_refused(recipe, capsys):
    """``--deals`` is the evaluation's deal count, 0 meaning none, as in every recipe."""
    recipe.main(["--minutes", "0", "--steps", "256", "--num-envs", "16", "--deals", "0"])
    out = capsys.readouterr().out
    assert "trained " in out and "vs greedy:" not in out
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--minutes", "0", "--steps", "256", "--deals", "-1"])
    assert exit_info.value.code == 2 and "--deals must be at least 0" in capsys.readouterr().err
