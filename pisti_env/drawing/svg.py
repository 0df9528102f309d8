"""A :class:`~pisti_env.drawing.scene.Table` drawn as SVG: the one drawing of the table.

Every card is drawn here (a rounded face with its rank and suit shapes, or a patterned back):
no image file is read or fetched. Each card face is defined once (``<defs>``) and placed with
``<use>``, so a picture is small and a page of many pictures (:mod:`~pisti_env.drawing.replay_html`)
can share one set of definitions (:func:`card_defs`).

The layout is fixed on a 640×480 canvas (readable at that size, scaled for others): the title
at the top, the other seats along the top, the stock and the pile in the middle with the last
move and whose turn it is under them, the bottom seat's hand (the viewer's, or the one chosen when
all cards are open) at the bottom, and one score block per side on the right. Elements carry
``data-role``/``data-card``/``data-side``/``data-field`` attributes so that tests and tools can
read a picture (``data-card="10D"``, ``"back"`` for a card drawn face down).

All text that comes from outside (player names) is escaped; the picture holds no script.
"""

from __future__ import annotations

import re
from typing import Iterable
from xml.sax.saxutils import escape

from ..cards import NUM_CARD_IDS, RANK_NAMES, SUITS, card_to_symbol, card_to_text, rank_of, suit_of
from .scene import Table

WIDTH, HEIGHT = 640, 480
CARD_W, CARD_H = 50, 70  # the card definitions' size; placed cards are scaled from it
FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
FELT, INK, RED, GOLD = "#1d6b3c", "#1b1b1b", "#c62828", "#ffd54f"
SIDE_COLOURS = ("#90caf9", "#ffab91", "#c5e1a5", "#ce93d8", "#fff59d", "#80deea")
BIG, SMALL = 1.1, 0.66  # card scales: the bottom hand and the pile; the other hands

# Suit shapes in a 10×10 box centred on the origin (clubs, diamonds, hearts, spades: R2's order).
_SUIT_SHAPES = (
    '<circle cx="0" cy="-2.5" r="2.3"/><circle cx="-2.6" cy="1.1" r="2.3"/><circle cx="2.6" cy="1.1" r="2.3"/>'
    '<path d="M0 0L-1.8 5H1.8Z"/>',
    '<path d="M0 -5L4 0L0 5L-4 0Z"/>',
    '<circle cx="-2.3" cy="-1.6" r="2.6"/><circle cx="2.3" cy="-1.6" r="2.6"/><path d="M-4.8 -0.6H4.8L0 5Z"/>',
    '<circle cx="-2.3" cy="1.2" r="2.4"/><circle cx="2.3" cy="1.2" r="2.4"/><path d="M-4.6 0.4H4.6L0 -5Z"/>'
    '<path d="M0 1L-1.8 5H1.8Z"/>',
)
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def text(value: object, limit: int | None = None) -> str:
    """``value`` as safe XML/HTML text (attribute values too): characters XML cannot hold
    replaced, ``& < > "`` escaped; cut to ``limit`` characters with an ellipsis."""
    s = _INVALID_XML.sub("?", str(value))
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return escape(s, {'"': "&quot;"})


def _colour(card: int) -> str:
    return RED if suit_of(card) in (1, 2) else INK  # diamonds and hearts


def _card_face(card: int) -> str:
    code, suit, colour = card_to_text(card), suit_of(card), _colour(card)
    rank = RANK_NAMES[rank_of(card)]
    size, spacing = (12, ' letter-spacing="-1"') if len(rank) > 1 else (14, "")
    return (
        f'<g id="card-{code}"><rect x="0.5" y="0.5" width="{CARD_W - 1}" height="{CARD_H - 1}" rx="5" '
        f'fill="#fffdf7" stroke="#444" stroke-width="1"/>'
        f'<g fill="{colour}" font-family="{FONT}" font-weight="bold">'
        f'<text x="3" y="15" font-size="{size}"{spacing}>{rank}</text>'
        f'<use href="#suit-{SUITS[suit]}" xlink:href="#suit-{SUITS[suit]}" transform="translate(9 23) scale(0.9)"/>'
        f'<use href="#suit-{SUITS[suit]}" xlink:href="#suit-{SUITS[suit]}" transform="translate(27 42) scale(2)"/>'
        f'<text x="{CARD_W - 4}" y="{CARD_H - 6}" font-size="{size}" text-anchor="end"{spacing}>{rank}</text></g></g>'
    )


