"""The library recipes' ``--export PATH`` (CleanRL-style, SB3, Tianshou, TorchRL; RLlib's in
test_recipe_exports_rllib.py, its own environment): a tiny run writes a ``pisti-export`` file
that chooses, on a few hundred real observations (R30: each seat's own), exactly what the
recipe's own evaluation player chooses with the network still in memory, and that
``pisti-benchmark`` plays on the batched engine with no library involved. A path the export
cannot be written to is refused before training, in one line. Each library test needs its
extra (``sb3``, ``tianshou``, ``torchrl``); CI installs them."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from export_support import assert_export_plays_as, catch  # noqa: E402
from helpers import example_module  # noqa: E402
from library_support import one_thread  # noqa: E402,F401  (a fixture)

pytestmark = pytest.mark.usefixtures("one_thread")


def test_cleanrl_export_plays_as_the_trained_agent(tmp_path, monkeypatch):
    recipe = example_module("cleanrl_ppo_vector")
    trained = catch(monkeypatch, recipe, "train", lambda args, result: result[0])
    path = tmp_path / "agents" / "cleanrl.pt"  # a folder that does not exist yet
    recipe.main(["--minutes", "0", "--total-timesteps", "512", "--num-envs", "16", "--num-minibatches", "4",
                 "--eval-deals", "0", "--export", str(path)])
    assert_export_plays_as(path, recipe.AgentPlayer(trained[0]), "cleanrl-ppo", "examples/cleanrl_ppo_vector.py",
                           tmp_path / "report")


def test_sb3_export_plays_as_the_trained_model(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    from pisti_env.integrations.sb3 import PolicySnapshot

    recipe = example_module("sb3_maskable_ppo")
    trained = catch(monkeypatch, recipe, "train", lambda args, result: result)
    path = tmp_path / "sb3.pt"
    recipe.main(["--minutes", "0", "--steps", "512", "--num-envs", "16", "--deals", "2", "--export", str(path)])
    # margins()' player: the policy's most likely legal action (the mask is also an input feature)
    player = PolicySnapshot(trained[0].policy, deterministic=True)
    assert_export_plays_as(path, player, "sb3-maskable-ppo", "examples/sb3_maskable_ppo.py", tmp_path / "report")


def test_tianshou_export_plays_as_the_trained_actor(tmp_path, monkeypatch):
    pytest.importorskip("tianshou")
    from pisti_env.integrations.tianshou_batched import ActorPlayer

    recipe = example_module("tianshou_masked")
    built = catch(monkeypatch, recipe, "build", lambda args, result: result)
    path = tmp_path / "tianshou.pt"
    recipe.main(["--minutes", "0", "--total-steps", "512", "--envs", "16", "--steps-per-env", "8", "--deals", "0",
                 "--export", str(path)])
    assert_export_plays_as(path, ActorPlayer(built[0].policy.actor), "tianshou-ppo", "examples/tianshou_masked.py",
                           tmp_path / "report")


def test_torchrl_export_plays_as_the_trained_actor(tmp_path, monkeypatch):
    pytest.importorskip("torchrl")
    recipe = example_module("torchrl_masked")
    trained = catch(monkeypatch, recipe, "train", lambda args, result: result[0])
    path = tmp_path / "torchrl.pt"
    recipe.main(["--minutes", "0", "--frames", "512", "--num-envs", "16", "--deals", "0", "--export", str(path)])
    assert_export_plays_as(path, recipe.TorchRLPlayer(trained[0]), "torchrl-ppo", "examples/torchrl_masked.py",
                           tmp_path / "report")


RECIPES = {
    "cleanrl_ppo_vector": None,
    "sb3_maskable_ppo": "sb3_contrib",
    "tianshou_masked": "tianshou",
    "torchrl_masked": "torchrl",
}


@pytest.mark.parametrize("name", list(RECIPES))
@pytest.mark.parametrize("where, message", [
    ("a-file/policy.pt", "is not a directory"),  # its folder would sit under a regular file
    ("policy.zip", "ends with .pt (TorchScript) or .onnx"),
])
def test_an_export_path_that_cannot_be_written_is_refused_before_training(name, where, message, tmp_path, capsys):
    if RECIPES[name]:
        pytest.importorskip(RECIPES[name])
    recipe = example_module(name)
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--export", str(tmp_path / where)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--export" in err and message in err and "Traceback" not in err
    assert "trained" not in capsys.readouterr().out
