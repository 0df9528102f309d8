"""The benchmark (training.benchmark): tasks and their deal sets, versioning, the anchored rating,
``pisti-benchmark`` against the harness it is built on, shipped policies by name, the leaderboard.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("torch")

import pisti_env  # noqa: E402
from pisti_env import make_settings  # noqa: E402
from pisti_env.agents import checkpoint_location, make_player  # noqa: E402
from pisti_env.agents.registry import SHIPPED_POLICIES, shipped_policy_path  # noqa: E402
from training.benchmark import leaderboard as lb  # noqa: E402
from training.benchmark.cli import main as benchmark_main  # noqa: E402
from training.benchmark.rating import anchored_rating, panel_mean  # noqa: E402
from training.benchmark.run import play_task  # noqa: E402
from training.benchmark.tasks import (  # noqa: E402
    ENV_DIGESTS, ENV_VERSION, TASKS, Task, check_task, deal_set_hash, get_task,
)
from training.harness.evaluate import evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DIGESTS = ROOT / "tests" / "data" / "env_digests.json"
REPORTS = ROOT / "benchmarks" / "reports"
LEADERBOARD = ROOT / "docs" / "leaderboard.md"
LEARNING = ROOT / "benchmarks" / "learning"  # the learning protocol's results: the page's last section


# ---------------------------------------------------------------------------- tasks and versions

def test_the_issue_tasks_exist_with_their_tables():
    assert {"pisti-2p", "pisti-2p-match", "pisti-4p-partners", "pisti-3p", "pisti-bluff-2p"} <= set(TASKS)
    assert TASKS["pisti-2p-match"].game_settings.target == 151  # R24
    assert TASKS["pisti-4p-partners"].game_settings.partnerships  # R4
    assert TASKS["pisti-bluff-2p"].game_settings.bluff  # R29
    assert TASKS["pisti-3p"].game_settings.num_players == 3
    for task in TASKS.values():
        assert {"random", "greedy", "expert"} <= set(task.panel)


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_deals_the_cards_its_hash_records(name):
    """The deal set (seeds, first dealers and decks, R5-R6) hashes as stored with the task, and
    so does its short deal set."""
    check_task(TASKS[name])  # raises on a different hash or environment version
    check_task(TASKS[name], "short")


@pytest.mark.parametrize("name", list(TASKS))
def test_the_short_deal_set_is_the_first_games_of_the_deal_set(name):
    task = TASKS[name]
    assert 0 < task.short_count < task.count
    assert task.deal_set("short") == (task.short_count, deal_set_hash(task.game_settings, task.seed,
                                                                      task.short_count, task.kind))
    with pytest.raises(ValueError, match="deal set must be one of"):
        task.deal_set("medium")
    with pytest.raises(ValueError, match="short deal set hashes to"):
        check_task(Task(**{**task.__dict__, "short_count": task.short_count - 1}), "short")


def test_the_deal_hash_sees_any_change_of_seed_count_or_table():
    task = TASKS["pisti-2p"]
    s = task.game_settings
    base = deal_set_hash(s, task.seed, 50)
    assert deal_set_hash(s, task.seed, 50) == base
    assert deal_set_hash(s, task.seed + 1, 50) != base
    assert deal_set_hash(s, task.seed, 49) != base
    assert deal_set_hash(make_settings(num_players=3, target=None), task.seed, 50) != base


def test_a_task_with_a_changed_deal_set_or_env_version_is_refused():
    task = TASKS["pisti-2p"]
    with pytest.raises(ValueError, match="deal set hashes to"):
        check_task(Task(**{**task.__dict__, "seed": task.seed + 1}))
    with pytest.raises(ValueError, match="was defined on"):
        check_task(Task(**{**task.__dict__, "env_version": "pisti_v0/obs0"}))


def test_env_outputs_cannot_change_without_an_environment_version_bump():
    """The recorded observation/mask/reward digests (test_env_digest.py checks the env against
    them) are the ones recorded for this environment version: regenerating them without bumping
    OBS_VERSION (and adding its digest here, and new task versions) fails."""
    digests = json.loads(DIGESTS.read_text())
    got = hashlib.sha256(json.dumps(digests, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert ENV_VERSION == f"pisti_v0/obs{pisti_env.OBS_VERSION}"
    assert ENV_VERSION in ENV_DIGESTS, f"no digest recorded for {ENV_VERSION}"
    assert got == ENV_DIGESTS[ENV_VERSION], (
        "tests/data/env_digests.json changed while the environment version stayed: bump OBS_VERSION, "
        "record the new digest in training/benchmark/tasks.py ENV_DIGESTS and bump every task's version")
    for task in TASKS.values():
        assert task.env_version == ENV_VERSION


def test_get_task_names_the_tasks_and_checks_versions():
    assert get_task("pisti-2p") is TASKS["pisti-2p"]
    assert get_task(f"pisti-2p@{TASKS['pisti-2p'].version}") is TASKS["pisti-2p"]
    with pytest.raises(ValueError, match="tasks are"):
        get_task("pisti-9p")
    with pytest.raises(ValueError, match="is at version"):
        get_task("pisti-2p@999")


# ---------------------------------------------------------------------------- rating

def test_the_rating_puts_random_at_0_and_greedy_at_1000_linearly():
    anchors = {"random": -8.0, "greedy": 2.0}
    for value, rating in [(-8.0, 0.0), (2.0, 1000.0), (7.0, 1500.0), (-13.0, -500.0)]:
        assert anchored_rating({"mean": value, "half_width": 0.5}, anchors)["rating"] == pytest.approx(rating)
    assert anchored_rating({"mean": 0.0, "half_width": 0.5}, anchors)["half_width"] == pytest.approx(50.0)
    assert anchored_rating({"mean": 0.0, "half_width": 0.5}, {}) is None


def test_the_panel_mean_interval_adds_independent_tables_in_quadrature():
    panel = panel_mean([1.0, 3.0], [0.3, 0.4])
    assert panel["mean"] == 2.0 and panel["half_width"] == pytest.approx(0.25)
    with pytest.raises(ValueError):
        panel_mean([], [])


# ---------------------------------------------------------------------------- playing a task

def test_a_task_plays_the_harness_deals_with_duplicate_seating():
    """Each opponent's figures are pisti-eval's on the task's seed: the same deals, seatings and
    engine; a deterministic agent (the argmax policy) against itself is exactly even (duplicate)."""
    task = TASKS["pisti-2p"]
    result = play_task("pisti-2p", task, count=60)
    assert not result["comparable"] and result["rating"] is None
    by_opponent = {o["opponent"]: o for o in result["opponents"]}
    assert list(by_opponent) == list(task.panel)
    direct = evaluate(["pisti-2p", "random"], deals=60, matches=0, seed=task.seed, bootstrap=0, engine="batched")
    pair = direct["tables"][0]["pairs"][0]
    assert by_opponent["random"]["margin"]["mean"] == pytest.approx(pair["score_diff"]["mean"])
    assert by_opponent["random"]["hands"]["played"] == 120  # 60 deals x 2 seatings
    assert by_opponent["pisti-2p"]["margin"]["mean"] == 0.0
    assert all(o["engine"] == "batched" for o in result["opponents"])


def test_the_short_deal_set_is_rated_on_the_task_scale():
    """``--deal-set short`` plays the first games of the same deals: a prefix of the full set's
    figures, comparable, rated with the task's anchors."""
    task = TASKS["pisti-2p"]
    short = play_task("greedy", task, deal_set="short")
    assert short["comparable"] and short["deal_set"] == "short" and short["count"] == task.short_count
    assert short["rating"] == anchored_rating(short["panel_mean"], task.anchors)
    prefix = play_task("greedy", task, count=task.short_count)
    assert not prefix["comparable"]
    assert [o["margin"] for o in short["opponents"]] == [o["margin"] for o in prefix["opponents"]]


