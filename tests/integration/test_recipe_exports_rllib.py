"""The RLlib recipe's ``--export PATH`` (examples/rllib_ppo_vector.py), as
test_recipe_exports.py checks the other recipes': a tiny run writes a ``pisti-export`` file that
chooses, on a few hundred real observations (R30), exactly what the recipe's evaluation player
(``RLModulePlayer`` on the trained module, in memory) chooses, and that ``pisti-benchmark`` plays
on the batched engine without Ray; a path it cannot write is refused before Ray starts. Needs
the ``rllib`` extra (its own environment: ray pins gymnasium); CI installs it."""

from __future__ import annotations

import pytest

pytest.importorskip("ray.rllib")

from export_support import assert_export_plays_as, catch  # noqa: E402
from helpers import example_module  # noqa: E402
from library_support import one_thread  # noqa: E402,F401  (a fixture)

from pisti_env.integrations.rllib import RLModulePlayer  # noqa: E402


@pytest.mark.usefixtures("one_thread")
def test_rllib_export_plays_as_the_trained_module(tmp_path, monkeypatch, capsys):
    recipe = example_module("rllib_ppo_vector")
    # the module, taken when the recipe exports it (the run stops the algorithm afterwards)
    modules = catch(monkeypatch, recipe, "export", lambda args, result: args[0].get_module())
    path = tmp_path / "rllib.pt"
    recipe.main(["--minutes", "0", "--steps", "512", "--deals", "0", "--env-runners", "0", "--envs-per-runner", "16",
                 "--train-batch-size", "256", "--minibatch-size", "128", "--export", str(path)])
    # its progress from the first iteration on, as every recipe's (test_recipe_progress.py)
    err = capsys.readouterr().err
    assert any(line.startswith("rllib_ppo_vector: ") and " env steps in " in line and " left (to 512 env steps)" in line
               for line in err.splitlines()), err
    assert_export_plays_as(path, RLModulePlayer(modules[0]), "rllib-ppo", "examples/rllib_ppo_vector.py",
                           tmp_path / "report")


def test_an_export_path_that_cannot_be_written_is_refused_before_ray_starts(tmp_path, capsys):
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(SystemExit) as exit_info:
        example_module("rllib_ppo_vector").main(["--export", str(tmp_path / "a-file" / "policy.pt")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--export" in err and "is not a directory" in err and "Traceback" not in err
