"""Ctrl-C and SIGTERM pause a training run (training.trainer.pause): real signals to a real
``pisti-train`` process at seeded random instants (while it still imports torch, before its
first checkpoint, between updates, inside checkpoint writes: it checkpoints after every
update). It exits 130 (SIGINT) or 143 (SIGTERM) with no traceback and prints the command that
continues; that command finishes the run, with the weights of a run never paused. A second
Ctrl-C stops it at once, and the newest complete checkpoint still continues it exactly.

Also checkpoints by wall time (they leave the run unchanged), the expected-duration line, and
``--budget`` (it sizes the run after its first update and records the steps it chose).
``PISTI_PAUSES=20 python -m pytest tests/trainer/test_pause.py -m long`` runs more signals.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import load_file  # noqa: E402

from helpers import interruptible, train_config  # noqa: E402
from training.trainer.clock import Budget, format_duration, parse_duration  # noqa: E402
from training.trainer.runner import run  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
UPDATES = 30
BATCH = 8 * 4
FLAGS = ["--envs", "8", "--rollout", "4", "--hidden-sizes", "8", "--value-hidden-sizes", "8", "--target", "0",
         "--snapshot-every", "3", "--pool-size", "2", "--eval-every", "0", "--checkpoint-every", "1",
         "--precision", "fp32", "--threads", "1", "--seed", "7", "--quiet"]
PAUSES = int(os.environ.get("PISTI_PAUSES", "10"))  # signals of the long loop

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status (Linux)")


def tiny(out: Path, **overrides) -> dict:
    """The config FLAGS describe, for ``helpers.train_config`` (the uninterrupted reference)."""
    values = dict(num_envs=8, rollout_steps=4, total_steps=UPDATES * BATCH, hidden_sizes=[8], value_hidden_sizes=[8],
                  target=None, snapshot_every=3, pool_size=2, eval_every=0, checkpoint_every=1, precision="fp32",
                  torch_threads=1, seed=7, out_dir=str(out))
    values.update(overrides)
    return values


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, torch.Tensor]:
    """The final policy of the run never paused and never checkpointed but at its end (trained
    in this process)."""
    threads = torch.get_num_threads()
    out = tmp_path_factory.mktemp("reference") / "run"
    try:
        run(train_config(**tiny(out, checkpoint_every=0, checkpoint_minutes=0)), progress=False)
    finally:
        torch.set_num_threads(threads)
    return load_file(out / "policy" / "model.safetensors")


def start(*argv: str) -> subprocess.Popen:
    """``pisti-train argv`` in a process group of its own (so that a test can kill it whole)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))))
    return subprocess.Popen([sys.executable, "-m", "training.trainer", *argv], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[str, str]:
    """Wait for ``proc``'s end (its output); its process group is killed however this ends."""
    try:
        return proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def wait_for_handlers(proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until the process catches SIGTERM (/proc/PID/status SigCgt): the pause is in place.
    (Python catches SIGINT from its own start; SIGTERM only once pisti-train asks.)"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            break
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        if proc.poll() is not None:
            break
        time.sleep(0.005)
    raise AssertionError(f"pisti-train never installed its signal handlers (exit code {proc.poll()})")


def resume_line(stderr: str, second_signal: bool = False) -> list[str]:
    """The command of the one line that says how to continue, as argv for this Python.
    ``second_signal``: a second Ctrl-C that lands just after the pause's line (while the process
    exits) adds the immediate stop's line, which must name the same command."""
    lines = [line for line in stderr.splitlines() if "continue with: " in line or "continue from" in line]
    commands = {line.rsplit(": ", 1)[1] for line in lines}
    assert len(commands) == 1 and (len(lines) == 1 or second_signal and len(lines) == 2), stderr
    command = shlex.split(lines[0].rsplit(": ", 1)[1])
    assert command[0] == "pisti-train" and "--resume" in command, lines[0]
    return command[1:]


def pause_and_resume(out: Path, signum: int, delay: float, reference: dict[str, torch.Tensor],
                     training: bool = False) -> int | None:
    """Start the run, send ``signum`` ``delay`` s after its handlers are in place (``training``:
    after its first checkpoint), check the pause, then run the printed command to the end; the
    update the run paused after (``None``: it had finished before the signal came)."""
    proc = start(*FLAGS, "--steps", str(UPDATES * BATCH), "--out", str(out))
    try:
        wait_for_handlers(proc)
        deadline = time.monotonic() + 60
        while training and not (out / "checkpoint").exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signum)
    finally:
        _, stderr = finish(proc)
    assert "Traceback" not in stderr, stderr
    if proc.returncode == 0:  # it finished before the signal came
        return None
    assert proc.returncode == 128 + signum, (proc.returncode, stderr)
    update = int(stderr.split("paused after update ", 1)[1].split(";")[0].replace(",", ""))
    assert (out / "checkpoint").resolve().name == f"update-{update:09d}"
    argv = resume_line(stderr)
    assert argv == ["--resume", "--out", str(out)]
    resumed = start(*argv)
    _, stderr = finish(resumed)
    assert resumed.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr
    final = load_file(out / "policy" / "model.safetensors")
    assert final.keys() == reference.keys()
    for key in final:
        assert torch.equal(final[key], reference[key]), key  # the pause changed nothing
    return update


def test_a_signal_at_any_instant_pauses_with_a_checkpoint_and_the_printed_command_finishes_the_run(
    tmp_path, reference
):
    rng = random.Random(37)
    # At once (torch still importing: the checkpoint of update 0), then somewhere in the updates.
    # While it imports torch: the checkpoint of update 0.
    assert pause_and_resume(tmp_path / "early", signal.SIGINT, 0.0, reference) == 0
    # Once it trains: between updates or inside a checkpoint's write (one after every update).
    assert pause_and_resume(tmp_path / "later", signal.SIGTERM, rng.uniform(0.0, 0.2), reference, training=True)


@pytest.mark.long  # a minute or more: many real signals
def test_many_signals_at_random_instants(tmp_path, reference):
    rng = random.Random(3737)
    paused = 0
    for i in range(PAUSES):
        signum = rng.choice((signal.SIGINT, signal.SIGTERM))
        training = rng.random() < 0.5  # from the start (imports included), or from the first checkpoint
        delay = rng.uniform(0.0, 1.0 if training else 4.0)
        paused += pause_and_resume(tmp_path / f"run{i}", signum, delay, reference, training) is not None
    assert paused >= 1


def stop_twice(out: Path) -> tuple[subprocess.Popen, str]:
    """Start the run; once it checkpoints, Ctrl-C it, and Ctrl-C it again as soon as it says it
    is pausing (the handler has run: a second signal is then a second call, not one merged
    with the first). Returns the process (ended) and its stderr."""
    proc = start(*FLAGS, "--steps", str(UPDATES * BATCH), "--out", str(out))
    lines: list[str] = []
    try:
        wait_for_handlers(proc)
        deadline = time.monotonic() + 60
        while not (out / "checkpoint").exists() and time.monotonic() < deadline:  # training, checkpoints written
            time.sleep(0.01)
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
        reader.start()
        proc.send_signal(signal.SIGINT)
        while proc.poll() is None and not any("pausing after the current update" in line for line in lines):
            time.sleep(0.001)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        proc.wait(60)
        reader.join(10)
    finally:
        finish(proc)
    return proc, "".join(lines)


def test_a_second_ctrl_c_stops_at_once_and_the_newest_checkpoint_still_continues(tmp_path, reference):
    for attempt in range(3):  # (the first pause may finish before the second Ctrl-C arrives)
        out = tmp_path / f"run{attempt}"
        proc, stderr = stop_twice(out)
        assert proc.returncode == 130, stderr
        assert "Traceback" not in stderr, stderr
        if "stopped at once by a second signal" in stderr:
            break
        assert "paused after update" in stderr, stderr
    else:
        pytest.fail("every run finished its pause before the second Ctrl-C")
    argv = resume_line(stderr, second_signal=True)
    assert argv == ["--resume", "--out", str(out)]
    resumed = start(*argv)
    _, stderr = finish(resumed)
    assert resumed.returncode == 0, stderr
    final = load_file(out / "policy" / "model.safetensors")
    for key in final:
        assert torch.equal(final[key], reference[key]), key


def test_checkpoints_by_time_leave_the_run_unchanged(tmp_path, reference):
    out = tmp_path / "run"
    threads = torch.get_num_threads()
    try:
        # A checkpoint after every update by the clock (every 1e-9 minutes), none by count.
        run(train_config(**tiny(out, checkpoint_every=0, checkpoint_minutes=1e-9, keep_checkpoints=UPDATES)),
            progress=False)
    finally:
        torch.set_num_threads(threads)
    saved = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert saved == [f"update-{u:09d}" for u in range(1, UPDATES + 1)]
    final = load_file(out / "policy" / "model.safetensors")
    for key in final:
        assert torch.equal(final[key], reference[key]), key


def test_the_expected_duration_is_printed_after_the_first_update_then_once_measured(tmp_path, capsys):
    threads = torch.get_num_threads()
    try:
        run(train_config(**tiny(tmp_path / "run", total_steps=4 * BATCH)), progress=True)
    finally:
        torch.set_num_threads(threads)
    lines = [line for line in capsys.readouterr().err.splitlines() if "takes about" in line]
    assert len(lines) == 2, lines
    assert "steps/s here over the first update (it warms up)" in lines[0] and "a steadier figure follows" in lines[0]
    assert "steps/s here over 3 updates" in lines[1], lines  # (the pace after the first, which warms up)
    assert all(f"the whole run ({4 * BATCH:,} steps)" in line for line in lines)


def test_a_ctrl_c_says_how_long_the_update_in_progress_still_takes(monkeypatch):
    from training.trainer.clock import RunClock
    from training.trainer.pause import Pause

    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    clock = RunClock(0.0)

    class Run:  # what update_done reads of the trainer
        update, num_updates, step = 1, 10, 1000
        config = type("Config", (), {"batch_decisions": 1000})

    clock.update_begins()
    assert clock.update_left() is None  # the first update: its length is not known yet
    now[0] += 30.0
    clock.update_done(Run, 1000)
    assert clock.update_left() == 0.0  # between updates
    clock.update_begins()
    now[0] += 12.0
    assert clock.update_left() == pytest.approx(18.0)
    said: list[str] = []
    monkeypatch.setattr("training.trainer.pause._say", said.append)
    pause = Pause("pisti-train")
    pause.update_left = clock.update_left
    pause._handle(signal.SIGINT, None)
    assert pause.requested and len(said) == 1
    assert "pausing after the current update, which ends in about 18 s (a checkpoint, then" in said[0], said
    quiet = Pause("pisti-train")  # no run told it: the line without an estimate
    quiet.update_left = lambda: None
    quiet._handle(signal.SIGINT, None)
    assert "pausing after the current update (a checkpoint, then the command that continues)" in said[1], said


def test_a_budget_sizes_the_run_after_its_first_update_and_records_its_steps(tmp_path):
    threads = torch.get_num_threads()
    out = tmp_path / "budget"
    try:
        budget = Budget(seconds=2.0, started=time.monotonic(), min_reserve=0.2)
        trainer = run(train_config(**tiny(out, total_steps=10**9)), progress=False, budget=budget)
        recorded = json.loads((out / "config.json").read_text())["total_steps"]
        # It chose whole updates that fit, trained them, and the record repeats the run exactly.
        assert trainer.update >= 1 and recorded == trainer.num_updates * BATCH
        assert trainer.step <= recorded < 10**9
        again = run(train_config(**tiny(tmp_path / "again", total_steps=recorded)), progress=False)
    finally:
        torch.set_num_threads(threads)
    if trainer.step == recorded:  # (not stopped by the clock on a machine that slowed down)
        first = load_file(out / "policy" / "model.safetensors")
        second = load_file(tmp_path / "again" / "policy" / "model.safetensors")
        for key in first:
            assert torch.equal(first[key], second[key]), key
    assert again.step == recorded


def test_durations_parse_and_print():
    assert parse_duration("10m") == 600 and parse_duration("90s") == 90 and parse_duration("1.5h") == 5400
    assert parse_duration("2") == 120  # a bare number is minutes
    for bad in ("0", "-1m", "ten", "5d", ""):
        with pytest.raises(ValueError, match="positive duration"):
            parse_duration(bad)
    assert format_duration(45) == "45 s" and format_duration(570) == "9 min 30 s"
    assert format_duration(3 * 3600 + 5 * 60) == "3 h 05 min"


def test_pisti_exploit_pauses_at_a_real_sigterm_and_resume_ends_as_an_uninterrupted_run(tmp_path, capsys, monkeypatch):
    from training.exploit.cli import main as exploit
    from training.trainer.train import Trainer

    flags = ["greedy", "--steps", str(40 * 16 * 4), "--envs", "16", "--rollout", "4", "--hidden-sizes", "8",
             "--threads", "1", "--precision", "fp32", "--curve-points", "4", "--curve-deals", "8", "--final-deals", "8",
             "--quiet"]
    threads = torch.get_num_threads()
    late = signal.signal(signal.SIGTERM, lambda *_: None)  # a signal after the run is over: ignored
    try:
        assert exploit([*flags, "--out", str(tmp_path / "whole")]) == 0
        # A real SIGTERM to this process (pisti-exploit's handler is installed in its main
        # thread) in the middle of the same run: sent as its 20th of 40 updates ends, not after
        # half the first run's time, which a run slower or faster than the first (a machine
        # whose load changes) would miss.
        train_update = Trainer.train_update

        def update_then_signal(self, *args, **kwargs):
            result = train_update(self, *args, **kwargs)
            if self.update == 20:
                os.kill(os.getpid(), signal.SIGTERM)
            return result

        with monkeypatch.context() as patch:
            patch.setattr(Trainer, "train_update", update_then_signal)
            code = exploit([*flags, "--out", str(tmp_path / "paused")])
        err = capsys.readouterr().err
        assert code == 143 and "Traceback" not in err, err
        line = next(line for line in err.splitlines() if "continue with: " in line)
        argv = shlex.split(line.rsplit("continue with: ", 1)[1])
        assert argv == ["pisti-exploit", *flags, "--out", str(tmp_path / "paused"), "--resume"]
        assert exploit(argv[1:]) == 0
    finally:
        signal.signal(signal.SIGTERM, late)
        torch.set_num_threads(threads)
    whole = json.loads((tmp_path / "whole" / "report.json").read_text())
    paused = json.loads((tmp_path / "paused" / "report.json").read_text())
    assert paused["curve"] == whole["curve"] and paused["final_edge"] == whole["final_edge"]
    first = load_file(tmp_path / "whole" / "exploiter" / "model.safetensors")
    second = load_file(tmp_path / "paused" / "exploiter" / "model.safetensors")
    for key in first:
        assert torch.equal(first[key], second[key]), key
