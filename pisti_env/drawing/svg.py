"""A `Table` drawn as SVG: the layout's items
(`layout`) written as SVG text.

Every card is drawn here (a rounded face with its rank and suit shapes, or a patterned back):
no image file is read or fetched. Each card face is defined once (``<defs>``) and placed with
``<use>``, so a picture is small and a page of many pictures (`replay_html`)
can share one set of definitions (`card_defs`).

The picture is the layout's 640×480 canvas (readable at that size, scaled for others). Elements
carry the items' ``data-role``/``data-card``/``data-side``/``data-field`` attributes so that
tests and tools can read a picture (``data-card="10D"``, ``"back"`` for a card drawn face down).

All text that comes from outside (player names) is escaped; the picture holds no script.
"""

from __future__ import annotations

from typing import Iterable
from xml.sax.saxutils import escape

from ..rules.cards import NUM_CARD_IDS, SUITS, card_to_text
from .layout import (
    CARD_H,
    CARD_W,
    FONT,
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
    cards_used,
    clip,
    table_layout,
)
from .scene import Table

__all__ = ["WIDTH", "HEIGHT", "text", "card_defs", "table_svg"]

_ANCHORS = ("start", "middle", "end")


def text(value: object, limit: int | None = None) -> str:
    """``value`` as safe XML/HTML text (attribute values too): characters XML cannot hold
    replaced, ``& < > "`` escaped; cut to ``limit`` characters with an ellipsis."""
    return _escape(clip(value, limit))


def _escape(s: str) -> str:
    return escape(s, {'"': "&quot;"})


def _data(data: Iterable[tuple[str, str]]) -> str:
    return "".join(f' {name}="{_escape(value)}"' for name, value in data)


def _points(polygon: Iterable[tuple[float, float]]) -> str:
    return "M" + "L".join(f"{x:g} {y:g}" for x, y in polygon) + "Z"


def _box(b: Box) -> str:
    at = f' x="{b.x:g}" y="{b.y:g}"' if (b.x, b.y) != (0, 0) else ""
    out = f'<rect{at} width="{b.width:g}" height="{b.height:g}"'
    if b.radius:
        out += f' rx="{b.radius:g}"'
    out += f' fill="{b.fill or "none"}"'
    if b.opacity is not None:
        out += f' fill-opacity="{b.opacity:g}"'
    if b.stroke is not None:
        out += f' stroke="{b.stroke}"'
        if b.stroke_width is not None:
            out += f' stroke-width="{b.stroke_width:g}"'
        if b.dash is not None:
            out += f' stroke-dasharray="{b.dash[0]:g} {b.dash[1]:g}"'
    return out + _data(b.data) + "/>"


def _label(t: Label) -> str:
    spacing = f' letter-spacing="{t.spacing:g}"' if t.spacing else ""
    return (f'<text x="{t.x:g}" y="{t.y:g}" font-size="{t.size:g}" fill="{t.fill}" text-anchor="{t.anchor}" '
            f'font-weight="{"bold" if t.bold else "normal"}"{spacing}{_data(t.data)}>{_escape(t.text)}</text>')


def _card(c: CardAt) -> str:
    ref = "card-back" if c.card is None else f"card-{card_to_text(c.card)}"
    data = "back" if c.card is None else card_to_text(c.card)
    turn = f" rotate({c.rotate:g} {CARD_W / 2:g} {CARD_H / 2:g})" if c.rotate else ""
    return (f'<use href="#{ref}" xlink:href="#{ref}" transform="translate({c.x:g} {c.y:g}) scale({c.scale:g}){turn}" '
            f'data-role="{c.role}" data-card="{data}"{_data(c.data)}/>')


def _suit_mark(m: SuitMark) -> str:
    ref = f"suit-{SUITS[m.suit]}"
    return (f'<use href="#{ref}" xlink:href="#{ref}" transform="translate({m.x:g} {m.y:g}) scale({m.scale:g})" '
            f'fill="{m.fill}"/>')


def _outline(o: Outline) -> str:
    return (f'<path d="{"".join(_points(p) for p in o.polygons)}" fill="none" stroke="{o.stroke}" '
            f'stroke-width="{o.stroke_width:g}"/>')


def _items(items: Iterable[Item]) -> str:
    out = []
    for item in items:
        if isinstance(item, Box):
            out.append(_box(item))
        elif isinstance(item, Label):
            out.append(_label(item))
        elif isinstance(item, CardAt):
            out.append(_card(item))
        elif isinstance(item, Group):
            out.append(f"<g{_data(item.data)}>{_items(item.items)}</g>")
        elif isinstance(item, SuitMark):
            out.append(_suit_mark(item))
        else:
            out.append(_outline(item))
    return "".join(out)


def _suit_def(suit: int) -> str:
    circles, polygons = SUIT_SHAPES[suit]
    shapes = "".join(f'<circle cx="{x:g}" cy="{y:g}" r="{r:g}"/>' for x, y, r in circles)
    shapes += "".join(f'<path d="{_points(p)}"/>' for p in polygons)
    return f'<g id="suit-{SUITS[suit]}">{shapes}</g>'


def card_defs(cards: Iterable[int] | None = None) -> str:
    """The ``<defs>`` of the card faces ``cards`` (all 52 when ``None``), the four suit shapes
    and the card back."""
    chosen = range(NUM_CARD_IDS) if cards is None else sorted(set(cards))
    suits = "".join(_suit_def(i) for i in range(len(SUIT_SHAPES)))
    back = f'<g id="card-back">{_items(card_back())}</g>'
    faces = "".join(f'<g id="card-{card_to_text(c)}">{_items(card_face(c))}</g>' for c in chosen)
    return "<defs>" + suits + back + faces + "</defs>"


def table_svg(table: Table, width: int = WIDTH, height: int = HEIGHT, defs: bool = True) -> str:
    """The SVG document of ``table``, drawn on a 640×480 canvas scaled to ``width``×``height``.

    Args:
        table: the scene (`seat_table` or
            `open_table`).
        width, height: the picture's size in pixels.
        defs: include the card definitions this picture uses; ``False`` when the page already
            holds `card_defs` (the replay page shares one set).
    """
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{width}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img" '
        f'aria-label="{text(table.title)}">' + (card_defs(cards_used(table)) if defs else "")
        + _items(table_layout(table)) + "</svg>"
    )
