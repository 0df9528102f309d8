"""THE observation encoding: one layout (index range -> meaning) and the encoder for one seat.

Everything is seat-relative: "seat +k" is the k-th seat after the observer in playing order
(the observer is +0) and "side +k" likewise for sides (the observer's own side is +0). The
vector holds only what the seat may know (R30); what it may not (R31) is never read.

The layout depends on the number of seats and sides only. ``OBS_VERSION`` changes whenever the
meaning of any index changes; checkpoints record it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import NUM_CARD_IDS
from .game import (
    LOC_CAPT_HIDDEN,
    LOC_CAPT_SHOWN,
    LOC_HAND,
    LOC_HAND_SHOWN,
    LOC_PILE_JACK,
    LOC_PILE_UP,
    LOC_STOCK_SHOWN,
    PLAYED_BY,
    Game,
    unknown_location_codes,
)
from .rules import Settings

OBS_VERSION = 1

# Scales that bring counts and points to roughly [0, 1].
HAND_SCALE = 4.0
CARDS_SCALE = 52.0
POINTS_SCALE = 100.0
PISTI_COUNT_SCALE = 5.0
HANDS_SCALE = 10.0


@dataclass(frozen=True)
class Field:
    """One named block of the observation vector: indices ``start:stop``."""

    name: str
    start: int
    stop: int
    meaning: str
    high: float  # largest value an entry can take (the Box's upper bound)

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)


class ObservationLayout:
    """The observation layout for a given number of seats and sides.

    Card planes come first: each is 52 entries indexed by card id (R2) and counts copies of
    that card (0/1, or 0..2 with two decks). Scalars follow.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        n, sides, decks = settings.num_players, settings.num_sides, settings.decks
        self.num_players, self.num_sides = n, sides
        fields: list[Field] = []
        pos = 0

        def add(name: str, width: int, meaning: str, high: float) -> None:
            nonlocal pos
            fields.append(Field(name, pos, pos + width, meaning, high))
            pos += width

        card = float(decks)
        add("hand", 52, "own hand (copies of each card id)", card)
        add("pile_face_up", 52, "face-up cards in the table pile", card)
        add("pile_top", 52, "the top card of the pile (one-hot; all 0 when the pile is empty)", 1.0)
        add("pile_public_jacks", 52, "Jacks moved under the pile at the deal, public (R7)", card)
        for k in range(sides):
            whose = "own side" if k == 0 else f"side +{k}"
            extra = ", including never-shown table cards it took (R8)" if k == 0 else " that everyone saw"
            add(f"captured_side_{k}", 52, f"cards {whose} captured this hand{extra}", card)
        for k in range(n):
            who = "self" if k == 0 else f"seat +{k}"
            add(f"played_by_seat_{k}", 52, f"cards played face up this hand by {who}", card)
        add("stock_bottom", 52, "the shown stock-bottom card (R28) while in the stock or another hand", 1.0)
        add("unseen", 52, "cards this seat cannot know yet: other hands, stock, hidden table cards", card)
        self.num_planes = len(fields)
        self.planes_size = pos

        # Counts and points: one entry per seat (+0 = self), per side (+0 = own side) or one in
        # all; the encoder fills this block with one vectorised gather (see ``scalar_sources``).
        self.counts_start = pos
        self.scalar_sources: list[tuple[str, str, float]] = []  # (game attribute, per, scale)

        def count(name: str, source: str, per: str, scale: float, meaning: str, high: float) -> None:
            width = {"seat": n, "side": sides, "one": 1}[per]
            unit = {"seat": f" per seat +0..+{n - 1}", "side": f" per side +0..+{sides - 1}", "one": ""}[per]
            add(name, width, f"{meaning}{unit}, / {scale:g}", high)
            self.scalar_sources.append((source, per, scale))

        count("hand_sizes", "hand_sizes", "seat", HAND_SCALE, "cards in hand", 1.0)
        count("stock_size", "stock_size", "one", CARDS_SCALE, "cards left in the stock", card)
        count("pile_size", "pile_size", "one", CARDS_SCALE, "cards in the pile", card)
        count("pile_hidden", "pile_hidden", "one", 3.0, "never-turned table cards still in the pile (R8)", 1.0)
        count("captured_count", "captured_count", "side", CARDS_SCALE, "cards captured this hand", card)
        count("pisti_count", "pisti_count", "side", PISTI_COUNT_SCALE, "piştis this hand (R13)", 21.0)
        count("double_pisti_count", "double_pisti_count", "side", PISTI_COUNT_SCALE,
              "double piştis this hand (R14)", 21.0)
        count("pisti_points", "pisti_points", "side", POINTS_SCALE, "pişti points this hand", 11.0)
        count("public_hand_points", "public_points", "side", POINTS_SCALE,
              "points this hand everyone can count (R30: face-up card points and piştis; all at hand end)", 12.0)
        count("match_scores", "match_scores", "side", POINTS_SCALE,
              "match totals of the finished hands (R24)", 1e4)
        count("hands_completed", "hands_completed", "one", HANDS_SCALE, "hands finished in this match", 1e3)
        self.counts_stop = pos
        add("last_capturer", sides + 1, "side that captured last (one-hot side +0..; last entry: nobody yet)", 1.0)
        add("dealer", n, "the dealer (one-hot seat +0..)", 1.0)
        add("to_move", n, "the seat to move (one-hot seat +0..; all 0 once the episode is over)", 1.0)
        add("target", 1, f"match target / {POINTS_SCALE:g} (0 for a single hand)", 1e4)
        add("settings", 10, "num_players/6, partnerships, decks-1, win_margin/10, double_pisti/20, "
            "last_card_pisti, ten_diamonds_pisti_bonus/3, show_stock_bottom, bluff, bluff_jack_double", 1e4)
        self.fields = tuple(fields)
        self.size = pos
        self.by_name = {f.name: f for f in fields}
        self.high = np.zeros(self.size, dtype=np.float32)
        for f in fields:
            self.high[f.slice] = f.high

    def __getitem__(self, name: str) -> slice:
        return self.by_name[name].slice

    def markdown_table(self) -> str:
        """The layout as a Markdown table (index range -> meaning), for the docs."""
        rows = ["| indices | name | meaning |", "|---|---|---|"]
        for f in self.fields:
            idx = f"{f.start}" if f.stop - f.start == 1 else f"{f.start}–{f.stop - 1}"
            rows.append(f"| {idx} | `{f.name}` | {f.meaning} |")
        return "\n".join(rows)


