"""A run directory has one trainer at a time and never loses its last complete checkpoint
(issues 37, 39 and 42): an OS lock refuses a second ``pisti-train`` (fresh or ``--resume``)
naming the process that holds it, and a lock left by a killed process never blocks;
``--fresh`` replaces a run only under the lock; a write that fails (a full disk) and weights
gone NaN each stop the run with one line naming the last complete checkpoint and their own
exit status, leaving nothing partial that a resume would take."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from safetensors import SafetensorError  # noqa: E402

import checkpoint_child  # noqa: E402  (tests/ is on sys.path)

from helpers import TINY_BATCH, logged_updates, preloaded_forkserver, tiny_train_flags  # noqa: E402
from training.trainer import weights  # noqa: E402
from training.trainer.checkpoint import HISTORY, LATEST, verify_checkpoint  # noqa: E402
from training.trainer.cli import main  # noqa: E402
from training.trainer.failures import DIVERGED, WRITE_FAILED  # noqa: E402
from training.trainer.lock import LOCK_FILE, RunLock  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BATCH = TINY_BATCH


def flags(out: Path, *extra: str, steps: int = 4 * BATCH) -> list[str]:
    return tiny_train_flags(out, *extra, steps=steps, checkpoint_every=2)


def one_line(error: str) -> bool:
    return error.startswith("pisti-train: error: ") and error.count("\n") == 1 and "Traceback" not in error


# ---------------------------------------------------------------------- two trainers, one OUT
# What a child would otherwise import on its own first (seconds): the forkserver imports it once.
PRELOAD = ["torch", "torch._dynamo", "torch.utils.tensorboard", "training.trainer.cli", "training.trainer.runner",
           "checkpoint_child"]


@pytest.fixture(scope="module")
def forkserver():
    return preloaded_forkserver(PRELOAD)


class TrainerProcess:
    """A real ``pisti-train`` process (forked from the forkserver: started in a fraction of a second)."""

    def __init__(self, context, out: Path, extra: tuple[str, ...], steps: int, stderr: Path) -> None:
        self.stderr = stderr
        self.process = context.Process(target=checkpoint_child.pisti_train,
                                       args=(flags(out, *extra, steps=steps), str(stderr)), daemon=True)
        self.process.start()
        self.pid = self.process.pid

    def alive(self) -> bool:
        return self.process.is_alive()

    def wait(self, timeout: float = 300) -> tuple[int, str]:
        self.process.join(timeout)
        assert not self.process.is_alive(), "the trainer did not end"
        return self.process.exitcode, self.stderr.read_text() if self.stderr.exists() else ""


@pytest.fixture
def trainers(forkserver, tmp_path):
    """Start real ``pisti-train`` processes; every one is killed however the test ends."""
    started: list[TrainerProcess] = []

    def start(out: Path, *extra: str, steps: int) -> TrainerProcess:
        started.append(TrainerProcess(forkserver, out, extra, steps, tmp_path / f"stderr-{len(started)}"))
        return started[-1]

    yield start
    for child in started:
        if child.alive():
            os.kill(child.pid, signal.SIGKILL)
        child.process.join(30)


def holding(child: TrainerProcess, out: Path) -> None:
    """Wait until ``child`` holds OUT's lock, then stop it there (SIGSTOP): it holds the lock,
    mid-run, for as long as the test needs."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert child.alive(), child.wait()
        try:
            if (out / LOCK_FILE).read_text().strip() == str(child.pid):
                os.kill(child.pid, signal.SIGSTOP)
                assert child.alive() and (out / LOCK_FILE).read_text().strip() == str(child.pid), \
                    "the first trainer ended before the second one started: make its run longer"
                return
        except FileNotFoundError:
            pass
        time.sleep(0.005)
    raise AssertionError("the trainer never took the lock")


def finish(child: TrainerProcess) -> None:
    os.kill(child.pid, signal.SIGCONT)
    code, err = child.wait()
    assert code == 0, err


def test_two_trainers_into_one_out_make_one_run_in_either_order(tmp_path, trainers, capsys):
    out, updates = tmp_path / "run", 12
    # fresh, then fresh: the second (this process) is refused naming the first's process.
    first = trainers(out, steps=updates * BATCH)
    holding(first, out)
    assert main(flags(out, steps=updates * BATCH)) == 2
    error = capsys.readouterr().err
    assert one_line(error) and f"{out} is in use by another pisti-train (process {first.pid})" in error, error
    finish(first)
    assert logged_updates(out) == list(range(1, updates + 1))
    # --resume, then --resume (a real second process): refused, one line, exit 2.
    first = trainers(out, "--resume", steps=2 * updates * BATCH)
    holding(first, out)
    code, err = trainers(out, "--resume", steps=2 * updates * BATCH).wait()
    assert code == 2 and one_line(err) and f"(process {first.pid})" in err, err
    finish(first)
    assert logged_updates(out) == list(range(1, 2 * updates + 1))  # every update logged once
    assert not (out / LOCK_FILE).exists()  # released with the run


