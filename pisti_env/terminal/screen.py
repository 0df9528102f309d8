"""The table as one seat may know it (R30–R31), drawn with ``rich``.

`render_screen` reads a [`SeatView`][pisti_env.SeatView] and nothing else, so the
screen can hold no card the seat may not know: its own hand (numbered), the pile (its top card,
the cards everyone saw under it, never-turned table cards as backs, R8), the stock, every other
hand as a count, per side the captured cards, public points, pişti and bluff points (R30), the
last capturer, the match scores, the pending claim and the last answered one (R29), and whose
turn it is. Suits are coloured (hearts and diamonds red) and always written as symbols
(``10♦``), so the screen reads the same without colour.
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text

from ..rules.actions import CHALLENGE
from ..views.view import SeatView
from ..rules.cards import RANK, card_to_symbol, suit_of
from ..drawing.scene import side_names  # noqa: F401 - the name events and the CLIs import from here

CARD_BACK = "▮"
RED_SUITS = (1, 2)  # diamonds, hearts
STYLE_RED, STYLE_BLACK = "bold red", "bold"


def card_text(card: int) -> Text:
    """One card as ``10♦``, red for hearts and diamonds."""
    return Text(card_to_symbol(card), style=STYLE_RED if suit_of(card) in RED_SUITS else STYLE_BLACK)


def cards_text(cards: Sequence[int], sep: str = " ") -> Text:
    """Cards in the given order, separated by ``sep`` (``-`` for none)."""
    if not cards:
        return Text("-")
    return Text(sep).join(card_text(c) for c in cards)




def _claim_lines(view: SeatView, names: Sequence[str]) -> list[Text]:
    """R29: the claim waiting for its answer, and the last one answered this hand."""
    lines = []
    pending = view.pending_claim
    if pending is not None:
        claimant, lone = pending
        line = Text.assemble("Claim:  ", (names[claimant], "bold"), " played a card face down on ", card_text(lone),
                             ", claiming a pişti; ", names[view.current_seat], " answers")
        own = view.claim_card
        if own is not None:
            line.append_text(Text.assemble(" (the face-down card: ", card_text(own), ")"))
        lines.append(line)
    claims = view.claims
    if claims:
        claimant, answerer, lone, answer, shown = claims[-1]
        line = Text.assemble("Last claim:  ", names[claimant], " on ", card_text(lone), ": ", names[answerer])
        if answer == CHALLENGE:
            line.append_text(Text.assemble(" challenged, the card was ", card_text(shown),
                                           " (a true claim)" if RANK[shown] == RANK[lone] else " (a bluff)"))
        else:
            line.append(" believed it")
        lines.append(line)
    return lines


def render_screen(view: SeatView, names: Sequence[str]) -> Text:
    """The screen of ``view``'s seat: everything it may know and nothing else (R30–R31).

    Args:
        view: the seat's view (the only source of what is shown).
        names: a display name per seat (the seat's own name included).
    """
    if len(names) != view.num_players:
        raise ValueError(f"names must give one name per seat ({view.num_players}), got {len(names)}")
    s = view.settings
    me = view.seat
    sides = side_names(names, view)
    hand_no = view.hands_completed + (0 if view.done else 1)
    title = f"Pişti · hand {hand_no} · dealer {names[view.dealer]}"
    title += " · single hand" if s.target is None else f" · match to {s.target}"
    out = Text()
    out.append(f"── {title} ──\n", style="bold")
    if s.target is not None:
        out.append("Match:  " + "   ".join(f"{sides[i]} {score}" for i, score in enumerate(view.match_scores)) + "\n")

    # The pile: never-turned table cards as backs (R8), then what everyone saw, the top last.
    out.append("Table:  ")
    if view.pile_size == 0:
        out.append("empty")
    else:
        known = view.pile_known
        if view.pile_hidden:
            out.append(" ".join([CARD_BACK] * view.pile_hidden) + " ")
        if known[:-1]:
            out.append_text(cards_text(known[:-1]))
            out.append(" ")
        out.append("[")
        out.append_text(card_text(view.pile_top))  # type: ignore[arg-type]
        out.append(f"]   top card {card_to_symbol(view.pile_top)}, {view.pile_size - 1} under it")  # type: ignore[arg-type]
        if view.pile_hidden:
            out.append(f" ({view.pile_hidden} face down)")
    out.append("\n")
    out.append(f"Stock:  {view.stock_size} cards")
    if view.stock_bottom is not None:
        out.append_text(Text.assemble(" · bottom card shown to all: ", card_text(view.stock_bottom)))
    out.append("\n")
    for line in _claim_lines(view, names):
        out.append_text(line)
        out.append("\n")

    sizes = view.hand_sizes
    width = max(len(n) for n in names)
    for seat, name in enumerate(names):
        marker = "▶" if seat == view.current_seat and not view.done else " "
        out.append(f"{marker} {name:<{width}}  side {view.side_of[seat]}  ")
        out.append(f"{sizes[seat]} card{'s' if sizes[seat] != 1 else ''} in hand")
        if seat == view.stock_bottom_holder and seat != me:
            out.append_text(Text.assemble(" (holds the shown ", card_text(view.stock_bottom), ")"))  # type: ignore[arg-type]
        out.append("\n")

    header = f"{'side':<{max(len(n) for n in sides)}}  captured  points  piştis  pişti pts"
    header += "  bluff pts" if s.bluff else ""
    out.append(header + "\n", style="underline")
    captured, points, pistis, pisti = view.captured_count, view.public_points, view.pistis, view.pisti_points
    bluff = view.bluff_points
    for side, name in enumerate(sides):
        row = f"{name:<{max(len(n) for n in sides)}}  {captured[side]:>8}  {points[side]:>6}  {pistis[side]:>6}  {pisti[side]:>9}"
        row += f"  {bluff[side]:>9}" if s.bluff else ""
        out.append(row + "\n")
    last = view.last_capturer
    out.append("Last capture: " + ("nobody yet" if last is None else sides[last]) + "\n")

    out.append("Your hand:  ", style="bold")
    hand = view.hand
    out.append_text(Text("  ").join(Text.assemble(f"{i}) ", card_text(c)) for i, c in enumerate(hand, 1))
                    if hand else Text("empty"))
    out.append("\n")
    if view.done:
        out.append("The game is over.")
    elif view.is_my_turn:
        out.append("Your turn" + (": answer the claim (b believe / c challenge)" if view.pending_claim else "."),
                   style="bold")
    else:
        out.append(f"{names[view.current_seat]} to play.")
    return out
