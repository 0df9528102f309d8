"""One seed of one algorithm under the protocol: train, then rate every snapshot.

[run_seed][training.learning.runs.run_seed] runs the algorithm's command
([training.learning.algorithms][]) as a child process with the seed, the budget and the
evaluation steps, its output kept in ``WORK/TASK/ALGORITHM/seed-S/train.log``; then it rates the
snapshots the command wrote with the benchmark's own code
([play_task][training.benchmark.run.play_task]): the points before the last on the curve deal
set, the last on the task's whole deal set. Everything it does is a function of the seed (the
training's games and sampling, the deals, the players' tie-breaks), so a seed gives the same
record wherever it runs: in this process, in a worker process (``--workers``) or as a Ray task
(``--ray``, [run_seeds][training.learning.runs.run_seeds]).
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Sequence

from training.algorithms.recipe import SNAPSHOT_PATTERN

from .algorithms import Algorithm
from .protocol import LearningTask

LOG_TAIL = 20  # lines of a failed training's log quoted in the error


class RunFailed(RuntimeError):
    """A seed's training command failed or wrote other snapshots than asked; the message names
    the seed, the command's exit and its log."""


def _tail(path: Path, lines: int = LOG_TAIL) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "; ".join(line.strip() for line in text[-lines:] if line.strip())[-2000:]


def _clear_snapshots(folder: Path) -> None:
    """Remove the snapshots and log a previous, unfinished run of this seed left (only files
    of ours: snapshot names and ``train.log``)."""
    if not folder.is_dir():
        return
    for entry in folder.iterdir():
        if (SNAPSHOT_PATTERN.match(entry.name) or entry.name == "train.log") and entry.is_file() and not entry.is_symlink():
            entry.unlink()


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rate_snapshot(path: str, learning: LearningTask, final: bool, threads: int = 1, device: str = "cpu") -> dict[str, Any]:
    """A snapshot's rating: on the curve deal set, or (``final``) on the task's whole deal set.
    Returns ``{"rating", "half_width", "panel_mean", "opponents"}``."""
    from training.benchmark.rating import anchored_rating
    from training.benchmark.run import play_task

    task = learning.task
    result = play_task(path, task, count=None if final else learning.curve_count, threads=threads, device=device)
    rating = anchored_rating(result["panel_mean"], task.anchors)
    opponents = [{"opponent": o["opponent"], "mean": o["metric"]["mean"], "half_width": o["metric"]["half_width"]}
                 for o in result["opponents"]]
    return {"rating": rating["rating"], "half_width": rating["half_width"], "panel_mean": result["panel_mean"],
            "opponents": opponents}


def run_seed(algorithm: Algorithm, learning: LearningTask, seed: int, budget_steps: int, work_dir: str,
             threads: int = 1, device: str = "cpu", log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train ``algorithm`` with ``seed`` for ``budget_steps`` and rate its snapshots; returns
    the run's record for the results file (see `training.learning.results`)."""
    import torch

    torch.set_num_threads(threads)
    say = log or (lambda line: None)
    folder = Path(work_dir) / learning.name / algorithm.name / f"seed-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    _clear_snapshots(folder)
    points = learning.evaluation_steps(budget_steps)
    settings = learning.task.game_settings
    argv = algorithm.argv(seed, budget_steps, points, str(folder), threads, device, settings.num_players,
                          settings.partnerships)
    log_path = folder / "train.log"
    say(f"{algorithm.name} seed {seed}: training ({budget_steps:,} steps), log in {log_path}")
    start, children = time.perf_counter(), _children_cpu()
    with open(log_path, "wb") as out:
        exit_code = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    train_seconds, train_cpu = time.perf_counter() - start, _children_cpu() - children
    if exit_code != 0:
        raise RunFailed(f"{algorithm.name} seed {seed}: the training command exited {exit_code} "
                        f"({_tail(log_path)}); the whole log is {log_path}")
    snapshots = sorted(entry for entry in folder.iterdir() if SNAPSHOT_PATTERN.match(entry.name))
    steps = [int(SNAPSHOT_PATTERN.match(s.name).group(1)) for s in snapshots]
    if len(snapshots) != len(points) or any(got < want for got, want in zip(steps, points)):
        raise RunFailed(f"{algorithm.name} seed {seed}: asked for snapshots at {points}, the command wrote "
                        f"{[s.name for s in snapshots]} in {folder}")
    start, cpu = time.perf_counter(), time.process_time()
    curve, final = [], None
    for i, (path, at) in enumerate(zip(snapshots, steps)):
        is_final = i == len(snapshots) - 1
        rated = rate_snapshot(str(path), learning, is_final, threads, device)
        curve.append([at, rated["rating"]])
        say(f"{algorithm.name} seed {seed}: {at:,} steps: rating {rated['rating']:.0f} ± {rated['half_width']:.0f}"
            + (" (whole deal set)" if is_final else ""))
        if is_final:
            final = rated
    assert final is not None
    return {"seed": seed, "rating": final["rating"], "rating_half_width": final["half_width"], "curve": curve,
            "final": {"panel_mean": final["panel_mean"], "opponents": final["opponents"]},
            "train_seconds": round(train_seconds, 1), "eval_seconds": round(time.perf_counter() - start, 1),
            # CPU time does not grow with other jobs on the machine as the wall time does
            "train_cpu_seconds": round(train_cpu, 1), "eval_cpu_seconds": round(time.process_time() - cpu, 1)}


def run_seeds(algorithm: Algorithm, learning: LearningTask, seeds: Sequence[int], budget_steps: int, work_dir: str,
              *, threads: int = 1, device: str = "cpu", workers: int = 1, ray: str | None = None,
              log: Callable[[str], None] | None = None, on_run: Callable[[dict[str, Any]], None] | None = None
              ) -> list[dict[str, Any]]:
    """[run_seed][training.learning.runs.run_seed] for each seed: one after another, in
    ``workers`` processes, or as Ray tasks (``ray``: an address for
    [connect][training.harness.ray_backend.connect]). ``on_run`` is called with each record as
    it finishes (the caller saves it); the records come back in the order of ``seeds``."""
    jobs = [(algorithm, learning, seed, budget_steps, os.path.abspath(work_dir), threads, device) for seed in seeds]
    done: dict[int, dict[str, Any]] = {}

    def finished(record: dict[str, Any]) -> None:
        done[record["seed"]] = record
        if log is not None:
            log(f"{algorithm.name} seed {record['seed']}: rating {record['rating']:.0f} "
                f"({record['train_seconds']:.0f} s training, {record['eval_seconds']:.0f} s rating)")
        if on_run is not None:
            on_run(record)

    if ray is not None:
        from training.harness.ray_backend import connect

        ray_module = connect(ray)
        task = ray_module.remote(num_cpus=threads, max_retries=1)(run_seed)
        pending = {task.remote(*job): job[2] for job in jobs}
        while pending:
            ready, _ = ray_module.wait(list(pending), num_returns=1)
            for ref in ready:
                pending.pop(ref)
                finished(ray_module.get(ref))
    elif workers > 1:
        # spawn, not fork: a forked torch can hang on its thread pool's locks
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(run_seed, *job) for job in jobs]
            for future in as_completed(futures):
                finished(future.result())
    else:
        for job in jobs:
            finished(run_seed(*job, log=log))
    return [done[seed] for seed in seeds]