_CARD_BACK = (
    f'<g id="card-back"><rect x="0.5" y="0.5" width="{CARD_W - 1}" height="{CARD_H - 1}" rx="5" fill="#f5f5f5" '
    f'stroke="#444"/><rect x="4" y="4" width="{CARD_W - 8}" height="{CARD_H - 8}" rx="3" fill="#1e4fa3"/>'
    '<path d="' + "".join(f"M{x} 6L{x + 8} 14L{x} 22L{x - 8} 14Z" for x in (13, 25, 37))
    + "".join(f"M{x} 28L{x + 8} 36L{x} 44L{x - 8} 36Z" for x in (13, 25, 37))
    + "".join(f"M{x} 50L{x + 8} 58L{x} 66L{x - 8} 58Z" for x in (13, 25, 37))
    + '" fill="none" stroke="#9fb9e8" stroke-width="1"/></g>'
)


def card_defs(cards: Iterable[int] | None = None) -> str:
    """The ``<defs>`` of the card faces ``cards`` (all 52 when ``None``), the four suit shapes
    and the card back."""
    chosen = range(NUM_CARD_IDS) if cards is None else sorted(set(cards))
    suits = "".join(f'<g id="suit-{SUITS[i]}">{shape}</g>' for i, shape in enumerate(_SUIT_SHAPES))
    return "<defs>" + suits + _CARD_BACK + "".join(_card_face(c) for c in chosen) + "</defs>"


def _card(card: int | None, x: float, y: float, scale: float, role: str, extra: str = "",
          rotate: float = 0.0) -> str:
    """One card placed at ``(x, y)`` (its top-left corner), face up or (``None``) a back."""
    ref = "card-back" if card is None else f"card-{card_to_text(card)}"
    data = "back" if card is None else card_to_text(card)
    turn = f" rotate({rotate:g} {CARD_W / 2:g} {CARD_H / 2:g})" if rotate else ""
    return (f'<use href="#{ref}" xlink:href="#{ref}" transform="translate({x:g} {y:g}) scale({scale:g}){turn}" '
            f'data-role="{role}" data-card="{data}"{extra}/>')


def _label(x: float, y: float, body: str, size: int = 12, fill: str = "#ffffff", anchor: str = "start",
           weight: str = "normal", extra: str = "") -> str:
    """A text element; ``body`` must already be escaped (:func:`text`)."""
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" fill="{fill}" text-anchor="{anchor}" '
            f'font-weight="{weight}"{extra}>{body}</text>')


def _seat_order(table: Table) -> list[int]:
    """The bottom seat (the viewer's, in a seat's view), then the others in playing order."""
    n = len(table.seats)
    return [(table.bottom + i) % n for i in range(n)]


def _hand(table: Table, seat: int, x: float, y: float, scale: float, step: float) -> list[str]:
    return [_card(c, x + i * step, y, scale, "hand", f' data-seat="{seat}"')
            for i, c in enumerate(table.seats[seat].hand)]


