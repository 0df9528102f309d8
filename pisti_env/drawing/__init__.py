"""Pictures of the table: one scene, one layout, drawn as SVG or as pixels.

* `scene`: what a picture shows, from one seat's view
  (`seat_table`, only what the seat may know, R30–R31) or with every card open
  (`open_table`, for spectators).
* `layout`: where everything goes (`table_layout`), once, as
  plain shapes for the two backends below.
* `svg`: the shapes as an SVG document (`table_svg`).
* `pixels`: the shapes as an RGB array drawn with Pillow
  (`table_rgb`), which the base install has (it comes with matplotlib); imported only
  when a frame is drawn.
* `raster`: the SVG rasterised exactly, to PNG bytes
  (`svg_to_png`) or an RGB array (`svg_to_rgb`), through CairoSVG, the optional
  ``pictures`` extra, imported only when it is used.

`pisti_env.terminal.replay_html` (`pisti-replay --html`) draws a replay file as one
self-contained HTML page with these pictures.

``render_mode="rgb_array"`` of ``pisti_v0`` and ``pisti/Pisti-v0`` is `open_frame` with
the Pillow renderer (issue 50): it works on the base install.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..views.view import SeatView
from ..game.engine import Game
from .layout import table_layout
from .pixels import check_size, table_rgb
from .raster import svg_to_png, svg_to_rgb
from .scene import SeatRow, SideRow, Table, open_table, seat_table
from .svg import HEIGHT, WIDTH, table_svg

RENDERERS = ("pillow", "cairo")  # pixels drawn by Pillow (base install), or the SVG rasterised by CairoSVG


def frame(table: Table, width: int = WIDTH, height: int = HEIGHT, renderer: str = "pillow") -> np.ndarray:
    """``table``'s picture as an ``(height, width, 3)`` ``uint8`` RGB array.

    Args:
        table: the scene (`seat_table` or `open_table`).
        width, height: the picture's size in pixels (1..4096 each).
        renderer: ``"pillow"`` (default: drawn with Pillow, no extra needed) or ``"cairo"`` (the
            SVG of `table_svg` rasterised by CairoSVG, the ``pictures`` extra: the exact
            SVG picture, e.g. to match a PNG from `svg_to_png`).

    Raises ``ValueError`` for an unknown ``renderer`` (naming the allowed ones) or a size out of
    range, ``TypeError`` for a size that is not an int, ``ImportError`` with what to install when
    ``renderer="cairo"`` and CairoSVG is missing.
    """
    if renderer not in RENDERERS:
        raise ValueError(f"renderer must be one of {', '.join(map(repr, RENDERERS))}, got {renderer!r}")
    if renderer == "pillow":
        return table_rgb(table, width, height)
    width, height = check_size(width, height)
    return svg_to_rgb(table_svg(table, width, height))


def seat_frame(view: SeatView, names: Sequence[str], last_move: str | None = None,
               width: int = WIDTH, height: int = HEIGHT, renderer: str = "pillow") -> np.ndarray:
    """``view``'s seat's picture (only what it may know) as an ``(height, width, 3)`` uint8 array
    (``renderer``: see `frame`)."""
    return frame(seat_table(view, names, last_move), width, height, renderer)


def open_frame(game: Game, names: Sequence[str], last_move: str | None = None, bottom: int = 0,
               width: int = WIDTH, height: int = HEIGHT, renderer: str = "pillow") -> np.ndarray:
    """The spectator's picture of ``game`` (every card open, seat ``bottom`` at the bottom) as an
    ``(height, width, 3)`` uint8 array (``renderer``: see `frame`)."""
    return frame(open_table(game, names, last_move, bottom), width, height, renderer)


__all__ = ["Table", "SeatRow", "SideRow", "seat_table", "open_table", "table_layout", "table_svg", "table_rgb",
           "svg_to_png", "svg_to_rgb", "frame", "seat_frame", "open_frame", "RENDERERS", "WIDTH", "HEIGHT"]
