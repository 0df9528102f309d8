"""A readable text view of a game for people (``render_mode="ansi"``/``"human"``).

The view is a spectator's: it shows every hand, so it is for watching, never for agents.
"""

from __future__ import annotations

from ..rules import locations as loc
from ..rules.actions import CHALLENGE
from ..rules.cards import NUM_CARD_IDS, RANK, card_to_symbol
from ..game.engine import Game


def _cards(cards: list[int]) -> str:
    return " ".join(card_to_symbol(c) for c in sorted(cards, key=lambda c: (RANK[c], c % NUM_CARD_IDS))) or "-"


def render_text(game: Game, agent_names: list[str] | None = None) -> str:
    """The state as a small text table: table pile, stock, hands and scores."""
    s = game.settings
    names = agent_names or [f"seat {i}" for i in range(game.num_players)]
    hand_no = game.hands_completed + (0 if game.done else 1)
    lines = [f"Pişti · hand {hand_no} · dealer {names[game.dealer]}"
             + ("" if s.target is None else f" · target {s.target}")]
    pile = []
    for c in game.pile:
        if game.where[c] == loc.PILE_HIDDEN:
            pile.append("▮")
        elif game.where[c] == loc.PILE_JACK:
            pile.append(f"({card_to_symbol(c)})")
        else:
            pile.append(card_to_symbol(c))
    lines.append(f"table ({len(game.pile)}): " + (" ".join(pile) if pile else "empty"))
    stock = f"stock: {game.stock_size}"
    if game.stock_bottom is not None:
        stock += f" · shown bottom card {card_to_symbol(game.stock_bottom)}"
    lines.append(stock)
    if game.history:
        seat, card = game.history[-1]
        lines.append(f"last play: {names[seat]} {card_to_symbol(card)}")
    if s.bluff:
        lines += _claim_lines(game, names)
    width = max(len(n) for n in names)
    for seat in range(game.num_players):
        marker = "▶" if seat == game.turn and not game.done else " "
        lines.append(f"{marker} {names[seat]:<{width}} side {game.side_of[seat]}: {_cards(game.hands[seat])}")
    lines.append("side | cards | piştis | hand pts (public) | match" + (" | bluff pts" if s.bluff else ""))
    for side in range(game.num_sides):
        pisti = game.pisti_count[side] + game.double_pisti_count[side]
        lines.append(
            f"{side:>4} | {game.captured_count[side]:>5} | {pisti:>6} | {game.public_points[side]:>17} | "
            f"{game.match_scores[side]:>5}" + (f" | {game.bluff_points[side]:>9}" if s.bluff else "")
        )
    if game.done:
        lines.append("match over: " + ("draw" if game.winner is None else f"side {game.winner} wins"))
    return "\n".join(lines)


def _claim_lines(game: Game, names: list[str]) -> list[str]:
    """R29: the pending claim (a spectator sees the face-down card too) and the last answer."""
    lines = []
    if game.claimant >= 0:
        lines.append(
            f"claim: {names[game.claimant]} plays face down ({card_to_symbol(game.claim_card)}) claiming a pişti "
            f"on {card_to_symbol(game.pile[0])}; {names[game.turn]} answers"
        )
    elif game.claims:
        claimant, answerer, lone, answer, shown = game.claims[-1]
        if answer == CHALLENGE:
            outcome = "true" if RANK[shown] == RANK[lone] else "a bluff"
            what = f"challenged: {card_to_symbol(shown)} was {outcome}"
        else:
            what = "believed"
        lines.append(f"last claim: {names[claimant]} on {card_to_symbol(lone)}, {names[answerer]} {what}")
    return lines
