"""Each move told as the watching seat saw it, and each hand's score breakdown.

`snapshot` keeps the public facts of a [`SeatView`][pisti_env.SeatView] before a
move; `describe_move` compares them with the view after it: who played what, how many
cards it took, a pişti and its points, a face-down claim and its answer (R29). A face-down card
is named only to a viewer who may know it (its own player, or a spectator with ``viewer=None``).
`hand_summary` tells a finished hand's result, which is public once the hand is over (R30).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rich.text import Text

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..views.view import SeatView
from ..rules.cards import RANK
from .screen import card_text, side_names


@dataclass(frozen=True)
class Snapshot:
    """The public facts of a view a move changes (everything here is public, R30)."""

    hands_completed: int
    pile_size: int
    captured: tuple[int, ...]
    pisti_points: tuple[int, ...]
    bluff_points: tuple[int, ...]
    pending_claim: tuple[int, int] | None
    claims: int


def snapshot(view: SeatView) -> Snapshot:
    """The facts of ``view`` that `describe_move` compares (read now: the view is live)."""
    return Snapshot(view.hands_completed, view.pile_size, tuple(view.captured_count), tuple(view.pisti_points),
                    tuple(view.bluff_points), view.pending_claim, len(view.claims))


def describe_move(
    before: Snapshot, after: SeatView, seat: int, action: int, names: Sequence[str], viewer: int | None
) -> Text:
    """One line telling ``seat``'s ``action``.

    Args:
        before: `snapshot` of a view taken just before the move.
        after: a view of the same game just after it (any seat's: only public facts are read).
        seat: the seat that moved; ``action`` its action id.
        names: a display name per seat.
        viewer: the seat watching (a face-down card is named only when it is this seat's own),
            or ``None`` for a spectator who sees every card.
    """
    name = names[seat]
    side = after.side_of[seat]
    new_hand = after.hands_completed > before.hands_completed
    line = Text()
    if action < FACE_DOWN:
        line.append_text(Text.assemble((name, "bold"), " played ", card_text(action)))
        if new_hand:
            line.append(", the hand's last card")
            return line
        took = after.captured_count[side] - before.captured[side]
        if took:
            line.append(f" and took {took} card{'s' if took != 1 else ''}")
        pisti = after.pisti_points[side] - before.pisti_points[side]
        if pisti:
            line.append(f"  PİŞTİ! +{pisti}", style="bold magenta")
        return line
    if action < BELIEVE:
        claimant_lone = after.pending_claim
        line.append_text(Text.assemble((name, "bold"), " played "))
        if viewer is None or viewer == seat:
            line.append_text(Text.assemble(card_text(action - FACE_DOWN), " face down"))
        else:
            line.append("a card face down")
        if claimant_lone is not None:
            line.append_text(Text.assemble(" on ", card_text(claimant_lone[1]), ", claiming a pişti"))
        return line
    claimant = before.pending_claim[0] if before.pending_claim else seat
    verb = "believed" if action == BELIEVE else "challenged"
    whose = "your" if names[claimant] == "you" else f"{names[claimant]}'s"
    line.append_text(Text.assemble((name, "bold"), f" {verb} {whose} claim"))
    claims = after.claims
    if new_hand or len(claims) <= before.claims:
        return line
    _, _, lone, answer, shown = claims[-1]
    if answer == CHALLENGE:
        true = RANK[shown] == RANK[lone]
        line.append_text(Text.assemble(": the card was ", card_text(shown), " — a true claim" if true else " — a bluff!"))
    gains = [after.bluff_points[s] - before.bluff_points[s] for s in range(after.num_sides)]
    sides = side_names(names, after)
    line.append("".join(f"  {sides[s]} +{g}" for s, g in enumerate(gains) if g))
    return line


# The result keys of Game.hand_scores shown per side, with their column titles.
SUMMARY_COLUMNS = (("cards", "cards"), ("card_points", "card pts"), ("majority", "majority"),
                   ("pisti", "piştis"), ("double_pisti", "double"), ("pisti_points", "pişti pts"))
BLUFF_COLUMNS = (("bluff_points", "bluff pts"), ("bluff_claims", "claims"), ("bluff_challenged_false", "caught"))


def hand_summary(result: Sequence[dict[str, Any]], sides: Sequence[str], match_scores: Sequence[int],
                 hand: int, target: int | None) -> Text:
    """A finished hand's score breakdown per side (its ``Game.hand_scores`` result, public once
    the hand is over, R30) and the match scores after it.

    Args:
        result: the hand's result per side.
        sides: a name per side.
        match_scores: the match totals after the hand.
        hand: the hand's number (1-based); ``target``: the match target (``None``: single hand).
    """
    columns = SUMMARY_COLUMNS + (BLUFF_COLUMNS if "bluff_points" in result[0] else ())
    width = max(len(s) for s in sides)
    out = Text()
    out.append(f"── Hand {hand} over ──\n", style="bold")
    titles = "".join(f"  {title:>9}" for _, title in columns)
    out.append(f"{'side':<{width}}{titles}      total" + ("" if target is None else "      match") + "\n",
               style="underline")
    for side, name in enumerate(sides):
        r = result[side]
        row = f"{name:<{width}}" + "".join(f"  {r[key]:>9}" for key, _ in columns) + f"  {r['total']:>9}"
        row += "" if target is None else f"  {match_scores[side]:>9}"
        out.append(row + "\n")
    return out


def result_line(winner: int | None, sides: Sequence[str], scores: Sequence[int], match: bool) -> Text:
    """The game's result: who won, or a draw, with the scores."""
    what = "Match" if match else "Hand"
    scores_text = " – ".join(str(s) for s in scores)
    if winner is None:
        return Text(f"{what} over: a draw ({scores_text}).", style="bold")
    plural = sides[winner] == "you" or " + " in sides[winner]  # "you win", "you + expert (2) win"
    return Text(f"{what} over: {sides[winner]} win{'' if plural else 's'} ({scores_text}).", style="bold")
