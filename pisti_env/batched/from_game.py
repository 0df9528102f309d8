"""Python `Game` objects as rows of a
`BatchState`: the inverse of `.to_game`.

Both engines keep one schema (issue 11), so most fields are copied: the card codes
(``Game.where * CODE_WIDTH + Game.played_by``), the deck (item 0 dealt first), the deal
position, the seat to move, the dealer, the hand sizes, the per-side counters (the rows of
``Game.counts``), the last capturer, the pending claim (R29) and the hands played. The rest
is derived from them as the batched engine keeps it:

* ``top``: the pile's top card (R12); with an empty pile the engine's value is meaningless
  and the converter writes 0;
* ``pile_size``, ``pile_hidden``: the pile's length and its never-turned cards (R8);
* ``pile_points_public``, ``pile_points_hidden``: the card points (R20) of the pile's public
  cards (face up, the deal's Jacks, R7) and of its never-turned ones;
* ``reward_base``: the game's public totals (``Game.public_total``, R30), so the next step's
  rewards are that step's change, as in the AEC env;
* ``episode`` and ``attempt`` 0 and ``slot`` the row number: they only feed the deck hash of
  later hands (`.decks`), which the batched engine then deals itself, unlike the Python
  game's generator.

A game converted and stepped on the batched engine stays equal to the Python game stepped with
the same actions until its hand ends (``tests/batched/test_from_game.py``), and
``to_game(from_games([g]))`` gives back ``g``'s codes, deck and counters.

Search players build their rollout batches with it (`pisti_env.agents.search`): worlds
dealt by `pisti_env.game.determinize.determinize`, one row per world and first action.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ..rules import locations as loc
from ..rules.cards import NUM_CARD_IDS
from ..rules.counters import num_counters
from ..game.engine import Game
from ..rules.settings import Settings
from ..rules.scoring import POINTS
from .state import CODE_DTYPE, CODE_WIDTH, BatchState

_POINTS = np.asarray(POINTS[:NUM_CARD_IDS], dtype=np.int64)
_PUBLIC_PILE = (loc.PILE_UP, loc.PILE_JACK)


def from_games(games: Sequence[Game], settings: Settings | None = None, device: str | torch.device = "cpu") -> BatchState:
    """The games as the rows of one `BatchState` (row ``i`` is ``games[i]``).

    Args:
        games: Python games of one deck (2, 3 or 4 players), all of the same settings, none
            finished.
        settings: the game they play (default: the first game's); checked against each game.
        device: where the tensors are made.

    Raises ``TypeError`` for an item that is not a `Game`, ``ValueError`` for no games,
    two decks, a finished game or a game of other settings.
    """
    games = list(games)
    if not games:
        raise ValueError("from_games needs at least one game")
    for i, g in enumerate(games):
        if not isinstance(g, Game):
            raise TypeError(f"game {i} must be a pisti_env.Game, got {type(g).__name__}")
    settings = games[0].settings if settings is None else settings
    if settings.decks != 1:
        raise ValueError(f"the batched engine holds games of one deck (2, 3 or 4 players), got decks={settings.decks}")
    for i, g in enumerate(games):
        if g.settings != settings:
            raise ValueError(f"game {i} plays {g.settings.to_dict()}, not the batch's {settings.to_dict()}")
        if g.done:
            raise ValueError(f"game {i} is over: the batched engine holds games in play")
    B = len(games)
    where = np.frombuffer(b"".join(bytes(g.where) for g in games), dtype=np.uint8).reshape(B, NUM_CARD_IDS)
    played_by = np.frombuffer(b"".join(bytes(g.played_by) for g in games), dtype=np.uint8).reshape(B, NUM_CARD_IDS)
    code = where.astype(np.int32) * CODE_WIDTH + played_by
    piles = [g.pile for g in games]
    pile_points_public, pile_points_hidden = [], []
    for g, pile in zip(games, piles):
        public = hidden = 0
        for p in pile:
            if g.where[p] == loc.PILE_HIDDEN:
                hidden += POINTS[p]
            elif g.where[p] in _PUBLIC_PILE:
                public += POINTS[p]
        pile_points_public.append(public)
        pile_points_hidden.append(hidden)
    rows = num_counters(settings.bluff)

    def ints(values: list) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=device)

    return BatchState(
        code=torch.from_numpy(code).to(device=device, dtype=CODE_DTYPE),
        deck=ints([g.deck for g in games]),
        stock_pos=ints([g.stock_pos for g in games]),
        turn=ints([g.turn for g in games]),
        dealer=ints([g.dealer for g in games]),
        in_hands=ints([g.in_hands for g in games]),
        hand_sizes=ints([[len(h) for h in g.hands] for g in games]),
        top=ints([pile[-1] if pile else 0 for pile in piles]),
        pile_size=ints([len(pile) for pile in piles]),
        pile_hidden=ints([g.pile_hidden for g in games]),
        pile_points_public=ints(pile_points_public),
        pile_points_hidden=ints(pile_points_hidden),
        last_capturer=ints([g.last_capturer for g in games]),
        side_counts=ints([[list(g.counter(r)) for r in range(rows)] for g in games]),
        reward_base=ints([list(g.public_total) for g in games]),
        hands_completed=ints([g.hands_completed for g in games]),
        episode=ints([0] * B),
        attempt=ints([0] * B),
        slot=torch.arange(B, device=device),
        claimant=ints([g.claimant for g in games]),
        claim_card=ints([g.claim_card for g in games]),
    )


def from_game(game: Game, device: str | torch.device = "cpu") -> BatchState:
    """One game as a one-row `BatchState`: `from_games` for one game."""
    return from_games([game], device=device)