def _seat_header(table: Table, seat: int, x: float, y: float, width: float) -> list[str]:
    row = table.seats[seat]
    size = len(row.hand)
    you = " (you)" if seat == table.viewer else ""
    limit = max(6, int(width / 7.5) - len(you))
    parts = [_label(x, y, text(row.name, limit) + you, 12, SIDE_COLOURS[row.side % len(SIDE_COLOURS)], weight="bold",
                    extra=f' data-role="seat-name" data-seat="{seat}"')]
    detail = f"side {row.side} · {size} card{'s' if size != 1 else ''}"
    if row.holds_stock_bottom and seat != table.viewer and table.stock_bottom is not None:
        detail += f" · has {card_to_symbol(table.stock_bottom)}"
    parts.append(_label(x, y + 14, text(detail), 10, "#e0e0e0"))
    if seat == table.turn:
        parts.insert(0, f'<rect x="{x - 5:g}" y="{y - 15:g}" width="{width:g}" height="{(112 if y < 100 else 126):g}" '
                        f'rx="6" fill="none" stroke="{GOLD}" stroke-width="2.5" data-role="turn" data-seat="{seat}"/>')
    return parts


def _pile(table: Table) -> list[str]:
    """The pile: up to six cards under the top one fanned to its left, the top card, the count
    under it; a pending claim's face-down card across the lone card (R29)."""
    parts = []
    pile = table.pile
    top_x, y = 330, 168
    if not pile:
        parts.append(f'<rect x="{top_x:g}" y="{y:g}" width="{CARD_W * BIG:g}" height="{CARD_H * BIG:g}" rx="5" '
                     'fill="none" stroke="#a5d6a7" stroke-dasharray="4 3"/>')
        parts.append(_label(top_x + CARD_W * BIG / 2, y + 44, "empty", 11, "#c8e6c9", "middle"))
    shown = pile[-7:]
    for i, card in enumerate(shown):
        is_top = i == len(shown) - 1
        x = top_x - (len(shown) - 1 - i) * 18
        parts.append(_card(card, x, y, BIG, "pile-top" if is_top else "pile"))
    if table.claim is not None:
        claimant, card = table.claim
        parts.append(_card(card, top_x + 24, y + 10, BIG, "claim", f' data-seat="{claimant}"', rotate=18))
    under = max(len(pile) - 1, 0)
    hidden = sum(1 for c in pile[:-1] if c is None)
    caption = "" if not pile else f"top {card_to_symbol(pile[-1])}" if pile[-1] is not None else "top: face down"
    count = f"{under} under it" + (f" ({hidden} face down)" if hidden else "")
    parts.append(_label(top_x + 28, y + 96, text(caption), 12, weight="bold", anchor="middle",
                        extra=' data-role="pile-caption"'))
    parts.append(_label(top_x + 28, y + 110, text(count), 11, "#e0e0e0", "middle",
                        extra=f' data-role="pile-count" data-count="{len(pile)}"'))
    if table.claim is not None:
        claimant = table.seats[table.claim[0]].name
        parts.append(_label(top_x + 28, y - 8, text(f"{claimant} claims a pişti", 30), 11, GOLD, "middle"))
    return parts


