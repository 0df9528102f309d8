"""What one response of the play page holds: the person's seat as it may know it (R30–R31).

Every function here reads a ``pisti_env.agents.view.SeatView`` (and the display names,
the settings and public records), never a ``pisti_env.game.Game``: the page can only be
sent what the seat could tell itself at the table. The table is drawn by the same code as the
replay page (``pisti_env.drawing.scene.seat_table``, laid out by
``pisti_env.drawing.layout``, written by ``pisti_env.drawing.svg.table_svg``); the
page puts that SVG in place and makes the seat's own hand cards clickable.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ...views.view import SeatView
from ...rules.cards import card_to_symbol, card_to_text
from ...drawing.scene import seat_table
from ...drawing.svg import table_svg
from ..events import BLUFF_COLUMNS, SUMMARY_COLUMNS, result_line
from ...drawing.scene import side_names

PLAY, DOWN, BELIEVE_MOVE, CHALLENGE_MOVE = "play", "down", "believe", "challenge"


def legal_moves(view: SeatView) -> list[dict[str, Any]]:
    """The seat's legal moves as ``{"action", "kind", "card", "label"}`` (empty when it is not
    its turn): ``kind`` is ``play`` (face up), ``down`` (face down claiming a pişti, R29),
    ``believe`` or ``challenge`` (answers to a claim, R29); ``card`` the card's code or ``None``."""
    moves = []
    for action in view.legal_actions:
        if action < FACE_DOWN:
            moves.append({"action": action, "kind": PLAY, "card": card_to_text(action),
                          "label": card_to_symbol(action)})
        elif action < BELIEVE:
            card = action - FACE_DOWN
            moves.append({"action": action, "kind": DOWN, "card": card_to_text(card),
                          "label": "face down " + card_to_symbol(card)})
        else:
            kind = BELIEVE_MOVE if action == BELIEVE else CHALLENGE_MOVE
            moves.append({"action": action, "kind": kind, "card": None, "label": kind})
    return moves


def table_picture(view: SeatView, names: Sequence[str], last_move: str | None = None) -> str:
    """The seat's table as an SVG document, drawn from its view only (R30–R31)."""
    return table_svg(seat_table(view, names, last_move))


def hand_breakdown(record: dict[str, Any], sides: Sequence[str]) -> dict[str, Any]:
    """A finished hand's score breakdown from its public ``hand_end`` record (R20–R24, R29):
    ``{"hand", "columns": [[key, title], ...], "rows": [{"side", "values", "total", "match"}]}``."""
    result = record["result"]
    columns = SUMMARY_COLUMNS + (BLUFF_COLUMNS if "bluff_points" in result[0] else ())
    rows = [{"side": sides[i], "values": [r[key] for key, _ in columns], "total": r["total"],
             "match": record["match_scores"][i]} for i, r in enumerate(result)]
    return {"hand": record["hand"], "columns": [list(c) for c in columns], "rows": rows}


def seat_state(
    view: SeatView,
    names: Sequence[str],
    *,
    frames: Sequence[dict[str, str]] = (),
    breakdowns: Sequence[dict[str, Any]] = (),
    winner: int | None = None,
    last_move: str | None = None,
) -> dict[str, Any]:
    """One response of the play page: everything the seat may know now, nothing else.

    Args:
        view: the person's view of the game now.
        names: a display name per seat (``"you"`` for the person's).
        frames: the moves since the last response as the seat saw them, each
            ``{"line": text, "svg": the table after it}`` (``table_picture`` of the seat's view
            then), for the page to show one after the other.
        breakdowns: the hands finished so far (``hand_breakdown``), public once over (R30).
        winner: the winning side once the game is over (``None``: a draw or not over).
        last_move: the line of the last move, shown on the table.
    """
    sides = side_names(names, view)
    settings = view.settings
    state: dict[str, Any] = {
        "seat": view.seat,
        "names": list(names),
        "sides": sides,
        "side": view.side,
        "settings": {"players": settings.num_players, "partnerships": settings.partnerships,
                     "target": settings.target, "bluff": settings.bluff},
        "hand_number": view.hands_completed + (0 if view.done else 1),
        "match_scores": list(view.match_scores),
        "your_turn": view.is_my_turn and not view.done,
        "to_play": None if view.done else view.current_seat,
        "pending_claim": None if view.pending_claim is None else list(view.pending_claim),
        "legal": legal_moves(view) if view.is_my_turn and not view.done else [],
        "hand": [card_to_text(c) for c in view.hand],
        "done": view.done,
        "result": result_line(winner, sides, view.match_scores, settings.target is not None).plain
        if view.done else None,
        "frames": list(frames),
        "breakdowns": list(breakdowns),
        "svg": table_picture(view, names, last_move),
    }
    return state
