"""Every file the project writes goes through one atomic writer, `pisti_env.util.atomic.write_atomic`
(issue 48): its temporary is created exclusively under a fresh name beside the target, so a
link planted at a fixed temporary name (`OUT.tmp`) is never followed; a write that fails leaves
no temporary and names the file (a lone surrogate shown escaped); every written file has the
mode of a new file (0644 under umask 022), exports included. `pisti-replay --html` pages are
bounded: a choice of games over the page's limit is refused in one line naming `--game`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import recorded_random_game


def write_replay(path: Path, seeds, names=None) -> Path:
    lines = []
    for seed in seeds:
        records = recorded_random_game(seed, target=None)
        if names is not None:
            records[0]["meta"] = {"names": names}
        lines += [json.dumps(r) + "\n" for r in records]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def replay_cli(*args: str) -> subprocess.CompletedProcess:
    """The real `pisti-replay` console script (its output read as bytes: names may not be UTF-8)."""
    return subprocess.run(["pisti-replay", *args], capture_output=True, timeout=120)


def files_under(root: Path) -> dict[str, str]:
    """Every entry under `root`, links not followed: a file's bytes, a link's target."""
    found = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        found[key] = f"link -> {os.readlink(path)}" if path.is_symlink() else (
            "directory" if path.is_dir() else path.read_bytes().hex())
    return found


def assert_one_line_error(done: subprocess.CompletedProcess, prog: str, words: str) -> str:
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error: ") and "Traceback" not in err, err
    assert words in err, err
    return err


# ------------------------------------------------------------------ the replay page
def test_html_never_writes_through_a_link_at_a_temporary_name(tmp_path):
    """A link planted at `OUT.tmp` (the old fixed temporary name) pointing at a victim file:
    the page is written, the victim and the link are left exactly as they were."""
    replay = write_replay(tmp_path / "games.jsonl", [3])
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    page = tmp_path / "page.html"
    (tmp_path / "page.html.tmp").symlink_to(victim)
    done = replay_cli(str(replay), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"
    assert os.readlink(tmp_path / "page.html.tmp") == str(victim)
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_html_with_a_lone_surrogate_leaves_no_temporary(tmp_path):
    """A replay whose names hold a lone surrogate (JSON allows one) left a 0-byte `OUT.tmp` and
    an error naming no file: the page is now written, the name shown as U+FFFD."""
    replay = write_replay(tmp_path / "games.jsonl", [3], names=["a\udcff", "b"])
    page = tmp_path / "page.html"
    done = replay_cli(str(replay), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert "a\ufffd" in page.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.jsonl", "page.html"]


def test_html_page_size_is_bounded_and_games_are_chosen_with_game(tmp_path):
    """A file of more steps than a page holds is refused before anything is drawn or written,
    naming the limit and `--game`; a range of games is written."""
    from pisti_env.terminal.replay_html import MAX_PAGE_FRAMES

    games = MAX_PAGE_FRAMES // 40 + 5  # each single-hand random game has 40+ steps
    replay = write_replay(tmp_path / "games.jsonl", range(games))
    page = tmp_path / "page.html"
    before = files_under(tmp_path)
    done = replay_cli(str(replay), "--html", str(page))
    assert_one_line_error(done, "pisti-replay", f"at most {MAX_PAGE_FRAMES} steps")
    assert "--game A-B" in done.stderr.decode()
    assert files_under(tmp_path) == before
    done = replay_cli(str(replay), "--html", str(page), "--game", "2-4")
    assert done.returncode == 0, done.stderr
    assert page.read_text(encoding="utf-8").count('class="game"') == 3
    help_text = " ".join(replay_cli("--help").stdout.decode().split())
    assert f"a page holds at most {MAX_PAGE_FRAMES} steps" in help_text and "K|A-B" in help_text


# ------------------------------------------------------------------ the shared writer
@pytest.mark.parametrize("module", ["pisti_env.util.atomic", "training.trainer.atomic"])
def test_a_failed_write_leaves_no_temporary_and_names_the_file(tmp_path, module):
    """However a write fails (an OSError, content the encoding refuses), the target is left as
    it was, no temporary stays, and the error is an OSError naming the target, escaped. The
    checkpoints' writer is the same one."""
    import importlib

    write_atomic = importlib.import_module(module).write_atomic
    target = tmp_path / "out\udcff.html"

    def fails(tmp: str) -> None:
        Path(tmp).write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as error:
        write_atomic(target, fails)
    assert "out\\udcff.html" in str(error.value) and ".tmp-" not in str(error.value)
    assert os.listdir(tmp_path) == []

    def unencodable(tmp: str) -> None:
        Path(tmp).write_text("a\ud800", encoding="utf-8")

    with pytest.raises(OSError, match=r"out\\udcff\.html"):
        write_atomic(target, unencodable)
    assert os.listdir(tmp_path) == []


def test_written_files_have_one_mode_exports_included(tmp_path):
    """The writer's files (and exports, 0600 before) have a new file's mode: 0644 under umask 022."""
    torch = pytest.importorskip("torch")
    from pisti_env.util.atomic import write_atomic
    from training.benchmark.export import write_policy_file

    class Uniform(torch.nn.Module):
        def forward(self, observation, mask):
            return torch.log_softmax(mask.float() + 0 * observation[:, :1], dim=-1)

    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "plain.txt", lambda tmp: Path(tmp).write_text("x"))
        write_policy_file(Uniform().eval(), {"observation_size": 4, "num_actions": 3, "name": "u"}, "torchscript",
                          str(tmp_path / "u.pt"))
    finally:
        os.umask(old)
    for name in ("plain.txt", "u.pt"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name
    assert sorted(os.listdir(tmp_path)) == ["plain.txt", "u.pt"]


def test_the_writers_use_the_one_atomic_helper():
    """No writer of the project builds its own temporary file (a fixed `.tmp` name, `mkstemp`)
    outside `pisti_env/util/atomic.py` (checkpoint directories: `training/trainer/atomic.py`,
    `weights.py`; scratch folders from `mkdtemp` are created exclusively and are not writers)."""
    root = Path(__file__).resolve().parents[2]
    allowed = {"pisti_env/util/atomic.py", "training/trainer/atomic.py", "training/trainer/weights.py",
               "pisti_env/tools/flags.py"}  # flags: a probe of a folder's writability, removed at once
    found = []
    for folder in ("pisti_env", "training", "benchmarks"):
        for path in (root / folder).rglob("*.py"):
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            if rel not in allowed and ('.tmp"' in text or "mkstemp(" in text):
                found.append(rel)
    assert found == [], found
