"""Files are untrusted input (docs/reliability.md): what a replay holds is data, never terminal
markup or escape sequences; the replay reader is bounded (line length, JSON nesting, regular
files only) and raises only ``ReplayError`` naming the file and line; ``pisti-replay`` and
``pisti-play`` check ``--delay`` and end cleanly when the input ends.

The CLI cases that could hang before their fix (a FIFO, ``/dev/zero``) run in a child process
with a timeout, so a regression fails instead of stalling the suite."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pisti_env.flags import printable
from pisti_env.replay import MAX_DEPTH, MAX_LINE_BYTES, ReplayError, parse_replay_lines, read_replays, replay
from pisti_env.terminal import play_cli, replay_cli

from helpers import recorded_random_game

ROOT = Path(__file__).resolve().parents[2]

# Terminal payloads: rich markup (closing tags crash rich's parser), clear screen, a window
# title (OSC), a bell, cursor moves, a carriage return, a direction override.
MARKUP = "[/bold][/][red]x"
ESCAPES = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b[31m\r\x08\x9b2J\u202e"
EVIL = MARKUP + ESCAPES
TERMINAL_CODES = ("\x1b", "\x07", "\x9b", "\r", "\x08", "\u202e")


def game_records(seed: int = 3, **kw) -> list[dict]:
    """A whole random game as the recorder writes it (seed 3 unless given)."""
    return recorded_random_game(seed, **kw)


def write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def run_main(main, argv, capsys) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line_error(status: int, out: str, err: str, prog: str, words: str = "") -> None:
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), err
    assert "Traceback" not in out + err
    assert words in lines[0], lines[0]


# ------------------------------------------------------------------ printable text
def test_printable_removes_escapes_and_controls_keeps_text():
    assert printable("a\x1b[2Jb\x1b]0;title\x07c\x1b[31md\x1b[0m") == "abcd"
    assert printable("tab\there\nnew\x00line\x7f") == "tab here new line "
    assert printable("[/bold] ♦ pişti") == "[/bold] ♦ pişti"  # markup is kept as text, escaped where printed
    assert printable("x" * 50, 10) == "x" * 9 + "…"
    assert not any(code in printable(EVIL) for code in TERMINAL_CODES)


# ------------------------------------------------------------------ pisti-replay shows file content as data
def evil_replays(tmp_path: Path) -> list[Path]:
    """Replays with the payloads in every field that reaches the screen: the source, the names
    (meta.names) and, without names, the players' specs."""
    named = game_records(target=None, bluff=True)
    named[0]["meta"] = {"source": EVIL, "names": [EVIL, "b" + MARKUP]}
    unnamed = game_records(seed=4, target=None)
    unnamed[0]["meta"] = {"source": EVIL}
    unnamed[0]["players"] = [EVIL, MARKUP]
    return [write_lines(tmp_path / "named.jsonl", named), write_lines(tmp_path / "unnamed.jsonl", unnamed)]


@pytest.mark.parametrize("view", [[], ["--seat", "0"], ["--seat", "1"]], ids=["spectator", "seat0", "seat1"])
def test_replay_fields_are_shown_as_text_never_markup_or_escapes(tmp_path, capsys, view):
    for path in evil_replays(tmp_path):
        status, out, err = run_main(replay_cli.main, [str(path), *view], capsys)
        assert status == 0 and err == "", err  # rich's MarkupError before the fix
        assert "[/bold][/][red]x" in out  # the text itself, shown literally
        assert not any(code in out for code in TERMINAL_CODES), [c for c in TERMINAL_CODES if c in out]
        assert "The engine reproduces every recorded deck and result." in out


def test_replay_error_messages_carry_no_escapes(tmp_path, capsys):
    records = game_records()
    records[0]["format"] = ESCAPES  # quoted in the error
    path = write_lines(tmp_path / "bad.jsonl", records)
    status, out, err = run_main(replay_cli.main, [str(path)], capsys)
    assert_one_line_error(status, out, err, "pisti-replay", "not a pisti replay")
    assert not any(code in err for code in TERMINAL_CODES)


