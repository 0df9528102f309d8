"""The evaluation report as text for the terminal and as a JSON file."""

from __future__ import annotations

import json
import math
from typing import Any, Callable

import numpy as np

# What produced a report: the one function, shared with pisti-play's replays (re-exported here).
from pisti_env.tools.versions import versions  # noqa: F401


def _ci(stat: dict[str, float], fmt: str = "{:+.2f}") -> str:
    if math.isnan(stat["half_width"]):
        return fmt.format(stat["mean"])
    return f"{fmt.format(stat['mean'])} ± {stat['half_width']:.2f}"


def _pct(stat: dict[str, float]) -> str:
    if math.isnan(stat["half_width"]):
        return f"{100 * stat['mean']:.1f}%"
    return f"{100 * stat['mean']:.1f}% ± {100 * stat['half_width']:.1f}"


def _mirrored(show: Callable[[dict[str, float]], str]) -> Callable[[dict[str, float]], str]:
    """``show`` for a mirrored pair's figure: its value marked ``(mirror)``, without the
    interval, whose zero width measures nothing there."""
    return lambda stat: show({**stat, "half_width": math.nan}) + " (mirror)"


def format_report(report: dict[str, Any]) -> str:
    """A readable multi-line summary of a report built by [`training.harness.evaluate.evaluate`][training.harness.evaluate.evaluate]."""
    s = report["settings"]
    lines = [
        f"pisti-eval · {s['num_players']} players"
        + (" in partnerships" if s["partnerships"] else "")
        + f" · {s['deals']} duplicate deals · {s['matches']} duplicate matches to {s['target']}"
        + f" · seed {s['seed']}",
    ]
    for table in report["tables"]:
        lines.append("")
        lines.append("table: " + " vs ".join(table["players"]) + f"   ({len(table['seatings'])} seatings per deal)")
        header = f"  {'pair':<34} {'score diff / hand (95% CI)':>27} {'hand win rate':>16} {'match win rate':>16}"
        lines.append(header)
        for pair in table["pairs"]:
            name = f"{pair['a']} vs {pair['b']}"
            ci, pct = (_mirrored(_ci), _mirrored(_pct)) if pair.get("mirror") else (_ci, _pct)
            diff = ci(pair["score_diff"]) if "score_diff" in pair else "-"
            hwr = pct(pair["hand_win_rate"]) if "hand_win_rate" in pair else "-"
            mwr = pct(pair["match_win_rate"]) if "match_win_rate" in pair else "-"
            lines.append(f"  {name:<34} {diff:>27} {hwr:>16} {mwr:>16}")
        if any(pair.get("mirror") for pair in table["pairs"]):
            lines += ["  (mirror): the two played every deal alike from either seat (a deterministic player against",
                      "  its own copy): even by construction, so no interval"]
        n = s["num_players"]
        seat_names = " ".join(f"{'seat +' + str(k + 1) if k < n - 1 else 'dealer':>8}" for k in range(n))
        lines.append(f"  {'player':<34} {'mean score / hand':>20}   per seat from the dealer: {seat_names}")
        for entry in table["entries"]:
            if "mean_score" not in entry:
                continue
            seats = " ".join(f"{v:>8.2f}" if v is not None else f"{'-':>8}" for v in entry["per_seat_from_dealer"])
            lines.append(f"  {entry['player']:<34} {_ci(entry['mean_score'], '{:.2f}'):>20}   {'':>26}{seats}")
    ladder = report.get("ladder")
    if ladder:
        lines.append("")
        lines.append(f"ladder ({ladder['method']}; 95% CI by bootstrap over deals, {ladder['bootstrap']} resamples):")
        order = sorted(range(len(ladder["players"])), key=lambda i: -_finite(ladder["ratings"][i]))
        for rank, i in enumerate(order, 1):
            r = ladder["ratings"][i]
            ci = ""
            if "ci_low" in ladder:
                ci = f"  [{ladder['ci_low'][i]:+.0f}, {ladder['ci_high'][i]:+.0f}]"
            lines.append(f"  {rank:>2}. {ladder['players'][i]:<32} {r:+8.0f}{ci}")
    lines.append("")
    lines.append(f"{report['timing']['seconds']:.1f} s · {report['timing']['games']} games played")
    return "\n".join(lines)


def _finite(x: float) -> float:
    return x if x is not None and not math.isnan(x) else -math.inf


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, np.integer):
        return int(x)
    return x


def write_json(report: dict[str, Any], path: str) -> None:
    """Write ``report`` as JSON (NaN as ``null``, infinities as ``"inf"``/``"-inf"``), whole or
    not at all (``pisti_env.util.atomic.write_atomic``)."""
    from pisti_env.util.atomic import write_text_atomic

    write_text_atomic(path, json.dumps(_jsonable(report), indent=2) + "\n")
