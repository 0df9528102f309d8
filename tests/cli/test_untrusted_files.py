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

from pisti_env.tools.flags import printable
from pisti_env.tools.replay import MAX_DEPTH, MAX_LINE_BYTES, ReplayError, parse_replay_lines, read_replays, replay
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
                           capture_output=True, text=True, timeout=120)
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


# ------------------------------------------------------------------ benchmark reports and the leaderboard
LEADERBOARD = [sys.executable, "-m", "training.benchmark.leaderboard"]
PAYLOAD = "x` <script>alert(1)</script> `y | z"  # ends a one-backtick code span, splits a table cell


def report(agent: str = "greedy", made_with: str | None = None, command: str | None = None, **edits) -> dict:
    """A comparable pisti-2p report of the shape pisti-benchmark writes (figures made up)."""
    from training.benchmark.tasks import TASKS

    task = TASKS["pisti-2p"]
    stat = {"mean": 1.0, "half_width": 0.1}
    result = {"task": task.to_dict(), "comparable": True, "panel_mean": stat, "deal_set": "full",
              "count": task.deal_set("full")[0], "command": command or f"pisti-benchmark {agent} --task pisti-2p",
              "opponents": [{"opponent": o, "metric": stat} for o in task.panel]}
    data = {"format": "pisti-benchmark-report", "agent": agent, "versions": {}, "tasks": [result]}
    if made_with is not None:
        data["made_with"] = made_with
    data.update(edits)
    return data


