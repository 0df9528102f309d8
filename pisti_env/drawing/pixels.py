"""A ``pisti_env.drawing.scene.Table`` drawn as pixels with Pillow: the layout's items
(``pisti_env.drawing.layout``) painted straight into an RGB array, the ``rgb_array`` frames
of the base install (issue 50).

Pillow comes with matplotlib, a base dependency; it is imported only here, when a frame is
first drawn, so ``import pisti_env`` stays cheap. The picture is the same as the SVG's
(``pisti_env.drawing.svg``): the same items at the same places, with the same colours and
sizes; only the anti-aliasing and the font's hinting differ from CairoSVG's rasterising
(``pisti_env.drawing.raster``), which stays for an exact SVG picture.

* Size: the 640×480 canvas scaled uniformly to fit ``width``×``height`` and centred, black
  bars where the ratio differs (as an SVG ``viewBox`` with the default ``xMidYMid meet``).
* Smoothness: drawn at ``SUPERSAMPLE`` times the size, then averaged down.
* Fonts: DejaVu Sans (the SVG's first font), from matplotlib's own copy (always there with the
  base install), else the system's; else Pillow's default font at the asked size; else Pillow's
  small built-in bitmap font, scaled to size, which always works. Pillow's fonts lack the
  Turkish letters and the suit signs: with them ``ş`` is written ``s`` and ``Q♦`` ``QD``.
  Glyphs are laid out with Pillow's basic layout engine (never Raqm, which only some installs
  have), so a state gives the same frame on every call and every install with the same fonts.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import unicodedata
from typing import Any, Iterable, Sequence

import numpy as np

from ..util.arguments import check_int
from .layout import (
    CARD_H,
    CARD_W,
    HEIGHT,
    SUIT_SHAPES,
    WIDTH,
    Box,
    CardAt,
    Group,
    Item,
    Label,
    Outline,
    SuitMark,
    card_back,
    card_face,
    table_layout,
)
from .scene import Table

SUPERSAMPLE = 2  # drawn at twice the size and averaged down: smooth edges without a vector library
FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")  # regular, bold
MAX_SIDE = 4096  # a picture's side in pixels at most (drawn at twice that: 200 MB); more is a mistake
# What Pillow's own fonts show instead of the glyphs they lack (they have ASCII, not ş, ♦ or ▶):
# the suits as in the cards' text codes (R2), Turkish letters without their marks.
_PLAIN = {"▶": ">", "…": "...", "ı": "i", "♣": "C", "♦": "D", "♥": "H", "♠": "S"}
BITMAP_BASELINE = 0.8  # the bitmap font's baseline, as a share of its cell's height from the top


def _pil() -> tuple[Any, Any, Any]:
    from PIL import Image, ImageDraw, ImageFont  # lazily: import pisti_env never loads Pillow

    return Image, ImageDraw, ImageFont


# ------------------------------------------------------------------ fonts
def _font_dirs() -> list[str]:
    """Where DejaVu may be: matplotlib's copy first (found without importing matplotlib)."""
    dirs = []
    spec = importlib.util.find_spec("matplotlib")
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        dirs.append(os.path.join(location, "mpl-data", "fonts", "ttf"))
    return dirs


@functools.lru_cache(maxsize=None)
def font_source() -> str:
    """Which font the frames use: a DejaVu file's path, ``"pillow-default"`` (Pillow's scalable
    default font) or ``"pillow-bitmap"`` (its built-in bitmap font)."""
    _, _, ImageFont = _pil()
    for folder in _font_dirs():
        path = os.path.join(folder, FONT_FILES[0])
        if all(os.path.isfile(os.path.join(folder, name)) for name in FONT_FILES):
            return path
    try:  # the system's DejaVu: Pillow looks through the usual font folders for the name
        return str(ImageFont.truetype(FONT_FILES[0], 12).path)
    except (OSError, ImportError, AttributeError):
        pass
    try:
        ImageFont.load_default(size=12)  # scalable (FreeType) since Pillow 10.1
        return "pillow-default"
    except (TypeError, OSError, ImportError, AttributeError):
        return "pillow-bitmap"


@functools.lru_cache(maxsize=256)
def _font(size: int, bold: bool) -> Any:
    """The frames' font at ``size`` pixels (bold where a bold face exists)."""
    _, _, ImageFont = _pil()
    source = font_source()
    if source == "pillow-bitmap":  # Pillow >= 10.1's load_default() is scalable where FreeType is
        return getattr(ImageFont, "load_default_imagefont", ImageFont.load_default)()
    if source == "pillow-default":
        return ImageFont.load_default(size=size)
    if bold:
        bold_path = os.path.join(os.path.dirname(source), FONT_FILES[1])
        source = bold_path if os.path.isfile(bold_path) else source
    basic = ImageFont.Layout.BASIC if hasattr(ImageFont, "Layout") else ImageFont.LAYOUT_BASIC  # Pillow < 9.1
    return ImageFont.truetype(source, size, layout_engine=basic)