def test_play_prints_a_replay_path_with_markup_as_text(tmp_path, capsys, monkeypatch):
    """The person's own path is printed as text too (a '[/]' in it crashed rich)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # end of input at the first prompt: the game is left
    path = tmp_path / "a[/]b[/bold].jsonl"
    status, out, err = run_main(play_cli.main, ["--opponent", "greedy", "--seed", "1", "--delay", "0",
                                                "--replay-out", str(path)], capsys)
    assert status == 0, err
    assert f"replay: {path}" in out.replace("\n", "")
    assert read_replays(path)[0].end["complete"] is False


# ------------------------------------------------------------------ bounded reader, ReplayError only
def test_long_lines_deep_nesting_bad_utf8_and_huge_numbers_are_replay_errors(tmp_path):
    header = json.dumps(game_records()[0])
    cases = {
        "deep.jsonl": ("[" * 100_000 + "]" * 100_000 + "\n").encode(),  # RecursionError before
        "deep-object.jsonl": ('{"type": ' + '{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1) + "}\n").encode(),
        "long.jsonl": b"x" * (MAX_LINE_BYTES + 10),  # no line break at all
        "long-second.jsonl": (header + "\n").encode() + b"[" + b" " * MAX_LINE_BYTES + b"]\n",
        "utf8.jsonl": b'{"type": "game\xff"}\n',  # UnicodeDecodeError before
        "digits.jsonl": ('{"type": "action", "seat": ' + "9" * 5000 + "}\n").encode(),  # plain ValueError before
    }
    expected = {"deep.jsonl": ("line 1", "nested deeper"), "deep-object.jsonl": ("line 1", "nested deeper"),
                "long.jsonl": ("line 1", "longer than"), "long-second.jsonl": ("line 2", "longer than"),
                "utf8.jsonl": ("line 1", "not UTF-8"), "digits.jsonl": ("line 1", "not a readable JSON")}
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ReplayError) as caught:
            read_replays(path)
        where, what = expected[name]
        assert f"{path}, {where}:" in str(caught.value) and what in str(caught.value), str(caught.value)


def test_strings_with_brackets_are_not_nesting():
    records = game_records()
    records[0]["meta"] = {"source": "[" * (MAX_DEPTH * 4)}
    games = parse_replay_lines([json.dumps(r) for r in records], "f")
    assert games[0].header["meta"]["source"] == "[" * (MAX_DEPTH * 4)


@pytest.mark.parametrize("kind", ["directory", "fifo", "dev-zero", "dev-null"])
def test_only_regular_files_are_read(tmp_path, kind):
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = {"directory": tmp_path, "dev-zero": Path("/dev/zero"), "dev-null": Path("/dev/null"),
            "fifo": tmp_path / "pipe"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    if not path.exists():
        pytest.skip(f"no {path} here")
    # A child process with a timeout: a FIFO without a writer hung, /dev/zero ran into MemoryError.
    child = subprocess.run([sys.executable, "-m", "pisti_env.terminal.replay_cli", str(path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == 2, child.stderr
    lines = child.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a regular file" in lines[0], child.stderr


# Values a mutated field may take: wrong types, out-of-range numbers, payloads.
VALUES = [None, True, False, -1, 0, 1, 2**70, -(2**70), 1e308, float("nan"), "x", EVIL, [], {}, [1, 2], {"a": 1},
          [[[]]], "10D", 51, 106, 3]


def test_random_edits_of_a_replay_give_replay_error_only():
    """Every record's fields (and the items of its lists and dicts) replaced by values of the
    wrong type or range: reading and replaying raise ReplayError and nothing else."""
    rng = random.Random(0)
    variants = [{}, dict(target=None, bluff=True), dict(num_players=4, partnerships=True, target=61, bluff=True),
                dict(num_players=5, decks=2, target=None)]
    games = [game_records(seed, **variants[seed % len(variants)]) for seed in range(8)]
    for _ in range(1500):
        records = json.loads(json.dumps(rng.choice(games)))
        record = rng.choice(records)
        target, key = record, rng.choice(list(record))
        if isinstance(record[key], dict) and record[key] and rng.random() < 0.5:
            target, key = record[key], rng.choice(list(record[key]))
        elif isinstance(record[key], list) and record[key] and rng.random() < 0.5:
            target, key = record[key], rng.randrange(len(record[key]))
        target[key] = rng.choice(VALUES)
        try:
            for game in parse_replay_lines([json.dumps(r) for r in records], "edited.jsonl"):
                replay(game)
        except ReplayError as error:
            assert str(error).startswith("edited.jsonl, line ")


# ------------------------------------------------------------------ delays and the end of input
@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "-1", "x"])
@pytest.mark.parametrize("prog, main", [("pisti-replay", replay_cli.main), ("pisti-play", play_cli.main)])
def test_delay_must_be_finite_and_not_negative(tmp_path, capsys, prog, main, value):
    argv = [str(write_lines(tmp_path / "g.jsonl", game_records()))] if prog == "pisti-replay" else []
    status, out, err = run_main(main, [*argv, "--delay", value], capsys)
    assert_one_line_error(status, out, err, prog, "--delay")


def test_pause_at_the_end_of_input_ends_cleanly(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    path = write_lines(tmp_path / "g.jsonl", game_records())
    status, out, err = run_main(replay_cli.main, [str(path), "--pause"], capsys)
    assert status == 0 and "Traceback" not in err and err == "", err  # EOFError before


def test_pause_stops_at_q(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\nq\n"))
    path = write_lines(tmp_path / "g.jsonl", game_records())
    status, out, _ = run_main(replay_cli.main, [str(path), "--pause"], capsys)
    assert status == 0 and "The engine reproduces" not in out


# ------------------------------------------------------------------ pisti-play's defaults said, not silent
def test_play_says_which_player_replaces_a_missing_shipped_policy(tmp_path, capsys, monkeypatch):
    """Three players: no shipped policy fits, so expert plays and hints, and the person is told why."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    status, out, err = run_main(play_cli.main, ["--players", "3", "--seed", "1", "--delay", "0",
                                                "--replay-out", str(tmp_path / "g.jsonl")], capsys)
    assert status == 0, err
    text = " ".join(out.split())
    assert "Playing against expert: no shipped policy was trained for this game" in text
    assert "Hints come from expert: no shipped policy was trained for this game" in text
    assert read_replays(tmp_path / "g.jsonl")[0].players == ["person", "expert", "expert"]


def test_play_says_so_when_the_shipped_policies_are_not_installed(tmp_path, capsys, monkeypatch):
    from pisti_env.terminal import hint

    monkeypatch.setattr(hint, "shipped_policy_path", lambda name: str(tmp_path / "absent" / name))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    status, out, err = run_main(play_cli.main, ["--seed", "1", "--delay", "0",
                                                "--replay-out", str(tmp_path / "g.jsonl")], capsys)
    assert status == 0, err
    assert "Playing against expert: the shipped policies are not installed" in " ".join(out.split())
