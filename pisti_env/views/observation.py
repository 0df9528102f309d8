"""THE observation encoding: one layout (index range -> meaning) and the encoder for one seat.

Everything is seat-relative: "seat +k" is the k-th seat after the observer in playing order
(the observer is +0) and "side +k" likewise for sides (the observer's own side is +0). The
vector holds only what the seat may know (R30); what it may not (R31) is never read.

The layout depends on the number of seats and sides, and on the bluff variant (R29): with
``bluff=True`` one card feature and a block of claim fields are added (see
[`ObservationLayout`][pisti_env.views.observation.ObservationLayout]); with ``bluff=False`` nothing of them exists. ``OBS_VERSION`` changes
whenever the meaning of any index of an existing layout changes; checkpoints record it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import itemgetter, mul
from struct import pack

import numpy as np

from ..rules import locations as loc
from ..rules.cards import HAND_SIZE, NUM_CARD_IDS, TABLE_SIZE
from ..rules.counters import BLUFF_COUNTERS, BLUFF_RESULT_ROWS, Counter
from ..game.engine import Game
from ..rules.settings import Settings
from ..rules.scoring import DOUBLE_PISTI_CHOICES, TEN_DIAMONDS_BONUS_CHOICES

OBS_VERSION = 1

# Scales that bring counts and points to roughly [0, 1] (part of the encoding: changing one
# changes OBS_VERSION).
HAND_SCALE = float(HAND_SIZE)
CARDS_SCALE = float(NUM_CARD_IDS)
PILE_HIDDEN_SCALE = float(TABLE_SIZE - 1)  # at most three table cards are never turned up (R8)
POINTS_SCALE = 100.0
PISTI_COUNT_SCALE = 5.0
HANDS_SCALE = 10.0
WIN_MARGIN_SCALE = 10.0
# Upper bounds of the scaled point entries (the observation Box's ``high``); loose on purpose.
HAND_POINTS_HIGH = 12.0
BLUFF_POINTS_HIGH = 40.0
# The settings block: each setting scaled by its largest usual value.
SETTINGS_MEANINGS = (
    f"num_players/{loc.MAX_SEATS}", "partnerships", "decks-1", f"win_margin/{WIN_MARGIN_SCALE:g}",
    f"double_pisti/{max(DOUBLE_PISTI_CHOICES)}", "last_card_pisti",
    f"ten_diamonds_pisti_bonus/{max(TEN_DIAMONDS_BONUS_CHOICES)}", "show_stock_bottom", "bluff", "bluff_jack_double",
)


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

    The card block comes first: for each card id ``c`` (R2) the ``K`` features of
    ``card_features`` at indices ``c*K … c*K+K-1``, each counting copies of that card (0/1, or
    0..2 with two decks). Counts and one-hot scalars follow.

    With the bluff variant (R29) the card block has one more feature, ``face_down_self`` (the
    seat's own face-down card of a pending claim), and the vector ends with the claim block:
    ``claimant`` (one-hot seat of the pending claim; its lone card is the pile's top card and
    the seat to move answers) and per-side bluff points and claim counts. A face-down card
    another seat played is ``unseen`` until it is shown; a believed one of the seat's own is
    ``captured_side_0``.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        n, sides, decks = settings.num_players, settings.num_sides, settings.decks
        self.num_players, self.num_sides = n, sides
        bluff = settings.bluff
        card = float(decks)
        features: list[tuple[str, str, float]] = [
            ("hand", "in own hand", card),
            ("pile_face_up", "face up in the table pile", card),
            ("pile_top", "the top card of the pile", 1.0),
            ("pile_public_jack", "a Jack moved under the pile at the deal, public (R7)", card),
        ]
        for k in range(sides):
            if k == 0:
                features.append(("captured_side_0", "captured this hand by own side (never-shown table cards it took included, R8"
                                 + ("; own believed face-down cards too, R29)" if bluff else ")"), card))
            else:
                features.append((f"captured_side_{k}", f"captured this hand by side +{k}, seen by everyone", card))
        for k in range(n):
            who = "self" if k == 0 else f"seat +{k}"
            features.append((f"played_by_seat_{k}", f"played face up this hand by {who}"
                             + (" (a face-down card once shown by a challenge too, R29)" if bluff else ""), card))
        features.append(("stock_bottom", "the shown stock-bottom card (R28), in the stock or another hand"
                         + (" or face down in a pending claim (R29)" if bluff else ""), 1.0))
        features.append(("unseen", "not known to this seat: in another hand, the stock or hidden table cards"
                         + (", or another seat's face-down card never shown (R29)" if bluff else ""), card))
        if bluff:
            features.append(("face_down_self", "own face-down card of the pending claim (R29)", 1.0))
        self.card_features = tuple(name for name, _, _ in features)
        self.card_feature_meanings = tuple(meaning for _, meaning, _ in features)
        self.num_card_features = k_features = len(features)
        self.feature_index = {name: i for i, name in enumerate(self.card_features)}

        fields: list[Field] = []
        pos = 0

        def add(name: str, width: int, meaning: str, high: float) -> None:
            nonlocal pos
            fields.append(Field(name, pos, pos + width, meaning, high))
            pos += width

        add("cards", NUM_CARD_IDS * k_features,
            f"per card id c: features c·{k_features} … c·{k_features}+{k_features - 1} (see the card feature table)", card)
        self.cards_size = pos
        high_cards = np.tile(np.array([h for _, _, h in features], dtype=np.float32), NUM_CARD_IDS)

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
        count("pile_hidden", "pile_hidden", "one", PILE_HIDDEN_SCALE,
              "never-turned table cards still in the pile (R8)", 1.0)
        count("captured_count", "captured_count", "side", CARDS_SCALE, "cards captured this hand", card)
        count("pisti_count", "pisti_count", "side", PISTI_COUNT_SCALE,
              "piştis this hand (R13" + ("; believed or proven claims too, R29)" if bluff else ")"), 21.0)
        count("double_pisti_count", "double_pisti_count", "side", PISTI_COUNT_SCALE,
              "double piştis this hand (R14)", 21.0)
        count("pisti_points", "pisti_points", "side", POINTS_SCALE, "pişti points this hand", 11.0)
        count("public_hand_points", "public_points", "side", POINTS_SCALE,
              "points this hand everyone can count (R30: face-up card points and piştis"
              + (", bluff points" if bluff else "") + "; all at hand end)",
              HAND_POINTS_HIGH + (BLUFF_POINTS_HIGH if bluff else 0.0))
        count("match_scores", "match_scores", "side", POINTS_SCALE,
              "match totals of the finished hands (R24)", 1e4)
        count("hands_completed", "hands_completed", "one", HANDS_SCALE, "hands finished in this match", 1e3)
        self.counts_stop = pos
        add("last_capturer", sides + 1, "side that captured last (one-hot side +0..; last entry: nobody yet)", 1.0)
        add("dealer", n, "the dealer (one-hot seat +0..)", 1.0)
        add("to_move", n, "the seat to move (one-hot seat +0..; all 0 once the episode is over)", 1.0)
        add("target", 1, f"match target / {POINTS_SCALE:g} (0 for a single hand)", 1e4)
        add("settings", len(SETTINGS_MEANINGS), ", ".join(SETTINGS_MEANINGS), 1e4)
        if bluff:  # R29, R30: the pending claim and each side's bluff points and counts are public
            add("claimant", n, "seat of the pending claim of a pişti (one-hot seat +0..; all 0: none); "
                "the claim is on the pile's top card and the seat to move answers (R29)", 1.0)
            add("bluff_points", sides, f"bluff points received this hand per side +0..+{sides - 1}, "
                f"/ {POINTS_SCALE:g} (R29)", BLUFF_POINTS_HIGH)
            for name, what in zip(BLUFF_COUNTERS, ("claims made", "claims believed", "claims challenged and true",
                                                   "claims challenged and false (bluffs caught)")):
                add(name, sides, f"{what} this hand per side +0..+{sides - 1}, / {PISTI_COUNT_SCALE:g} (R29)", 21.0)
        self.fields = tuple(fields)
        self.size = pos
        self.by_name = {f.name: f for f in fields}
        self.high = np.zeros(self.size, dtype=np.float32)
        for f in fields:
            self.high[f.slice] = f.high
        self.high[: self.cards_size] = high_cards

    def card_feature(self, card: int, name: str) -> int:
        """Index of card feature ``name`` of card id ``card`` in the vector."""
        return card * self.num_card_features + self.feature_index[name]

    def card_block(self, obs: np.ndarray) -> np.ndarray:
        """The card block of an observation as a (52, K) view: row = card id, column = feature."""
        return obs[..., : self.cards_size].reshape(*obs.shape[:-1], NUM_CARD_IDS, self.num_card_features)

    def __getitem__(self, name: str) -> slice:
        """The indices of a field, or of one card feature across the 52 cards (a strided
        slice): ``obs[layout["hand"]]`` is the own-hand indicator of every card id."""
        if name in self.feature_index:
            return slice(self.feature_index[name], self.cards_size, self.num_card_features)
        return self.by_name[name].slice

    def markdown_table(self) -> str:
        """The layout as Markdown tables (index range -> meaning, then the card features)."""
        rows = ["| indices | name | meaning |", "|---|---|---|"]
        for f in self.fields:
            idx = f"{f.start}" if f.stop - f.start == 1 else f"{f.start}–{f.stop - 1}"
            rows.append(f"| {idx} | `{f.name}` | {f.meaning} |")
        rows += ["", "| card feature | name | the card is … |", "|---|---|---|"]
        for i, (name, meaning) in enumerate(zip(self.card_features, self.card_feature_meanings)):
            rows.append(f"| {i} | `{name}` | {meaning} |")
        return "\n".join(rows)


# The game counters the count block is made of, in the layout's order (the encoders of
# ``Game`` and of the batched engine both read them in this order).
COUNT_SOURCES = (
    "hand_sizes", "stock_size", "pile_size", "pile_hidden", "captured_count", "pisti_count",
    "double_pisti_count", "pisti_points", "public_points", "match_scores", "hands_completed",
)
# The per-side entries of COUNT_SOURCES, as rows of ``Game.counts``, in the same order.
_SIDE_COUNT_ROWS = itemgetter(
    Counter.CAPTURED, Counter.PISTIS, Counter.DOUBLE_PISTIS, Counter.PISTI_POINTS, Counter.PUBLIC_POINTS,
    Counter.MATCH_SCORES,
)
# The claim block's per-side values (R29), as rows of ``Game.counts``: bluff points, then the counts.
_BLUFF_ROWS = itemgetter(*BLUFF_RESULT_ROWS.values())
_ROW_NUMBER = np.dtype("<u2")  # the encoder's pair row numbers: location code + 256 * slot
_FLOAT32 = np.dtype(np.float32)


class ObservationEncoder:
    """Encodes a [`Game`][pisti_env.game.Game] for one seat as a float32 vector.

    The tables built here are THE encoding; the batched engine applies the very same tables to
    its tensors:

    * ``feature_lut[seat][code]``: for every location code (``game.where``) and playing-seat
      code (``game.played_by``), the card feature it sets for that observer: ``f + 1`` for
      feature ``f``, ``0`` for "nothing this seat may see". ``feature_rows[seat]`` is the same
      as one-hot rows (256, K).
    * ``count_gather[seat]`` and ``count_scale``: the counters of ``COUNT_SOURCES``, laid out in
      absolute seat/side order, are gathered into seat-relative order and scaled.
    * ``static``: the entries that never change within an episode (target, settings).
    * ``pair_rows[seat]``: ``feature_rows[seat]`` summed for every (location code, playing-seat
      code) pair, so that [`encode`][pisti_env.views.observation.ObservationEncoder.encode] fills the card block with one gather (issue 17); its
      other private tables are the count gather as ``itemgetter`` s and the one-hot and static
      entries as bytes. [`encode`][pisti_env.views.observation.ObservationEncoder.encode] returns the very bytes the vectorised form above gives
      (``tests/env/test_env_digest.py``).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.layout = layout = ObservationLayout(settings)
        n, sides = settings.num_players, settings.num_sides
        feature = {name: i + 1 for i, name in enumerate(layout.card_features)}
        self.feature_lut = np.zeros((n, 256), dtype=np.int64)
        for seat in range(n):
            side = settings.side_of(seat)
            lut = self.feature_lut[seat]
            for code in loc.unknown_codes(seat, side):
                lut[code] = feature["unseen"]
            lut[loc.HAND + seat] = feature["hand"]
            lut[loc.HAND_SHOWN + seat] = feature["hand"]
            for other in range(n):
                if other != seat:
                    lut[loc.HAND_SHOWN + other] = feature["stock_bottom"]
                lut[loc.PLAYED_BY + other] = feature[f"played_by_seat_{(other - seat) % n}"]
            lut[loc.STOCK_SHOWN] = feature["stock_bottom"]
            lut[loc.PILE_UP] = feature["pile_face_up"]
            lut[loc.PILE_JACK] = feature["pile_public_jack"]
            for s in range(sides):
                lut[loc.CAPT_SHOWN + s] = feature[f"captured_side_{(s - side) % sides}"]
            lut[loc.CAPT_HIDDEN + side] = feature["captured_side_0"]
            if settings.bluff:  # R29: own face-down cards; others' are unseen (set above)
                lut[loc.PILE_DOWN + seat] = feature["face_down_self"]
                lut[loc.CAPT_DOWN + seat] = feature["captured_side_0"]
                # R28: the shown stock-bottom card played face down stays known to everyone.
                lut[loc.PILE_DOWN_SHOWN] = feature["stock_bottom"]
        k = layout.num_card_features
        # One-hot rows with a dump column 0 that is dropped: (n, 256, K).
        self.feature_rows = np.eye(k + 1, dtype=np.float32)[self.feature_lut][:, :, 1:]
        self.top_feature = feature["pile_top"] - 1

        if tuple(src for src, _, _ in layout.scalar_sources) != COUNT_SOURCES:
            raise AssertionError("ObservationLayout's count fields and COUNT_SOURCES disagree")
        gathers, scales = [], []
        for seat in range(n):
            side = settings.side_of(seat)
            gather, offset = [], 0
            for _source, per, scale in layout.scalar_sources:
                width = {"seat": n, "side": sides, "one": 1}[per]
                for j in range(width):
                    gather.append(offset + {"seat": (seat + j) % n, "side": (side + j) % sides, "one": 0}[per])
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
        st = settings
        self.static = np.zeros(layout.size, dtype=np.float32)
        self.static[layout["target"]] = 0.0 if st.target is None else st.target / POINTS_SCALE
        self.static[layout["settings"]] = [  # in the order of SETTINGS_MEANINGS
            st.num_players / loc.MAX_SEATS, float(st.partnerships), float(st.decks - 1),
            st.win_margin / WIN_MARGIN_SCALE,
            st.double_pisti / max(DOUBLE_PISTI_CHOICES), float(st.last_card_pisti),
            st.ten_diamonds_pisti_bonus / max(TEN_DIAMONDS_BONUS_CHOICES),
            float(st.show_stock_bottom), float(st.bluff), float(st.bluff_jack_double),
        ]
        # --- the encoder's own tables (issue 17): an observation costs a handful of NumPy calls.
        # ``encode`` builds the bytes after the card block in Python (``struct``), makes the
        # vector from them in one allocation, and fills the card block with one gather.
        self._num_cards = settings.num_cards
        self._num_players, self._num_sides, self._bluff = n, sides, settings.bluff
        self._rel_side = self.rel_side.tolist()
        # Card block: a card's row depends on its location code and its playing-seat code
        # together, so ``pair_rows[seat]`` holds, for every pair, the sum of the two one-hot rows
        # of ``feature_rows`` (the very sums the block is made of) at row ``where + 256 * slot``,
        # where ``slot`` is 0 for NOBODY and 1 + s for ``PLAYED_BY + s``. ``encode`` interleaves
        # ``where`` with the slots into little-endian uint16 row numbers.
        slot_of = bytearray(256)  # playing-seat code -> slot (a bytes.translate table)
        pair_codes = [loc.NOBODY]
        for s in range(n):
            slot_of[loc.PLAYED_BY + s] = s + 1
            pair_codes.append(loc.PLAYED_BY + s)
        self._slot_of = bytes(slot_of)
        self.pair_rows = (self.feature_rows[:, None, :, :] + self.feature_rows[:, pair_codes, None, :]).reshape(
            n, len(pair_codes) * 256, k
        )
        self._pair_rows = list(self.pair_rows)  # per seat, without making a view each call
        # Count block: the counters in absolute order are put in seat-relative order by one
        # itemgetter and scaled in Python. ``v * s``, with ``s`` the float32 scale as a double,
        # is exact (v < 2**24), so packing it as float32 rounds once, exactly as the float32
        # product ``float32(v) * s`` does: the bytes are those of the vectorised encoding.
        if layout.counts_start != layout.cards_size:
            raise AssertionError("the count block must follow the card block")
        self._relative_counts = [itemgetter(*gather) for gather in self.count_gather.tolist()]
        self._count_scales = self.count_scale.tolist()
        self._count_format = f"={len(self._count_scales)}f"
        # The one-hots and the static entries after the counts, up to the claim block: their
        # bytes for every (last capturer, dealer, seat to move) seen from every seat.
        after_counts = [f.name for f in layout.fields if f.start >= layout.counts_stop]
        expected = ["last_capturer", "dealer", "to_move", "target", "settings"]
        if settings.bluff:
            expected += ["claimant", "bluff_points", *BLUFF_COUNTERS]
        if after_counts != expected:
            raise AssertionError(f"the encoder expects the fields {expected} after the counts, not {after_counts}")
        stop = layout.by_name["settings"].stop
        last_start, dealer_start = layout.by_name["last_capturer"].start, layout.by_name["dealer"].start
        to_move_start = layout.by_name["to_move"].start
        self._middle: list[list[bytes]] = []
        for _seat in range(n):
            table = []
            for last in range(sides + 1):  # relative side; ``sides``: nobody yet
                for dealer in range(n):  # relative seat
                    for to_move in range(n + 1):  # relative seat; ``n``: the episode is over
                        block = self.static[layout.counts_stop : stop].copy()
                        block[last_start - layout.counts_stop + last] = 1.0
                        block[dealer_start - layout.counts_stop + dealer] = 1.0
                        if to_move < n:
                            block[to_move_start - layout.counts_stop + to_move] = 1.0
                        table.append(block.tobytes())
            self._middle.append(table)
        if settings.bluff:  # R29: the claim block, the same way
            one_hot = np.eye(n + 1, n, dtype=np.float32)  # row n: no pending claim
            self._claimant_bytes = [row.tobytes() for row in one_hot]
            rows = 1 + len(BLUFF_COUNTERS)  # bluff points, then the claim counts
            self._relative_bluff = [
                itemgetter(*[r * sides + (j + settings.side_of(seat)) % sides for r in range(rows) for j in range(sides)])
                for seat in range(n)
            ]
            # The batched engine scales its claim block with this very array.
            self._bluff_scale = np.repeat(
                np.array([1 / POINTS_SCALE] + [1 / PISTI_COUNT_SCALE] * len(BLUFF_COUNTERS), dtype=np.float32), sides
            )
            self._bluff_scales = self._bluff_scale.tolist()
            self._bluff_format = f"={rows * sides}f"

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (float32, ``layout.size`` entries): a new array
        each call, never written again by the encoder."""
        n = self._num_players
        captured, pistis, double_pistis, pisti_points, public_points, match_scores = _SIDE_COUNT_ROWS(game.counts)
        pile = game.pile
        counts = self._relative_counts[seat](
            [
                *map(len, game.hands), len(game.deck) - game.stock_pos, len(pile), game.pile_hidden,
                *captured, *pistis, *double_pistis, *pisti_points, *public_points, *match_scores,
                game.hands_completed,
            ]
        )
        last = game.last_capturer
        middle = self._middle[seat][
            ((self._rel_side[seat][last] if last >= 0 else self._num_sides) * n + (game.dealer - seat) % n) * (n + 1)
            + (n if game.done else (game.turn - seat) % n)
        ]
        # Card block: each physical card's (location code, playing-seat slot) pair selects the
        # sum of its two one-hot feature rows; copies of an id (two decks) add up.
        pairs = bytearray(2 * self._num_cards)
        pairs[0::2] = game.where
        pairs[1::2] = game.played_by.translate(self._slot_of)
        cards = self._pair_rows[seat].take(np.frombuffer(pairs, _ROW_NUMBER), 0)
        if self._num_cards != NUM_CARD_IDS:
            cards = np.add(cards[:NUM_CARD_IDS], cards[NUM_CARD_IDS:])
        if pile:
            cards[pile[-1] % NUM_CARD_IDS, self.top_feature] = 1.0
        parts = [cards, pack(self._count_format, *map(mul, counts, self._count_scales)), middle]
        if self._bluff:  # R29: the pending claim's seat, bluff points and claim counts per side
            claimant = game.claimant
            parts.append(self._claimant_bytes[(claimant - seat) % n if claimant >= 0 else n])
            bluff = self._relative_bluff[seat](list(chain.from_iterable(_BLUFF_ROWS(game.counts))))
            parts.append(pack(self._bluff_format, *map(mul, bluff, self._bluff_scales)))
        # One copy of every part into a new buffer, which the vector owns alone.
        obs = np.frombuffer(bytearray().join(parts), _FLOAT32)
        return obs