def leaderboard(reports: Path, out: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(LEADERBOARD + [str(reports), "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def assert_refused(child: subprocess.CompletedProcess, out: Path, *words: str) -> None:
    """Exit 2, one line naming what is wrong, no traceback, no page written."""
    lines = child.stderr.strip().splitlines()
    assert child.returncode == 2, child.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("python -m training.benchmark.leaderboard: error: "), child.stderr
    assert "Traceback" not in child.stderr + child.stdout
    assert all(word in lines[0] for word in words), lines[0]
    assert not out.exists()


def rendered_rows(page: str) -> list[str]:
    """The page's table rows as HTML, by the docs site's renderer (Python-Markdown with the
    site's table and attribute extensions) where installed, else by markdown-it (rich's)."""
    try:
        import markdown

        html = markdown.markdown(page, extensions=["tables", "attr_list"])
    except ImportError:
        from markdown_it import MarkdownIt

        html = MarkdownIt("commonmark", {"html": True}).enable("table").render(page)
    return [row for row in html.split("<tr>")[1:]]


def rendered_page(page: str) -> str:
    """The whole page as HTML, by the same renderer as [rendered_rows]."""
    try:
        import markdown

        return markdown.markdown(page, extensions=["tables", "attr_list"])
    except ImportError:
        from markdown_it import MarkdownIt

        return MarkdownIt("commonmark", {"html": True}).enable("table").render(page)


def test_leaderboard_text_from_reports_is_escaped_never_markup(tmp_path):
    """A backtick in an agent's name or --made-with ended its code span, so the page carried a
    live <script>; a '|' split the table's cells. The names are in the table, the commands in
    the fold under it (a raw HTML block): escaped in both."""
    reports = tmp_path / "reports"
    reports.mkdir()
    for name, data in {"a": report(agent=PAYLOAD, display_name="a` <script>x</script>"),
                       "b": report(made_with=PAYLOAD),
                       "c": report(agent="c", command="pisti-benchmark 'a|b' --task pisti-2p"),
                       "d": report(agent="``x``<b>&amp;\\")}.items():
        (reports / f"{name}.json").write_text(json.dumps(data))
    out = tmp_path / "leaderboard.md"
    child = leaderboard(reports, out)
    assert child.returncode == 0, child.stderr
    page = out.read_text()
    assert "<script" not in page and "<b>" not in page
    rows = rendered_rows(page)
    assert len(rows) == 5  # the header and four agents
    for row in rows:
        assert "<script" not in row and "<b>" not in row
        assert row.count("<td>") + row.count("<th>") == 7, row  # rank, agent, rating, 4 opponents
    html = rendered_page(page)
    assert "<script" not in html and "<b>" not in html
    assert "a&#96; &#60;script&#62;x" in page  # the display name, shown as text in its cell
    assert "x` &lt;script&gt;alert(1)&lt;/script&gt; `y | z" in page  # --made-with, shown as text in the fold
    assert "pisti-benchmark &#x27;a|b&#x27; --task pisti-2p" in page
    assert "`greedy`" in page  # plain names keep their plain code span


@pytest.mark.parametrize("field, edits", [
    ("agent", {"agent": "two\nlines"}),
    ("made_with", {"made_with": "train \x1b[2J--steps 1"}),
    ("tasks[0].command", {"command": "pisti-benchmark \u202egreedy --task pisti-2p"}),
    ("agent", {"agent": "a\u2028b"}),
])
def test_leaderboard_refuses_control_characters_naming_file_and_field(tmp_path, field, edits):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "ok.json").write_text(json.dumps(report()))
    (reports / "bad.json").write_text(json.dumps(report(**{k: v for k, v in edits.items() if k != "command"},
                                                       command=edits.get("command"))))
    out = tmp_path / "leaderboard.md"
    assert_refused(leaderboard(reports, out), out, str(reports / "bad.json"), field, "control character")


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero", "link-to-a-report", "directory", "too-big"])
def test_leaderboard_reads_reports_as_bounded_regular_files(tmp_path, kind):
    """A FIFO named *.json hung the generator, a link to /dev/zero ran it out of memory."""
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "ok.json").write_text(json.dumps(report()))
    bad = reports / "bad.json"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(bad)
    elif kind == "link-to-dev-zero":
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero here")
        bad.symlink_to("/dev/zero")
    elif kind == "link-to-a-report":
        bad.symlink_to(reports / "ok.json")
    elif kind == "directory":
        bad.mkdir()
    else:
        bad.write_text(json.dumps(report(versions={"padding": "x" * (2 << 20)})))
    out = tmp_path / "leaderboard.md"
    words = ("more than",) if kind == "too-big" else ("not a regular file",)
    assert_refused(leaderboard(reports, out), out, str(bad), *words)


MALFORMED = {  # content (or an edit of a good report), words of the one line
    "array": ("[1, 2]", "(top level) must be a JSON object"),  # AttributeError before
    "null": ("null", "(top level) must be a JSON object"),
    "deep": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # RecursionError before
    "nan": ('{"format": "pisti-benchmark-report", "agent": NaN}', "not a JSON report"),
    "not-utf8": ("\xff\xfe", "not a JSON report"),
    "list-task-name": ("report-with-list-task-name", "tasks[0].task.name"),
    "string-mean": ("report-with-string-mean", "tasks[0].panel_mean.mean"),
    "infinite-half-width": ("report-with-infinite-half-width", "tasks[0].opponents[0].metric.half_width"),
    "no-opponents": ("report-without-opponents", "tasks[0].opponents"),
    "unknown-task": ("report-with-unknown-task", "unknown task"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_leaderboard_malformed_reports_are_one_line_naming_the_file(tmp_path, case):
    content, words = MALFORMED[case]
    reports = tmp_path / "reports"
    reports.mkdir()
    data = report()
    result = data["tasks"][0]
    if content == "report-with-list-task-name":
        result["task"]["name"] = ["pisti-2p"]
    elif content == "report-with-string-mean":
        result["panel_mean"]["mean"] = "1.0"
    elif content == "report-with-infinite-half-width":
        result["opponents"][0]["metric"] = {"mean": 1.0, "half_width": 12345.5}  # 1e400 below: JSON reads infinity
    elif content == "report-without-opponents":
        del result["opponents"]
    elif content == "report-with-unknown-task":
        result["task"]["name"] = "pisti-9p"
    text = json.dumps(data).replace("12345.5", "1e400") if content.startswith("report-") else content
    (reports / "bad.json").write_bytes(text.encode("latin-1") if content.startswith("\xff") else text.encode())
    out = tmp_path / "leaderboard.md"
    assert_refused(leaderboard(reports, out), out, str(reports / "bad.json"), words)


def test_leaderboard_version_errors_name_the_reports(tmp_path):
    """Reports of two versions of a task, or of another version than this package's: the line
    names a report of each version (it named none)."""
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "now.json").write_text(json.dumps(report()))
    later = report(agent="later")
    later["tasks"][0]["task"].update(version=99, id="pisti-2p@99")
    (reports / "later.json").write_text(json.dumps(later))
    out = tmp_path / "leaderboard.md"
    assert_refused(leaderboard(reports, out), out, str(reports / "now.json"), str(reports / "later.json"),
                   "different versions")
    (reports / "now.json").unlink()
    assert_refused(leaderboard(reports, out), out, str(reports / "later.json"), "pisti-2p@99")


def test_benchmark_refuses_a_made_with_the_leaderboard_would_refuse(tmp_path):
    child = subprocess.run([sys.executable, "-m", "training.benchmark.cli", "greedy", "--task", "pisti-2p",
                            "--made-with", "line one\nline two", "--out", str(tmp_path / "out")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = child.stderr.strip().splitlines()
    assert child.returncode == 2 and len(lines) == 1 and "--made-with" in lines[0], child.stderr
    assert not (tmp_path / "out").exists()
