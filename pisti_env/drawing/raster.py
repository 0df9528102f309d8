"""The SVG picture rasterised exactly, with CairoSVG (the optional ``pictures`` extra): PNG files
and ``renderer="cairo"`` frames. The ``rgb_array`` frames of the base install do not need it:
Pillow draws them from the same layout (`pixels`, issue 50).

CairoSVG draws with the Cairo library (Debian's ``libcairo2``) and is imported only here, when
a picture is first rasterised: ``import pisti_env`` never imports it. Pillow (installed with
matplotlib, a base dependency) decodes its PNG into an array.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

INSTALL_HINT = "pip install 'pisti[pictures]' (CairoSVG; on Debian/Ubuntu also apt-get install libcairo2)"


def _cairosvg() -> Any:
    try:
        import cairosvg
    except (ImportError, OSError) as err:  # OSError: the package is there but libcairo is not
        raise ImportError(f"rasterising the SVG needs CairoSVG: {INSTALL_HINT}; frames drawn with Pillow "
                          f"(renderer='pillow', the default) do not ({err})") from None
    return cairosvg


def svg_to_png(svg: str) -> bytes:
    """The PNG file of the SVG document ``svg`` (at the size its ``width``/``height`` give)."""
    return _cairosvg().svg2png(bytestring=svg.encode("utf-8"))


def svg_to_rgb(svg: str) -> np.ndarray:
    """The SVG document ``svg`` as an ``(height, width, 3)`` ``uint8`` RGB array."""
    from PIL import Image

    with Image.open(io.BytesIO(svg_to_png(svg))) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