def test_a_lock_left_by_a_killed_trainer_never_blocks(tmp_path, trainers):
    out = tmp_path / "run"
    assert main(flags(out, steps=2 * BATCH)) == 0
    killed = trainers(out, "--resume", steps=60 * BATCH)
    holding(killed, out)
    os.kill(killed.pid, signal.SIGKILL)
    killed.process.join(30)
    assert (out / LOCK_FILE).read_text().strip() == str(killed.pid)  # the file stays; the OS lock went with it
    assert main(flags(out, "--resume", steps=6 * BATCH)) == 0
    assert logged_updates(out) == list(range(1, 7))


def test_a_run_in_use_is_neither_resumed_nor_replaced(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(flags(out, steps=2 * BATCH)) == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    with RunLock(out):  # this process holds it (as a live trainer would)
        for extra in (("--resume",), ("--fresh",), ()):
            assert main(flags(out, *extra)) == 2
            error = capsys.readouterr().err
            assert one_line(error) and f"(process {os.getpid()})" in error, error
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.name != LOCK_FILE) == before


# ---------------------------------------------------------------------- --fresh
def test_fresh_replaces_a_run_and_only_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(flags(out, steps=4 * BATCH)) == 0
    (out / "notes.txt").write_text("mine\n")
    assert main(flags(out, "--fresh", "--resume")) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(flags(out, "--fresh", "--seed", "5", steps=2 * BATCH)) == 0
    assert logged_updates(out) == [1, 2]
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == ["update-000000002"]
    assert verify_checkpoint(out / LATEST, trainer_state=True)["config"]["seed"] == 5
    assert (out / "notes.txt").read_text() == "mine\n"
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # nothing of the old run left aside


