"""Where everything of a ``pisti_env.drawing.scene.Table`` goes: the one layout of the
picture, as a list of plain shapes that two backends draw (issue 50).

The scene (``pisti_env.drawing.scene``) says *what* a picture shows; this module says
*where* and *how big*, once: ``table_layout`` turns a scene into ``Box``,
``Label``, ``CardAt`` and ``Group`` items on a fixed 640×480 canvas, and
``card_face`` / ``card_back`` describe a card in its own 50×70 box with the same items
(plus ``SuitMark`` and ``Outline``). The backends only translate items:

* ``pisti_env.drawing.svg``: SVG text (each card defined once and placed with ``<use>``);
* ``pisti_env.drawing.pixels``: Pillow pixels, the ``rgb_array`` frames of the base install.

The canvas: the title at the top, the other seats along the top, the stock and the pile in the
middle with the last move and whose turn it is under them, the bottom seat's hand (the viewer's,
or the one chosen when all cards are open) at the bottom, and one score block per side on the
right. Items carry ``data`` pairs (``data-role``, ``data-seat``, ``data-field``, …) that the SVG
writes as attributes, so tests and tools can read a picture back; pixels ignore them.

Text in items is plain (not escaped): a backend escapes what its format needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from ..rules.cards import RANK_NAMES, card_to_symbol, rank_of, suit_of
from .scene import Table

WIDTH, HEIGHT = 640, 480  # the canvas; a picture of another size is this one scaled
CARD_W, CARD_H = 50, 70  # a card's own box; placed cards are scaled from it
CARD_RADIUS = 5
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
FELT, INK, RED, GOLD = "#1d6b3c", "#1b1b1b", "#c62828", "#ffd54f"
WHITE, GREY, PALE_GREEN = "#ffffff", "#e0e0e0", "#a5d6a7"
SIDE_COLOURS = ("#90caf9", "#ffab91", "#c5e1a5", "#ce93d8", "#fff59d", "#80deea")
BIG, SMALL = 1.1, 0.66  # card scales: the bottom hand and the pile; the other hands
DASH = (4.0, 3.0)  # an empty place's outline: dash, gap

Data = tuple[tuple[str, str], ...]  # (attribute name, value) pairs, in order


@dataclass(frozen=True)
class Box:
    """A rectangle (rounded by ``radius``): ``fill`` ``None`` for none, ``opacity`` the fill's
    (``None``: opaque); an outline of ``stroke`` colour, ``stroke_width`` (``None``: 1) and
    ``dash`` (``None``: solid) centred on the edge."""

    x: float
    y: float
    width: float
    height: float
    fill: str | None = None
    radius: float = 0
    opacity: float | None = None
    stroke: str | None = None
    stroke_width: float | None = None
    dash: tuple[float, float] | None = None
    data: Data = ()


@dataclass(frozen=True)
class Label:
    """One line of text whose baseline starts (``anchor`` ``"start"``), is centred on
    (``"middle"``) or ends (``"end"``) at ``(x, y)``; ``spacing`` is extra room between letters."""

    x: float
    y: float
    text: str
    size: float
    fill: str = WHITE
    anchor: str = "start"
    bold: bool = False
    spacing: float = 0
    data: Data = ()


@dataclass(frozen=True)
class CardAt:
    """A card (an id, or ``None`` for a back) with its box's top-left corner at ``(x, y)``, scaled
    by ``scale`` and turned ``rotate`` degrees clockwise about its centre."""

    card: int | None
    x: float
    y: float
    scale: float
    role: str
    rotate: float = 0.0
    data: Data = ()


@dataclass(frozen=True)
class Group:
    """Items that belong together (a side's score row), tagged with ``data``."""

    items: tuple["Item", ...]
    data: Data = ()


@dataclass(frozen=True)
class SuitMark:
    """Suit ``suit``'s shape (``SUIT_SHAPES``) centred at ``(x, y)``, scaled, filled."""

    suit: int
    x: float
    y: float
    scale: float
    fill: str


@dataclass(frozen=True)
class Outline:
    """Closed polygons stroked, not filled (the card back's pattern)."""

    polygons: tuple[tuple[tuple[float, float], ...], ...]
    stroke: str
    stroke_width: float = 1


Item = Union[Box, Label, CardAt, Group, SuitMark, Outline]

# Suit shapes in a 10×10 box centred on the origin (clubs, diamonds, hearts, spades: R2's
# order): circles (cx, cy, r) and filled polygons, drawn in that order.
SUIT_SHAPES: tuple[tuple[tuple[tuple[float, float, float], ...], tuple[tuple[tuple[float, float], ...], ...]], ...] = (
    (((0, -2.5, 2.3), (-2.6, 1.1, 2.3), (2.6, 1.1, 2.3)), (((0, 0), (-1.8, 5), (1.8, 5)),)),
    ((), (((0, -5), (4, 0), (0, 5), (-4, 0)),)),
    (((-2.3, -1.6, 2.6), (2.3, -1.6, 2.6)), (((-4.8, -0.6), (4.8, -0.6), (0, 5)),)),
    (((-2.3, 1.2, 2.4), (2.3, 1.2, 2.4)), (((-4.6, 0.4), (4.6, 0.4), (0, -5)), ((0, 1), (-1.8, 5), (1.8, 5)))),
)
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def clip(value: object, limit: int | None = None) -> str:
    """``value`` as picture text: control characters (which neither XML nor a font can show)
    replaced by ``?``, cut to ``limit`` characters with an ellipsis."""
    s = _INVALID_XML.sub("?", str(value))
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


# ------------------------------------------------------------------ cards
def card_colour(card: int) -> str:
    """Red for diamonds and hearts, ink for clubs and spades."""
    return RED if suit_of(card) in (1, 2) else INK


def card_face(card: int) -> tuple[Item, ...]:
    """Card ``card``'s face in its own ``CARD_W``×``CARD_H`` box: the rank in two corners, a
    small and a large suit shape."""
    suit, colour, rank = suit_of(card), card_colour(card), RANK_NAMES[rank_of(card)]
    size, spacing = (12, -1.0) if len(rank) > 1 else (14, 0.0)  # "10" squeezed into the corner
    return (
        Box(0.5, 0.5, CARD_W - 1, CARD_H - 1, "#fffdf7", CARD_RADIUS, stroke="#444", stroke_width=1),
        Label(3, 15, rank, size, colour, bold=True, spacing=spacing),
        SuitMark(suit, 9, 23, 0.9, colour),
        SuitMark(suit, 27, 42, 2, colour),
        Label(CARD_W - 4, CARD_H - 6, rank, size, colour, "end", bold=True, spacing=spacing),
    )


def card_back() -> tuple[Item, ...]:
    """The card back in the card's own box: a blue panel with a lattice of diamonds."""
    diamonds = tuple(((x, y - 8), (x + 8, y), (x, y + 8), (x - 8, y)) for y in (14, 36, 58) for x in (13, 25, 37))
    return (
        Box(0.5, 0.5, CARD_W - 1, CARD_H - 1, "#f5f5f5", CARD_RADIUS, stroke="#444"),
        Box(4, 4, CARD_W - 8, CARD_H - 8, "#1e4fa3", 3),
        Outline(diamonds, "#9fb9e8"),
    )


# ------------------------------------------------------------------ the table
def _seat_order(table: Table) -> list[int]:
    """The bottom seat (the viewer's, in a seat's view), then the others in playing order."""
    n = len(table.seats)
    return [(table.bottom + i) % n for i in range(n)]


def _hand(table: Table, seat: int, x: float, y: float, scale: float, step: float) -> list[Item]:
    return [CardAt(c, x + i * step, y, scale, "hand", data=(("data-seat", str(seat)),))
            for i, c in enumerate(table.seats[seat].hand)]


def _seat_header(table: Table, seat: int, x: float, y: float, width: float) -> list[Item]:
    row = table.seats[seat]
    size = len(row.hand)
    you = " (you)" if seat == table.viewer else ""
    limit = max(6, int(width / 7.5) - len(you))
    items: list[Item] = [Label(x, y, clip(row.name, limit) + you, 12, SIDE_COLOURS[row.side % len(SIDE_COLOURS)],
                               bold=True, data=(("data-role", "seat-name"), ("data-seat", str(seat))))]
    detail = f"side {row.side} · {size} card{'s' if size != 1 else ''}"
    if row.holds_stock_bottom and seat != table.viewer and table.stock_bottom is not None:
        detail += f" · has {card_to_symbol(table.stock_bottom)}"
    items.append(Label(x, y + 14, clip(detail), 10, GREY))
    if seat == table.turn:
        items.insert(0, Box(x - 5, y - 15, width, 112 if y < 100 else 126, radius=6, stroke=GOLD, stroke_width=2.5,
                            data=(("data-role", "turn"), ("data-seat", str(seat)))))
    return items


def _pile(table: Table) -> list[Item]:
    """The pile: up to six cards under the top one fanned to its left, the top card, the count
    under it; a pending claim's face-down card across the lone card (R29)."""
    items: list[Item] = []
    pile = table.pile
    top_x, y = 330, 168
    if not pile:
        items.append(Box(top_x, y, CARD_W * BIG, CARD_H * BIG, radius=5, stroke=PALE_GREEN, dash=DASH))
        items.append(Label(top_x + CARD_W * BIG / 2, y + 44, "empty", 11, "#c8e6c9", "middle"))
    shown = pile[-7:]
    for i, card in enumerate(shown):
        is_top = i == len(shown) - 1
        x = top_x - (len(shown) - 1 - i) * 18
        items.append(CardAt(card, x, y, BIG, "pile-top" if is_top else "pile"))
    if table.claim is not None:
        claimant, card = table.claim
        items.append(CardAt(card, top_x + 24, y + 10, BIG, "claim", rotate=18, data=(("data-seat", str(claimant)),)))
    under = max(len(pile) - 1, 0)
    hidden = sum(1 for c in pile[:-1] if c is None)
    caption = "" if not pile else f"top {card_to_symbol(pile[-1])}" if pile[-1] is not None else "top: face down"
    count = f"{under} under it" + (f" ({hidden} face down)" if hidden else "")
    items.append(Label(top_x + 28, y + 96, caption, 12, anchor="middle", bold=True,
                       data=(("data-role", "pile-caption"),)))
    items.append(Label(top_x + 28, y + 110, count, 11, GREY, "middle",
                       data=(("data-role", "pile-count"), ("data-count", str(len(pile))))))
    if table.claim is not None:
        claimant_name = table.seats[table.claim[0]].name
        items.append(Label(top_x + 28, y - 8, clip(f"{claimant_name} claims a pişti", 30), 11, GOLD, "middle"))
    return items


def _stock(table: Table) -> list[Item]:
    x, y = 24, 172
    items: list[Item] = []
    if table.stock_bottom is not None and table.stock:
        # R28: the shown bottom card peeks out under the stock, turned across it.
        items.append(CardAt(table.stock_bottom, x + 26, y + 8, 0.9, "stock-bottom", rotate=90))
    if table.stock:
        for i in range(min(3, (table.stock + 7) // 8)):
            items.append(CardAt(None, x + i * 2, y - i * 2, 0.9, "stock"))
    else:
        items.append(Box(x, y, CARD_W * 0.9, CARD_H * 0.9, radius=5, stroke=PALE_GREEN, dash=DASH))
    items.append(Label(x + 24, y + 86, f"stock {table.stock}", 11, anchor="middle",
                       data=(("data-role", "stock"), ("data-count", str(table.stock)))))
    if table.stock_bottom is not None:
        items.append(Label(x + 24, y + 100, f"bottom {card_to_symbol(table.stock_bottom)}", 10, GREY, "middle"))
    return items


# The score table's columns: (field, title, right edge); bluff points only with the variant (R29).
_COLUMNS = (("captured", "cards", 490), ("points", "points", 528), ("pistis", "piştis", 562))
_BLUFF_COLUMN = ("bluff_points", "bluff", 596)
_MATCH_COLUMN = ("match", "match", 634)
SCORE_TITLE_SIZE = 10  # the column titles' font size
SCORE_HEADER = 20  # from the column titles' baseline to the first side's name
SIDE_BLOCK = 52  # a side's rows at most (fewer pixels when many sides share the column)


def _scores(table: Table) -> list[Item]:
    """One row per side: its name, then its captured cards, public points, piştis, bluff
    points (R29) and match score (R24) under the column titles."""
    x, y = 462, 34
    items: list[Item] = [Box(x - 6, y, WIDTH - x + 2, HEIGHT - y - 4, "#000000", 6, opacity=0.22)]
    columns = _COLUMNS + ((_BLUFF_COLUMN,) if table.bluff else ()) + ((_MATCH_COLUMN,) if table.match else ())
    y += 18
    for _, title, right in columns:
        items.append(Label(right, y, title, SCORE_TITLE_SIZE, GREY, "end"))
    y += SCORE_HEADER
    block = min(SIDE_BLOCK, (HEIGHT - y - 8) // max(1, len(table.sides)))
    for side, row in enumerate(table.sides):
        colour = SIDE_COLOURS[side % len(SIDE_COLOURS)]
        group: list[Item] = [Label(x, y, clip(row.name, 24), 12, colour, bold=True, data=(("data-field", "name"),))]
        for field, _, right in columns:
            value = getattr(row, field)
            fill, bold = (GOLD, True) if field == "match" else (WHITE, False)
            group.append(Label(right, y + 17, str(value), 13, fill, "end", bold, data=(("data-field", field),)))
        items.append(Group(tuple(group), (("data-role", "side"), ("data-side", str(side)))))
        y += block
    return items


def table_layout(table: Table) -> tuple[Item, ...]:
    """Every item of ``table``'s picture on the ``WIDTH``×``HEIGHT`` canvas, back to front."""
    order = _seat_order(table)
    bottom, others = order[0], order[1:]
    items: list[Item] = [Box(0, 0, WIDTH, HEIGHT, FELT), Box(0, 0, WIDTH, 26, "#0f3d22"),
                         Label(8, 18, clip(table.title, 70), 13, bold=True, data=(("data-role", "title"),))]
    # The other seats along the top, in playing order after the bottom seat.
    if others:
        slot = 450 / len(others)
        step = min(24.0, (slot - 14 - CARD_W * SMALL) / 3)
        for i, seat in enumerate(others):
            x = 12 + i * slot
            items += _seat_header(table, seat, x, 46, slot - 6)
            items += _hand(table, seat, x, 70, SMALL, step)
    items += _stock(table)
    items += _pile(table)
    # The last move, the last claim and whose turn it is.
    items.append(Label(14, 316, clip(table.last_move, 72), 12, data=(("data-role", "last-move"),)))
    if table.last_claim:
        items.append(Label(14, 332, clip(table.last_claim, 74), 11, GREY, data=(("data-role", "last-claim"),)))
    items.append(Label(448, 316, "▶ " + clip(table.status, 40), 12, GOLD, "end", True, data=(("data-role", "status"),)))
    # The bottom seat's hand.
    items += _seat_header(table, bottom, 14, 358, 440)
    items += _hand(table, bottom, 14, 382, BIG, 62)
    items += _scores(table)
    return tuple(items)


def cards_used(table: Table) -> set[int]:
    """Every card id ``table`` may draw face up (pile, hands, claim card, stock bottom)."""
    used = {c for c in table.pile if c is not None}
    used.update(c for row in table.seats for c in row.hand if c is not None)
    if table.claim is not None and table.claim[1] is not None:
        used.add(table.claim[1])
    if table.stock_bottom is not None:
        used.add(table.stock_bottom)
    return used

