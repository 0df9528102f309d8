"""``--resume`` is explicit (issue 16, part 2): flags contradicting the checkpoint are an error
naming them (the documented ones may change), a run without a complete checkpoint starts again
from its saved config (an error naming the directory without one), and a fresh run never
overwrites an existing one. Also the run
directory's layout: ``OUT/checkpoint`` links the newest of ``keep_checkpoints`` checkpoints,
older-layout runs still resume, a damaged newest checkpoint is passed over."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from training.trainer.checkpoint import (  # noqa: E402
    HISTORY, LATEST, CheckpointError, latest_run_checkpoint, verify_checkpoint,
)
from training.trainer.cli import build_parser, main  # noqa: E402
from helpers import train_config  # noqa: E402
from training.trainer.config import RESUMABLE, TrainConfig, flag  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from training.trainer.runner import run  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

BATCH = 8 * 4


def flags(out: Path, *extra: str, steps: int = 4 * BATCH) -> list[str]:
    return ["--steps", str(steps), "--envs", "8", "--rollout", "4", "--hidden-sizes", "8", "--value-hidden-sizes", "8",
            "--target", "0", "--eval-every", "0", "--checkpoint-every", "1", "--precision", "fp32", "--threads", "1",
            "--out", str(out), "--quiet", *extra]


def rows(out: Path) -> list[int]:
    with open(out / "metrics.csv", encoding="utf-8") as f:
        return [int(r["update"]) for r in csv.DictReader(f)]


def test_resume_flags_that_contradict_the_checkpoint_are_an_error_naming_them(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(flags(out)) == 0
    capsys.readouterr()
    assert main(flags(out, "--resume", "--players", "4", "--bluff", "--seed", "3")) == 2
    error = capsys.readouterr().err
    assert error.startswith("pisti-train: error:") and error.count("\n") == 1
    for named in ("--num-players 4 (the checkpoint's: 2)", "--bluff True (the checkpoint's: False)", "--seed 3"):
        assert named in error, error
    assert "--steps" in error and "--partnerships" not in error  # what may change is listed
    assert rows(out) == [1, 2, 3, 4]  # nothing ran
    # The same command line with --resume (flags equal to the checkpoint's) extends the run.
    assert main(flags(out, "--resume", "--players", "2", "--checkpoint-every", "2", steps=6 * BATCH)) == 0
    assert rows(out) == [1, 2, 3, 4, 5, 6]
    assert json.loads((out / "config.json").read_text())["checkpoint_every"] == 2


def test_resuming_a_complete_run_says_so_and_runs_its_final_evaluation_again(tmp_path, capsys):
    out = tmp_path / "run"
    run_flags = [f for f in flags(out) if f != "--quiet"] + ["--eval-every", "4", "--eval-deals", "4"]
    assert main(run_flags) == 0
    capsys.readouterr()
    (out / "evaluation.json").unlink()  # (as if the run had been killed before its final evaluation)
    assert main(["--resume", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert f"the run in {out} is complete (128 steps, 4 updates): nothing to train; its final evaluation again " \
           "(4 deals)" in said.err, said.err
    assert "final policy, mean score difference per hand over duplicate deals: vs random" in said.out, said.out
    assert json.loads((out / "evaluation.json").read_text())["step"] == 4 * BATCH
    assert rows(out) == [1, 2, 3, 4]  # no update ran


def test_resume_without_a_complete_checkpoint_starts_the_run_again_from_its_config(tmp_path, capsys):
    missing = tmp_path / "typo"
    assert main(flags(missing, "--resume")) == 2
    assert f"{missing} does not exist" in capsys.readouterr().err and not missing.exists()
    killed = tmp_path / "killed"  # logs and a save cut short, but neither a checkpoint nor a config
    killed.mkdir()
    (killed / "metrics.csv").write_text("update,global_step\n1,32\n")
    (killed / HISTORY).mkdir()
    (killed / HISTORY / ".update-000000001.tmp-abc").mkdir()  # a save cut short
    assert main(flags(killed, "--resume")) == 2
    error = capsys.readouterr().err
    assert f"{killed} holds no complete checkpoint and no config.json" in error and "--fresh" in error
    assert (killed / "metrics.csv").read_text() == "update,global_step\n1,32\n"  # never a fresh run over it
    assert (killed / HISTORY / ".update-000000001.tmp-abc").exists()  # a refused resume changes nothing
    # A run stopped before its first checkpoint (its config and some logs written): --resume
    # starts it again from its config, says so, and the logs hold each update once.
    reference, stopped = tmp_path / "reference", tmp_path / "stopped"
    assert main(flags(reference)) == 0
    assert main(flags(stopped)) == 0
    for name in (HISTORY, LATEST, "policy"):
        (shutil.rmtree if name != LATEST else Path.unlink)(stopped / name)
    capsys.readouterr()
    assert main(flags(stopped, "--resume")) == 0
    assert "holds no complete checkpoint (the run stopped before its first): starting it again" in capsys.readouterr().err
    assert rows(stopped) == [1, 2, 3, 4]
    assert (stopped / "policy" / "model.safetensors").read_bytes() == (reference / "policy" / "model.safetensors").read_bytes()


def test_a_fresh_run_never_overwrites_an_existing_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(flags(out, steps=2 * BATCH)) == 0
    before = sorted(p.name for p in (out / HISTORY).iterdir())
    capsys.readouterr()
    assert main(flags(out)) == 2
    error = capsys.readouterr().err
    assert f"{out} already holds a run" in error and "--resume" in error and "--fresh" in error and "another --out" in error
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == before and rows(out) == [1, 2]


def test_the_run_keeps_its_newest_checkpoints_behind_a_link_every_reader_takes(tmp_path):
    out = tmp_path / "run"
    config = train_config(**dict(
        num_envs=8, rollout_steps=4, total_steps=5 * BATCH, target=None, hidden_sizes=[8], value_hidden_sizes=[8],
        eval_every=0, checkpoint_every=1, keep_checkpoints=3, torch_threads=1, precision="fp32", out_dir=str(out),
    ))
    trainer = run(config, progress=False)
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == [f"update-{u:09d}" for u in (3, 4, 5)]
    assert (out / LATEST).is_symlink() and (out / LATEST).resolve().name == "update-000000005"
    # OUT/checkpoint and OUT/policy are what they always were to every reader.
    for path in (out / LATEST, out / "policy"):
        player = load_policy(path)
        assert torch.equal(player.network.card_head.weight, trainer.network.policy.card_head.weight)
    assert Trainer.resume(out / LATEST).update == 5
    # A newest checkpoint damaged on disk is passed over (with a note), the one before taken,
    # and the logs are cut back to what they held then.
    (out / HISTORY / "update-000000005" / "trainer.safetensors").write_bytes(b"damaged")
    path, notes = latest_run_checkpoint(out)
    assert path.name == "update-000000004" and "update-000000005" in notes[0] and "hash" in notes[0]
    assert (out / LATEST).resolve().name == "update-000000004"
    resumed = run(config, resume=True, progress=False)
    assert resumed.update == 5 and rows(out) == [1, 2, 3, 4, 5]
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == [f"update-{u:09d}" for u in (3, 4, 5)]
    assert verify_checkpoint(out / LATEST, trainer_state=True)["update"] == 5  # the damaged one replaced
    # Resumed from an older checkpoint (the newer ones damaged), the first save removes the
    # newer ones: they belong to a future the logs no longer hold.
    for name in ("update-000000004", "update-000000005"):
        (out / HISTORY / name / "model.safetensors").write_bytes(b"damaged")
    extended = TrainConfig.from_dict({**config.to_dict(), "checkpoint_every": 2})
    resumed = run(extended, resume=True, progress=False, resume_steps=7 * BATCH, resume_changes={"checkpoint_every": 2})
    assert resumed.update == 7 and rows(out) == [1, 2, 3, 4, 5, 6, 7]
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == [f"update-{u:09d}" for u in (4, 6, 7)]


def test_resume_help_names_what_may_change():
    text = " ".join(build_parser().format_help().split())
    for field in RESUMABLE:
        assert flag(field) in text.split("--resume", 1)[1], flag(field)


def test_resume_with_a_bad_keep_setting_or_unknown_change_is_refused(tmp_path):
    out = tmp_path / "run"
    config = train_config(**dict(num_envs=8, rollout_steps=4, total_steps=BATCH, target=None, hidden_sizes=[8],
                                        value_hidden_sizes=[8], eval_every=0, torch_threads=1, out_dir=str(out)))
    with pytest.raises(ValueError, match="keep_checkpoints must be an int >= 1, got 0"):
        run(TrainConfig.from_dict({**config.to_dict(), "keep_checkpoints": 0}), progress=False)
    assert not out.exists()
    run(config, progress=False)
    with pytest.raises(ValueError, match=r"unknown config field\(s\) \['bogus'\]"):
        run(config, resume=True, progress=False, resume_changes={"bogus": 1})
    shutil.rmtree(out / HISTORY)
    (out / "config.json").unlink()
    with pytest.raises(CheckpointError, match="no complete checkpoint"):
        run(config, resume=True, progress=False)
