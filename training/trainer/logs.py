"""A run's logs: ``OUT/metrics.csv`` (one row per update) and TensorBoard scalars.

A checkpoint records the logs' sizes (`RunLogs.sizes`); a resume cuts them back to them
(`trim_logs`), so the logs hold each update once.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Mapping

from pisti_env.policies.metadata import LOG_FILE, CheckpointError

from .config import TrainConfig


class RunLogs:
    """A run's logs: ``OUT/metrics.csv`` (one row per update) and TensorBoard scalars in
    ``OUT/tensorboard`` (optional: without the tensorboard package, the CSV alone)."""

    def __init__(self, out: str | os.PathLike, config: TrainConfig) -> None:
        self.out = Path(out)
        self.csv_path = self.out / "metrics.csv"
        self.fields = metric_names(config)
        self.writer = _tensorboard(self.out / "tensorboard")

    def write(self, update: int, step: int, metrics: Mapping[str, float]) -> None:
        """One update's row and scalars (at x = ``step``)."""
        try:  # never through a link (a metrics.csv linked elsewhere must not get rows); errors name the file
            fd = os.open(self.csv_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
            with open(fd, "a", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=self.fields, restval="")
                if os.fstat(fd).st_size == 0:
                    w.writeheader()
                w.writerow({"update": update, **metrics})
        except OSError as error:
            raise OSError(error.errno, error.strerror or str(error), str(self.csv_path)) from None
        if self.writer is not None:
            try:
                for key, value in metrics.items():
                    self.writer.add_scalar(key, value, step)
            except OSError as error:  # raised again here from TensorBoard's writing thread, unnamed
                raise OSError(error.errno, error.strerror or str(error), str(self.out / "tensorboard")) from None

    def sizes(self) -> dict[str, int]:
        """Every log file's size (OUT-relative names), after flushing them to disk."""
        if self.writer is not None:
            self.writer.flush()
        sizes = {}
        files = [self.csv_path, *sorted((self.out / "tensorboard").glob("events.out.tfevents.*"))]
        for path in files:
            name = path.relative_to(self.out).as_posix()
            if path.is_file() and LOG_FILE.fullmatch(name):
                with open(path, "rb") as f:
                    os.fsync(f.fileno())
                sizes[name] = path.stat().st_size
        return sizes

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def trim_logs(out: str | os.PathLike, sizes: Mapping[str, int]) -> None:
    """Cut a run's logs back to ``sizes`` (a checkpoint's record, `RunLogs.sizes`): each
    file to its recorded size, and TensorBoard event files made after it removed. (A checkpoint
    of an older trainer records none: its logs are left as they are.)"""
    out = Path(out)
    if not sizes:
        return
    for path in [out / "metrics.csv", *(out / "tensorboard").glob("events.out.tfevents.*")]:
        name = path.relative_to(out).as_posix()
        if not path.is_file() or path.is_symlink():
            continue
        if name not in sizes:
            if name.startswith("tensorboard/"):
                path.unlink()
            continue
        if path.stat().st_size > sizes[name]:
            os.truncate(path, sizes[name])


def check_log_sizes(out: str | os.PathLike, sizes: Mapping[str, int], update: int, where: str | os.PathLike) -> None:
    """Check a checkpoint's record of its logs' sizes (``sizes``, saved after ``update``
    updates; ``where``: its metadata file, named in errors) against the logs in ``out`` before
    a resume cuts them (`trim_logs`): each recorded size within its file's, and
    ``metrics.csv`` cut there on a row boundary after its header and exactly ``update`` rows,
    the last one that update's. Reads only. Raises ``CheckpointError`` naming the field, so a
    record that does not match the files refuses the resume before any row is lost. (A log
    file that is missing has nothing to cut.)"""
    out = Path(out)
    for name, size in sizes.items():
        path = out / name
        if not path.is_file() or path.is_symlink():
            continue
        actual = path.stat().st_size
        if size > actual:
            raise CheckpointError(f"{where}: field 'log_sizes.{name}': {size} bytes, more than {path} holds "
                                  f"({actual}): the logs are not this checkpoint's")
        if name != "metrics.csv":
            continue
        with open(path, "rb") as f:
            head = f.read(size)
        lines = head.split(b"\n")
        rows = len(lines) - 2  # the header, then the rows; the part after the last newline must be empty
        last = lines[-2].split(b",", 1)[0].strip() if len(lines) >= 3 else b""
        if lines[-1] or rows != update or last != str(update).encode():
            raise CheckpointError(
                f"{where}: field 'log_sizes.{name}': cutting {path} to {size} bytes would not leave its header and "
                f"the {update} rows of the checkpoint's {update} updates (it leaves {max(rows, 0)} rows"
                f"{'' if not lines[-1] else ' and part of a row'}): the record does not match the logs"
            )


def metric_names(config: TrainConfig) -> list[str]:
    """The columns of metrics.csv: every figure an update can report."""
    names = [
        "update", "global_step", "losses/policy", "losses/value", "losses/entropy", "losses/approx_kl",
        "losses/clip_fraction", "losses/explained_variance", "charts/learning_rate", "charts/learner_decisions",
        "charts/steps_per_second", "time/env_seconds", "time/inference_seconds", "time/update_seconds",
        "charts/learner_margin_vs_pool", "charts/pool_games",
    ]
    if config.magnet_coef > 0:
        names.insert(names.index("losses/explained_variance"), "losses/magnet_kl")
    for baseline in config.eval_baselines:
        names += [f"eval/{baseline}_margin", f"eval/{baseline}_ci95"]
    return names



def _tensorboard(path: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is optional: the CSV file has every figure too
        return None
    return SummaryWriter(str(path))

