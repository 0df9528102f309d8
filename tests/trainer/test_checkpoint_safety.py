"""Crash-safe checkpoints (issue 16, part 1): real SIGKILLs of a training process at random
instants of a run and of its saves, in a loop. Every resume succeeds from the newest complete
checkpoint, loses at most one checkpoint interval, and the logs (CSV and TensorBoard event
files) hold each update exactly once; the run then ends bit-identical to one never killed.

The children (tests/checkpoint_child.py) fork from a forkserver that has imported torch and the
trainer already, and slow every rename and file write of a save by a few random milliseconds,
so that kills land inside saves as often as between them. ``PISTI_KILLS=500 python -m pytest
tests/trainer/test_checkpoint_safety.py`` runs the loop for as many kills as asked (default 10).
"""

from __future__ import annotations

import csv
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from safetensors.torch import load_file  # noqa: E402

import checkpoint_child  # noqa: E402  (tests/ is on sys.path)
from training.trainer.checkpoint import (  # noqa: E402
    HISTORY, LATEST, RUN_FILES, CheckpointError, latest_run_checkpoint, read_metadata, verify_checkpoint,
)
from helpers import preloaded_forkserver, train_config  # noqa: E402
from training.trainer.runner import open_run, run  # noqa: E402

UPDATES = 16
EVERY = 2  # checkpoint_every
KEEP = 2
KILLS = int(os.environ.get("PISTI_KILLS", "10"))  # kills in the run loop (more: a longer soak)


def tiny(out: Path, **overrides) -> dict:
    values = dict(
        num_envs=8, rollout_steps=4, total_steps=8 * 4 * UPDATES, target=None, hidden_sizes=[8],
        value_hidden_sizes=[8], snapshot_every=3, pool_size=2, eval_every=0, checkpoint_every=EVERY,
        keep_checkpoints=KEEP, torch_threads=1, precision="fp32", out_dir=str(out),
    )
    values.update(overrides)
    return values


# What a child would otherwise import on its own first (torch.optim.Adam imports torch._dynamo,
# seconds): the forkserver imports it once, and so does this process before timing a run.
PRELOAD = ["torch", "torch._dynamo", "torch.utils.tensorboard", "training.trainer.runner", "checkpoint_child"]


@pytest.fixture(scope="module")
def forkserver():
    return preloaded_forkserver(PRELOAD)


