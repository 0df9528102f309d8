"""A training run: its directory, its logs, its checkpoints and its evaluations around the updates.

[`run`][training.trainer.runner.run] trains a whole run into ``config.out_dir`` (OUT, laid out as
`training.trainer.run_layout` says): a fresh run or a resumed one (`open_run`),
one `train_update` after another, a row of metrics per
update (`training.trainer.logs`), a checkpoint every ``checkpoint_every`` updates
(`save_run_checkpoint`), evaluations against the baselines
(`training.trainer.evaluation`), and the final policy in ``OUT/policy``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from pisti_env.policies.metadata import CheckpointError, read_metadata

from .atomic import write_atomic
from .clock import Budget, RunClock
from .config import TrainConfig
from .distributed import LOCAL, Shard
from .evaluation import evaluate_against_baselines
from .logs import RunLogs, check_log_sizes, trim_logs
from .pause import Pause, Paused
from .failures import stop_if_diverged, write_failed
from .lock import RunLock
from .resume import restart_config
from .run_layout import (
    LATEST, RUN_FILES, check_run_directory, clear_run, find_run_checkpoint, plan_clear, prune_run_checkpoints,
    publish_run_checkpoint, tidy_run,
)
from .train import Trainer
from .weights import save_checkpoint


def run(
    config: TrainConfig,
    resume: bool = False,
    progress: bool = True,
    resume_steps: int | None = None,
    resume_changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
    pause: Pause | None = None,
    budget: Budget | None = None,
    fresh: bool = False,
) -> Trainer:
    """Train to ``config.total_steps``, logging and checkpointing into ``config.out_dir`` (OUT).

    OUT is locked first (`lock_run`): a second trainer into it is refused
    (`RunInUse`, naming the process that holds it). A new run
    (``resume`` false) refuses an OUT that already holds a run's files (``ValueError``:
    continue it with ``resume``, or choose another OUT), unless ``fresh``: then the old run is
    deleted. With ``resume``, the run continues from OUT's newest complete checkpoint with its
    own config (`open_run`), or starts again from its ``config.json`` if it has none;
    ``resume_steps`` extends its budget and ``resume_changes`` are the values asked for
    (`resume_config`: only `RESUMABLE` fields may differ
    from the checkpoint's; a checkpoint path among the saved players must be among them). A
    write that fails (a full disk) stops the run with
    `WriteFailed`, weights gone NaN or infinite with
    `Diverged`, each naming the last complete checkpoint.
    Checkpoints go to ``OUT/checkpoints`` every
    ``checkpoint_every`` updates and at the end, ``OUT/checkpoint`` links to the newest
    (`save_run_checkpoint`), the final policy to ``OUT/policy``. After a resume the logs
    (``metrics.csv``, TensorBoard) hold each update once: they are cut back to what they held
    when the checkpoint was written. ``shard``: this rank of a distributed run
    (`training.trainer.distributed`); only rank 0 writes (logs, checkpoints, evaluations).

    A checkpoint is also written every ``checkpoint_minutes`` of wall time
    (`RunClock`). ``pause``: once it is
    `requested` (a signal), the run stops after the current
    update, writes its checkpoint and raises `Paused` (the
    ranks of a distributed run agree on the update first). ``budget``: a wall-clock budget
    (`Budget`): the run stops when no further update fits and
    ends as a finished run does (checkpoint, policy, evaluation); with ``budget.size_run`` its
    ``total_steps`` is chosen after its first update. With ``progress``, the expected duration
    of the run, measured on its first updates, is printed once. A resumed run that was already
    complete trains nothing: it says so, writes its policy again and re-runs (and prints) its
    final evaluation."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    lock = lock_run(out, resume, shard)
    try:
        return _run_locked(config, resume, progress, resume_steps, resume_changes, shard, pause, budget, fresh)
    except OSError as error:  # a write failed (what a run reads is checked, as ValueErrors): one line naming it
        raise (write_failed(error, out) if shard.main else error) from None
    finally:
        if lock is not None:
            lock.release()


def _run_locked(
    config: TrainConfig, resume: bool, progress: bool, resume_steps: int | None,
    resume_changes: Mapping[str, Any] | None, shard: Shard, pause: Pause | None, budget: Budget | None, fresh: bool,
) -> Trainer:
    """[`run`][training.trainer.runner.run]'s work, OUT locked."""
    out = Path(config.out_dir)
    trainer, saved_update = open_run(config, resume, resume_steps, resume_changes, shard, fresh)
    clock = RunClock(trainer.config.checkpoint_minutes, budget)
    if pause is not None:  # a Ctrl-C says how long the update in progress still takes
        pause.update_left = clock.update_left

    def stop() -> bool:  # every rank asks here, before each update: they stop after the same one
        return shard.any_rank((pause is not None and pause.requested) or clock.out_of_time())

    if not shard.main:  # another rank: it learns, rank 0 writes
        while trainer.update < trainer.num_updates and not stop():
            clock.update_begins()
            trainer.train_update()
            stop_if_diverged(trainer, out)  # every rank holds the same weights: all stop together
            clock.update_done(trainer, trainer.config.batch_decisions * shard.world)
        shard.barrier()  # leave with rank 0 (below): no rank tears down the process group alone
        if pause is not None and pause.requested:
            raise Paused(pause.signum, trainer.update)
        return trainer
    logs = RunLogs(out, trainer.config)
    complete = resume and trainer.update >= trainer.num_updates
    if complete and progress:  # nothing to train: the run's end again (policy, final evaluation), said so
        c = trainer.config
        again = (f"its final evaluation again ({c.eval_deals} deals)" if c.eval_every and c.eval_deals
                 else "its policy again")
        print(f"pisti-train: the run in {out} is complete ({trainer.step:,} steps, {trainer.update:,} updates): nothing "
              f"to train; {again}. --resume --steps N extends it", file=sys.stderr)
    bar = _progress(trainer, progress and not complete)
    latest_eval = ""
    stopped = False
    try:
        while trainer.update < trainer.num_updates:
            if stop():
                stopped = True
                break
            clock.update_begins()
            metrics = trainer.train_update()
            stop_if_diverged(trainer, out)  # before anything of this update is logged or saved
            c = trainer.config
            if c.eval_every and trainer.update % c.eval_every == 0:
                metrics.update(evaluate_against_baselines(trainer))
                latest_eval = " ".join(
                    f"{k.split('/')[-1]} {v:+.2f}" for k, v in metrics.items() if k.startswith("eval/") and k.endswith("margin")
                )
            logs.write(trainer.update, trainer.step, metrics)
            said = clock.update_done(trainer, c.batch_decisions * shard.world)  # (a budget run is sized here)
            if trainer.config.total_steps != c.total_steps:
                _write_config(out, trainer.config)
                if bar is not None:
                    bar.total = trainer.num_updates * c.batch_decisions
            if said and bar is not None:
                bar.write(f"pisti-train: {said}", file=sys.stderr)
            if c.checkpoint_every and trainer.update % c.checkpoint_every == 0 or clock.checkpoint_due():
                save_run_checkpoint(trainer, out, logs)
                saved_update = trainer.update
                clock.checkpointed()
            if bar is not None:
                bar.update(int(metrics["global_step"]) - bar.n)
                bar.set_postfix_str(f"{metrics['charts/steps_per_second']:,.0f} steps/s {latest_eval}")
        if saved_update != trainer.update:
            saved = save_run_checkpoint(trainer, out, logs)
        else:
            saved = out / LATEST if saved_update is not None else None
    finally:
        if bar is not None:
            bar.close()
        logs.close()
    if stopped and pause is not None and pause.requested:
        shard.barrier()  # the other ranks leave with this one
        raise Paused(pause.signum, trainer.update, saved)
    if stopped and progress:
        print(f"pisti-train: the budget is spent: stopped after {trainer.update:,} of {trainer.num_updates:,} updates "
              f"({trainer.step:,} steps)", file=sys.stderr)
    trainer.save(out / "policy", with_trainer_state=False)
    c = trainer.config
    if c.eval_every and c.eval_deals:  # the evaluation summary of the final policy
        summary = {"step": trainer.step, "deals": c.eval_deals, **evaluate_against_baselines(trainer)}
        write_atomic(out / "evaluation.json", lambda tmp: Path(tmp).write_text(json.dumps(summary, indent=2), encoding="utf-8"))
        if progress:
            print("final policy, mean score difference per hand over duplicate deals: " + ", ".join(
                f"vs {b} {summary[f'eval/{b}_margin']:+.2f} ± {summary[f'eval/{b}_ci95']:.2f}" for b in c.eval_baselines
            ) + f" ({c.eval_deals} deals; `pisti-eval` for more)")
    # Every rank waits here until rank 0 has written everything, then all leave the process
    # group together: a rank tearing gloo down while rank 0 still worked was seen to abort.
    shard.barrier()
    return trainer


def open_run(
    config: TrainConfig,
    resume: bool,
    resume_steps: int | None = None,
    resume_changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
    fresh: bool = False,
) -> tuple[Trainer, int | None]:
    """The trainer of a run in ``config.out_dir`` and the update of its latest checkpoint
    (``None`` for a run that starts); see [`run`][training.trainer.runner.run] for what is refused.

    Everything is read and checked before anything in OUT changes, so a refused resume leaves
    the run exactly as it was: the run's own files (`check_run_directory`), the newest
    complete checkpoint (`find_run_checkpoint`; newer incomplete ones are passed over with
    a note on stderr), the trainer built from it (`resume_trainer`).
    Only then are what killed saves left cleared, the logs cut back to that checkpoint and the
    older checkpoints pruned. A resumed run without any checkpoint (stopped before its first)
    starts again from its ``config.json`` (`restart_config`),
    saying so on stderr; one whose checkpoints are all damaged is refused (never started over).
    ``fresh``: a run already in OUT is deleted once the new trainer is built: only what the run's own records
    show it wrote (`clear_run`); a folder that is not a pisti run is refused (``ValueError``). In a distributed run (``shard``) rank 0 alone checks OUT, chooses and
    cleans up; the other ranks wait for it, then build their trainers as it chose."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    changes = {**(resume_changes or {}), "out_dir": str(out)}
    if not shard.main:
        shard.barrier()  # rank 0 has checked OUT, chosen its checkpoint and cleaned up
        if not resume:
            return Trainer(config, shard=shard), None
        path, _ = find_run_checkpoint(out)  # the one rank 0 chose: newer ones are gone
        if path is None:  # rank 0 started the run again from its config
            return Trainer(restart_config(out, changes), shard=shard), None
        trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
        return trainer, trainer.update
    if resume:
        if not out.is_dir():
            raise CheckpointError(f"--resume: {out} does not exist: there is no run to continue (check --out)")
        check_run_directory(out)
        path, notes = find_run_checkpoint(out)
        if path is None and notes:  # checkpoints there, none complete: never start again over them
            raise CheckpointError(
                f"--resume: {out} holds no complete checkpoint, only damaged ones ({'; '.join(notes)}): restore one, "
                "or start afresh with --fresh (which deletes them) or another --out"
            )
        for note in notes:
            print(f"pisti-train: {note}", file=sys.stderr)
        if path is None:
            trainer = Trainer(restart_config(out, changes), shard=shard)
            print(f"pisti-train: {out} holds no complete checkpoint (the run stopped before its first): starting it "
                  f"again from its saved config, {out / 'config.json'}", file=sys.stderr)
            clear_run(out, keep=("config.json",))
            saved: int | None = None
        else:
            trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
            log_sizes = read_metadata(path).get("log_sizes", {})
            check_log_sizes(out, log_sizes, trainer.update, path / "metadata.json")
            # Checked: from here on the run changes.
            tidy_run(out, path)
            trim_logs(out, log_sizes)
            prune_run_checkpoints(out, path, trainer.config.keep_checkpoints)
            saved = trainer.update
    else:
        existing = [name for name in RUN_FILES if os.path.lexists(out / name)]
        if existing and not fresh:
            raise ValueError(
                f"{out} already holds a run ({', '.join(existing)}): continue it with --resume, start it afresh with "
                "--fresh (which deletes it), or choose another --out"
            )
        if existing:
            plan_clear(out)  # a folder that is not a pisti run is refused before anything is built
        trainer = Trainer(config, shard=shard)
        if existing:
            clear_run(out)
        out.mkdir(parents=True, exist_ok=True)
        saved = None
    _write_config(out, trainer.config)
    shard.barrier()
    return trainer, saved


def lock_run(out: Path, resume: bool, shard: Shard) -> RunLock | None:
    """Rank 0's lock on OUT (`RunLock`), taken before anything
    in OUT changes; OUT is made for a new run. ``None`` on the other ranks, and for a resume of
    an OUT that does not exist (`open_run` refuses it)."""
    if not shard.main:
        return None
    if not resume:
        out.mkdir(parents=True, exist_ok=True)
    elif not out.is_dir():
        return None
    return RunLock(out).acquire()


def save_run_checkpoint(trainer: Trainer, out: str | os.PathLike, logs: "RunLogs | None" = None) -> Path:
    """Save the run's checkpoint after its current update into ``OUT/checkpoints`` and point
    ``OUT/checkpoint`` at it (`publish_run_checkpoint`; the
    config's ``keep_checkpoints`` newest are kept), recording the logs' sizes (flushed first)
    so that a resume cuts them back to this instant."""
    weights, metadata, state = trainer.checkpoint_contents(LATEST)
    if logs is not None:
        metadata["log_sizes"] = logs.sizes()
    return publish_run_checkpoint(out, trainer.update, lambda path: save_checkpoint(path, weights, metadata, state),
                                  trainer.config.keep_checkpoints)


def _write_config(out: Path, config: TrainConfig) -> None:
    """``OUT/config.json``: the run's config (written atomically)."""
    text = json.dumps(config.to_dict(), indent=2)
    write_atomic(out / "config.json", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))



def _progress(trainer: Trainer, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    total = trainer.num_updates * trainer.config.batch_decisions
    return tqdm(total=total, initial=trainer.step, unit="step", unit_scale=True, desc="pisti-train")
