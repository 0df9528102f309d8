"""Results files: one JSON file per algorithm and learning task, under ``benchmarks/learning/``.

    benchmarks/learning/pisti-2p/dmc.json

holds what the aggregation reads (checked on every read, [read_results][training.learning.results.read_results]):

    {"format": "pisti-learning-results", "format_version": 1,
     "algorithm": "dmc", "family": "Monte-Carlo value", "task": "pisti-2p@1",
     "budget": "standard", "budget_steps": 5000000, "evaluation_steps": [625000, ...],
     "command": "pisti-learn dmc --task pisti-2p", "algorithm_command": "python -m training.algorithms.dmc",
     "protocol": {...the learning task...},
     "runs": [{"seed": 0, "rating": 1234.5, "rating_half_width": 9.8,
               "curve": [[625000, 801.2], ..., [5000000, 1234.5]],
               "final": {"panel_mean": ..., "opponents": [...]},
               "train_seconds": 512.3, "eval_seconds": 61.0}, ...],
     "versions": {...}, "hardware": {...}}

``curve`` is ``[steps, rating]`` per evaluation point, ``steps`` the step count at which the
snapshot was actually taken (at or just past the point); its last entry is the run's ``rating``
on the task's whole deal set. The file is rewritten (atomically) after every finished seed, so
a long run's file can be committed seed by seed; ``pisti-learn`` continues such a file,
playing only the seeds it lacks.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

RESULTS_FORMAT = "pisti-learning-results"
RESULTS_VERSION = 1
MAX_RESULTS_BYTES = 16 * 1024 * 1024
RESULTS_DIR = os.path.join("benchmarks", "learning")


class ResultsError(ValueError):
    """A results file that cannot be used: the message names the file and the field."""


def results_path(root: str | os.PathLike, task_name: str, algorithm: str) -> Path:
    """``ROOT/TASK/ALGORITHM.json``."""
    return Path(root) / task_name / f"{algorithm}.json"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_results(data: Any, where: str) -> dict[str, Any]:
    """``data`` if it is a results document (see the module docstring), else a
    ``ResultsError`` naming ``where`` and the field."""

    def fail(field: str, what: str) -> ResultsError:
        return ResultsError(f"{where}: {field}: {what}")

    if not isinstance(data, dict):
        raise fail("(top level)", f"expected a JSON object, got {type(data).__name__}")
    if data.get("format", RESULTS_FORMAT) != RESULTS_FORMAT:
        raise fail("format", f"expected {RESULTS_FORMAT!r}, got {data.get('format')!r}")
    if data.get("format_version", RESULTS_VERSION) != RESULTS_VERSION:
        raise fail("format_version", f"this package reads version {RESULTS_VERSION}, got {data.get('format_version')!r}")
    for field in ("algorithm", "task", "command"):
        if field not in data:
            raise fail(field, "missing")
        if not isinstance(data[field], str) or not data[field] or not data[field].isprintable():
            raise fail(field, f"expected a non-empty printable string, got {data[field]!r}")
    for field in ("family", "seeds_kind", "budget", "algorithm_command"):
        if field in data and (not isinstance(data[field], str) or not data[field].isprintable()):
            raise fail(field, f"expected a printable string, got {data[field]!r}")
    if "budget_steps" not in data:
        raise fail("budget_steps", "missing")
    if not _whole(data["budget_steps"]) or data["budget_steps"] < 1:
        raise fail("budget_steps", f"expected a whole number >= 1, got {data['budget_steps']!r}")
    runs = data.get("runs")
    if runs is None:
        raise fail("runs", "missing")
    if not isinstance(runs, list):
        raise fail("runs", f"expected a list, got {type(runs).__name__}")
    seen = set()
    for i, run in enumerate(runs):
        at = f"runs[{i}]"
        if not isinstance(run, dict):
            raise fail(at, f"expected an object, got {type(run).__name__}")
        for field in ("seed", "rating", "curve"):
            if field not in run:
                raise fail(f"{at}.{field}", "missing")
        if not _whole(run["seed"]) or run["seed"] < 0:
            raise fail(f"{at}.seed", f"expected a whole number >= 0, got {run['seed']!r}")
        if run["seed"] in seen:
            raise fail(f"{at}.seed", f"seed {run['seed']} appears twice")
        seen.add(run["seed"])
        if not _number(run["rating"]):
            raise fail(f"{at}.rating", f"expected a finite number, got {run['rating']!r}")
        curve = run["curve"]
        if not isinstance(curve, list) or not curve:
            raise fail(f"{at}.curve", "expected a non-empty list of [steps, rating]")
        last = -1
        for j, point in enumerate(curve):
            if (not isinstance(point, list) or len(point) != 2 or not _whole(point[0]) or not _number(point[1])):
                raise fail(f"{at}.curve[{j}]", f"expected [steps, rating] (a whole number and a finite number), got {point!r}")
            if point[0] <= last:
                raise fail(f"{at}.curve[{j}]", f"steps must increase, got {point[0]} after {last}")
            last = point[0]
    return data


def read_results(path: str | os.PathLike) -> dict[str, Any]:
    """A results file, read as a regular file of bounded size (never through a link or from a
    FIFO) and checked ([check_results][training.learning.results.check_results]); every failure is
    a [ResultsError][training.learning.results.ResultsError] naming the file."""
    from pisti_env.util.regular_files import read_regular

    where = os.fspath(path)
    raw = read_regular(path, MAX_RESULTS_BYTES, refuse=ResultsError)  # its messages name the file
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ResultsError(f"{where}: not JSON: {str(error).splitlines()[0][:200]}") from None
    return check_results(data, where)


def write_results(path: str | os.PathLike, data: Mapping[str, Any]) -> None:
    """Write ``data`` (checked first) to ``path`` atomically, its folder created."""
    from pisti_env.util.atomic import write_text_atomic

    check_results(dict(data), os.fspath(path))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")
