"""Pictures of the table: one scene, drawn as SVG, rasterised on demand.

* :mod:`~pisti_env.drawing.scene`: what a picture shows, from one seat's view
  (:func:`seat_table`, only what the seat may know, R30–R31) or with every card open
  (:func:`open_table`, for spectators).
* :mod:`~pisti_env.drawing.svg`: the drawing itself (:func:`table_svg`), cards included.
* :mod:`~pisti_env.drawing.raster`: SVG to PNG bytes or an RGB array (:func:`svg_to_rgb`),
  through CairoSVG, the optional ``pictures`` extra, imported only when a picture is rasterised.
* :mod:`~pisti_env.drawing.replay_html`: a replay file as one self-contained HTML page.

``render_mode="rgb_array"`` of ``pisti_v0`` and ``pisti/Pisti-v0`` is :func:`open_frame`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..agents.view import SeatView
from ..game import Game
from .raster import svg_to_png, svg_to_rgb
from .scene import SeatRow, SideRow, Table, open_table, seat_table
from .svg import HEIGHT, WIDTH, table_svg


def seat_frame(view: SeatView, names: Sequence[str], last_move: str | None = None,
               width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """``view``'s seat's picture (only what it may know) as an ``(height, width, 3)`` uint8 array."""
    return svg_to_rgb(table_svg(seat_table(view, names, last_move), width, height))


def open_frame(game: Game, names: Sequence[str], last_move: str | None = None, bottom: int = 0,
               width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """The spectator's picture of ``game`` (every card open, seat ``bottom`` at the bottom) as an
    ``(height, width, 3)`` uint8 array."""
    return svg_to_rgb(table_svg(open_table(game, names, last_move, bottom), width, height))


__all__ = ["Table", "SeatRow", "SideRow", "seat_table", "open_table", "table_svg", "svg_to_png", "svg_to_rgb",
           "seat_frame", "open_frame", "WIDTH", "HEIGHT"]