def files_under(root: Path) -> dict[str, bytes | str]:
    """Every file's bytes under ``root`` (a link's target text), by relative path."""
    return {str(p.relative_to(root)): (f"link -> {os.readlink(p)}" if p.is_symlink() else p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()}


def foreign_framework_folder(out: Path) -> None:
    """Another framework's output folder, with names a pisti run also uses."""
    (out / HISTORY / "hf-step-100").mkdir(parents=True)
    (out / HISTORY / "hf-step-100" / "pytorch_model.bin").write_bytes(b"\x00weights")
    (out / "config.json").write_text('{"model_type": "bert", "hidden_size": 8}\n')
    (out / "metrics.csv").write_text("epoch,loss\n1,0.5\n")


def test_fresh_refuses_a_folder_that_is_not_a_pisti_run(tmp_path, capsys):
    """Issue 48: ``--fresh`` into another framework's folder deleted its model, config and
    metrics by name; now it is refused with one line and the folder is left as it was."""
    out = tmp_path / "hf"
    foreign_framework_folder(out)
    before = files_under(tmp_path)
    assert main(flags(out, "--fresh", steps=2 * BATCH)) == 2
    error = capsys.readouterr().err
    assert one_line(error) and "is not a pisti run" in error and "config.json" in error, error
    assert files_under(tmp_path) == before
    assert main(flags(out, steps=2 * BATCH)) == 2  # without --fresh: refused as before
    assert files_under(tmp_path) == before


def test_fresh_deletes_only_what_the_run_wrote(tmp_path, capsys):
    """A pisti run with files of others inside its folders: ``--fresh`` deletes the run's
    checkpoints and logs, and leaves the rest; a file no run writes at a run's own name is
    refused, naming it."""
    out = tmp_path / "run"
    assert main(flags(out, steps=2 * BATCH)) == 0
    (out / HISTORY / "hf-step-100").mkdir()
    (out / HISTORY / "hf-step-100" / "pytorch_model.bin").write_bytes(b"\x00weights")
    (out / "tensorboard" / "notes.txt").write_text("mine\n")
    assert main(flags(out, "--fresh", "--seed", "5", steps=2 * BATCH)) == 0
    assert (out / HISTORY / "hf-step-100" / "pytorch_model.bin").read_bytes() == b"\x00weights"
    assert (out / "tensorboard" / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in (out / HISTORY).iterdir()) == ["hf-step-100", "update-000000002"]
    assert verify_checkpoint(out / LATEST, trainer_state=True)["config"]["seed"] == 5
    (out / "evaluation.json").write_text("[1, 2]\n")  # not what a run writes there
    before = files_under(tmp_path)
    assert main(flags(out, "--fresh", steps=2 * BATCH)) == 2
    error = capsys.readouterr().err
    assert one_line(error) and "evaluation.json was not written by a pisti run" in error, error
    assert files_under(tmp_path) == before


# ---------------------------------------------------------------------- writes that fail
def test_a_full_disk_during_a_checkpoint_stops_with_one_line_and_the_last_checkpoint(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    real, calls = weights.save_file, []

    def full_disk_at_the_second_checkpoint(tensors, path):
        calls.append(path)
        if len(calls) == 3:  # (model and trainer state of the first checkpoint, then the second's model)
            real(tensors, path)  # part of the file is written, as on a disk that fills
            raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")
        return real(tensors, path)

    monkeypatch.setattr(weights, "save_file", full_disk_at_the_second_checkpoint)
    assert main(flags(out, steps=6 * BATCH)) == WRITE_FAILED
    error = capsys.readouterr().err
    first = out / HISTORY / "update-000000002"
    assert one_line(error) and f"could not write {out / HISTORY / 'update-000000004'}: No space left on device" in error
    assert f"the last complete checkpoint is {first}" in error and "--resume" in error and ".tmp-" not in error
    assert [p.name for p in (out / HISTORY).iterdir()] == [first.name]  # nothing partial, no leftovers
    assert verify_checkpoint(out / LATEST, trainer_state=True)["update"] == 2
    monkeypatch.setattr(weights, "save_file", real)  # space freed: the resume continues
    assert main(flags(out, "--resume", steps=6 * BATCH)) == 0
    assert logged_updates(out) == [1, 2, 3, 4, 5, 6]


@pytest.mark.long  # a process of its own (seconds of imports): the in-process cases above cover the same path
def test_a_write_the_system_refuses_stops_the_run_the_same_way(tmp_path, capsys):
    """A real refusal by the operating system, no root needed: a file-size limit (RLIMIT_FSIZE)
    makes the first checkpoint's trainer state fail to write with EFBIG, as a full disk fails
    with ENOSPC. One line, exit status 3, nothing published; the resume starts the run again."""
    out = tmp_path / "run"
    script = (
        "import resource, signal, sys\n"
        "import torch._dynamo, training.trainer.runner\n"  # (imported before the limit)
        "from training.trainer.cli import main\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    child = subprocess.run([sys.executable, "-c", script, *flags(out)], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert child.returncode == WRITE_FAILED and one_line(child.stderr), child.stderr
    assert f"could not write {out / HISTORY / 'update-000000002'}: File too large" in child.stderr
    assert "no checkpoint of this run was written yet" in child.stderr and ".tmp-" not in child.stderr
    assert list((out / HISTORY).iterdir()) == []
    assert main(flags(out, "--resume")) == 0
    assert "starting it again" in capsys.readouterr().err and logged_updates(out) == [1, 2, 3, 4]


def test_a_log_that_cannot_be_written_names_the_file(tmp_path, monkeypatch, capsys):
    import csv as csv_module

    out = tmp_path / "run"
    real, written = csv_module.DictWriter.writerow, []

    def failing_writerow(self, row):
        written.append(row)
        if len(written) == 4:  # (the header, then) the third update's row: a full disk, no file name in the error
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, row)

    monkeypatch.setattr(csv_module.DictWriter, "writerow", failing_writerow)
    assert main(flags(out)) == WRITE_FAILED
    error = capsys.readouterr().err
    assert one_line(error) and f"could not write {out / 'metrics.csv'}: No space left on device" in error, error
    assert f"the last complete checkpoint is {out / HISTORY / 'update-000000002'}" in error


# ---------------------------------------------------------------------- divergence
def test_a_run_whose_weights_go_nan_stops_naming_the_update_and_keeps_the_last_finite_checkpoint(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    real = Trainer.train_update

    def diverging(self):
        metrics = real(self)
        if self.update == 3:
            with torch.no_grad():
                self.network.policy.card_head.weight.fill_(float("nan"))
        return metrics

    monkeypatch.setattr(Trainer, "train_update", diverging)
    assert main(flags(out, steps=6 * BATCH)) == DIVERGED
    error = capsys.readouterr().err
    assert one_line(error) and "training diverged at update 3: policy.card_head.weight holds NaN" in error, error
    assert f"the last complete checkpoint is {out / HISTORY / 'update-000000002'}" in error
    assert verify_checkpoint(out / LATEST, trainer_state=True)["update"] == 2  # finite, loadable
    assert logged_updates(out) == [1, 2]  # the diverged update is not logged
    assert not (out / "policy").exists()


def test_a_checkpoint_with_nan_is_never_written(tmp_path):
    directory = tmp_path / "checkpoint"
    with pytest.raises(ValueError, match="policy.w of its model.safetensors holds NaN or infinity"):
        weights.save_checkpoint(directory, {"policy.w": torch.tensor([1.0, float("inf")])}, {})
    assert list(tmp_path.iterdir()) == []


def test_a_huge_learning_rate_diverges_into_a_one_line_stop(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(flags(out, "--learning-rate", "1e30", "--max-grad-norm", "1e30", steps=8 * BATCH))
    error = capsys.readouterr().err
    assert code == DIVERGED and one_line(error) and "training diverged at update 1:" in error, error
    assert "no checkpoint of this run was written yet" in error and not (out / HISTORY).exists()