def test_python_engine_tables_give_the_same_figures_with_more_workers():
    """``--workers``: worker processes rebuild the agent and the opponent from their specs."""
    task = TASKS["pisti-2p-match"]
    one = play_task("greedy", task, count=2, workers=1)
    two = play_task("greedy", task, count=2, workers=2)
    assert all(o["engine"] == "python" for o in two["opponents"])
    assert [o["win_rate"] for o in one["opponents"]] == [o["win_rate"] for o in two["opponents"]]


def test_a_three_player_task_seats_two_copies_of_the_opponent_in_every_order():
    result = play_task("random", TASKS["pisti-3p"], count=8)
    for o in result["opponents"]:
        assert o["seatings"] == 6  # every order of (agent, opponent, opponent's second copy)
        assert o["hands"]["played"] == 8 * 6


def test_a_match_task_reports_match_win_rates():
    result = play_task("greedy", TASKS["pisti-2p-match"], count=2)
    o = result["opponents"][0]
    assert o["engine"] == "python" and o["matches"]["played"] == 4
    assert 0.0 <= o["win_rate"]["mean"] <= 1.0 and o["metric"] is o["win_rate"]


def test_an_agent_for_another_game_is_refused_before_playing():
    with pytest.raises(ValueError):
        play_task("pisti-4p", TASKS["pisti-2p"], count=4)


