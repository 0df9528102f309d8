"""Hidden information for a trainer's critic: what the seat may NOT know (R30–R31).

Never part of an observation; a policy must never read it.
"""

from __future__ import annotations

import numpy as np
import torch

from ..rules import locations as loc
from ..rules.cards import NUM_CARD_IDS
from .state import BatchState
from .tables import Tables


class HiddenInformation:
    """Per card, one-hot, the category of a card the observer cannot see (R31): in the hand of
    the seat 1, ..., n - 1 places after it (n - 1 categories), in the stock, a never-turned
    table card (R8: still on the table or captured by another side), and with the bluff variant
    a face-down card of another seat never shown (R29: pending or believed, a partner's too,
    R30); cards of none of these categories are all zero."""

    def __init__(self, tables: Tables) -> None:
        self.tables = t = tables
        n, S, bluff = t.num_players, t.num_sides, t.settings.bluff
        categories = n + 1 + bluff
        stock, never_turned, face_down = n - 1, n, n + 1
        hidden = np.full((n, t.num_locations), categories, dtype=np.int64)  # the last: none
        for seat in range(n):
            for k in range(1, n):
                other = (seat + k) % n
                hidden[seat, [loc.HAND + other, loc.HAND_SHOWN + other]] = k - 1
                if bluff:
                    hidden[seat, [loc.PILE_DOWN + other, loc.CAPT_DOWN + other]] = face_down
            hidden[seat, [loc.STOCK, loc.STOCK_SHOWN]] = stock
            hidden[seat, loc.PILE_HIDDEN] = never_turned
            side = t.settings.side_of(seat)
            hidden[seat, [loc.CAPT_HIDDEN + other for other in range(S) if other != side]] = never_turned
        self._category = t.tensor(hidden.reshape(-1))
        self._ids = torch.arange(categories, device=t.device)
        self.size = NUM_CARD_IDS * categories

    def __call__(self, state: BatchState, seat: torch.Tensor) -> torch.Tensor:
        """(B, size) float32: the one-hot categories of every card for observer ``seat`` (B,)."""
        t = self.tables
        category = self._category[(seat * t.num_locations)[:, None] + state.where.long()]  # (B, 52)
        return (category[:, :, None] == self._ids).float().view(t.batch_size, self.size)