def _stock(table: Table) -> list[str]:
    x, y = 24, 172
    parts = []
    if table.stock_bottom is not None and table.stock:
        # R28: the shown bottom card peeks out under the stock, turned across it.
        parts.append(_card(table.stock_bottom, x + 26, y + 8, 0.9, "stock-bottom", rotate=90))
    if table.stock:
        for i in range(min(3, (table.stock + 7) // 8)):
            parts.append(_card(None, x + i * 2, y - i * 2, 0.9, "stock"))
    else:
        parts.append(f'<rect x="{x}" y="{y}" width="{CARD_W * 0.9:g}" height="{CARD_H * 0.9:g}" rx="5" fill="none" '
                     'stroke="#a5d6a7" stroke-dasharray="4 3"/>')
    parts.append(_label(x + 24, y + 86, f"stock {table.stock}", 11, anchor="middle",
                        extra=f' data-role="stock" data-count="{table.stock}"'))
    if table.stock_bottom is not None:
        parts.append(_label(x + 24, y + 100, text(f"bottom {card_to_symbol(table.stock_bottom)}"), 10, "#e0e0e0",
                            "middle"))
    return parts


# The score table's columns: (field, title, right edge); bluff points only with the variant (R29).
_COLUMNS = (("captured", "cards", 490), ("points", "points", 528), ("pistis", "piştis", 562))
_BLUFF_COLUMN = ("bluff_points", "bluff", 596)
_MATCH_COLUMN = ("match", "match", 634)


def _scores(table: Table) -> list[str]:
    """One row per side: its name, then its captured cards, public points, piştis, bluff
    points (R29) and match score (R24) under the column titles."""
    x, y = 462, 34
    parts = [f'<rect x="{x - 6}" y="{y}" width="{WIDTH - x + 2}" height="{HEIGHT - y - 4}" rx="6" fill="#000000" '
             'fill-opacity="0.22"/>']
    columns = _COLUMNS + ((_BLUFF_COLUMN,) if table.bluff else ()) + ((_MATCH_COLUMN,) if table.match else ())
    y += 18
    for _, title, right in columns:
        parts.append(_label(right, y, text(title), 10, "#e0e0e0", "end"))
    y += 20
    block = min(52, (HEIGHT - y - 8) // max(1, len(table.sides)))
    for side, row in enumerate(table.sides):
        colour = SIDE_COLOURS[side % len(SIDE_COLOURS)]
        parts.append(f'<g data-role="side" data-side="{side}">')
        parts.append(_label(x, y, text(row.name, 24), 12, colour, weight="bold", extra=' data-field="name"'))
        for field, _, right in columns:
            value = getattr(row, field)
            fill, weight = (GOLD, "bold") if field == "match" else ("#ffffff", "normal")
            parts.append(_label(right, y + 17, str(value), 13, fill, "end", weight, extra=f' data-field="{field}"'))
        parts.append("</g>")
        y += block
    return parts


def table_svg(table: Table, width: int = WIDTH, height: int = HEIGHT, defs: bool = True) -> str:
    """The SVG document of ``table``, drawn on a 640×480 canvas scaled to ``width``×``height``.

    Args:
        table: the scene (:func:`~pisti_env.drawing.scene.seat_table` or
            :func:`~pisti_env.drawing.scene.open_table`).
        width, height: the picture's size in pixels.
        defs: include the card definitions this picture uses; ``False`` when the page already
            holds :func:`card_defs` (the replay page shares one set).
    """
    order = _seat_order(table)
    bottom, others = order[0], order[1:]
    parts = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="{FELT}"/>',
             f'<rect width="{WIDTH}" height="26" fill="#0f3d22"/>',
             _label(8, 18, text(table.title, 70), 13, weight="bold", extra=' data-role="title"')]
    # The other seats along the top, in playing order after the bottom seat.
    if others:
        slot = 450 / len(others)
        step = min(24.0, (slot - 14 - CARD_W * SMALL) / 3)
        for i, seat in enumerate(others):
            x = 12 + i * slot
            parts += _seat_header(table, seat, x, 46, slot - 6)
            parts += _hand(table, seat, x, 70, SMALL, step)
    parts += _stock(table)
    parts += _pile(table)
    # The last move, the last claim and whose turn it is.
    parts.append(_label(14, 316, text(table.last_move, 72), 12, extra=' data-role="last-move"'))
    if table.last_claim:
        parts.append(_label(14, 332, text(table.last_claim, 74), 11, "#e0e0e0", extra=' data-role="last-claim"'))
    parts.append(_label(448, 316, "▶ " + text(table.status, 40), 12, GOLD, "end", "bold",
                        extra=' data-role="status"'))
    # The bottom seat's hand.
    parts += _seat_header(table, bottom, 14, 358, 440)
    parts += _hand(table, bottom, 14, 382, BIG, 62)
    parts += _scores(table)
    used = {c for c in table.pile if c is not None}
    used.update(c for row in table.seats for c in row.hand if c is not None)
    if table.claim is not None and table.claim[1] is not None:
        used.add(table.claim[1])
    if table.stock_bottom is not None:
        used.add(table.stock_bottom)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{width}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" role="img" '
        f'aria-label="{text(table.title)}">' + (card_defs(used) if defs else "") + "".join(parts) + "</svg>"
    )
