"""``pisti-learn-report``: results files into the comparison's table, statistics and plots.

    pisti-learn-report                                   # every task under benchmarks/learning -> docs/learning/
    pisti-learn-report --results benchmarks/learning --task pisti-2p --out docs/learning

For each learning task with results, the page ``OUT/TASK.md`` (generated: never edit it by
hand) holds the table (per algorithm: family, seeds, the IQM of the final ratings with its 95%
stratified bootstrap interval, the median, the seeds' ratings, the training time, the command
that reproduces the row), the probability of improvement of every pair with its interval, and
the plots (``OUT/img/TASK-*.png`` and ``.svg``): IQM learning curves with interval bands,
performance profiles, the IQM intervals and the probabilities of improvement, drawn by
``rliable``'s own plotting functions. ``OUT/TASK.json`` keeps the numbers. All files of one
task must be of one task version and budget; a file of tuning seeds is refused (they are kept
apart from the reported results).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from statistics import median  # the standard library's (this package's statistics module is rliable's)
from typing import Any, Mapping, Sequence

from pisti_env.tools.flags import ArgumentParser, fail, writable_dir

from .protocol import LEARNING_TASKS
from .results import RESULTS_DIR, ResultsError, read_results

PROG = "pisti-learn-report"
OUT_DIR = os.path.join("docs", "learning")


def collect(results_dir: str | os.PathLike, task: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """``{task name: {algorithm: results}}`` of every ``*.json`` under ``results_dir/TASK/``
    (only ``task``'s with a name), each read and checked
    ([read_results][training.learning.results.read_results]); ``ResultsError`` for a file that
    does not belong with the others."""
    root = Path(results_dir)
    if not root.is_dir():
        raise ResultsError(f"{root} is not a folder of results files")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        if task is not None and folder.name != task:
            continue
        if folder.name not in LEARNING_TASKS:
            raise ResultsError(f"{folder}: not a learning task's folder; learning tasks are {list(LEARNING_TASKS)}")
        for path in sorted(folder.glob("*.json")):
            data = read_results(path)
            if data.get("seeds_kind") == "tuning":
                continue  # tuning seeds are never reported
            if data.get("budget", "standard") != "standard":
                continue  # one table per budget: the standard one here
            if not data["task"].startswith(folder.name + "@"):
                raise ResultsError(f"{path}: task: {data['task']!r} is not {folder.name}'s")
            if not data["runs"]:
                continue
            table = out.setdefault(folder.name, {})
            if data["algorithm"] in table:
                raise ResultsError(f"{path}: algorithm: {data['algorithm']!r} has a second results file here")
            first = next(iter(table.values()), None)
            for key in ("task", "budget_steps", "evaluation_steps"):
                if first is not None and first.get(key) != data.get(key):
                    raise ResultsError(f"{path}: {key}: {data.get(key)!r} differs from the other files' "
                                       f"{first.get(key)!r}: one table compares one protocol")
            data["_path"] = str(path)
            table[data["algorithm"]] = data
    return out


def _evaluation_steps(doc: Mapping[str, Any]) -> list[int]:
    steps = doc.get("evaluation_steps")
    return list(steps) if steps else [step for step, _ in doc["runs"][0]["curve"]]


def _code(text: str) -> str:
    from training.benchmark.report_check import code

    return code(text)


def _cell(text: str) -> str:
    """A short text of a results file as a table cell: its Markdown and HTML characters as
    entities (the leaderboard's rule for what reaches a page)."""
    import html

    return html.escape(str(text), quote=True).replace("|", "&#124;").replace("`", "&#96;").replace("*", "&#42;") \
        .replace("_", "&#95;").replace("[", "&#91;").replace("]", "&#93;")


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f}"



def summary(task: str, results: Mapping[str, Mapping[str, Any]], comparison: Any) -> dict[str, Any]:
    """The numbers of the page, as JSON."""
    rows = {}
    for name, doc in results.items():
        ratings = [run["rating"] for run in doc["runs"]]
        rows[name] = {
            "family": doc.get("family", ""), "seeds": [run["seed"] for run in doc["runs"]],
            "ratings": ratings, "iqm": comparison.iqm[name], "iqm_interval": list(comparison.iqm_interval[name]),
            "median": float(median(ratings)),
            "train_seconds": [run.get("train_seconds") for run in doc["runs"]],
            "command": doc["command"], "file": doc["_path"],
            "curve_iqm": [float(v) for v in comparison.curve_iqm[name]],
        }
    pairs = [{"x": x, "y": y, "p": p, "interval": list(comparison.improvement_interval[(x, y)])}
             for (x, y), p in comparison.improvement.items()]
    first = next(iter(results.values()))
    return {"task": first["task"], "budget_steps": first["budget_steps"], "evaluation_steps": comparison.curve_steps,
            "algorithms": rows, "probability_of_improvement": pairs}


def markdown(task: str, results: Mapping[str, Mapping[str, Any]], comparison: Any, images: Sequence[str]) -> str:
    """The generated page of one task."""
    first = next(iter(results.values()))
    order = sorted(results, key=lambda name: -comparison.iqm[name])
    runs = [run for doc in results.values() for run in doc["runs"]]
    measured = [run for run in runs if "train_cpu_seconds" in run]
    cpu = sum(run["train_cpu_seconds"] + run["eval_cpu_seconds"] for run in measured)
    per_run = cpu / len(measured) if measured else math.nan
    lines = [
        f"# Learning results: {task}",
        "",
        "<!-- generated by pisti-learn-report from benchmarks/learning/: do not edit by hand -->",
        "",
        f"Task `{first['task']}`, budget {first['budget_steps']:,} environment steps per run; ratings on the "
        f"benchmark task's anchored scale (`random` 0, `greedy` 1000; the shipped `pisti-2p` policy 1476 on "
        f"`pisti-2p`). How to read this page: [Comparing algorithms](index.md).",
        "",
        "| algorithm | family | seeds | IQM rating (95% CI) | median | ratings of the seeds | CPU h / seed | reproduce |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in order:
        doc = results[name]
        ratings = [run["rating"] for run in doc["runs"]]
        low, high = comparison.iqm_interval[name]
        used = [run["train_cpu_seconds"] + run["eval_cpu_seconds"] for run in doc["runs"] if "train_cpu_seconds" in run]
        lines.append(
            f"| {_code(name)} | {_cell(doc.get('family', ''))} | {len(ratings)} | **{comparison.iqm[name]:.0f}** "
            f"[{low:.0f}, {high:.0f}] | {median(ratings):.0f} | {', '.join(f'{r:.0f}' for r in ratings)} | "
            f"{_hours(sum(used) / len(used)) if used else '–'} | {_code(doc['command'])} |")
    if measured:
        lines += ["", f"Cost: {per_run / 3600:.2f} CPU-hours per seed on average (training and rating, one thread; "
                  f"the CPU time of the {len(measured)} runs that record it), so the table's {len(runs)} runs take "
                  f"about {per_run * len(runs) / 3600:.1f} CPU-hours: {per_run * len(runs) / 7200:.1f} hours on two "
                  "cores. The files record each seed's CPU and wall seconds and the machine.", ""]
    if len(order) > 1:
        lines += ["## Probability of improvement", "",
                  "P(row > column): the chance that a run of the row's algorithm is rated above a run of the "
                  "column's, with its 95% bootstrap interval. 0.5 is a tie; an interval that excludes 0.5 is a "
                  "difference the seeds support.", "",
                  "| P(row > column) | " + " | ".join(_code(n) for n in order) + " |",
                  "|---|" + "---|" * len(order)]
        for x in order:
            cells = []
            for y in order:
                if x == y:
                    cells.append("")
                    continue
                p = comparison.improvement[(x, y)]
                lo, hi = comparison.improvement_interval[(x, y)]
                cells.append(f"{p:.2f} [{lo:.2f}, {hi:.2f}]")
            lines.append(f"| {_code(x)} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Learning curves and profiles", ""]
    for image in images:
        lines += [f"![{Path(image).stem}]({image})", ""]
    lines += ["## Each seed's curve", "", "| algorithm | seed | " + " | ".join(f"{s:,}" for s in comparison.curve_steps)
              + " |", "|---|---|" + "---|" * len(comparison.curve_steps)]
    for name in order:
        for run in results[name]["runs"]:
            lines.append(f"| {_code(name)} | {run['seed']} | " + " | ".join(f"{r:.0f}" for _, r in run["curve"]) + " |")
    lines.append("")
    return "\n".join(lines)


def plots(task: str, comparison: Any, out: Path) -> list[str]:
    """The four figures of one task as PNG and SVG under ``out/img``; returns the SVGs' paths
    relative to ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from rliable import plot_utils

    from training.harness.plots import save_figure

    from .statistics import _arch_quiet

    names = sorted(comparison.iqm, key=lambda name: -comparison.iqm[name])
    colors = dict(zip(names, plt.get_cmap("tab10").colors))
    from matplotlib.lines import Line2D

    legend = [Line2D([0], [0], color=colors[n], lw=2, label=n) for n in names]  # one entry per algorithm, in rank order
    figures = {}

    fig, ax = plt.subplots(figsize=(7, 4.5))
    steps = np.asarray(comparison.curve_steps, dtype=float) / 1e6
    plot_utils.plot_sample_efficiency_curve(
        steps, {n: comparison.curve_iqm[n] for n in names}, {n: comparison.curve_intervals[n] for n in names},
        algorithms=names, colors=colors, xlabel="environment steps (millions)", ylabel="IQM rating", ax=ax)
    ax.legend(handles=legend, loc="lower right", fontsize="small")
    ax.set_title(f"{task}: rating along training (IQM over seeds, 95% CI)")
    figures["curves"] = fig

    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_utils.plot_performance_profiles(
        comparison.profiles, comparison.taus, performance_profile_cis=comparison.profile_intervals,
        colors=colors, xlabel=r"final rating $\tau$", ylabel=r"fraction of runs rated above $\tau$", ax=ax)
    ax.legend(handles=legend, loc="upper right", fontsize="small")
    ax.set_title(f"{task}: performance profiles")
    figures["profiles"] = fig

    point = {n: np.array([comparison.iqm[n]]) for n in names}
    interval = {n: np.array([[comparison.iqm_interval[n][0]], [comparison.iqm_interval[n][1]]]) for n in names}
    fig, axes = plot_utils.plot_interval_estimates(point, interval, metric_names=["IQM rating"], algorithms=names,
                                                   colors=colors, xlabel="final rating")
    figures["iqm"] = fig

    if len(names) > 1:
        pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]
        probabilities = {f"{x},{y}": comparison.improvement[(x, y)] for x, y in pairs}
        intervals = {f"{x},{y}": np.array(comparison.improvement_interval[(x, y)]) for x, y in pairs}
        with _arch_quiet():
            fig = plot_utils.plot_probability_of_improvement(probabilities, intervals, figsize=(6, 1.2 + 0.5 * len(pairs)))
        figures["improvement"] = fig if hasattr(fig, "savefig") else plt.gcf()

    written = []
    for kind, fig in figures.items():
        figure = fig if hasattr(fig, "savefig") else plt.gcf()
        for suffix in ("png", "svg"):  # the same results give the same bytes (save_figure)
            save_figure(figure, out / "img" / f"{task}-{kind}.{suffix}", dpi=110, tight=True)
        written.append(f"img/{task}-{kind}.svg")
        plt.close(figure)
    return written


def learning_section(results_dir: str | os.PathLike) -> str:
    """The leaderboard's learning section: per learning task, each algorithm's seeds and their
    final ratings (median, range), ranked by the median, linking to the task's comparison page
    for the IQM, its interval and the rest (computed by rliable there: this section needs only
    the results files). Texts from the files are escaped as the leaderboard's are."""
    lines = ["## Learning algorithms", "",
             "Algorithms compared by the [learning protocol](learning/index.md): each row is one "
             "algorithm's seeds at the standard budget, rated as the tables above rate agents.", ""]
    collected = collect(results_dir) if Path(results_dir).is_dir() else {}
    if not collected:
        return "\n".join(lines + ["No results yet (`benchmarks/learning/` is empty)."])
    for task, results in collected.items():
        first = next(iter(results.values()))
        lines += [f"### {first['task']}, {first['budget_steps']:,} steps", "",
                  f"IQM with 95% intervals, probabilities of improvement and curves: [{task}](learning/{task}.md).", "",
                  "| algorithm | family | seeds | median rating | range | reproduce |", "|---|---|---|---|---|---|"]
        rows = []
        for name, doc in results.items():
            ratings = sorted(run["rating"] for run in doc["runs"])
            middle = median(ratings)
            rows.append((middle, f"| {_code(name)} | {_cell(doc.get('family', ''))} | {len(ratings)} | {middle:.0f} | "
                                 f"{ratings[0]:.0f}–{ratings[-1]:.0f} | {_code(doc['command'])} |"))
        lines += [row for _, row in sorted(rows, key=lambda r: -r[0])] + [""]
    return "\n".join(lines).rstrip("\n")


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=RESULTS_DIR, help="the folder of results files (RESULTS/TASK/ALGO.json)")
    parser.add_argument("--task", default=None, help="only this learning task")
    parser.add_argument("--out", type=writable_dir, default=OUT_DIR, help="where the pages and images go")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    parser.add_argument("--reps", type=int, default=50_000, help="bootstrap resamples for the IQM intervals")
    return parser


def report(results_dir: str, out_dir: str, task: str | None = None, seed: int = 0, reps: int = 50_000) -> list[Path]:
    """Write every task's page, numbers and plots; returns the pages written."""
    from pisti_env.util.atomic import write_text_atomic

    from .statistics import compare

    out = Path(out_dir)
    pages = []
    collected = collect(results_dir, task)
    if task is not None and task not in collected:
        raise ResultsError(f"no results for learning task {task!r} under {results_dir}")
    for name, results in collected.items():
        comparison = compare(results, _evaluation_steps(next(iter(results.values()))), seed=seed, reps=reps)
        out.mkdir(parents=True, exist_ok=True)
        images = plots(name, comparison, out)
        page = out / f"{name}.md"
        write_text_atomic(page, markdown(name, results, comparison, images))
        write_text_atomic(out / f"{name}.json", json.dumps(summary(name, results, comparison), indent=1) + "\n")
        pages.append(page)
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        pages = report(args.results, args.out, args.task, args.seed, args.reps)
    except (ValueError, RuntimeError, OSError) as error:
        return fail(PROG, error)
    for page in pages:
        print(f"{PROG}: wrote {page}")
    if not pages:
        print(f"{PROG}: no results under {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
