"""What a picture of the table shows, as plain data: the `Table` scene.

A scene is built in one of two explicit ways, and the drawing (`svg`)
reads nothing else:

* `seat_table` reads a [`SeatView`][pisti_env.SeatView] and nothing else, so the
  scene holds only what that seat may know (R30–R31): its own hand face up, every other hand as
  backs with a count, the pile's never-turned table cards as backs (R8), a face-down claim card
  as a back unless it is the seat's own or the shown stock-bottom card (R28, R29).
* `open_table` is the spectator's scene: every hand, every pile card and the face-down
  claim card face up. It is for watching a game, never for a player.

Both show the same public facts (R30): the pile's top card and how many lie under it, the
stock, per side the captured cards, public points, piştis, pişti and bluff points and the
match score, whose turn it is, the last card played and the last claim (R29).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..rules.actions import CHALLENGE
from ..views.view import SeatView
from ..rules.cards import NUM_CARD_IDS, RANK, card_to_symbol
from ..game.engine import Game

BACK = None  # a card drawn face down in a scene's card lists


@dataclass(frozen=True)
class SeatRow:
    """One seat at the table: its name, side and hand (card ids, or `BACK` per card the
    viewer may not see)."""

    name: str
    side: int
    hand: tuple[int | None, ...]
    holds_stock_bottom: bool  # it holds the shown stock-bottom card (R28), known to all


@dataclass(frozen=True)
class SideRow:
    """One side's public counters (R30) and match score (R24)."""

    name: str
    captured: int
    points: int
    pistis: int
    pisti_points: int
    bluff_points: int
    match: int


@dataclass(frozen=True)
class Table:
    """Everything one picture of the table shows (see the module docstring).

    ``pile`` lists the table pile bottom first (card ids, `BACK` for a card the viewer
    cannot identify); ``claim`` is ``(claimant seat, face-down card id or BACK)`` while a claim
    waits for its answer (R29). ``viewer`` is the seat whose view it is, ``None`` for all open.
    ``turn`` is the seat to move, ``None`` once the game is over; ``bottom`` the seat drawn at
    the bottom of the picture (the viewer in a seat's view).
    """

    title: str
    viewer: int | None
    bottom: int
    bluff: bool
    match: bool  # a match to a target (R24), not a single hand
    seats: tuple[SeatRow, ...]
    sides: tuple[SideRow, ...]
    pile: tuple[int | None, ...]
    claim: tuple[int, int | None] | None
    stock: int
    stock_bottom: int | None
    turn: int | None
    last_move: str
    last_claim: str
    status: str


def side_names(names: Sequence[str], view: SeatView) -> list[str]:
    """A name per side: its seats' names joined with ``+`` (R4)."""
    return [" + ".join(n for s, n in enumerate(names) if view.side_of[s] == side) for side in range(view.num_sides)]


def _last_claim(view: SeatView, names: Sequence[str]) -> str:
    """The last answered claim of this hand (R29), as everyone saw it."""
    claims = view.claims
    if not claims:
        return ""
    claimant, answerer, lone, answer, shown = claims[-1]
    text = f"{names[claimant]} claimed a pişti on {card_to_symbol(lone)}: {names[answerer]} "
    if answer != CHALLENGE:
        return text + "believed it"
    outcome = "a true claim" if RANK[shown] == RANK[lone] else "a bluff"
    return text + f"challenged, it was {card_to_symbol(shown)} ({outcome})"


def _status(view: SeatView, names: Sequence[str], sides: Sequence[str]) -> str:
    if view.done:
        scores = view.match_scores
        best = max(scores)
        leaders = [s for s, v in enumerate(scores) if v == best]
        what = "match" if view.settings.target is not None else "hand"
        return f"The {what} is over: " + ("a draw" if len(leaders) > 1 else f"{sides[leaders[0]]} won")
    if view.pending_claim is not None:
        return f"{names[view.current_seat]} answers the claim"
    return f"{names[view.current_seat]} to play"


def _table(view: SeatView, names: Sequence[str], *, viewer: int | None, bottom: int,
           hands: Sequence[Sequence[int | None]], pile: Sequence[int | None], claim_card: int | None,
           last_move: str | None) -> Table:
    """The scene from ``view``'s public facts plus the cards the caller lets it show."""
    if len(names) != view.num_players:
        raise ValueError(f"names must give one name per seat ({view.num_players}), got {len(names)}")
    names = [str(n) for n in names]
    settings = view.settings
    sides = side_names(names, view)
    hand_no = view.hands_completed + (0 if view.done else 1)
    title = f"Pişti · hand {hand_no} · dealer {names[view.dealer]}"
    title += " · single hand" if settings.target is None else f" · match to {settings.target}"
    if last_move is None:
        history = view.history
        last_move = f"{names[history[-1][0]]} played {card_to_symbol(history[-1][1])}" if history else ""
    holder = view.stock_bottom_holder
    seats = tuple(
        SeatRow(names[s], view.side_of[s], tuple(hands[s]), holder == s) for s in range(view.num_players)
    )
    captured, points, pistis = view.captured_count, view.public_points, view.pistis
    pisti_points, bluff_points, match = view.pisti_points, view.bluff_points, view.match_scores
    side_rows = tuple(
        SideRow(sides[i], captured[i], points[i], pistis[i], pisti_points[i], bluff_points[i], match[i])
        for i in range(view.num_sides)
    )
    pending = view.pending_claim
    return Table(
        title=title, viewer=viewer, bottom=bottom, bluff=settings.bluff, match=settings.target is not None, seats=seats,
        sides=side_rows, pile=tuple(pile), claim=None if pending is None else (pending[0], claim_card),
        stock=view.stock_size, stock_bottom=view.stock_bottom, turn=None if view.done else view.current_seat,
        last_move=last_move, last_claim=_last_claim(view, names), status=_status(view, names, sides),
    )


def seat_table(view: SeatView, names: Sequence[str], last_move: str | None = None) -> Table:
    """The scene of ``view``'s seat: what it may know and nothing else (R30–R31).

    Args:
        view: the seat's view, the only source of the scene.
        names: a display name per seat.
        last_move: the line telling the last move, as this seat saw it (e.g. from
            `pisti_env.terminal.events.describe_move` with ``viewer=view.seat``);
            ``None``: the last card shown this hand.
    """
    hands: list[list[int | None]] = [[BACK] * size for size in view.hand_sizes]
    hands[view.seat] = list(view.hand)
    pile = [BACK] * view.pile_hidden + list(view.pile_known)  # never-turned cards lie at the bottom (R8)
    return _table(view, names, viewer=view.seat, bottom=view.seat, hands=hands, pile=pile,
                  claim_card=view.claim_card, last_move=last_move)


def open_table(game: Game, names: Sequence[str], last_move: str | None = None, bottom: int = 0) -> Table:
    """The spectator's scene of ``game``: every card face up, seat ``bottom`` drawn at the
    bottom. For watching only, never for a player (a seat's picture is `seat_table`)."""
    view = SeatView(game, bottom)  # only its public facts are read; it checks the seat
    hands = [game.hand_card_ids(s) for s in range(game.num_players)]
    pile = [p % NUM_CARD_IDS for p in game.pile]
    claim_card = game.claim_card % NUM_CARD_IDS if game.claimant >= 0 else None
    return _table(view, names, viewer=None, bottom=bottom, hands=hands, pile=pile, claim_card=claim_card,
                  last_move=last_move)
