"""`pisti-play` against a player that fails (issue 48): an opponent playing an illegal card (an
exported file, any player) ended in a traceback and left the replay without its `end` record.
Now the game ends with one line naming the player, and the replay is closed with an `end`
record marking it unfinished and why, which `pisti-replay` reads."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

# The greedy player patched, in the real console script's process, to answer an illegal card:
# a card id it does not hold (an opponent that broke its own rules).
ILLEGAL_GREEDY = """
from pisti_env.agents import greedy


def _illegal(self, view):
    held = set(view.legal_actions)
    return next(card for card in range(52) if card not in held)


greedy.GreedyAgent.act = _illegal
"""

CRASHING_GREEDY = """
from pisti_env.agents import greedy


def _crash(self, view):
    raise RuntimeError("the exported graph failed")


greedy.GreedyAgent.act = _crash
"""


def play(tmp_path: Path, patch: str) -> tuple[subprocess.CompletedProcess, Path]:
    (tmp_path / "patch").mkdir()
    (tmp_path / "patch" / "sitecustomize.py").write_text(patch)
    replay = tmp_path / "game.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path / "patch"), os.environ.get("PYTHONPATH")])),
               NO_COLOR="1")
    done = subprocess.run(
        ["pisti-play", "--opponent", "greedy", "--seed", "7", "--delay", "0", "--target", "0", "--no-color",
         "--replay-out", str(replay)],
        input="1\n" * 60, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )
    return done, replay


@pytest.mark.parametrize("patch, words", [(ILLEGAL_GREEDY, "played an action the game refuses: illegal action"),
                                          (CRASHING_GREEDY, "RuntimeError: the exported graph failed")],
                         ids=["illegal-card", "player-error"])
def test_an_opponent_that_fails_ends_the_game_in_one_line_with_the_replay_closed(tmp_path, patch, words):
    done, replay = play(tmp_path, patch)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pisti-play: error: seat 1 (greedy (1))"), done.stderr
    assert words in lines[0] and "Traceback" not in done.stdout + done.stderr, lines
    records = [json.loads(line) for line in replay.read_text(encoding="utf-8").splitlines()]
    end = records[-1]
    assert end["type"] == "end" and end["complete"] is False and end["reason"].startswith("seat 1 (greedy (1))")
    shown = subprocess.run(["pisti-replay", str(replay), "--quiet", "--no-color"], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "left unfinished" in shown.stdout and "seat 1 (greedy (1))" in shown.stdout
