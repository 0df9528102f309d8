"""The settings of RULES.md's table: defaults and validation with clear errors.

``Settings`` is immutable and validates itself on construction: a bad value raises
``TypeError`` (wrong type) or ``ValueError`` (value not allowed) naming the setting and what is
allowed. [`make_settings`][pisti_env.rules.make_settings] is the keyword-argument front door that also rejects unknown
setting names with a ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any

from .actions import num_actions
from .cards import NUM_CARD_IDS
from .locations import MAX_SEATS
from .scoring import DOUBLE_PISTI_CHOICES, TEN_DIAMONDS_BONUS_CHOICES


@dataclass(frozen=True)
class Settings:
    """Game settings (RULES.md, "Settings"), validated on construction.

    Attributes:
        num_players: 2, 3 or 4 players; 5 or 6 need ``decks=2`` (R3, R27).
        partnerships: seats 0+2 against 1+3 (R4); 4 players only. ``None`` (the default) means
            true with 4 players and false otherwise.
        target: match target (R24); ``None`` plays a single hand.
        win_margin: the match winner must lead by at least this many points (R26); 0 = off.
        double_pisti: points for a Jack taking a lone Jack: 20, 10 (ordinary pişti) or 0 (R14).
        last_card_pisti: whether a pişti with the hand's very last card scores (R16).
        ten_diamonds_pisti_bonus: extra points for a pişti involving the 10♦: 0 or 3 (R17).
        decks: 1, or 2 for 5–6 players (R27).
        show_stock_bottom: the deck's last card is shown to everyone at the deal (R28).
        bluff: the bluff variant (R29): a card may be played face down on a lone card, claiming
            a pişti, and the seat that played the lone card believes or challenges.
        bluff_jack_double: doubled bluff stakes on a lone Jack (R29); needs ``bluff=True``.
    """

    num_players: int = 2
    partnerships: bool | None = None
    target: int | None = 151
    win_margin: int = 0
    double_pisti: int = 20
    last_card_pisti: bool = True
    ten_diamonds_pisti_bonus: int = 0
    decks: int = 1
    show_stock_bottom: bool = False
    bluff: bool = False
    bluff_jack_double: bool = False

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:  # normalise (e.g. NumPy ints) on a frozen object
            object.__setattr__(self, name, value)

        num_players = _check_int("num_players", self.num_players, f"2..{MAX_SEATS}")
        decks = _check_int("decks", self.decks, "1 or 2")
        if decks not in (1, 2):
            raise ValueError(f"setting 'decks' must be 1 or 2, got {decks}")
        if not 2 <= num_players <= MAX_SEATS:
            raise ValueError(f"setting 'num_players' must be 2, 3 or 4 (5 or 6 with decks=2), got {num_players}")
        if num_players >= 5 and decks != 2:
            raise ValueError(
                f"setting 'num_players'={num_players} needs decks=2 (R27); one deck allows 2, 3 or 4 players"
            )
        if decks == 2 and num_players < 5:
            raise ValueError(f"setting 'decks'=2 is only for 5 or 6 players (R27), got num_players={num_players}")
        put("num_players", num_players)
        put("decks", decks)

        if self.partnerships is None:
            put("partnerships", num_players == 4)
        else:
            partnerships = _check_bool("partnerships", self.partnerships)
            if partnerships and num_players != 4:
                raise ValueError(
                    f"setting 'partnerships'=True needs exactly 4 players (R4), got num_players={num_players}"
                )
            put("partnerships", partnerships)

        if self.target is not None:
            target = _check_int("target", self.target, "a positive int, or None for a single hand")
            if target <= 0:
                raise ValueError(f"setting 'target' must be a positive int or None (single hand), got {target}")
            put("target", target)

        win_margin = _check_int("win_margin", self.win_margin, "0 or more")
        if win_margin < 0:
            raise ValueError(f"setting 'win_margin' must be 0 (off) or a positive int, got {win_margin}")
        put("win_margin", win_margin)

        double_pisti = _check_int("double_pisti", self.double_pisti, _choices(DOUBLE_PISTI_CHOICES))
        if double_pisti not in DOUBLE_PISTI_CHOICES:
            raise ValueError(f"setting 'double_pisti' must be {_choices(DOUBLE_PISTI_CHOICES)} (R14), got {double_pisti}")
        put("double_pisti", double_pisti)

        bonus = _check_int("ten_diamonds_pisti_bonus", self.ten_diamonds_pisti_bonus, _choices(TEN_DIAMONDS_BONUS_CHOICES))
        if bonus not in TEN_DIAMONDS_BONUS_CHOICES:
            raise ValueError(
                f"setting 'ten_diamonds_pisti_bonus' must be {_choices(TEN_DIAMONDS_BONUS_CHOICES)} (R17), got {bonus}"
            )
        put("ten_diamonds_pisti_bonus", bonus)

        for name in ("last_card_pisti", "show_stock_bottom", "bluff", "bluff_jack_double"):
            put(name, _check_bool(name, getattr(self, name)))
        if self.bluff_jack_double and not self.bluff:
            # A house rule of the bluff variant only: on its own it would silently do nothing.
            raise ValueError("setting 'bluff_jack_double'=True needs bluff=True (R29)")

    # --- derived quantities -------------------------------------------------------------
    @property
    def num_sides(self) -> int:
        return 2 if self.partnerships else self.num_players

    def side_of(self, seat: int) -> int:
        """The side (team) of a seat: seat % 2 with partnerships (R4), else the seat itself."""
        return seat % 2 if self.partnerships else seat

    @property
    def num_actions(self) -> int:
        """Size of the action space: 52 card ids (R2), or 106 with the bluff variant (R29:
        52 + card id plays face down, 104 believes, 105 challenges)."""
        return num_actions(self.bluff)

    @property
    def num_cards(self) -> int:
        """Physical cards in play: 52 per deck."""
        return NUM_CARD_IDS * self.decks

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


SETTING_NAMES = tuple(f.name for f in dataclasses.fields(Settings))


def make_settings(**kwargs: Any) -> Settings:
    """Validated [`Settings`][pisti_env.rules.Settings] from keyword arguments named as in RULES.md's table.

    Raises ``ValueError`` for an unknown setting name, and whatever [`Settings`][pisti_env.rules.Settings] raises for
    a bad value.
    """
    unknown = sorted(set(kwargs) - set(SETTING_NAMES))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}; allowed settings are {list(SETTING_NAMES)}")
    return Settings(**kwargs)


def _choices(values: tuple[int, ...]) -> str:
    """``(20, 10, 0)`` -> ``"20, 10 or 0"``."""
    return ", ".join(map(str, values[:-1])) + f" or {values[-1]}"


def _check_int(name: str, value: Any, allowed: str) -> int:
    # numbers.Integral admits NumPy integers; bool is an int subclass but never a valid count.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"setting {name!r} must be an int ({allowed}), got {type(value).__name__} {value!r}")
    return int(value)


def _check_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_":  # a NumPy bool
        return bool(value)
    raise TypeError(f"setting {name!r} must be a bool (True or False), got {type(value).__name__} {value!r}")
