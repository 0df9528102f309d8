"""Observations and action masks of the batched engine, from the Python encoder's own tables.

A card's feature row for an observer is looked up from its packed code in
[`ObservationEncoder`][pisti_env.views.observation.ObservationEncoder]'s tables (``feature_rows``,
``count_gather``, ``count_scale``, ``rel_side``, ``static``), so the two engines share one
definition of the encoding; ``tests/batched/test_batched.py`` checks them equal, bit for bit.
"""

from __future__ import annotations

import numpy as np
import torch

from ..rules import locations as loc
from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import NUM_CARD_IDS
from ..rules.counters import BLUFF_RESULT_ROWS, Counter
from ..views.observation import COUNT_SOURCES, ObservationEncoder
from .compact import CARD_BYTES, packed_size
from .state import CODE_DTYPE, CODE_WIDTH, BatchState
from .tables import Tables


class ObservationWriter:
    """Writes the observations of B games into caller-owned storage, and their action masks.

    Holds the encoder's tables as tensors and scratch buffers of its own (the card rows and
    the row numbers of a lookup), reused by every call (fresh memory of their size costs more
    than the copy); ``observe`` is therefore not reentrant, and its result never aliases them.
    """

    def __init__(self, tables: Tables, encoder: ObservationEncoder) -> None:
        self.tables = t = tables
        layout = encoder.layout
        self.size = layout.size
        B, dev = t.batch_size, t.device
        # Entry seat * num_codes + code: the sum of the rows of the location and playing-seat
        # codes, precomputed for every pair.
        # Held as bytes (small counts, exact in either format), a quarter of the memory traffic
        # of float rows; the float format converts while copying into place.
        rows = encoder.feature_rows[:, : t.num_locations, None, :] + encoder.feature_rows[:, None, :, :]
        rows = rows.reshape(-1, rows.shape[-1]).astype(np.uint8)
        self._feature_pairs = t.tensor(rows, torch.uint8)
        self._num_features = k = layout.num_card_features
        self._card_rows = torch.empty(B * NUM_CARD_IDS, k, dtype=torch.uint8, device=dev)
        # The "uint8" format's card rows, CARD_BYTES each (zero-padded), held as one 16-byte
        # element per row: the lookup is then a plain 1-D gather, several times cheaper than a
        # gather of k-byte rows. (Only copied, never computed on: every byte comes through.)
        padded = np.zeros((rows.shape[0], CARD_BYTES), dtype=np.uint8)
        padded[:, :k] = rows
        self._padded_pairs = t.tensor(padded, torch.uint8).view(torch.complex128).view(-1)
        self._card_units = torch.empty(B * NUM_CARD_IDS, dtype=torch.complex128, device=dev)
        # The same units seen as one row per game (an expanded view, no copy): where the output
        # rows are whole units (`_card_units_of`), one gather writes every card's row in place,
        # without the intermediate buffer and its copy (gather takes int64 indices).
        self._padded_rows = self._padded_pairs[None, :].expand(B, -1)
        self._pair_index = torch.empty(B, NUM_CARD_IDS, dtype=torch.int64, device=dev)
        self._pair_buffer = torch.empty(B, NUM_CARD_IDS, dtype=CODE_DTYPE, device=dev)
        self._hand_feature = layout.feature_index["hand"]
        self._cards_size = layout.cards_size
        self.packed_size = packed_size(layout)
        self._packed_cards_size = CARD_BYTES * NUM_CARD_IDS
        self._seat_offset = t.tensor([seat * t.num_codes for seat in range(t.num_players)], CODE_DTYPE)
        # The pile-top feature's index in the vector, per top card.
        self._card_stride = {"float": k, "uint8": CARD_BYTES}  # a card's row in each format's card block
        self._top_index = {
            fmt: t.tensor([card * stride + encoder.top_feature for card in range(NUM_CARD_IDS)])
            for fmt, stride in self._card_stride.items()
        }
        self._count_scale = t.tensor(encoder.count_scale, torch.float32)
        self._count_gather = t.tensor(self._count_sources_gather(encoder))
        rest_at = layout.cards_size  # the observation after the card block, offsets from here
        self._counts = slice(layout.counts_start - rest_at, layout.counts_stop - rest_at)
        self._init_rest_rows(encoder)
        if t.settings.bluff:
            self._init_claim_block(encoder)

    def _count_sources_gather(self, encoder: ObservationEncoder) -> np.ndarray:
        """``encoder.count_gather`` (indices into the counters of ``COUNT_SOURCES``, laid end
        to end) re-aimed at the counters as `observe` lays them out: the hand sizes, the
        stock size, pile size and never-turned pile cards, every row of ``side_counts``
        (row-major: row r, side s at ``r * S + s``; only the rows the encoder reads are
        gathered, R30), the hands completed."""
        t = self.tables
        n, S = t.num_players, t.num_sides
        side_rows = {
            "captured_count": Counter.CAPTURED, "pisti_count": Counter.PISTIS,
            "double_pisti_count": Counter.DOUBLE_PISTIS, "pisti_points": Counter.PISTI_POINTS,
            "public_points": Counter.PUBLIC_POINTS, "match_scores": Counter.MATCH_SCORES,
        }
        singles = {"stock_size": n, "pile_size": n + 1, "pile_hidden": n + 2, "hands_completed": n + 3 + t.num_rows * S}
        remap: list[int] = []  # source position in COUNT_SOURCES order -> position in observe's layout
        for name in COUNT_SOURCES:
            if name == "hand_sizes":
                remap += range(n)
            elif name in side_rows:
                remap += [n + 3 + side_rows[name] * S + s for s in range(S)]
            else:
                remap.append(singles[name])
        return np.asarray(remap)[encoder.count_gather]

    def _init_rest_rows(self, encoder: ObservationEncoder) -> None:
        """The part of the vector after the card block that depends only on (observer, last
        capturer, dealer, seat to move): the static entries and the three one-hot fields,
        precomputed as one row per combination (``_rest_rows``, row `_rest_key`)."""
        t, layout = self.tables, encoder.layout
        n, S, rest_at = t.num_players, t.num_sides, layout.cards_size
        last_at = layout.by_name["last_capturer"].start
        dealer_at = layout.by_name["dealer"].start
        to_move_at = layout.by_name["to_move"].start
        rows = np.zeros((n, S + 1, n, n, layout.size - rest_at), dtype=np.float32)
        rows[...] = encoder.static[rest_at:]
        for seat in range(n):
            for last in range(-1, S):  # -1: nobody captured yet
                where_last = encoder.rel_side[seat][last] if last >= 0 else S
                for dealer in range(n):
                    for turn in range(n):
                        row = rows[seat, last + 1, dealer, turn]
                        row[last_at - rest_at + where_last] = 1.0
                        row[dealer_at - rest_at + (dealer - seat) % n] = 1.0
                        row[to_move_at - rest_at + (turn - seat) % n] = 1.0
        self._rest_rows = t.tensor(rows.reshape(-1, layout.size - rest_at), torch.float32)
        # key = seat * n²(S+1) + (last + 1) * n² + dealer * n + turn, as one weighted sum
        self._rest_weights = t.tensor([n * n * (S + 1), n * n, n, 1])

    def _rest_key(self, state: BatchState, seat: torch.Tensor) -> torch.Tensor:
        """(B,) the row of ``_rest_rows`` of each game for observer ``seat``."""
        parts = torch.stack([seat, state.last_capturer, state.dealer, state.turn], 1)
        return (parts * self._rest_weights).sum(1) + self._rest_weights[1]

    def _init_claim_block(self, encoder: ObservationEncoder) -> None:
        """The claim block of the observation (R29), from the encoder's own tables: where its
        fields start (relative to the part after the card block), which absolute side feeds
        each seat-relative entry (the inverse of ``rel_side``) and the scales."""
        t, layout = self.tables, encoder.layout
        S, rest_at = t.num_sides, layout.cards_size
        claimant = layout.by_name["claimant"]
        self._claimant_at = slice(claimant.start - rest_at, claimant.stop - rest_at)
        self._bluff_at = slice(layout.by_name["bluff_points"].start - rest_at, layout.size - rest_at)
        # The claim block's counters are the last rows of ``side_counts``, in order: a slice.
        self._bluff_rows_from = min(BLUFF_RESULT_ROWS.values())
        if list(BLUFF_RESULT_ROWS.values()) != list(range(self._bluff_rows_from, t.num_rows)):
            raise AssertionError("the bluff counters must be the last rows of side_counts, in order")
        gather = np.zeros((t.num_players, len(BLUFF_RESULT_ROWS) * S), dtype=np.int64)
        for seat, rel in enumerate(encoder.rel_side):
            for r in range(len(BLUFF_RESULT_ROWS)):
                gather[seat, r * S + rel] = r * S + np.arange(S)  # as ``block[:, rel] = values``
        self._bluff_gather = t.tensor(gather)
        self._bluff_scale = t.tensor(encoder._bluff_scale, torch.float32)  # (one definition of the scales)

    def observe(
        self, state: BatchState, seat: torch.Tensor, out: torch.Tensor | None = None, observation_format: str = "float"
    ) -> torch.Tensor:
        """(B, size) float32 observations of ``seat`` (B,); written into ``out`` (checked by
        the caller) when given, else into a fresh tensor. With ``observation_format="uint8"``
        the same vectors packed as (B, packed_size) bytes instead, see `.compact`."""
        t = self.tables
        B = t.batch_size
        if out is None:
            out = self.empty(observation_format)
        if observation_format == "float":
            cards, rest = out[:, : self._cards_size], out[:, self._cards_size :]
        else:
            cards, rest = out[:, : self._packed_cards_size], out[:, self._packed_cards_size :].view(torch.float32)
        # Card block: each card's (location, playing seat) pair selects its feature row.
        offset = self._seat_offset.index_select(0, seat)[:, None]
        if observation_format == "float":  # byte rows, converted while copied into place
            k = self._num_features
            pair = torch.add(state.code, offset, out=self._pair_buffer)
            rows_of_features = torch.index_select(self._feature_pairs, 0, pair.view(-1), out=self._card_rows)
            cards.view(B, NUM_CARD_IDS, k).copy_(rows_of_features.view(B, NUM_CARD_IDS, k))
        elif (units_out := _card_units_of(out)) is not None:
            torch.gather(self._padded_rows, 1, torch.add(state.code, offset, out=self._pair_index), out=units_out)
        else:
            pair = torch.add(state.code, offset, out=self._pair_buffer)
            units = torch.index_select(self._padded_pairs, 0, pair.view(-1), out=self._card_units)
            cards.copy_(units.view(torch.uint8).view(B, -1))
        # The pile's top card (0 written where the pile is empty: no card has the feature then).
        nonempty = (state.pile_size > 0).to(out.dtype)
        top_index = self._top_index[observation_format].index_select(0, state.top)
        cards.scatter_(1, top_index[:, None], nonempty[:, None])
        # The rest: the static entries and the one-hots (one precomputed row), then the counts.
        rest.copy_(self._rest_rows.index_select(0, self._rest_key(state, seat)))
        counts = torch.cat(
            [
                state.hand_sizes,
                (NUM_CARD_IDS - state.stock_pos)[:, None],
                state.pile_size[:, None],
                state.pile_hidden[:, None],
                state.side_counts.reshape(B, -1),
                state.hands_completed[:, None],
            ],
            1,
        ).float()
        torch.mul(counts.gather(1, self._count_gather.index_select(0, seat)), self._count_scale, out=rest[:, self._counts])
        if t.settings.bluff:
            self._observe_claims(state, seat, rest)
        return out

    def empty(self, observation_format: str = "float") -> torch.Tensor:
        """A fresh (uninitialised) buffer for observations in ``observation_format``."""
        t = self.tables
        if observation_format == "float":
            return torch.empty(t.batch_size, self.size, dtype=torch.float32, device=t.device)
        return torch.empty(t.batch_size, self.packed_size, dtype=torch.uint8, device=t.device)

    def _observe_claims(self, state: BatchState, seat: torch.Tensor, rest: torch.Tensor) -> None:
        """The claim block (R29, R30), as ``ObservationEncoder._encode_bluff``: the pending
        claim's seat (one-hot, seat-relative; all 0 when none), then each side's bluff points and
        claim counters in seat-relative side order, scaled by the encoder's scales. Written into
        ``rest``, the observation after its card block."""
        t = self.tables
        claim = ((state.claimant - seat) % t.num_players)[:, None] == t.seat_ids
        rest[:, self._claimant_at] = (claim & (state.claimant >= 0)[:, None]).float()
        values = state.side_counts[:, self._bluff_rows_from:].reshape(t.batch_size, -1).float()
        rest[:, self._bluff_at] = values.gather(1, self._bluff_gather.index_select(0, seat)) * self._bluff_scale

    def mover_mask(self, state: BatchState, observation: torch.Tensor, observation_format: str = "float") -> torch.Tensor:
        """`action_mask` read off ``observation``, the seat to move's own: its legal
        cards (R9) are its hand, the "hand" feature of its card block (no second lookup)."""
        stride = self._card_stride[observation_format]
        hand = observation[:, self._hand_feature : stride * NUM_CARD_IDS : stride]
        # uint8: with one deck the byte is 0 or 1, a valid bool as it is; one strided copy
        # instead of a comparison (the mask must not alias the caller's buffer).
        held = hand.view(torch.bool).clone() if observation_format == "uint8" else hand > 0
        return self._bluff_mask(state, held) if self.tables.settings.bluff else held

    def action_mask(self, state: BatchState) -> torch.Tensor:
        """(B, 52) bool: the cards the seat to move holds (R9); with the bluff variant (B, 106),
        see `_bluff_mask`."""
        t = self.tables
        index = (state.turn * t.num_codes)[:, None] + state.code
        held = t.legal.index_select(0, index.view(-1)).view(t.batch_size, NUM_CARD_IDS)
        return self._bluff_mask(state, held) if t.settings.bluff else held

    def takes_legal(self, state: BatchState, a: torch.Tensor) -> torch.Tensor:
        """(B,) bool: whether each game's action ``a[b]`` (any int64 id) is legal in its
        `action_mask`, read for that action alone (the step's check: no whole mask). R9:
        a card the seat holds; R29, as `_bluff_mask`: a held card face up when no claim
        waits, face down where a claim is allowed, an answer only while a claim waits."""
        t = self.tables
        clamped = a.clamp(0, t.settings.num_actions - 1)
        card = clamped % FACE_DOWN if t.settings.bluff else clamped  # the card of a play (an answer: any)
        held = t.legal.index_select(0, state.turn * t.num_codes + state.code.gather(1, card[:, None]).squeeze(1))
        in_range = clamped == a
        if not t.settings.bluff:
            return in_range & held
        pending = state.claimant >= 0
        play_allowed = torch.where(a < FACE_DOWN, ~pending, self._may_claim(state))
        return in_range & torch.where(a >= BELIEVE, pending, held & play_allowed)

    def _bluff_mask(self, state: BatchState, held: torch.Tensor) -> torch.Tensor:
        """(B, 106) bool, R29: the ``held`` cards face up, and face down where a claim is
        allowed; only believe and challenge while a claim waits for its answer."""
        pending = state.claimant >= 0
        face_up = held & ~pending[:, None]
        face_down = held & self._may_claim(state)[:, None]
        return torch.cat([face_up, face_down, pending[:, None].expand(-1, CHALLENGE - BELIEVE + 1)], 1)

    def _may_claim(self, state: BatchState) -> torch.Tensor:
        """(B,) bool, R29 as ``pisti_env.game.claims.may_claim``: exactly one card on the table, played face up
        by another side, no claim pending; with ``last_card_pisti=False`` not on the hand's
        very last card (R16)."""
        t = self.tables
        lone_by = (state.code.gather(1, state.top[:, None]).squeeze(1) % CODE_WIDTH).long()
        lone_player = (lone_by - loc.PLAYED_BY).clamp(0, t.num_players - 1)
        other_side = t.side_of.index_select(0, lone_player) != t.side_of.index_select(0, state.turn)
        may = (state.claimant < 0) & (state.pile_size == 1) & (lone_by != loc.NOBODY) & other_side
        if not t.settings.last_card_pisti:
            may = may & ~((state.in_hands == 1) & (state.stock_pos == NUM_CARD_IDS))
        return may


def _card_units_of(packed: torch.Tensor) -> torch.Tensor | None:
    """The card block of ``packed`` (B, packed_size) uint8 observations as (B, 52) 16-byte
    units (a view), when its rows are made of whole units (a packed size that is a multiple
    of ``CARD_BYTES``, as with 2 players, and aligned rows); else ``None``."""
    if packed.shape[1] % CARD_BYTES or packed.stride(0) % CARD_BYTES or packed.storage_offset() % CARD_BYTES:
        return None
    return packed.view(torch.complex128)[:, :NUM_CARD_IDS]
