"""Every CLI answers bad input with one line on stderr and exit status 2, never a traceback, and
before the run starts (docs/reliability.md). Each case runs the CLI's ``main(argv)`` in this
process; a case that got as far as a run would take seconds to minutes, so a slow case is a
failure too (none of them trains, plays or writes anything). Output paths follow one rule:
checked before any work, a directory where a directory is expected (``--out``), a regular file
where a file is (``--replay-out``, ``--report-out``, ``--html``); ``/proc/...`` stands for a
place nobody can write, root included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pisti_env import make_settings
from pisti_env.tools.replay import GameRecorder, write_records

from pisti_env.tools.demo import main as demo_main
from pisti_env.terminal.play_cli import main as play_main
from pisti_env.terminal.replay_cli import main as replay_main
from training.exploit.cli import main as exploit_main
from training.harness.bluff_stats import main as bluff_main
from training.harness.evaluate import main as eval_main
from training.trainer.cli import main as train_main
from training.bluff.solve_claims import main as solve_claims_main
from training.benchmark.cli import main as benchmark_main
from training.benchmark.export import main as export_main

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = str(ROOT / "checkpoints" / "pisti-2p")


def one_game() -> list[dict]:
    """The records of one 2-player hand of first legal moves."""
    records: list[dict] = []
    recorder = GameRecorder(make_settings(target=None), ["greedy", "greedy"], records.append, seed=1)
    while not recorder.game.done:
        recorder.step(recorder.game.legal_actions()[0])
    return records


@pytest.fixture
def blocker(tmp_path: Path) -> str:
    """A plain file: a directory below it can never be created, even by root."""
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return str(path)


# (argv, words the one line must hold: the flag or setting it is about). "{file}" is a plain file.
TRAIN = [
    (["--steps", "0"], "--steps"),
    (["--steps", "-5"], "--steps"),
    (["--steps", "ten"], "--steps"),
    (["--envs", "0"], "--envs"),
    (["--rollout", "1.5"], "--rollout"),
    (["--eval-deals", "0"], "--eval-deals"),
    (["--eval-every", "-1"], "--eval-every"),
    (["--checkpoint-every", "-1"], "--checkpoint-every"),
    (["--gamma", "1.5"], "--gamma"),
    (["--learning-rate", "0"], "--learning-rate"),
    (["--learning-rate", "nan"], "--learning-rate"),
    (["--clip-coef", "inf"], "--clip-coef"),
    (["--claim-capture-value", "-3"], "--claim-capture-value"),
    (["--claim-capture-value-last-deal", "x"], "--claim-capture-value-last-deal"),
    (["--self-play-share", "-0.1"], "--self-play-share"),
    (["--pool-margin-decay", "0"], "--pool-margin-decay"),
    (["--target-kl", "-1"], "--target-kl"),
    (["--hidden-sizes", "256", "0"], "--hidden-sizes"),
    (["--threads", "-1"], "--threads"),
    (["--precision", "fp16"], "--precision"),
    (["--device", "gpu7"], "--device"),
    (["--out", "{file}/run"], "--out"),
    (["--out", "{file}"], "--out"),
    (["--init-from", "{file}"], "--init-from"),
    (["--init-from", "/no/such/checkpoint"], "--init-from"),
    (["--players", "7"], "num_players"),
    (["--decks", "3"], "decks"),
    (["--bluff-jack-double"], "bluff_jack_double"),
    (["--baselines", "smart"], "smart"),
    (["--eval-baselines", "pimc:zz=1"], "zz"),
    (["--eval-baselines", "{dir}"], "checkpoint"),
    (["--no-such-flag"], "--no-such-flag"),
]
EVAL = [
    (["greedy"], "two players"),
    (["greedy", "smart"], "smart"),
    (["greedy", "/no/such/checkpoint"], "/no/such/checkpoint"),
    (["greedy", "{dir}"], "checkpoint"),
    (["greedy", "pimc:n=0"], "n"),
    (["greedy", "random", "--deals", "-1"], "--deals"),
    (["greedy", "random", "--deals", "0", "--matches", "0"], "deals and matches"),
    (["greedy", "random", "--matches", "x"], "--matches"),
    (["greedy", "random", "--workers", "0"], "--workers"),
    (["greedy", "random", "--bootstrap", "-2"], "--bootstrap"),
    (["greedy", "random", "--target", "0"], "--target"),
    (["greedy", "random", "--seed", "1.5"], "--seed"),
    (["greedy", "random", "--seatings", "all"], "--seatings"),
    (["greedy", "random", "--out", "{file}"], "--out"),
    (["greedy", "random", "--out", "{file}/x"], "--out"),
    (["greedy", "random", "--out", "/proc/nope/x"], "--out"),
    (["greedy", "random", "--out", "/proc"], "--out"),
    (["greedy", "random", "--ladder"], "--ladder"),
    (["greedy", "random", "--device", "gpu7"], "--device"),
    (["greedy", "random", "--threads", "0"], "--threads"),
    (["greedy", "random", "--players", "9"], "num_players"),
    (["greedy", "random", "--players", "4", "--no-partnerships", "--decks", "2"], "decks"),
    ([CHECKPOINT, "random", "--bluff"], "bluff"),
]
BLUFF = [
    (["greedy"], "players"),
    (["greedy", "smart"], "smart"),
    (["greedy", "random", "--deals", "0"], "--deals"),
    (["greedy", "random", "--deals", "-3"], "--deals"),
    (["greedy", "random", "--seed", "-1"], "--seed"),
    (["greedy", "random", "--report-out", "{dir}"], "--report-out"),
    (["greedy", "random", "--report-out", "{dir}/"], "--report-out"),
    (["greedy", "random", "--report-out", "{file}/x.json"], "--report-out"),
    (["greedy", "random", "--report-out", "/proc/nope/x.json"], "--report-out"),
    (["greedy", "random", "--report-out", "/dev/zero"], "--report-out"),
    (["greedy", "random", "--out", "x.json"], "--out"),  # one file: --report-out
    (["greedy", "random", "--ten-diamonds-bonus", "7"], "ten_diamonds"),
    (["greedy", "random", "--double-pisti", "7"], "double_pisti"),
]
DEMO = [
    (["--players", "9"], "num_players"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "x"], "--seed"),
    (["--decks", "3"], "decks"),
    (["--bluff-jack-double"], "bluff_jack_double"),
    (["--target", "-4"], "target"),
]
EXPLOIT = [
    ([], "TARGET"),
    (["smart"], "smart"),
    (["greedy", "--init-from", "greedy"], "--init-from"),
    (["greedy", "--warm-start"], "--warm-start"),
    (["greedy", "--steps", "0"], "--steps"),
    (["greedy", "--final-deals", "0"], "--final-deals"),
    (["greedy", "--curve-points", "-1"], "--curve-points"),
    (["greedy", "--hidden-sizes", "-3"], "--hidden-sizes"),
    (["greedy", "--ent-coef", "-1"], "--ent-coef"),
    (["greedy", "--out", "{file}/x"], "--out"),
    (["greedy", "--out", "{file}"], "--out"),
    (["greedy", "--out", "/proc/nope"], "--out"),
    (["greedy", "--no-progress"], "--no-progress"),  # the grammar's word is --quiet
    (["greedy", "--seed", "-1"], "--seed"),
    (["greedy", "--players", "9"], "num_players"),
    ([CHECKPOINT, "--bluff"], "bluff"),
]
SOLVE_CLAIMS = [
    ([], "source"),
    (["{dir}", "--out", "x"], "not a checkpoint directory"),
    ([CHECKPOINT, "--out", "x"], "not a bluff-variant policy"),
    ([str(ROOT / "checkpoints" / "pisti-bluff")], "--out"),
    ([str(ROOT / "checkpoints" / "pisti-bluff"), "--out", "{file}/x"], "--out"),
    ([str(ROOT / "checkpoints" / "pisti-bluff"), "--out", "x", "--claim-capture-value", "-1"], "--claim-capture-value"),
    ([str(ROOT / "checkpoints" / "pisti-bluff"), "--out", "x", "--claim-capture-value-last-deal", "1e9"],
     "--claim-capture-value-last-deal"),
]
PLAY = [
    (["--seed", "-1"], "--seed"),
    (["--seed", "x"], "--seed"),
    (["--seat", "-1"], "--seat"),
    (["--seat", "5"], "--seat"),
    (["--delay", "inf"], "--delay"),
    (["--delay", "1e300"], "--delay"),
    (["--delay", "nan"], "--delay"),
    (["--delay", "-1"], "--delay"),
    (["--hint-policy", "smart"], "--hint-policy"),
    (["--hint-policy", "{dir}"], "--hint-policy"),
    (["--opponent", "smart"], "--opponent"),
    (["--players", "4", "--opponent", "greedy", "--partner", "pimc:zz=1"], "--partner"),
    (["--partner", "expert", "--opponent", "greedy"], "--partner"),
    (["--replay-out", "{dir}"], "--replay-out"),
    (["--replay-out", "{file}/g.jsonl"], "--replay-out"),
    (["--replay-out", "/proc/nope/g.jsonl"], "--replay-out"),
    (["--replay-out", "/dev/zero"], "--replay-out"),
    (["--players", "9"], "num_players"),
]
REPLAY = [
    ([], "file"),
    (["/no/such/replay.jsonl"], "No such file"),
    (["{dir}"], "not a regular file"),
    (["{file}"], "not valid JSON"),
    (["{replay}", "--game", "0"], "--game"),
    (["{replay}", "--game", "2"], "--game"),
    (["{replay}", "--seat", "-1"], "--seat"),
    (["{replay}", "--seat", "2"], "--seat"),
    (["{replay}", "--delay", "inf"], "--delay"),
    (["{replay}", "--delay", "-1"], "--delay"),
    (["{replay}", "--html", "{dir}"], "--html"),
    (["{replay}", "--html", "/proc/nope/x.html"], "--html"),
]
BENCHMARK = [
    (["greedy", "--task", "pisti-9p"], "invalid choice"),
    (["greedy", "--deals", "0"], "--deals"),
    (["greedy", "--deal-set", "medium"], "invalid choice"),
    (["greedy", "--workers", "0"], "--workers"),
    (["greedy", "--threads", "x"], "--threads"),
    (["greedy", "--device", "tpu"], "--device"),
    (["no-such-agent", "--task", "pisti-2p"], "no-such-agent"),
    (["nosuchmodule_xyz:make", "--task", "pisti-2p"], "--trust-code"),  # a factory runs its module's code
    (["nosuchmodule_xyz:make", "--task", "pisti-2p", "--trust-code"], "cannot import"),
    (["greedy", "--made-with", "train\x1b[2J"], "--made-with"),  # the leaderboard would refuse it
]
EXPORT = [
    (["greedy", "--out", "x"], "not a trained checkpoint"),
    (["pisti-2p", "--format", "tflite", "--out", "x"], "invalid choice"),
    (["no/such/dir", "--out", "x"], "unknown player"),
]
CASES = [
    pytest.param(main, argv, words, id=f"{name}:{' '.join(argv) or '(none)'}")
    for name, main, table in (
        ("pisti-train", train_main, TRAIN),
        ("pisti-eval", eval_main, EVAL),
        ("pisti-bluff-stats", bluff_main, BLUFF),
        ("pisti-demo", demo_main, DEMO),
        ("pisti-exploit", exploit_main, EXPLOIT),
        ("pisti-solve-claims", solve_claims_main, SOLVE_CLAIMS),
        ("pisti-play", play_main, PLAY),
        ("pisti-replay", replay_main, REPLAY),
        ("pisti-benchmark", benchmark_main, BENCHMARK),
        ("pisti-export", export_main, EXPORT),
    )
    for argv, words in table
]


@pytest.mark.parametrize("main, argv, words", CASES)
def test_bad_cli_input_gets_one_line_and_exit_2(main, argv, words, blocker, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a default --out (runs/...) would land here, never in the repo
    (tmp_path / "not-a-checkpoint").mkdir()
    write_records(one_game(), tmp_path / "one-game.jsonl")
    argv = [a.replace("{file}", blocker).replace("{dir}", str(tmp_path / "not-a-checkpoint"))
            .replace("{replay}", str(tmp_path / "one-game.jsonl")) for a in argv]
    before = sorted(os.listdir(tmp_path))
    try:
        status = main(argv)
    except SystemExit as stop:  # argparse's own exit
        status = stop.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert lines[0].split(": error: ")[0] in ("pisti-train", "pisti-eval", "pisti-bluff-stats", "pisti-demo", "pisti-exploit",
                                            "pisti-solve-claims", "pisti-play", "pisti-replay", "pisti-benchmark", "pisti-export")
    assert words in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path)) == before  # nothing written: refused before the run


def test_good_flags_still_parse():
    """The checkers let the defaults and ordinary values through (the shapes the README uses)."""
    from training.trainer.cli import build_parser, config_from_args

    args = build_parser().parse_args(["--steps", "1.2e7", "--gamma", "1", "--target-kl", "none", "--hidden-sizes", "64", "64",
                                      "--init-from", CHECKPOINT, "--device", "cpu", "--precision", "fp32"])
    config = config_from_args(args)
    assert config.total_steps == 12_000_000 and config.gamma == 1.0 and config.target_kl is None
    assert config.hidden_sizes == (64, 64) and config.init_from == CHECKPOINT


def test_one_line_parser_joins_lines(capsys):
    from pisti_env.tools.flags import ArgumentParser, fail

    assert fail("prog", ValueError("first\nsecond")) == 2
    assert capsys.readouterr().err == "prog: error: first; second\n"
    with pytest.raises(SystemExit) as stop:
        ArgumentParser(prog="prog").parse_args(["--x"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == "prog: error: unrecognized arguments: --x\n"
