"""A training run: its directory, its logs, its checkpoints and its evaluations around the updates.

:func:`run` trains a whole run into ``config.out_dir`` (OUT, laid out as
:mod:`training.trainer.run_layout` says): a fresh run or a resumed one (:func:`open_run`),
one :meth:`~training.trainer.train.Trainer.train_update` after another, a row of metrics per
update (:mod:`training.trainer.logs`), a checkpoint every ``checkpoint_every`` updates
(:func:`save_run_checkpoint`), evaluations against the baselines
(:mod:`training.trainer.evaluation`), and the final policy in ``OUT/policy``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from .atomic import write_atomic
from .config import TrainConfig
from .distributed import LOCAL, Shard
from .evaluation import evaluate_against_baselines
from .logs import RunLogs, trim_logs
from .metadata import CheckpointError, read_metadata
from .run_layout import HISTORY, LATEST, RUN_FILES, latest_run_checkpoint, prune_run_checkpoints, publish_run_checkpoint
from .train import Trainer
from .weights import save_checkpoint


def run(
    config: TrainConfig,
    resume: bool = False,
    progress: bool = True,
    resume_steps: int | None = None,
    resume_changes: Mapping[str, Any] | None = None,
    shard: Shard | None = None,
) -> Trainer:
    """Train to ``config.total_steps``, logging and checkpointing into ``config.out_dir`` (OUT).

    A fresh run (``resume`` false) refuses an OUT that already holds a run's files
    (``ValueError``: continue it with ``resume``, or choose another OUT). With ``resume``, the
    run continues from OUT's newest complete checkpoint with its own config
    (:func:`open_run`); ``resume_steps`` extends its budget and ``resume_changes`` are the
    values asked for (:func:`resume_config`: only :data:`~training.trainer.config.RESUMABLE`
    fields may differ from the checkpoint's); no complete checkpoint in OUT is a
    :class:`CheckpointError` naming it. Checkpoints go to ``OUT/checkpoints`` every
    ``checkpoint_every`` updates and at the end, ``OUT/checkpoint`` links to the newest
    (:func:`save_run_checkpoint`), the final policy to ``OUT/policy``. After a resume the logs
    (``metrics.csv``, TensorBoard) hold each update once: they are cut back to what they held
    when the checkpoint was written. ``shard``: this rank of a distributed run
    (:mod:`training.trainer.distributed`); only rank 0 writes (logs, checkpoints, evaluations)."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    trainer, saved_update = open_run(config, resume, resume_steps, resume_changes, shard)
    if not shard.main:  # another rank: it learns, rank 0 writes
        while trainer.update < trainer.num_updates:
            trainer.train_update()
        shard.barrier()  # leave with rank 0 (below): no rank tears down the process group alone
        return trainer
    logs = RunLogs(out, trainer.config)
    bar = _progress(trainer, progress)
    latest_eval = ""
    try:
        while trainer.update < trainer.num_updates:
            metrics = trainer.train_update()
            c = trainer.config
            if c.eval_every and trainer.update % c.eval_every == 0:
                metrics.update(evaluate_against_baselines(trainer))
                latest_eval = " ".join(
                    f"{k.split('/')[-1]} {v:+.2f}" for k, v in metrics.items() if k.startswith("eval/") and k.endswith("margin")
                )
            logs.write(trainer.update, trainer.step, metrics)
            if c.checkpoint_every and trainer.update % c.checkpoint_every == 0:
                save_run_checkpoint(trainer, out, logs)
                saved_update = trainer.update
            if bar is not None:
                bar.update(int(metrics["global_step"]) - bar.n)
                bar.set_postfix_str(f"{metrics['charts/steps_per_second']:,.0f} steps/s {latest_eval}")
        if saved_update != trainer.update:
            save_run_checkpoint(trainer, out, logs)
    finally:
        if bar is not None:
            bar.close()
        logs.close()
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
) -> tuple[Trainer, int | None]:
    """The trainer of a run in ``config.out_dir`` and the update of its latest checkpoint
    (``None`` for a fresh run); see :func:`run` for what is refused. On resume the newest
    complete checkpoint is taken (newer incomplete ones are passed over with a note on stderr,
    what killed saves left is removed) and the logs are cut back to that checkpoint. In a
    distributed run (``shard``) rank 0 alone checks OUT, chooses and cleans up; the other ranks
    wait for it, then build their trainers from the checkpoint it chose."""
    shard = shard or LOCAL
    out = Path(config.out_dir)
    changes = {**(resume_changes or {}), "out_dir": str(out)}
    if not shard.main:
        shard.barrier()  # rank 0 has checked OUT, chosen its checkpoint and cleaned up
        if not resume:
            return Trainer(config, shard=shard), None
        path, _ = latest_run_checkpoint(out)  # the one rank 0 chose: newer ones are gone
        if path is None:
            raise CheckpointError(f"--resume: {out} holds no complete checkpoint to continue")
        trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
        return trainer, trainer.update
    if resume:
        if not out.is_dir():
            raise CheckpointError(f"--resume: {out} does not exist: there is no run to continue (check --out)")
        path, notes = latest_run_checkpoint(out)
        for note in notes:
            print(f"pisti-train: {note}", file=sys.stderr)
        if path is None:
            raise CheckpointError(
                f"--resume: {out} holds no complete checkpoint to continue (looked in {out / HISTORY}); a run killed "
                "before its first checkpoint leaves none: remove it or choose another --out to start afresh"
            )
        trainer = Trainer.resume(path, total_steps=resume_steps, changes=changes, shard=shard)
        trim_logs(out, read_metadata(path).get("log_sizes", {}))
        prune_run_checkpoints(out, path, trainer.config.keep_checkpoints)
        saved: int | None = trainer.update
    else:
        existing = [name for name in RUN_FILES if os.path.lexists(out / name)]
        if existing:
            raise ValueError(
                f"{out} already holds a run ({', '.join(existing)}): continue it with --resume, "
                "or choose another --out (or remove it)"
            )
        out.mkdir(parents=True, exist_ok=True)
        trainer = Trainer(config, shard=shard)
        saved = None
    text = json.dumps(trainer.config.to_dict(), indent=2)
    write_atomic(out / "config.json", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    shard.barrier()
    return trainer, saved


def save_run_checkpoint(trainer: Trainer, out: str | os.PathLike, logs: "RunLogs | None" = None) -> Path:
    """Save the run's checkpoint after its current update into ``OUT/checkpoints`` and point
    ``OUT/checkpoint`` at it (:func:`~training.trainer.run_layout.publish_run_checkpoint`; the
    config's ``keep_checkpoints`` newest are kept), recording the logs' sizes (flushed first)
    so that a resume cuts them back to this instant."""
    weights, metadata, state = trainer.checkpoint_contents(LATEST)
    if logs is not None:
        metadata["log_sizes"] = logs.sizes()
    return publish_run_checkpoint(out, trainer.update, lambda path: save_checkpoint(path, weights, metadata, state),
                                  trainer.config.keep_checkpoints)



def _progress(trainer: Trainer, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    total = trainer.num_updates * trainer.config.batch_decisions
    return tqdm(total=total, initial=trainer.step, unit="step", unit_scale=True, desc="pisti-train")