# The game counters the count block is made of, in the layout's order (the encoders of
# ``Game`` and of the batched engine both read them in this order).
COUNT_SOURCES = (
    "hand_sizes", "stock_size", "pile_size", "pile_hidden", "captured_count", "pisti_count",
    "double_pisti_count", "pisti_points", "public_points", "match_scores", "hands_completed",
)


class ObservationEncoder:
    """Encodes a :class:`~pisti_env.game.Game` for one seat as a float32 vector.

    The tables built here are THE encoding; the batched engine applies the very same tables to
    its tensors:

    * ``plane_lut[seat][code]``: for every location code (``game.where``) and playing-seat code
      (``game.played_by``), the card plane it lights for that observer: ``k`` means the k-th
      plane of the layout counted from 1, ``0`` means "not shown to this seat".
    * ``count_gather[seat]`` and ``count_scale``: the counters of ``COUNT_SOURCES``, laid out in
      absolute seat/side order, are gathered into seat-relative order and scaled.
    * ``static``: the entries that never change within an episode (target, settings).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.layout = layout = ObservationLayout(settings)
        n, sides = settings.num_players, settings.num_sides
        plane_number = {f.name: i + 1 for i, f in enumerate(layout.fields[: layout.num_planes])}
        self.plane_lut = np.zeros((n, 256), dtype=np.int64)
        for seat in range(n):
            side = settings.side_of(seat)
            lut = self.plane_lut[seat]
            for code in unknown_location_codes(seat, side):
                lut[code] = plane_number["unseen"]
            lut[LOC_HAND + seat] = plane_number["hand"]
            lut[LOC_HAND_SHOWN + seat] = plane_number["hand"]
            for other in range(n):
                if other != seat:
                    lut[LOC_HAND_SHOWN + other] = plane_number["stock_bottom"]
                lut[PLAYED_BY + other] = plane_number[f"played_by_seat_{(other - seat) % n}"]
            lut[LOC_STOCK_SHOWN] = plane_number["stock_bottom"]
            lut[LOC_PILE_UP] = plane_number["pile_face_up"]
            lut[LOC_PILE_JACK] = plane_number["pile_public_jacks"]
            for s in range(sides):
                lut[LOC_CAPT_SHOWN + s] = plane_number[f"captured_side_{(s - side) % sides}"]
            lut[LOC_CAPT_HIDDEN + side] = plane_number["captured_side_0"]
        self.top_plane = plane_number["pile_top"]

        if tuple(src for src, _, _ in layout.scalar_sources) != COUNT_SOURCES:
            raise AssertionError("ObservationLayout's count fields and COUNT_SOURCES disagree")
        gathers, scales = [], []
        for seat in range(n):
            side = settings.side_of(seat)
            gather, offset = [], 0
            for _source, per, scale in layout.scalar_sources:
                width = {"seat": n, "side": sides, "one": 1}[per]
                for k in range(width):
                    gather.append(offset + {"seat": (seat + k) % n, "side": (side + k) % sides, "one": 0}[per])
                    if seat == 0:
                        scales.append(1.0 / scale)
                offset += width
            gathers.append(gather)
        self.count_gather = np.array(gathers, dtype=np.int64)
        self.count_scale = np.array(scales, dtype=np.float32)
        # Relative index of each side for each observing seat (+0 = own side).
        self.rel_side = np.array(
            [[(s - settings.side_of(seat)) % sides for s in range(sides)] for seat in range(n)], dtype=np.int64
        )
        s = settings
        self.static = np.zeros(layout.size, dtype=np.float32)
        self.static[layout["target"]] = 0.0 if s.target is None else s.target / POINTS_SCALE
        self.static[layout["settings"]] = [
            s.num_players / 6, float(s.partnerships), float(s.decks - 1), s.win_margin / 10,
            s.double_pisti / 20, float(s.last_card_pisti), s.ten_diamonds_pisti_bonus / 3,
            float(s.show_stock_bottom), float(s.bluff), float(s.bluff_jack_double),
        ]

        # Fast paths of ``encode``: plane k starts at buffer offset 52·k (row 0 is the dump).
        self._buffer_lut = [lut * NUM_CARD_IDS for lut in self.plane_lut]
        self._ids = np.tile(np.arange(settings.num_cards) % NUM_CARD_IDS, 2)  # of where + played_by
        self._one_deck = settings.decks == 1
        self._template = np.concatenate([np.zeros(NUM_CARD_IDS, dtype=np.float32), self.static])
        self._rel_side = self.rel_side.tolist()
        self._top_offset = self.top_plane * NUM_CARD_IDS
        self._last_capturer = layout.by_name["last_capturer"].start
        self._dealer = layout.by_name["dealer"].start
        self._to_move = layout.by_name["to_move"].start

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (float32, ``layout.size`` entries)."""
        layout = self.layout
        buf = self._template.copy()
        idx = self._buffer_lut[seat][np.frombuffer(game.where + game.played_by, dtype=np.uint8)]
        idx += self._ids
        if self._one_deck:
            buf[idx] = 1.0
        else:  # two copies of an id may land in the same entry
            np.add.at(buf, idx, 1.0)
        pile = game.pile
        if pile:
            buf[self._top_offset + pile[-1] % NUM_CARD_IDS] = 1.0
        obs = buf[NUM_CARD_IDS:]
        counts = np.array(
            [
                *map(len, game.hands), len(game.deck) - game.stock_pos, len(pile), game.pile_hidden,
                *game.captured_count, *game.pisti_count, *game.double_pisti_count, *game.pisti_points,
                *game.public_points, *game.match_scores, game.hands_completed,
            ],
            dtype=np.float32,
        )
        np.multiply(counts[self.count_gather[seat]], self.count_scale, out=obs[layout.counts_start : layout.counts_stop])
        n = self.settings.num_players
        last = game.last_capturer
        obs[self._last_capturer + (self._rel_side[seat][last] if last >= 0 else self.settings.num_sides)] = 1.0
        obs[self._dealer + (game.dealer - seat) % n] = 1.0
        if not game.done:
            obs[self._to_move + (game.turn - seat) % n] = 1.0
        return obs