def kill_at_random(context, target, args, delay: float, rng: random.Random) -> bool:
    """Start ``target(*args, ready)``, SIGKILL it a random time (up to ``delay`` s) after it is
    ready; True if it was killed (not finished first)."""
    ready = context.Event()
    child = context.Process(target=target, args=(*args, ready), daemon=True)
    child.start()
    try:
        assert ready.wait(120), "the child never started"
        time.sleep(rng.uniform(0.0, delay))
        finished = not child.is_alive()
        os.kill(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        finished = True
    finally:
        child.join(60)
        if child.is_alive():  # pragma: no cover - never leave a child behind
            child.kill()
            child.join()
    if finished or child.exitcode != -signal.SIGKILL:  # it ended on its own: it must have succeeded
        assert child.exitcode == 0, f"the child failed (exit code {child.exitcode})"
        return False
    return True


def complete_updates(path: Path) -> list[int]:
    """The update column of metrics.csv's complete lines (a line cut by the kill is not one)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    whole = "".join(line for line in lines if line.endswith("\n"))
    return [int(row["update"]) for row in csv.DictReader(whole.splitlines())]


def tensorboard_steps(directory: Path, tag: str = "losses/policy") -> list[int]:
    """Every step logged for ``tag`` across the run's event files, the files in the order they
    were started (raw records: no reader-side deduplication). The files are ordered by their
    first record's wall time, not by name: a name holds the second it was made and then the
    pid, so two runs in one second (fast on an idle machine) would sort by pid."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    files = [list(EventFileLoader(str(path)).Load()) for path in directory.glob("events.out.tfevents.*")]
    steps = []
    for events in sorted((events for events in files if events), key=lambda events: events[0].wall_time):
        for event in events:
            steps += [event.step for value in event.summary.value if value.tag == tag]
    return steps


@pytest.mark.long  # minutes: SIGKILLs at random instants of real runs; CI runs it in the long step
def test_sigkill_at_random_instants_of_runs_resumes_losing_at_most_one_interval(tmp_path, forkserver):
    rng = random.Random(16)
    reference_out = tmp_path / "reference"
    start = time.perf_counter()
    reference = run(train_config(**tiny(reference_out)), progress=False)
    duration = time.perf_counter() - start  # only to spread the kills over a run's length
    assert reference.update == UPDATES
    # Kills spread over about three checkpoint intervals after the child is ready: about as many
    # land in saves as between them, and the run advances by about an interval per attempt.
    span = 3 * EVERY * duration / UPDATES + 0.05
    kills = resumes = rounds = 0
    while kills < KILLS:  # one round is one run, killed until it completes
        out = tmp_path / f"run-{rounds}"
        more, resumed = killed_run(out, forkserver, span, rng, KILLS - kills)
        kills, resumes = kills + more, resumes + resumed
        check_finished_run(out, reference_out)
        rounds += 1
    assert resumes >= KILLS // 3, (kills, resumes)


def killed_run(out: Path, forkserver, span: float, rng: random.Random, wanted: int) -> tuple[int, int]:
    """Run the tiny config into ``out`` in children killed at random instants (until ``wanted``
    kills or the run is complete), checking after each kill what a resume would take, then to
    its end; returns (kills, checkpoints found after a kill)."""
    values = tiny(out)
    kills = resumes = 0
    for attempt in range(4 * wanted + 8):
        resume = out.exists() and latest_run_checkpoint(out)[0] is not None
        kills += kill_at_random(forkserver, checkpoint_child.train, (values, resume, rng.randrange(1 << 30)), span, rng)
        path, notes = latest_run_checkpoint(out)  # clears what a killed save left
        assert not notes, notes  # a published checkpoint is always complete
        logged = complete_updates(out / "metrics.csv")
        if path is None:
            # Killed before the first checkpoint: a fresh run refuses the leftovers; --resume
            # starts the run again from its config.json, or, killed before it wrote one, has
            # nothing to start from. The loop then starts again in a clean directory.
            assert max(logged, default=0) <= EVERY, (attempt, logged)
            if out.exists() and any(os.path.lexists(out / name) for name in RUN_FILES):
                with pytest.raises(ValueError, match="already holds a run"):
                    open_run(train_config(**values), resume=False)
            if (out / "config.json").exists():
                trainer, saved = open_run(train_config(**values), resume=True)
                assert saved is None and trainer.update == 0 and not (out / "metrics.csv").exists()
            else:  # (a child killed before it made OUT leaves nothing: the resume says OUT is missing)
                expected = "no complete checkpoint" if out.exists() else "does not exist"
                with pytest.raises(CheckpointError, match=expected):
                    open_run(train_config(**values), resume=True)
            shutil.rmtree(out, ignore_errors=True)
            continue
        resumes += 1
        saved = read_metadata(path)["update"]
        assert max(logged) - saved <= EVERY, (attempt, logged, saved)  # at most one interval lost
        assert (out / LATEST).resolve() == path.resolve()
        assert not [p.name for p in (out / HISTORY).iterdir() if p.name.startswith(".")], "strays left"
        if saved == UPDATES or kills >= wanted:
            break
    resume = out.exists() and latest_run_checkpoint(out)[0] is not None
    assert run(train_config(**values), resume=resume, progress=False).update == UPDATES
    return kills, resumes


def check_finished_run(out: Path, reference_out: Path) -> None:
    """A run completed through kills and resumes: each update logged once (CSV and TensorBoard
    event files), the final policy bit-identical to the uninterrupted run's, ``keep``
    checkpoints left and ``OUT/checkpoint`` linking the newest."""
    assert complete_updates(out / "metrics.csv") == list(range(1, UPDATES + 1))
    assert tensorboard_steps(out / "tensorboard") == tensorboard_steps(reference_out / "tensorboard")
    assert len(set(tensorboard_steps(out / "tensorboard"))) == UPDATES
    ours, theirs = load_file(out / "policy" / "model.safetensors"), load_file(reference_out / "policy" / "model.safetensors")
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    kept = sorted(p.name for p in (out / HISTORY).iterdir())
    assert kept == [f"update-{u:09d}" for u in (UPDATES - EVERY, UPDATES)]
    assert (out / LATEST).is_symlink() and (out / LATEST).resolve() == (out / HISTORY / kept[-1]).resolve()


def test_sigkill_during_saves_over_one_directory_always_leaves_a_complete_checkpoint(tmp_path, forkserver):
    """``Trainer.save(directory)`` over an existing checkpoint (``OUT/policy``, a best
    response's ``exploiter``): killed at any instant, the directory holds the old checkpoint
    or the new one, complete; the temporaries the kill left go with the next save."""
    rng = random.Random(7)
    directory = tmp_path / "policy"
    values = tiny(tmp_path / "unused")
    steps = []
    for attempt in range(8):
        assert kill_at_random(forkserver, checkpoint_child.save_repeatedly, (values, str(directory), attempt), 0.4, rng)
        if not directory.exists():  # killed before the first save was published
            continue
        metadata = verify_checkpoint(directory)  # complete: schema and every hash
        steps.append(metadata["step"])
    assert len(steps) >= 5
    strays = [p for p in tmp_path.iterdir() if p.name.startswith(".policy.")]
    from training.trainer.train import Trainer

    Trainer(train_config(**values)).save(directory)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".policy.")], strays
