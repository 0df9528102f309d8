"""Every training recipe in examples/ shows its progress while it trains, as pisti-train does:
after its first update a line on stderr with the steps so far, their pace and the time left
(training.harness.recipes.Progress). Each recipe runs from its command line on a tiny budget
of a few updates; a recipe whose library is missing is skipped (CI installs them; the RLlib
recipes' line is checked in test_recipe_exports_rllib.py, in RLlib's own environment)."""

from __future__ import annotations

import importlib.util
import re

import pytest

from helpers import example_module

pytest.importorskip("torch")

# recipe, the library it needs, its command line (a few updates, no evaluation), what a step counts
RUNS = [
    ("cleanrl_ppo_vector", "torch", ["--minutes", "0", "--total-timesteps", "1024", "--num-envs", "16", "--num-steps",
                                     "16", "--num-minibatches", "4", "--eval-deals", "0", "--log-every", "0"], "steps"),
    ("sb3_maskable_ppo", "sb3_contrib", ["--minutes", "0", "--steps", "2048", "--num-envs", "16", "--deals", "0"],
     "steps"),
    ("sb3_selfplay", "sb3_contrib", ["--minutes", "0", "--steps", "2048", "--num-envs", "16", "--deals", "0"], "steps"),
    ("tianshou_masked", "tianshou", ["--minutes", "0", "--total-steps", "1024", "--envs", "16", "--steps-per-env", "16",
                                     "--minibatches", "4", "--deals", "0", "--log-every", "0"], "steps"),
    ("tianshou_pettingzoo_selfplay", "tianshou", ["--steps", "400", "--envs", "2", "--hands", "4", "--deals", "0"],
     "steps"),
    ("torchrl_masked", "torchrl", ["--minutes", "0", "--frames", "1024", "--num-envs", "16", "--num-steps", "16",
                                   "--num-minibatches", "4", "--deals", "0"], "steps"),
    ("torchrl_selfplay", "torchrl", ["--minutes", "0", "--frames", "1024", "--num-envs", "16", "--steps-per-batch", "16",
                                     "--deals", "0"], "plays"),
    ("torchrl_pettingzoo", "torchrl", ["--frames", "480", "--frames-per-batch", "240", "--envs", "1", "--deals", "0"],
     "plays"),
]


@pytest.mark.parametrize("name, library, argv, unit", RUNS, ids=[run[0] for run in RUNS])
def test_a_recipe_prints_its_progress_and_the_time_left_from_its_first_update(name, library, argv, unit, capsys):
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    example_module(name).main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith(f"{name}: ")]
    assert lines, err
    line = re.compile(rf"{name}: [\d,]+ {unit} in \d+ s \([\d,]+ {unit}/s\); about (\d+ min )?\d+ s left \(to [\d,]+ {unit}\)")
    assert line.fullmatch(lines[0]), lines


def test_the_openspiel_recipe_shows_its_evaluation_s_progress(capsys):
    pytest.importorskip("pyspiel")
    example_module("openspiel_ismcts").main(["--n", "4", "--deals", "2"])
    err = capsys.readouterr().err
    assert err.count("2/2") >= 2, err  # a bar for each baseline's deals, with tqdm's time left
