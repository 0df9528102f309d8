"""``pisti-learn``: train an algorithm for a learning task's seeds and write its results file.

Examples::

    pisti-learn ppo --task pisti-2p                       # 5 seeds x 5M steps -> benchmarks/learning/pisti-2p/ppo.json
    pisti-learn dmc --task pisti-2p --workers 2           # two seeds at a time (one core each)
    pisti-learn dqn --task pisti-2p --seeds 0 1           # some of the seeds; run again for the rest
    pisti-learn nfsp --task pisti-2p --ray auto           # the seeds as Ray tasks on a cluster
    pisti-learn my-algo --command "python my_algo.py"     # your own algorithm (docs/learning.md)
    pisti-learn ppo --task pisti-2p --budget long         # the long budget (bigger machines)

Each seed trains in a child process (its output in ``--work-dir``), writes a snapshot at each
evaluation point, and the snapshots are rated on the task's deals; the results file is written
after every seed, and a second call continues it, playing only the seeds it lacks (``--fresh``
starts it again). ``pisti-learn-report`` turns results files into the table and plots.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any, Sequence

from pisti_env.tools.flags import ArgumentParser, fail, non_negative_int, positive_int, torch_device, writable_dir

from .algorithms import algorithm_names, resolve_algorithm
from .protocol import LEARNING_TASKS, LONG, STANDARD, get_learning_task
from .results import RESULTS_DIR, RESULTS_FORMAT, RESULTS_VERSION, read_results, results_path, write_results

PROG = "pisti-learn"


def _budget(text: str) -> str | int:
    if text in (STANDARD, LONG):
        return text
    return positive_int(text)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0],
                            epilog=f"algorithms: {', '.join(algorithm_names())}")
    parser.add_argument("algorithm", help="a built-in algorithm's name, or your own's with --command")
    parser.add_argument("--task", default="pisti-2p", choices=list(LEARNING_TASKS), help="the learning task")
    parser.add_argument("--budget", type=_budget, default=STANDARD, metavar="BUDGET",
                        help="'standard' (default), 'long', or a number of steps (a custom budget: its own file)")
    parser.add_argument("--seeds", type=non_negative_int, nargs="+", default=None,
                        help="the seeds to run (default: the task's reported seeds, 0-4); the task's tuning seeds "
                             "(1000-1009) go to a file of their own")
    parser.add_argument("--command", default=None, metavar="CMD",
                        help="run this command as the algorithm (it must keep the contract of training.algorithms.recipe)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads per seed (training and rating)")
    parser.add_argument("--workers", type=positive_int, default=1, help="seeds trained at the same time (processes)")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="run the seeds as Ray tasks: a local Ray (no ADDRESS), 'auto' or HOST:PORT")
    parser.add_argument("--device", type=torch_device, default="cpu", help="torch device for training and rating")
    parser.add_argument("--out", type=writable_dir, default=RESULTS_DIR, help="where results files go (OUT/TASK/ALGO.json)")
    parser.add_argument("--work-dir", type=writable_dir, default=os.path.join("runs", "learning"),
                        help="where each seed's snapshots and training log go")
    parser.add_argument("--fresh", action="store_true", help="start the results file again instead of continuing it")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def file_name(algorithm: str, budget: str | int, tuning: bool) -> str:
    """The results file's name in the task's folder: ``ALGO``, ``ALGO-long``, ``ALGO-STEPS``,
    with ``-tuning`` for the tuning seeds."""
    name = algorithm if budget == STANDARD else f"{algorithm}-{budget}"
    return name + ("-tuning" if tuning else "")


def command_line(args: Any) -> str:
    """The ``pisti-learn`` command that reproduces the file (every seed it holds)."""
    parts = [PROG, args.algorithm, "--task", args.task]
    if args.budget != STANDARD:
        parts += ["--budget", str(args.budget)]
    if args.command is not None:
        parts += ["--command", args.command]
    return shlex.join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the results file holds the seeds finished so far, run the same command to "
              "continue", file=sys.stderr)
        return 130
    except (ValueError, RuntimeError, OSError) as error:
        return fail(PROG, error)


def _run(args: Any) -> int:
    from training.benchmark.run import hardware
    from training.harness.report import versions

    from .runs import run_seeds

    learning = get_learning_task(args.task)
    learning.check()
    algorithm = resolve_algorithm(args.algorithm, args.command)
    budget_steps = learning.budget_steps(args.budget)
    seeds = list(args.seeds) if args.seeds is not None else list(learning.seeds)
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds repeats a seed: {seeds}")
    tuning = [s for s in seeds if s in learning.tuning_seeds]
    if tuning and len(tuning) != len(seeds):
        raise ValueError(f"--seeds mixes tuning seeds {tuning} with others: tuning seeds are kept apart")
    path = results_path(args.out, learning.name, file_name(algorithm.name, args.budget, bool(tuning)))
    document: dict[str, Any] = {
        "format": RESULTS_FORMAT, "format_version": RESULTS_VERSION, "algorithm": algorithm.name,
        "family": algorithm.family, "task": learning.id, "budget": args.budget if isinstance(args.budget, str) else "custom",
        "budget_steps": budget_steps, "evaluation_steps": learning.evaluation_steps(budget_steps),
        "seeds_kind": "tuning" if tuning else "reported", "command": command_line(args),
        "algorithm_command": algorithm.command_text, "protocol": learning.to_dict(), "runs": [],
    }
    if path.exists() and not args.fresh:
        previous = read_results(path)
        for key in ("algorithm", "task", "budget_steps", "algorithm_command"):
            if previous.get(key) != document[key]:
                raise ValueError(f"{path} holds results of another run ({key} {previous.get(key)!r}, this run "
                                 f"{document[key]!r}): use --fresh to replace it, or another --out")
        document["runs"] = previous["runs"]
    have = {run["seed"] for run in document["runs"]}
    todo = [s for s in seeds if s not in have]
    say = (lambda line: None) if args.quiet else (lambda line: print(f"{PROG}: {line}", flush=True))
    if not todo:
        say(f"{path} already holds seeds {sorted(have)}: nothing to run")
        return 0
    say(f"{algorithm.name} on {learning.id}: seeds {todo}, {budget_steps:,} steps each, results in {path}")

    def save(record: dict[str, Any]) -> None:
        document["runs"] = sorted([*document["runs"], record], key=lambda run: run["seed"])
        document["versions"] = versions()
        document["hardware"] = hardware(args.threads, args.device)
        write_results(path, document)

    run_seeds(algorithm, learning, todo, budget_steps, args.work_dir, threads=args.threads, device=args.device,
              workers=args.workers, ray=args.ray, log=say, on_run=save)
    ratings = sorted(run["rating"] for run in document["runs"])
    say(f"{path}: {len(ratings)} seeds, final ratings {', '.join(f'{r:.0f}' for r in ratings)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
