"""Observations and action masks of the batched engine, from the Python encoder's own tables.

A card's feature row for an observer is looked up from its packed code in
:class:`~pisti_env.observation.ObservationEncoder`'s tables (``feature_rows``,
``count_gather``, ``count_scale``, ``rel_side``, ``static``), so the two engines share one
definition of the encoding; ``tests/test_batched.py`` checks them equal, bit for bit.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import locations as loc
from ..actions import BELIEVE, CHALLENGE
from ..cards import NUM_CARD_IDS
from ..counters import BLUFF_RESULT_ROWS, Counter
from ..observation import COUNT_SOURCES, ObservationEncoder
from .state import CODE_DTYPE, CODE_WIDTH, BatchState
from .tables import Tables


class ObservationWriter:
    """Writes the observations of B games into caller-owned storage, and their action masks.

    Holds the encoder's tables as tensors and two scratch buffers of its own, reused by every
    call (fresh memory of their size costs more than the copy); ``observe`` is therefore not
    reentrant, and its result never aliases them.
    """

    def __init__(self, tables: Tables, encoder: ObservationEncoder) -> None:
        self.tables = t = tables
        layout = encoder.layout
        self.size = layout.size
        B, dev = t.batch_size, t.device
        # Entry seat * num_codes + code: the sum of the rows of the location and playing-seat
        # codes, precomputed for every pair.
        rows = encoder.feature_rows[:, : t.num_locations, None, :] + encoder.feature_rows[:, None, :, :]
        self._feature_pairs = t.tensor(rows.reshape(-1, rows.shape[-1]), torch.float32)
        self._num_features = layout.num_card_features
        self._card_rows = torch.empty(B * NUM_CARD_IDS, self._num_features, device=dev)
        self._pair_buffer = torch.empty(B, NUM_CARD_IDS, dtype=CODE_DTYPE, device=dev)
        self._hand_feature = layout.feature_index["hand"]
        self._cards_size = layout.cards_size
        self._count_gather = t.tensor(encoder.count_gather)
        self._count_scale = t.tensor(encoder.count_scale, torch.float32)
        self._rel_side = t.tensor(encoder.rel_side)
        rest_at = layout.cards_size  # the observation after the card block, offsets from here
        self._static_rest = t.tensor(encoder.static[rest_at:], torch.float32)[None, :]
        self._counts = slice(layout.counts_start - rest_at, layout.counts_stop - rest_at)
        self._top_at = encoder.top_feature
        self._last_capturer_at = layout.by_name["last_capturer"].start - rest_at
        self._dealer_at = layout.by_name["dealer"].start - rest_at
        self._to_move_at = layout.by_name["to_move"].start - rest_at
        if t.settings.bluff:
            self._init_claim_block(encoder)

    def _init_claim_block(self, encoder: ObservationEncoder) -> None:
        """The claim block of the observation (R29), from the encoder's own tables: where its
        fields start (relative to the part after the card block), which absolute side feeds
        each seat-relative entry (the inverse of ``rel_side``) and the scales."""
        t, layout = self.tables, encoder.layout
        S, rest_at = t.num_sides, layout.cards_size
        claimant = layout.by_name["claimant"]
        self._claimant_at = slice(claimant.start - rest_at, claimant.stop - rest_at)
        self._bluff_at = slice(layout.by_name["bluff_points"].start - rest_at, layout.size - rest_at)
        self._bluff_rows = list(BLUFF_RESULT_ROWS.values())
        gather = np.zeros((t.num_players, len(BLUFF_RESULT_ROWS) * S), dtype=np.int64)
        for seat, rel in enumerate(encoder.rel_side):
            for r in range(len(BLUFF_RESULT_ROWS)):
                gather[seat, r * S + rel] = r * S + np.arange(S)  # as ``block[:, rel] = values``
        self._bluff_gather = t.tensor(gather)
        self._bluff_scale = t.tensor(encoder._bluff_scale, torch.float32)  # (one definition of the scales)

    def observe(self, state: BatchState, seat: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """(B, size) float32 observations of ``seat`` (B,); written into ``out`` (checked by
        the caller) when given, else into a fresh tensor."""
        t = self.tables
        B, n, S = t.batch_size, t.num_players, t.num_sides
        # Card block: each card's (location, playing seat) pair selects its feature row.
        pair = torch.add(state.code, (seat * t.num_codes).to(CODE_DTYPE)[:, None], out=self._pair_buffer)
        k = self._num_features
        rows_of_features = torch.index_select(self._feature_pairs, 0, pair.view(-1), out=self._card_rows)
        obs = torch.empty(B, self.size, device=t.device) if out is None else out
        obs[:, : self._cards_size].view(B, NUM_CARD_IDS, k).copy_(rows_of_features.view(B, NUM_CARD_IDS, k))
        rows = t.rows
        obs[rows, state.top * k + self._top_at] = (state.pile_size > 0).float()
        # The rest: counts, one-hots and the static entries (offsets relative to its start).
        rest = obs[:, self._cards_size :]
        rest.copy_(self._static_rest.expand(B, -1))
        sources = {  # the game counters of the count block, by the names the layout uses
            "hand_sizes": state.hand_sizes,
            "stock_size": (NUM_CARD_IDS - state.stock_pos)[:, None],
            "pile_size": state.pile_size[:, None],
            "pile_hidden": state.pile_hidden[:, None],
            "captured_count": state.side_counts[:, Counter.CAPTURED],
            "pisti_count": state.side_counts[:, Counter.PISTIS],
            "double_pisti_count": state.side_counts[:, Counter.DOUBLE_PISTIS],
            "pisti_points": state.side_counts[:, Counter.PISTI_POINTS],
            "public_points": state.side_counts[:, Counter.PUBLIC_POINTS],
            "match_scores": state.side_counts[:, Counter.MATCH_SCORES],
            "hands_completed": state.hands_completed[:, None],
        }
        counts = torch.cat([sources[name] for name in COUNT_SOURCES], 1).float()
        rest[:, self._counts] = counts.gather(1, self._count_gather[seat]) * self._count_scale
        last = torch.where(state.last_capturer >= 0, self._rel_side[seat, state.last_capturer.clamp(min=0)], S)
        at = self._cards_size
        obs[rows, at + self._last_capturer_at + last] = 1.0
        obs[rows, at + self._dealer_at + (state.dealer - seat) % n] = 1.0
        obs[rows, at + self._to_move_at + (state.turn - seat) % n] = 1.0
        if t.settings.bluff:
            self._observe_claims(state, seat, rest)
        return obs

    def _observe_claims(self, state: BatchState, seat: torch.Tensor, rest: torch.Tensor) -> None:
        """The claim block (R29, R30), as ``ObservationEncoder._encode_bluff``: the pending
        claim's seat (one-hot, seat-relative; all 0 when none), then each side's bluff points and
        claim counters in seat-relative side order, scaled by the encoder's scales. Written into
        ``rest``, the observation after its card block."""
        t = self.tables
        claim = ((state.claimant - seat) % t.num_players)[:, None] == t.seat_ids
        rest[:, self._claimant_at] = (claim & (state.claimant >= 0)[:, None]).float()
        values = state.side_counts[:, self._bluff_rows].reshape(t.batch_size, -1).float()
        rest[:, self._bluff_at] = values.gather(1, self._bluff_gather[seat]) * self._bluff_scale

    def mover_mask(self, state: BatchState, observation: torch.Tensor) -> torch.Tensor:
        """:meth:`action_mask` read off ``observation``, the seat to move's own: its legal
        cards (R9) are its hand, the "hand" feature of its card block (no second lookup)."""
        hand = observation[:, self._hand_feature : self._cards_size : self._num_features]
        held = hand > 0
        return self._bluff_mask(state, held) if self.tables.settings.bluff else held

    def action_mask(self, state: BatchState) -> torch.Tensor:
        """(B, 52) bool: the cards the seat to move holds (R9); with the bluff variant (B, 106),
        see :meth:`_bluff_mask`."""
        t = self.tables
        index = (state.turn * t.num_codes)[:, None] + state.code
        held = t.legal.index_select(0, index.view(-1)).view(t.batch_size, NUM_CARD_IDS)
        return self._bluff_mask(state, held) if t.settings.bluff else held

    def _bluff_mask(self, state: BatchState, held: torch.Tensor) -> torch.Tensor:
        """(B, 106) bool, R29: the ``held`` cards face up, and face down where a claim is
        allowed; only believe and challenge while a claim waits for its answer."""
        pending = state.claimant >= 0
        face_up = held & ~pending[:, None]
        face_down = held & self._may_claim(state)[:, None]
        return torch.cat([face_up, face_down, pending[:, None].expand(-1, CHALLENGE - BELIEVE + 1)], 1)

    def _may_claim(self, state: BatchState) -> torch.Tensor:
        """(B,) bool, R29 as ``pisti_env.claims.may_claim``: exactly one card on the table, played face up
        by another side, no claim pending; with ``last_card_pisti=False`` not on the hand's
        very last card (R16)."""
        t = self.tables
        lone_by = (state.code.gather(1, state.top[:, None]).squeeze(1) % CODE_WIDTH).long()
        lone_player = (lone_by - loc.PLAYED_BY).clamp(0, t.num_players - 1)
        other_side = t.side_of[lone_player] != t.side_of[state.turn]
        may = (state.claimant < 0) & (state.pile_size == 1) & (lone_by != loc.NOBODY) & other_side
        if not t.settings.last_card_pisti:
            may = may & ~((state.in_hands == 1) & (state.stock_pos == NUM_CARD_IDS))
        return may
