"""The leaderboard page as a reader sees it (training.benchmark.leaderboard, display_names): agents
by short names, the commands in a fold under each table, a chart per table generated with the
page, byte for byte the same from the same reports, and the committed charts matching the
committed reports."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from training.benchmark import leaderboard as lb
from training.benchmark.display_names import MAX_DISPLAY_CHARS, display_name
from training.benchmark.tasks import TASKS

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "benchmarks" / "reports"
CHARTS = ROOT / "docs" / "img" / "leaderboard"
TASK = TASKS["pisti-2p"]


# ---------------------------------------------------------------------------- display names

@pytest.mark.parametrize("spec, kind, shown", [
    ("greedy", None, "greedy"),  # a registered player: its spec as is
    ("pimc:n=32", "spec", "pimc:n=32"),  # options kept: another player
    ("pisti-2p", "spec", "pisti-2p"),  # a shipped policy's name
    ("pisti-2p:play=sample", "spec", "pisti-2p:play=sample"),
    ("benchmarks/agents/sb3-maskable-ppo.pt", "spec", "sb3-maskable-ppo"),  # an export: its stem
    ("/tmp/exports/mine.onnx", "spec", "mine"),
    ("models/ppo_pisti.zip", "sb3", "ppo_pisti"),  # an SB3 zip
    ("runs/exp1/checkpoints/final/", "spec", "final"),  # a checkpoint directory: its last part
    ("runs/rllib/ckpt", "rllib", "ckpt"),
    ("runs/a.pt:play=sample", "spec", "a:play=sample"),  # a path's options stay
    ("C:\\runs\\b.onnx", None, "b"),  # a Windows path: its drive's colon is no option
    ("my_agents:make", "factory", "make"),  # a factory: its function
    ("mypkg.agents:build_player", None, "build_player"),  # told from the text
    ("model.v2", "spec", "model.v2"),  # a dot that is no agent file's suffix stays
    (".pt", "spec", ".pt"),  # nothing left without the suffix: the spec
])
def test_display_name_of_each_kind_of_spec(spec, kind, shown):
    assert display_name(spec, kind) == shown


def test_display_name_refuses_what_is_not_text():
    with pytest.raises(TypeError, match="agent spec must be a string"):
        display_name(["greedy"])  # type: ignore[arg-type]


def _report(folder: Path, agent: str, mean: float, *, file: str | None = None, deal_set: str = "full",
            command: str | None = None, **top) -> Path:
    """A comparable pisti-2p report of the shape pisti-benchmark writes, with ``mean`` as every
    figure (its rating follows from it)."""
    stat = {"mean": mean, "half_width": 0.1}
    result = {"task": TASK.to_dict(), "comparable": True, "panel_mean": stat, "deal_set": deal_set,
              "count": TASK.deal_set(deal_set)[0], "agent_kind": top.pop("agent_kind", "spec"),
              "command": command or f"pisti-benchmark {agent} --task pisti-2p",
              "opponents": [{"opponent": o, "metric": stat} for o in TASK.panel]}
    path = folder / f"{file or agent.replace('/', '_')}.json"
    path.write_text(json.dumps({"format": "pisti-benchmark-report", "agent": agent, "versions": {},
                                "tasks": [result], **top}))
    return path


def _agent_cells(page: str) -> list[str]:
    return [line.split(" | ")[1] for line in page.splitlines() if re.match(r"\| \d+ \| ", line)]


def test_rows_show_short_names_and_a_report_may_choose_its_own(tmp_path):
    _report(tmp_path, "benchmarks/agents/mine.pt", 3.0, made_with="python train.py --export benchmarks/agents/mine.pt")
    _report(tmp_path, "my_agents:make", 2.0, agent_kind="factory")
    _report(tmp_path, "runs/x/checkpoints/final", 1.0, display_name="ppo (5M steps)")
    _report(tmp_path, "greedy", 0.5)
    page = lb.leaderboard(str(tmp_path))
    assert _agent_cells(page) == ["`mine`", "`make`", "`ppo (5M steps)`", "`greedy`"]
    assert "benchmarks/agents/mine.pt --task" in page and "runs/x/checkpoints/final --task" in page  # in the commands


def test_two_agents_of_one_short_name_show_their_full_specs(tmp_path):
    _report(tmp_path, "runs/a/final.pt", 2.0, file="a")
    _report(tmp_path, "runs/b/final.pt", 1.0, file="b")
    _report(tmp_path, "expert", 0.5)
    assert _agent_cells(lb.leaderboard(str(tmp_path))) == ["`runs/a/final.pt`", "`runs/b/final.pt`", "`expert`"]


@pytest.mark.parametrize("name, words", [
    ("x" * (MAX_DISPLAY_CHARS + 1), f"1 to {MAX_DISPLAY_CHARS} characters, got {MAX_DISPLAY_CHARS + 1}"),
    ("   ", "got 3 blank"),
    ("two\nlines", "control character"),
    (7, "must be a string"),
])
def test_a_bad_display_name_is_refused_naming_the_file_and_field(tmp_path, name, words):
    bad = _report(tmp_path, "greedy", 1.0, display_name=name)
    with pytest.raises(ValueError) as error:
        lb.leaderboard(str(tmp_path))
    assert str(bad) in str(error.value) and "field display_name" in str(error.value) and words in str(error.value)


# ---------------------------------------------------------------------------- the commands' fold

def test_each_table_has_no_command_column_and_a_fold_of_its_commands_in_rank_order(tmp_path):
    _report(tmp_path, "low", 1.0, command="pisti-benchmark low --task pisti-2p")
    _report(tmp_path, "high", 2.0, made_with="python make.py")
    _report(tmp_path, "slow", 1.5, file="slow-short", deal_set="short")
    page = lb.leaderboard(str(tmp_path))
    head = next(line for line in page.splitlines() if line.startswith("| # |"))
    assert "command" not in head and head.count(" | ") == 2 + len(TASK.panel)
    folds = re.findall(r"(?ms)^<details><summary>Commands that reproduce these rows</summary>\n<ol>\n(.*?)"
                       r"\n</ol>\n</details>$", page)
    assert folds == [
        "<li><code>high</code>: <code>python make.py</code>, then <code>pisti-benchmark high --task pisti-2p</code></li>\n"
        "<li><code>low</code>: <code>pisti-benchmark low --task pisti-2p</code></li>",
        "<li><code>slow</code>: <code>pisti-benchmark slow --task pisti-2p</code></li>",
    ]
    # a raw HTML block holds no blank line: GitHub's renderer would end it there
    assert all("\n\n" not in block for block in re.findall(r"(?s)<details>.*?</details>", page))


# ---------------------------------------------------------------------------- the charts

def test_the_page_links_a_chart_per_table_and_the_cli_writes_them(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    reports = tmp_path / "reports"
    reports.mkdir()
    _report(reports, "greedy", 1.0)
    _report(reports, "mine.pt", 2.0, made_with="python make.py")
    _report(reports, "slow", 1.5, deal_set="short")
    out = tmp_path / "site" / "leaderboard.md"
    assert lb.main([str(reports), "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    page = out.read_text()
    assert page == lb.leaderboard(str(reports))
    links = re.findall(r"!\[[^\]]*\]\((img/leaderboard/[^)]+\.svg)\)", page)
    assert links == ["img/leaderboard/pisti-2p.svg", "img/leaderboard/pisti-2p-short.svg"]
    written = sorted(p.name for p in (out.parent / "img" / "leaderboard").iterdir())
    assert written == ["pisti-2p-short.png", "pisti-2p-short.svg", "pisti-2p.png", "pisti-2p.svg"]
    svg = (out.parent / links[0]).read_text()
    assert "mine" in _description(out.parent / links[0]) and "greedy" in _description(out.parent / links[0])
    assert svg.startswith("<?xml") and "Date" not in svg  # no date: the same reports give the same file
    assert (out.parent / "img" / "leaderboard" / "pisti-2p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_same_reports_give_the_same_page_and_charts_byte_for_byte(tmp_path):
    pytest.importorskip("matplotlib")
    first, second = tmp_path / "a" / "leaderboard.md", tmp_path / "b" / "leaderboard.md"
    written = lb.write_leaderboard(str(REPORTS), str(first))
    lb.write_leaderboard(str(REPORTS), str(second))
    assert len(written) > 2
    for path in map(Path, written):
        twin = second.parent / path.relative_to(first.parent)
        assert path.read_bytes() == twin.read_bytes(), path.name


def _description(svg: Path) -> str:
    """The description a chart's SVG keeps in its metadata (what it shows)."""
    found = ET.parse(svg).getroot().find(".//{http://purl.org/dc/elements/1.1/}description")
    assert found is not None, f"{svg}: no description"
    return found.text or ""


def test_the_committed_charts_are_those_of_the_committed_reports():
    """Each table of the committed page has its chart in docs/img/leaderboard (SVG and PNG),
    showing what the table shows (its description, read without redrawing, so another
    matplotlib's bytes do not matter), and the folder holds no other file."""
    by_task = lb.collect(lb.report_paths(str(REPORTS)))
    expected = {}
    for name in (n for n in TASKS if n in by_task):
        for which, rows in lb.tables(name, by_task[name]):
            expected[lb.chart_name(TASKS[name], which)] = lb.chart_description(TASKS[name], which, rows)
    assert expected, "no committed reports"
    assert sorted(p.name for p in CHARTS.iterdir()) == sorted(f"{n}.{s}" for n in expected for s in ("png", "svg")), (
        "docs/img/leaderboard is stale: python -m training.benchmark.leaderboard benchmarks/reports "
        "--learning benchmarks/learning --out docs/leaderboard.md")
    for name, description in expected.items():
        assert _description(CHARTS / f"{name}.svg") == description, name
