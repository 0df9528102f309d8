"""PNG plots of an evaluation: the rating ladder with error bars and the pairwise heat map.

matplotlib is imported here only, inside the functions, with the non-interactive Agg backend.
"""

from __future__ import annotations

import math
from typing import Any, Sequence


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ladder(players: Sequence[str], ratings: Sequence[float], ci_low: Sequence[float] | None,
                ci_high: Sequence[float] | None, path: str, title: str = "rating ladder") -> None:
    """Horizontal bars: each player's rating (Elo scale) with its confidence interval, best on top.

    Args:
        players: names. ratings: ratings (``None``/NaN/inf are drawn at the edge, unlabelled).
        ci_low, ci_high: interval ends per player, or ``None``.
        path: the PNG file to write. title: the plot title.
    """
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
    ax.set_yticks(list(ys))
    ax.set_yticklabels([players[i] for i in order])
    ax.axvline(0.0, color="grey", lw=0.5)
    ax.set_xlabel("rating (Bradley–Terry, Elo scale: +400 = 10:1 odds per hand)")
    ax.set_title(title)
    fig.tight_layout()
    save_figure(fig, path)
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


def save_figure(fig: Any, path: str) -> None:
    """Write ``fig`` as a PNG at ``path``, whole or not at all (``pisti_env.util.atomic.write_atomic``:
    through a temporary created exclusively beside it, never a link planted at its name)."""
    from pisti_env.util.atomic import write_atomic

    write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))


def _num(x: Any) -> float:
    if x is None or isinstance(x, str):
        return 0.0
    x = float(x)
    return x if math.isfinite(x) else 0.0
