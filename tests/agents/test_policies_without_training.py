"""Playing a trained policy needs ``pisti_env`` alone (``pisti_env.policies``): in a process
where the ``training`` package cannot be imported, ``make_player`` plays the shipped policies by
name and a checkpoint by its path, and ``import pisti_env`` imports no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Run from the checkout's root, where `training` would import: it is blocked, not merely absent.
WITHOUT_TRAINING = r"""
import sys
sys.modules["training"] = None  # any import of training or of a submodule now raises ImportError

import pisti_env
assert "torch" not in sys.modules, "import pisti_env imported torch"

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_player
from pisti_env.policies import shipped_policy_path

try:
    import training.trainer  # noqa: F401
except ImportError:
    pass
else:
    raise AssertionError("training was not blocked")


def play(spec, settings, hands):
    player = make_player(spec, seed=1, settings=settings)
    for seed in range(hands):
        game = Game(settings, seed=seed)
        player.reset(seed)
        while not game.done and game.hands_completed == 0:
            view = SeatView(game, game.current_seat)
            action = player.act(view)
            assert action in view.legal_actions, (spec, action)
            game.step(action)
        assert game.hands_completed == 1, spec
    return player


two = make_settings(num_players=2)
play("pisti-2p", two, 3)
path = shipped_policy_path("pisti-2p")
assert type(play(path, two, 2)).__name__ == "CheckpointPlayer"
assert play(path + ":play=sample", two, 2).play == "sample"
play("pisti-bluff", make_settings(num_players=2, bluff=True), 2)  # R29's solved claims, in pisti_env too
assert "torch" in sys.modules
leaked = sorted(name for name, module in sys.modules.items() if name.split(".")[0] == "training" and module)
assert not leaked, leaked
print("played without training")
"""


def test_shipped_policies_and_checkpoint_paths_play_without_the_training_package():
    result = subprocess.run([sys.executable, "-c", WITHOUT_TRAINING], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "played without training" in result.stdout