@pytest.mark.slow
def test_an_exploit_budget_reports_a_best_response_edge(tmp_path, capsys):
    assert benchmark_main(["greedy", "--task", "pisti-2p", "--deals", "10", "--quiet", "--exploit-budget", "1000",
                           "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "benchmark.json").read_text())["tasks"][0]
    assert result["exploit"]["steps"] >= 1000  # whole updates
    assert {"mean", "half_width"} <= set(result["exploit"]["edge"])
    assert (tmp_path / "exploit-pisti-2p" / "report.json").is_file()
    assert "best-response edge" in capsys.readouterr().out


def test_an_exploit_budget_on_a_match_task_is_refused():
    from training.benchmark.run import exploit_edge

    with pytest.raises(ValueError, match="single-hand task"):
        exploit_edge("greedy", TASKS["pisti-2p-match"], 1000, 1, "cpu", "unused", False)


# ---------------------------------------------------------------------------- the CLI

def test_cli_writes_a_report_and_a_table(tmp_path, capsys):
    assert benchmark_main(["random", "--task", "pisti-2p", "--deals", "20", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "pisti-2p@1" in out and "not comparable" in out
    report = json.loads((tmp_path / "benchmark.json").read_text())
    assert report["agent"] == "random"
    assert report["versions"]["env_version"] == ENV_VERSION
    assert report["versions"]["obs_version"] == str(pisti_env.OBS_VERSION)
    assert report["versions"]["deal_sets"]["pisti-2p"] == TASKS["pisti-2p"].deal_hash
    assert report["hardware"]["cpu_count"] >= 1 and report["wall_seconds"] > 0
    assert report["tasks"][0]["command"] == "pisti-benchmark random --task pisti-2p"
    assert "made_with" not in report


def test_cli_plays_the_short_deal_set_and_records_how_the_agent_was_made(tmp_path, capsys):
    argv = ["random", "--task", "pisti-2p", "--deal-set", "short", "--made-with", "it came with the package",
            "--quiet", "--out", str(tmp_path)]
    assert benchmark_main(argv) == 0
    out = capsys.readouterr().out
    assert "short deal set" in out and "rating" in out and "not comparable" not in out
    report = json.loads((tmp_path / "benchmark.json").read_text())
    assert report["made_with"] == "it came with the package"
    assert report["versions"]["deal_sets"]["pisti-2p"] == TASKS["pisti-2p"].short_hash
    assert report["tasks"][0]["command"] == "pisti-benchmark random --task pisti-2p --deal-set short"


def test_cli_records_the_agents_display_name_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    """--display-name: the leaderboard's short name for the agent (instead of one read from the
    spec), checked as the leaderboard checks a report's: one line, 1 to MAX_DISPLAY_CHARS characters."""
    argv = ["random", "--task", "pisti-2p", "--deals", "4", "--quiet", "--out", str(tmp_path)]
    assert benchmark_main([*argv, "--display-name", "coin flip"]) == 0
    assert json.loads((tmp_path / "benchmark.json").read_text())["display_name"] == "coin flip"
    capsys.readouterr()
    for bad, why in (("  ", "blank"), ("x" * 41, "at most 40 characters"), ("two\nlines", "control characters"),
                     ("evil\u202eexe", "control characters")):  # a direction override, which the leaderboard refuses too
        with pytest.raises(SystemExit) as stop:
            benchmark_main([*argv, "--display-name", bad])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "--display-name" in err and why in err, err


# ---------------------------------------------------------------------------- shipped policies by name

@pytest.mark.parametrize("name", SHIPPED_POLICIES)
def test_shipped_policies_load_by_name_from_any_directory(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no checkpoints/ here
    player = make_player(name)
    assert os.path.isdir(shipped_policy_path(name))
    assert checkpoint_location(name) == (shipped_policy_path(name), "")
    assert checkpoint_location(f"{name}:play=sample") == (shipped_policy_path(name), "play=sample")
    assert make_player(f"{name}:play=sample").play == "sample"
    assert player.settings == make_player(str(ROOT / "checkpoints" / name)).settings
    with pytest.raises(ValueError, match="allowed"):
        make_player(f"{name}:n=3")


def test_checkpoint_paths_in_a_checkout_still_work():
    assert (ROOT / "checkpoints" / "pisti-2p" / "metadata.json").is_file()
    assert make_player("checkpoints/pisti-2p" if Path("checkpoints").exists() else str(ROOT / "checkpoints/pisti-2p"))


# ---------------------------------------------------------------------------- the leaderboard

def _reports() -> list[Path]:
    return sorted(REPORTS.rglob("*.json"))


def test_the_committed_leaderboard_is_generated_from_the_committed_reports():
    if not _reports():
        pytest.skip("no committed reports")
    assert LEADERBOARD.read_text() == lb.leaderboard(str(REPORTS), str(LEARNING)), (
        "docs/leaderboard.md is stale: python -m training.benchmark.leaderboard benchmarks/reports "
        "--learning benchmarks/learning --out docs/leaderboard.md")


def test_the_leaderboard_cli_writes_into_a_folder_it_creates(tmp_path, capsys):
    """``--out`` in a folder that does not exist yet: created, as the path check promised."""
    out = tmp_path / "new" / "leaderboard.md"
    assert lb.main([str(REPORTS), "--out", str(out)]) == 0
    assert out.read_text() == lb.leaderboard(str(REPORTS))


def test_the_anchors_are_the_committed_random_and_greedy_panel_means():
    """A task's rating scale is tied to what random and greedy score on it: 0 and 1000."""
    by_task = lb.collect([str(p) for p in _reports()])
    checked = 0
    for name, results in by_task.items():
        for r in results:
            if r["agent"] in ("random", "greedy") and r["deal_set"] == "full":
                assert TASKS[name].anchors[r["agent"]] == pytest.approx(r["panel_mean"]["mean"], abs=1e-9)
                rating = anchored_rating(r["panel_mean"], TASKS[name].anchors)
                assert rating["rating"] == pytest.approx(0.0 if r["agent"] == "random" else 1000.0, abs=1e-6)
                checked += 1
    if not checked:
        pytest.skip("no committed random/greedy reports")


def _fake_report(tmp_path: Path, name: str, version: int, comparable: bool = True, deal_set: str = "full",
                 count: int | None = None, made_with: str | None = None) -> None:
    task = TASKS["pisti-2p"].to_dict()
    task.update(version=version, id=f"pisti-2p@{version}")
    stat = {"mean": 1.0, "half_width": 0.1}
    count = TASKS["pisti-2p"].deal_set(deal_set)[0] if count is None else count
    result = {"task": task, "comparable": comparable, "panel_mean": stat, "command": f"run {name}",
              "deal_set": deal_set, "count": count,
              "opponents": [{"opponent": o, "metric": stat} for o in TASKS["pisti-2p"].panel]}
    report = {"format": "pisti-benchmark-report", "agent": name, "versions": {}, "tasks": [result]}
    if made_with:
        report["made_with"] = made_with
    (tmp_path / f"{name}.json").write_text(json.dumps(report))


def test_the_leaderboard_refuses_mixed_versions_and_quick_runs(tmp_path):
    version = TASKS["pisti-2p"].version
    _fake_report(tmp_path, "a", version)
    assert "`a`" in lb.leaderboard(str(tmp_path))
    _fake_report(tmp_path, "b", version + 1)
    with pytest.raises(ValueError, match="different versions"):
        lb.leaderboard(str(tmp_path))
    (tmp_path / "b.json").unlink()
    _fake_report(tmp_path, "c", version, comparable=False)
    with pytest.raises(ValueError, match="one of the task's deal sets"):
        lb.leaderboard(str(tmp_path))
    assert lb.main([str(tmp_path)]) == 2


def test_short_deal_set_rows_get_their_own_table_with_how_the_agent_was_made(tmp_path):
    version = TASKS["pisti-2p"].version
    _fake_report(tmp_path, "whole", version)
    _fake_report(tmp_path, "slow", version, deal_set="short", made_with="python train.py --save slow.pt")
    page = lb.leaderboard(str(tmp_path))
    head, _, short_table = page.partition("### pisti-2p@1, short deal set")
    assert "`whole`" in head and "`slow`" not in head
    assert "`slow`" in short_table and "`whole`" not in short_table
    assert "<li><code>slow</code>: <code>python train.py --save slow.pt</code>, then <code>run slow</code></li>" \
        in short_table  # in the fold under the short table
    _fake_report(tmp_path, "slow", version, deal_set="short", count=TASKS["pisti-2p"].short_count + 1)
    with pytest.raises(ValueError, match="short deal set"):
        lb.leaderboard(str(tmp_path))


def test_every_committed_report_names_the_command_and_deal_set_it_was_played_with():
    """A leaderboard row's command is what reproduces it: the short set's rows say so, and a
    row of an agent file made by a recipe records how it was made."""
    from training.benchmark.run import command_for

    by_task = lb.collect([str(p) for p in _reports()])
    for name, results in by_task.items():
        for r in results:
            assert r["command"] == command_for(r["agent"], TASKS[name], r["deal_set"])
            if r["agent"].startswith("benchmarks/agents/"):
                assert (ROOT / r["agent"]).is_file() and "--export " + r["agent"] in r["made_with"]
