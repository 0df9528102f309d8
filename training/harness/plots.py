"""Plots of an evaluation: the rating ladder with error bars (also the leaderboard's charts) and
the pairwise heat map; [save_figure][training.harness.plots.save_figure], the one way the
project writes a matplotlib figure.

matplotlib is imported here only, inside the functions, with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


BRADLEY_TERRY = "rating (Bradley–Terry, Elo scale: +400 = 10:1 odds per hand)"


def plot_ladder(players: Sequence[str], ratings: Sequence[float], ci_low: Sequence[float] | None,
                ci_high: Sequence[float] | None, path: str | Sequence[str], title: str = "rating ladder",
                xlabel: str = BRADLEY_TERRY, marks: Mapping[str, float] | None = None,
                value_labels: Sequence[str] | None = None, description: str | None = None) -> None:
    """Horizontal bars: each player's rating with its confidence interval, best on top.

    Args:
        players: names. ratings: ratings (``None``/NaN/inf are drawn at the edge, unlabelled).
        ci_low, ci_high: interval ends per player, or ``None``.
        path: the file to write, or several (one figure in each format: ``.png``, ``.svg``;
            see [save_figure][training.harness.plots.save_figure]). title: the plot title.
        xlabel: what the scale is (default: the evaluation's Bradley–Terry ratings).
        marks: reference ratings drawn as labelled dashed lines (``{"greedy": 1000}``); without
            them, a thin line at 0.
        value_labels: a text per player written above its point (``"1476 ± 9"``), or ``None``.
        description: stored in each file's metadata (what was drawn, for a reader or a test).
    """
    if value_labels is not None and len(value_labels) != len(players):
        raise ValueError(f"plot_ladder needs one value label per player, got {len(value_labels)} for "
                         f"{len(players)} players")
    plt = _pyplot()
    order = sorted(range(len(players)), key=lambda i: _num(ratings[i]))
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(players) + 1.5))
    ys = range(len(order))
    values = [_num(ratings[i]) for i in order]
    xerr = None
    if ci_low is not None and ci_high is not None:
        xerr = [[max(0.0, values[k] - _num(ci_low[i])) for k, i in enumerate(order)],
                [max(0.0, _num(ci_high[i]) - values[k]) for k, i in enumerate(order)]]
    ax.errorbar(values, list(ys), xerr=xerr, fmt="o", capsize=4)
    if value_labels is not None:
        for y, i in enumerate(order):
            ax.annotate(value_labels[i], (values[y], y), xytext=(0, 5), textcoords="offset points", ha="center",
                        va="bottom", fontsize="small")
    ax.set_yticks(list(ys))
    ax.set_yticklabels([players[i] for i in order])
    if marks is None:
        ax.axvline(0.0, color="grey", lw=0.5)
    for label, x in (marks or {}).items():
        ax.axvline(x, color="grey", lw=0.8, ls="--", zorder=0)
        ax.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -2),
                    textcoords="offset points", ha="left", va="top", fontsize="small", color="grey")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.tight_layout()
    for one in [path] if isinstance(path, str) else path:
        save_figure(fig, one, description=description)
    plt.close(fig)


def plot_heatmap(players: Sequence[str], matrix: Sequence[Sequence[Any]], path: str,
                 title: str = "mean score difference per hand (row − column)") -> None:
    """A heat map of a square matrix (``None`` cells left blank), values written in the cells.

    Args:
        players: row and column names. matrix: ``matrix[i][j]`` for row ``i``, column ``j``.
        path: the PNG file to write. title: the plot title.
    """
    plt = _pyplot()
    import numpy as np

    m = len(players)
    data = np.array([[np.nan if v is None else float(v) for v in row] for row in matrix], dtype=float)
    finite = data[np.isfinite(data)]
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    fig, ax = plt.subplots(figsize=(1.1 * m + 3, 1.0 * m + 2))
    image = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu", vmin=-bound, vmax=bound)
    ax.set_xticks(range(m))
    ax.set_yticks(range(m))
    ax.set_xticklabels(players, rotation=30, ha="right")
    ax.set_yticklabels(players)
    for i in range(m):
        for j in range(m):
            if np.isfinite(data[i, j]):
                dark = abs(data[i, j]) > 0.6 * bound
                ax.text(j, i, f"{data[i, j]:+.2f}", ha="center", va="center", fontsize=9,
                        color="white" if dark else "black")
    fig.colorbar(image, ax=ax)
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def save_figure(fig: Any, path: str | os.PathLike, dpi: int = 100, tight: bool = False,
                description: str | None = None) -> None:
    """Write ``fig`` at ``path`` in the format its suffix names (``.png``, ``.svg``), whole or
    not at all ([write_atomic][pisti_env.util.atomic.write_atomic]: through a temporary
    created exclusively beside it, never a link planted at its name).

    The same figure gives the same bytes (with the same matplotlib): the SVG's ids come from a
    fixed salt and neither format records a date or the software's version, so a committed
    figure changes only when what it shows does.

    Args:
        fig: a matplotlib figure. path: the file. dpi: the PNG's resolution.
        tight: crop to the drawing (``bbox_inches="tight"``).
        description: kept in the file's metadata.
    """
    import matplotlib

    from pisti_env.util.atomic import write_atomic

    fmt = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"save_figure writes .png or .svg files, got {os.fspath(path)!r}")
    metadata: dict[str, Any] = {"Date": None} if fmt == "svg" else {"Software": None}
    if description is not None:
        metadata["Description"] = description
    extra = {"bbox_inches": "tight"} if tight else {}
    with matplotlib.rc_context({"svg.hashsalt": "pisti"}):
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=dpi, format=fmt, metadata=metadata, **extra))


def _num(x: Any) -> float:
    if x is None or isinstance(x, str):
        return 0.0
    x = float(x)
    return x if math.isfinite(x) else 0.0
