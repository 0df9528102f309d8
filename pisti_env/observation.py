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
            extra = ", including never-shown table cards it took (R8)" if k == 0 else " face up"
            add(f"captured_side_{k}", 52, f"cards {whose} captured this hand{extra}", card)
        for k in range(n):
            who = "self" if k == 0 else f"seat +{k}"
            add(f"played_by_seat_{k}", 52, f"cards played face up this hand by {who}", card)
        add("stock_bottom", 52, "the shown stock-bottom card (R28) while in the stock or another hand", 1.0)
        add("unseen", 52, "cards this seat cannot know yet: other hands, stock, hidden table cards", card)
        self.num_planes = len(fields)
        self.planes_size = pos

        add("hand_sizes", n, f"cards in hand per seat +0..+{n - 1}, / {HAND_SCALE:g}", 1.0)
        add("stock_size", 1, f"cards left in the stock, / {CARDS_SCALE:g}", card)
        add("pile_size", 1, f"cards in the pile, / {CARDS_SCALE:g}", card)
        add("pile_hidden", 1, "never-turned table cards still in the pile, / 3", 1.0)
        add("captured_count", sides, f"cards captured this hand per side +0..+{sides - 1}, / {CARDS_SCALE:g}", card)
        add("pisti_count", sides, f"piştis (double ones included) this hand per side, / {PISTI_COUNT_SCALE:g}", 21.0)
        add("pisti_points", sides, f"pişti points this hand per side, / {POINTS_SCALE:g}", 11.0)
        add(
            "public_hand_points",
            sides,
            f"points this hand per side that everyone can count (R30), / {POINTS_SCALE:g}",
            12.0,
        )
        add("match_scores", sides, f"match totals of the finished hands per side, / {POINTS_SCALE:g}", 1e4)
        add("last_capturer", sides + 1, "side that captured last (one-hot side +0..; last entry: nobody yet)", 1.0)
        add("dealer", n, "the dealer (one-hot seat +0..)", 1.0)
        add("to_move", n, "the seat to move (one-hot seat +0..; all 0 once the episode is over)", 1.0)
        add("hands_completed", 1, f"hands finished in this match, / {HANDS_SCALE:g}", 1e3)
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


class ObservationEncoder:
    """Encodes a :class:`~pisti_env.game.Game` for one seat as a float32 vector.

    Card planes come from one lookup table per observer that maps every card's location code
    (``game.where``) and playing-seat code (``game.played_by``) to a plane, applied to all
    cards in a single fancy-indexing operation. Row 0 of the scratch buffer is a dump for what
    the observer may not see.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.layout = layout = ObservationLayout(settings)
        n, sides = settings.num_players, settings.num_sides
        # Card id of each entry of ``where + played_by`` (physical index % 52, twice).
        self._ids = np.tile(np.arange(settings.num_cards) % NUM_CARD_IDS, 2)
        # One lookup table per observer maps both location codes (``game.where``) and
        # playing-seat codes (``game.played_by``) to the offset of a plane in the scratch buffer.
        self._lut = []
        for seat in range(n):
            side = settings.side_of(seat)

            def plane(name: str) -> int:
                return layout.by_name[name].start + NUM_CARD_IDS  # +52: past the dump row

            lut = np.zeros(256, dtype=np.int64)  # 0 = the dump row (not shown to this seat)
            for code in unknown_location_codes(seat, side):
                lut[code] = plane("unseen")
            lut[LOC_HAND + seat] = plane("hand")
            lut[LOC_HAND_SHOWN + seat] = plane("hand")
            for other in range(n):
                if other != seat:
                    lut[LOC_HAND_SHOWN + other] = plane("stock_bottom")
                lut[PLAYED_BY + other] = plane(f"played_by_seat_{(other - seat) % n}")
            lut[LOC_STOCK_SHOWN] = plane("stock_bottom")
            lut[LOC_PILE_UP] = plane("pile_face_up")
            lut[LOC_PILE_JACK] = plane("pile_public_jacks")
            for s in range(sides):
                lut[LOC_CAPT_SHOWN + s] = plane(f"captured_side_{(s - side) % sides}")
            lut[LOC_CAPT_HIDDEN + side] = plane("captured_side_0")
            self._lut.append(lut)
        self._rel_seats = [[(seat + k) % n for k in range(n)] for seat in range(n)]
        self._rel_sides = [
            [(settings.side_of(seat) + k) % sides for k in range(sides)] for seat in range(n)
        ]
        self._one_deck = settings.decks == 1
        s = settings
        self._settings_vec = [
            s.num_players / 6, float(s.partnerships), float(s.decks - 1), s.win_margin / 10,
            s.double_pisti / 20, float(s.last_card_pisti), s.ten_diamonds_pisti_bonus / 3,
            float(s.show_stock_bottom), float(s.bluff), float(s.bluff_jack_double),
        ]
        self._target = 0.0 if s.target is None else s.target / POINTS_SCALE
        self._top_offset = layout.by_name["pile_top"].start + NUM_CARD_IDS

    def encode(self, game: Game, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (float32, ``layout.size`` entries)."""
        layout = self.layout
        buf = np.zeros(NUM_CARD_IDS + layout.size, dtype=np.float32)
        idx = self._lut[seat][np.frombuffer(game.where + game.played_by, dtype=np.uint8)]
        idx += self._ids
        if self._one_deck:
            buf[idx] = 1.0
        else:  # two copies of an id may land in the same entry
            np.add.at(buf, idx, 1.0)
        pile = game.pile
        if pile:
            buf[self._top_offset + pile[-1] % NUM_CARD_IDS] = 1.0
        obs = buf[NUM_CARD_IDS:]
        obs[layout.planes_size :] = self._scalars(game, seat)
        return obs

    def _scalars(self, game: Game, seat: int) -> list[float]:
        seats = self._rel_seats[seat]
        sides = self._rel_sides[seat]
        hands = game.hands
        out = [len(hands[s]) / HAND_SCALE for s in seats]
        out.append((len(game.deck) - game.stock_pos) / CARDS_SCALE)
        out.append(len(game.pile) / CARDS_SCALE)
        out.append(game.pile_hidden_count() / 3.0)
        cc, pc, dc, pp = game.captured_count, game.pisti_count, game.double_pisti_count, game.pisti_points
        pub, ms = game.public_points, game.match_scores
        out += [cc[s] / CARDS_SCALE for s in sides]
        out += [(pc[s] + dc[s]) / PISTI_COUNT_SCALE for s in sides]
        out += [pp[s] / POINTS_SCALE for s in sides]
        out += [pub[s] / POINTS_SCALE for s in sides]
        out += [ms[s] / POINTS_SCALE for s in sides]
        last = [0.0] * (len(sides) + 1)
        last[sides.index(game.last_capturer) if game.last_capturer >= 0 else -1] = 1.0
        out += last
        out += [1.0 if s == game.dealer else 0.0 for s in seats]
        out += [1.0 if (s == game.turn and not game.done) else 0.0 for s in seats]
        out.append(game.hands_completed / HANDS_SCALE)
        out.append(self._target)
        out += self._settings_vec
        return out
