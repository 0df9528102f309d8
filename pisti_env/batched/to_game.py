"""A game of the batched engine as a Python [`Game`][pisti_env.game.Game]: the one converter
from a row of [`BatchState`][pisti_env.batched.state.BatchState] to the Python engine's state.

Both engines keep one schema (issue 11): the card codes are ``Game.where`` / ``Game.played_by``
exactly, the deck is ``Game.deck`` (item 0 dealt first, after the R28 cut), the per-side
counters are the rows of ``Game.counts``, and the pending claim (R29) is
``Game.claimant`` / ``Game.claim_card``. So the converted game gives every seat the same
observation and the same legal actions as the batched engine, and stepping both with the same
actions keeps them equal until the hand ends (``tests/engine/test_to_game.py``).

What the batched state does not keep, the converted game fills in as follows (none of it is in
an observation, and no registered player reads it):

* the order of the cards within a hand and of the cards under the pile's top card: hands are
  ascending; the pile is the deal's public Jacks (R7), then its never-turned cards (R8), then
  the other face-up cards ascending, then the top card;
* ``history``: the cards shown this hand with the seat that played them (every card with a
  playing-seat code), in card order, since the play order is not kept;
* ``claims``: this hand's record of answered claims (R29) is empty (the counts of claims are in
  the counters);
* ``hand_results``: one ``None`` per finished hand (the batched engine keeps only the match
  totals, ``match_scores``);
* ``rng``: a fresh generator seeded with ``seed``; it shuffles later hands, which the batched
  engine deals from its own hash instead.
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

from ..rules import locations as loc
from ..rules.counters import num_counters
from ..game.engine import Game
from ..rules.settings import Settings
from .state import CODE_WIDTH, BatchState, take

# The BatchState fields the conversion reads, as Python lists.
_READ = ("deck", "stock_pos", "turn", "dealer", "in_hands", "hand_sizes", "top", "pile_size", "pile_hidden",
         "last_capturer", "side_counts", "hands_completed", "claimant", "claim_card")


def to_games(
    state: BatchState, rows: Sequence[int] | torch.Tensor, settings: Settings, seed: int | None = 0
) -> list[Game]:
    """The games of ``rows`` of ``state`` as Python [`Game`][pisti_env.game.Game] objects (see the module
    docstring for what the batched state does not keep).

    Args:
        state: the batched engine's state (any device).
        rows: the games to convert, indices into the batch (a sequence of ints or a 1-D integer
            tensor).
        settings: the game the state plays (the engine's ``settings``).
        seed: seeds each converted game's generator, which only shuffles the decks of later
            hands of a match; ``None`` draws fresh entropy.

    Raises ``TypeError`` for a ``settings`` that is not a [`Settings`][pisti_env.rules.Settings], ``ValueError`` for
    settings the state cannot hold (two decks, another number of seats or counter rows), a row
    out of range, or a row that is not a consistent game (its pile or hand sizes disagree with
    its card codes).
    """
    if not isinstance(settings, Settings):
        raise TypeError(f"settings must be a pisti_env.Settings, got {type(settings).__name__}")
    B, n = state.code.shape[0], state.hand_sizes.shape[1]
    if settings.decks != 1 or settings.num_players != n or state.side_counts.shape[1] != num_counters(settings.bluff):
        raise ValueError(
            f"settings {settings.to_dict()} do not fit this batched state ({n} seats, one deck, "
            f"{state.side_counts.shape[1]} counter rows): pass the engine's settings"
        )
    idx = torch.as_tensor(rows, dtype=torch.long, device=state.code.device).reshape(-1)
    if idx.numel() and not (0 <= int(idx.min()) and int(idx.max()) < B):
        raise ValueError(f"rows must be game indices 0..{B - 1}, got {idx.tolist()}")
    sub = take(state, idx)
    code = sub.code.cpu().numpy()  # numpy's tolist is the faster
    where, played_by = (code // CODE_WIDTH).tolist(), (code % CODE_WIDTH).tolist()
    fields = {name: getattr(sub, name).cpu().numpy().tolist() for name in _READ}
    return [
        _game(settings, {name: values[i] for name, values in fields.items()}, where[i], played_by[i], seed, int(idx[i]))
        for i in range(len(where))
    ]


def to_game(state: BatchState, row: int, settings: Settings, seed: int | None = 0) -> Game:
    """The game of row ``row`` of ``state``: `to_games` for one row."""
    return to_games(state, [row], settings, seed)[0]


def _game(settings: Settings, f: dict, where: list[int], played_by: list[int], seed: int | None, row: int) -> Game:
    """One Game from one row's values (``f``: the fields of `_READ`)."""
    n = settings.num_players
    hands: list[list[int]] = [[] for _ in range(n)]
    jacks, hidden, up = [], [], []
    for p, code in enumerate(where):
        seat = loc.in_hand_of(code)
        if seat >= 0:
            hands[seat].append(p)
        elif code == loc.PILE_JACK:
            jacks.append(p)
        elif code == loc.PILE_HIDDEN:
            hidden.append(p)
        elif code == loc.PILE_UP:
            up.append(p)
    top = f["top"]
    if up and top in up:  # the top card last (R12); the order below it is not kept
        up.remove(top)
        up.append(top)
    pile = jacks + hidden + up
    if len(pile) != f["pile_size"] or (up and up[-1] != top) or [len(h) for h in hands] != f["hand_sizes"]:
        raise ValueError(
            f"row {row} is not a consistent game: pile of {len(pile)} cards by its codes against "
            f"pile_size {f['pile_size']} (top {top}), hands {[len(h) for h in hands]} against {f['hand_sizes']}"
        )
    g = Game.__new__(Game)
    g.settings = settings
    g.num_players = n
    g.num_sides = settings.num_sides
    g.side_of = tuple(settings.side_of(s) for s in range(n))
    g.rng = random.Random(seed)
    g.hands_completed = f["hands_completed"]
    g.hand_results = [None] * g.hands_completed  # only the match totals are kept
    g.done = False  # a finished game of the batch has already restarted
    g.winner = None
    g.dealer = f["dealer"]
    g.deck = f["deck"]
    g.where = bytearray(where)
    g.played_by = bytearray(played_by)
    g.hands = hands
    g.counts = f["side_counts"]
    g.claimant, g.claim_card = f["claimant"], f["claim_card"]
    g.claims = []
    g.last_capturer = f["last_capturer"]
    g.history = [(loc.played_by_seat(code), p) for p, code in enumerate(played_by) if code != loc.NOBODY]
    g.stock_bottom = g.deck[-1] if settings.show_stock_bottom else None  # R28
    g.pile = pile
    g.pile_hidden = f["pile_hidden"]
    g.stock_pos = f["stock_pos"]
    g.in_hands = f["in_hands"]
    g.turn = f["turn"]
    return g