def _plain(s: str) -> str:
    """``s`` in characters Pillow's own fonts have: marks dropped (``ş`` → ``s``), suit signs
    as letters (``♦`` → ``D``), anything else outside Latin-1 as ``?``."""
    s = "".join(_PLAIN.get(ch, ch) for ch in s)
    s = "".join(ch for ch in unicodedata.normalize("NFKD", s) if not unicodedata.combining(ch))
    return s.encode("latin-1", "replace").decode("latin-1")


# ------------------------------------------------------------------ painting items
class _Painter:
    """Draws items on ``image``: canvas point ``(x, y)`` lands on pixel ``(ox + k·x, oy + k·y)``."""

    def __init__(self, image: Any, k: float, ox: float = 0.0, oy: float = 0.0) -> None:
        _, ImageDraw, _ = _pil()
        self.image, self.k, self.ox, self.oy = image, k, ox, oy
        self.draw = ImageDraw.Draw(image, "RGBA")  # RGBA ink: a translucent fill blends on an RGB image

    def at(self, x: float, y: float) -> tuple[float, float]:
        return self.ox + self.k * x, self.oy + self.k * y

    def paint(self, items: Iterable[Item]) -> None:
        for item in items:
            if isinstance(item, Box):
                self.box(item)
            elif isinstance(item, Label):
                self.label(item)
            elif isinstance(item, CardAt):
                self.card(item)
            elif isinstance(item, Group):
                self.paint(item.items)
            elif isinstance(item, SuitMark):
                self.suit_mark(item)
            else:
                self.outline(item)

    def box(self, b: Box) -> None:
        from PIL import ImageColor

        width = b.stroke_width if b.stroke_width is not None else 1.0
        grow = width / 2 if b.stroke is not None else 0.0  # an SVG stroke is centred on the edge
        x0, y0 = self.at(b.x - grow, b.y - grow)
        x1, y1 = self.at(b.x + b.width + grow, b.y + b.height + grow)
        xy = (round(x0), round(y0), max(round(x0), round(x1) - 1), max(round(y0), round(y1) - 1))
        radius = round(b.radius * self.k)
        fill = None
        if b.fill is not None:
            fill = ImageColor.getrgb(b.fill)[:3] + (round(255 * (1.0 if b.opacity is None else b.opacity)),)
        line = max(1, round(width * self.k))
        solid = b.stroke if b.stroke is not None and b.dash is None else None
        if fill is not None or solid is not None:
            self.draw.rounded_rectangle(xy, radius, fill=fill, outline=solid, width=line if solid else 0)
        if b.stroke is not None and b.dash is not None:
            self._dashes(xy, b.stroke, line, b.dash)

    def _dashes(self, xy: Sequence[int], colour: str, line: int, dash: tuple[float, float]) -> None:
        """A dashed outline along the box's four edges (the corners' rounding left out)."""
        x0, y0, x1, y1 = xy
        on, off = max(1.0, dash[0] * self.k), max(1.0, dash[1] * self.k)
        half = line // 2
        for (ax, ay), (bx, by) in (((x0, y0 + half), (x1, y0 + half)), ((x1 - half, y0), (x1 - half, y1)),
                                   ((x1, y1 - half), (x0, y1 - half)), ((x0 + half, y1), (x0 + half, y0))):
            length = math.hypot(bx - ax, by - ay)
            t = 0.0
            while t < length:
                end = min(t + on, length)
                self.draw.line((ax + (bx - ax) * t / length, ay + (by - ay) * t / length,
                                ax + (bx - ax) * end / length, ay + (by - ay) * end / length), fill=colour, width=line)
                t = end + off

    def label(self, t: Label) -> None:
        if not t.text:
            return
        from PIL import ImageFont

        font = _font(max(1, round(t.size * self.k)), t.bold)
        s = t.text if font_source() not in ("pillow-default", "pillow-bitmap") else _plain(t.text)
        x, y = self.at(t.x, t.y)
        if not isinstance(font, ImageFont.FreeTypeFont):
            self._bitmap_label(s, x, y, t, font)
            return
        anchor = {"start": "ls", "middle": "ms", "end": "rs"}[t.anchor]
        if not t.spacing:
            self.draw.text((x, y), s, fill=t.fill, font=font, anchor=anchor)
            return
        # Letter spacing (SVG's letter-spacing): each letter placed after the last one's advance.
        gap = t.spacing * self.k
        advances = [font.getlength(ch) for ch in s]
        total = sum(advances) + gap * (len(advances) - 1)
        x -= {"ls": 0.0, "ms": total / 2, "rs": total}[anchor]
        for ch, advance in zip(s, advances):
            self.draw.text((x, y), ch, fill=t.fill, font=font, anchor="ls")
            x += advance + gap

    def _bitmap_label(self, s: str, x: float, y: float, t: Label, font: Any) -> None:
        """Text in the fixed-size bitmap font: drawn at its own size, then scaled to the label's
        (the font has neither sizes nor anchors)."""
        from PIL import ImageColor, ImageDraw

        Image, _, _ = _pil()
        _, _, right, bottom = font.getbbox(s)
        if right <= 0 or bottom <= 0:
            return
        mask = Image.new("L", (right, bottom), 0)
        ImageDraw.Draw(mask).text((0, 0), s, fill=255, font=font)
        factor = t.size * self.k / max(1, font.getbbox("Ag")[3])  # the cell's height stands for the font size
        mask = mask.resize((max(1, round(right * factor)), max(1, round(bottom * factor))),
                           getattr(Image, "Resampling", Image).BILINEAR)
        shift = {"start": 0.0, "middle": mask.width / 2, "end": float(mask.width)}[t.anchor]
        at = (round(x - shift), round(y - BITMAP_BASELINE * mask.height))
        self.image.paste(ImageColor.getcolor(t.fill, self.image.mode), at, mask)

    def suit_mark(self, m: SuitMark) -> None:
        circles, polygons = SUIT_SHAPES[m.suit]
        for cx, cy, r in circles:
            x0, y0 = self.at(m.x + (cx - r) * m.scale, m.y + (cy - r) * m.scale)
            x1, y1 = self.at(m.x + (cx + r) * m.scale, m.y + (cy + r) * m.scale)
            self.draw.ellipse((x0, y0, x1, y1), fill=m.fill)
        for polygon in polygons:
            self.draw.polygon([self.at(m.x + px * m.scale, m.y + py * m.scale) for px, py in polygon], fill=m.fill)

    def outline(self, o: Outline) -> None:
        line = max(1, round(o.stroke_width * self.k))
        for polygon in o.polygons:
            points = [self.at(x, y) for x, y in polygon]
            self.draw.line(points + points[:1], fill=o.stroke, width=line)

    def card(self, c: CardAt) -> None:
        Image, _, _ = _pil()
        tile = _card_tile(c.card, round(c.scale * self.k, 6))
        if c.rotate:
            # SVG turns clockwise for a positive angle, Pillow counter-clockwise.
            tile = tile.rotate(-c.rotate, resample=getattr(Image, "Resampling", Image).BICUBIC, expand=True)
        cx, cy = self.at(c.x + CARD_W * c.scale / 2, c.y + CARD_H * c.scale / 2)  # the card's centre
        self.image.paste(tile, (round(cx - tile.width / 2), round(cy - tile.height / 2)), tile)


@functools.lru_cache(maxsize=256)
def _card_tile(card: int | None, k: float) -> Any:
    """Card ``card`` (``None``: the back) drawn alone, ``k`` pixels per unit, on a transparent
    tile; kept, since a frame draws the same cards at the same sizes again and again."""
    Image, _, _ = _pil()
    tile = Image.new("RGBA", (math.ceil(CARD_W * k), math.ceil(CARD_H * k)), (0, 0, 0, 0))
    _Painter(tile, k).paint(card_back() if card is None else card_face(card))
    return tile


def check_size(width: Any, height: Any) -> tuple[int, int]:
    """``width`` and ``height`` as ints once checked: each 1..``MAX_SIDE`` pixels."""
    return check_int(width, "width", low=1, high=MAX_SIDE), check_int(height, "height", low=1, high=MAX_SIDE)


def table_rgb(table: Table, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """``table``'s picture (``pisti_env.drawing.layout.table_layout``) as an
    ``(height, width, 3)`` ``uint8`` RGB array, drawn with Pillow.

    Raises ``TypeError``/``ValueError`` when ``width`` or ``height`` is not an int 1..4096.
    """
    width, height = check_size(width, height)
    Image, _, _ = _pil()
    big_w, big_h = width * SUPERSAMPLE, height * SUPERSAMPLE
    k = min(big_w / WIDTH, big_h / HEIGHT)  # uniform, centred: the SVG's viewBox "meet"
    image = Image.new("RGB", (big_w, big_h), (0, 0, 0))
    _Painter(image, k, (big_w - WIDTH * k) / 2, (big_h - HEIGHT * k) / 2).paint(table_layout(table))
    return np.asarray(image.reduce(SUPERSAMPLE), dtype=np.uint8).copy()
