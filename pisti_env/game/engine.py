"""The Pişti rules engine: one match (or one hand) as a plain Python object.

Everything here follows ``RULES.md``; comments cite its rule numbers. The engine never reads
the clock or global random state: every random choice comes from the ``random.Random`` seeded
by the caller (R5, R7). The rule facts themselves (location codes, action ids, scores, counter
rows) live in `locations`, `actions`, `scoring`
and `counters`.

[`Game`][pisti_env.game.Game] holds the state and is the engine's public face: its queries, [`Game.step`][pisti_env.game.Game.step]
and [`Game.clone`][pisti_env.game.Game.clone]. The rules that change the state are functions of the game in their own
modules: `deal` (a hand's start and the deal rounds), `play`
(a face-up play's capture and the turn order), `claims` (the bluff variant),
`hand_end` (sweep, scores, match end), `action_checks` (a bad
action refused) and `determinize` (the worlds a seat cannot tell apart).

State is kept in a few flat containers so that a step is cheap:

* ``hands[seat]``: the physical cards (``copy * 52 + id``, see `pisti_env.rules.cards`) in
  each hand; ``pile``: the table pile, bottom first; ``deck[stock_pos:]``: the stock.
* ``where[p]``: a location code (`pisti_env.rules.locations`) for every physical card. It records
  both where a card is and who may know it (R30–R31), and is what the observation encoder reads.
* ``played_by[p]``: ``loc.PLAYED_BY + seat`` for the seat that played card ``p`` face up this
  hand, or ``loc.NOBODY``.
* ``counts[row][side]``: the per-side counters, one row per [`Counter`][pisti_env.rules.counters.Counter]
  (the rows of the batched engine's ``side_counts``): captured cards, points, piştis, the match
  totals and, with the bluff variant, bluff points and claim counts. They are updated as cards
  move; the old attribute names (``captured_count``, ``match_scores``, ...) read the live rows.

[`Game.public_total`][pisti_env.game.Game.public_total] (every point of a side that all seats can count, R30) is computed from
the table: the match total plus this hand's face-up card points, pişti and bluff points; hidden
card points and the majority join it at the end of the hand.

The bluff variant (R29, ``bluff=True``): actions are plain ints, so face-down plays
(``FACE_DOWN + card id`` = 52–103) and the answers (``BELIEVE`` = 104, ``CHALLENGE`` = 105)
extend the same action space; `claims` describes the claim's state
(``claimant``, ``claim_card``) and where its cards go.
"""

from __future__ import annotations

import random
from operator import add
from itertools import chain
from typing import Any, Sequence

from ..rules import locations as loc
from .action_checks import resolve_action
from ..util.arguments import check_int
from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import JACK, NUM_CARD_IDS, RANK
from .claims import answer, may_claim, play_face_down
from ..rules.counters import BLUFF_RESULT_ROWS, COUNTED_RESULT_ROWS, HAND_RESULT_KEYS, Counter
from .deal import physical_deck, start_hand, validated_deck
from .determinize import determinize, unknown_cards
from .play import capture, pass_turn
from ..rules.settings import Settings, make_settings
from ..rules.scoring import majority_points

# Counter rows read on every step (the env's rewards), as plain ints: looking up an enum member
# costs more than the read itself.
_PUBLIC_POINTS, _MATCH_SCORES = int(Counter.PUBLIC_POINTS), int(Counter.MATCH_SCORES)
_PLAYED_BY, _PILE_UP = loc.PLAYED_BY, loc.PILE_UP  # location codes of a face-up play, as module globals


_COUNTER_ROWS = len(Counter)  # the rows of Game.counts, bluff rows included (R29)

def _counter_row(row: Counter, doc: str) -> property:
    """A read-only attribute for one row of ``Game.counts`` (see [`Game.counter`][pisti_env.game.Game.counter])."""
    index = int(row)
    return property(lambda game: game.counter(index), doc=doc)


class Game:
    """One Pişti match (``settings.target`` set) or single hand (``target=None``).

    Args:
        settings: a validated [`Settings`][pisti_env.rules.Settings] (default: the standard game).
        seed: seeds the game's own ``random.Random``: the first dealer (R5) and every shuffle.
        deck: optional first-hand deck, ``52 * decks`` card ids or text codes, item 0 dealt
            first (R6). Later hands of a match are shuffled from ``seed``.
        dealer: optional dealer seat of the first hand (otherwise drawn from ``seed``).

    Raises ``ValueError``/``TypeError`` for a bad deck or dealer; the object is then not built.

    The per-side counters are one table, ``counts[row][side]``, with the rows of
    [`Counter`][pisti_env.rules.counters.Counter] (the bluff rows only with ``bluff``, R29);
    ``captured_count``, ``match_scores`` and the other row names read its live rows, and
    [`public_total`][pisti_env.game.Game.public_total] is computed from it.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        seed: int | None = None,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
    ) -> None:
        if settings is None:
            settings = Settings()
        elif not isinstance(settings, Settings):
            raise TypeError(f"settings must be a pisti_env.Settings, got {type(settings).__name__}")
        self.settings = settings
        n = settings.num_players
        self.num_players = n
        self.num_sides = settings.num_sides
        self.side_of = tuple(settings.side_of(s) for s in range(n))
        self.rng = random.Random(None if seed is None else check_int(seed, "seed", none=True))
        # The dealer is always drawn, so a given dealer does not change the decks a seed deals.
        drawn_dealer = self.rng.randrange(n)
        if dealer is not None:
            dealer = check_int(dealer, "dealer", low=0, high=n - 1, kind="seat")
        else:
            dealer = drawn_dealer
        first_deck = None if deck is None else physical_deck(settings, validated_deck(settings, deck))

        self.hands_completed = 0
        self.hand_results: list[list[dict[str, int]]] = []
        self.done = False
        self.winner: int | None = None  # winning side once done; None for a drawn single hand
        self.history: list[tuple[int, int]] = []  # (seat, card id) of every play this hand
        start_hand(self, dealer, first_deck)

    # ------------------------------------------------------------------ the counters
    # The rows of ``counts`` under their own names: live lists indexed by side, read-only.
    captured_count = _counter_row(Counter.CAPTURED, "Cards captured this hand per side (R21).")
    card_points = _counter_row(Counter.CARD_POINTS, "Points of the captured cards per side (R20), hidden ones too.")
    public_points = _counter_row(
        Counter.PUBLIC_POINTS,
        "Points this hand every seat can count per side (R30); once the hand is over, its total.",
    )
    pisti_count = _counter_row(Counter.PISTIS, "Piştis this hand per side (R13; believed or proven claims, R29).")
    double_pisti_count = _counter_row(Counter.DOUBLE_PISTIS, "Double piştis this hand per side (R14).")
    pisti_points = _counter_row(Counter.PISTI_POINTS, "Pişti points this hand per side (R13–R17).")
    match_scores = _counter_row(Counter.MATCH_SCORES, "Totals of the finished hands of this match per side (R24).")
    bluff_points = _counter_row(Counter.BLUFF_POINTS, "Bluff points received this hand per side (R29).")
    bluff_claims = _counter_row(Counter.BLUFF_CLAIMS, "Claims made this hand per side (R29).")
    bluff_believed = _counter_row(Counter.BLUFF_BELIEVED, "Claims believed this hand per side (R29).")
    bluff_challenged_true = _counter_row(Counter.BLUFF_CHALLENGED_TRUE, "Claims challenged and true per side (R29).")
    bluff_challenged_false = _counter_row(
        Counter.BLUFF_CHALLENGED_FALSE, "Claims challenged and false (bluffs caught) per side (R29)."
    )

    def counter(self, row: Counter | int) -> list[int]:
        """Row ``row`` of `counts`: the live per-side list. A bluff row of a game without
        the variant reads as zeros (R29)."""
        if not (isinstance(row, int) and not isinstance(row, bool) and 0 <= row < _COUNTER_ROWS):
            row = check_int(row, "row", low=0, high=_COUNTER_ROWS - 1, kind="counter row")  # never wraps
        counts = self.counts
        return counts[row] if row < len(counts) else [0] * self.num_sides

    @property
    def public_total(self) -> list[int]:
        """Every point of each side that all seats can count (R30): its match total plus this
        hand's public points. Once the game is over the last hand is in the match totals, so it
        is the match totals alone."""
        counts = self.counts
        if self.done:
            return counts[_MATCH_SCORES][:]
        return list(map(add, counts[_MATCH_SCORES], counts[_PUBLIC_POINTS]))  # a fresh list each call

    # ------------------------------------------------------------------ public queries
    @property
    def current_seat(self) -> int:
        """The seat to move (meaningless once `done`)."""
        return self.turn

    @property
    def last_hand_result(self) -> list[dict[str, int]] | None:
        """Per-side result of the last finished hand (see [`hand_scores`][pisti_env.game.Game.hand_scores]), or ``None``: a
        copy, so editing it changes neither the game nor what it hands out next."""
        return [dict(side) for side in self.hand_results[-1]] if self.hand_results else None

    def legal_actions(self) -> list[int]:
        """Sorted action ids the seat to move may take: any card in its hand (R9); with the
        bluff variant also that card face down (``FACE_DOWN + id``) when it may claim a pişti,
        and only ``BELIEVE``/``CHALLENGE`` while it answers a claim (R29)."""
        if self.done:
            return []
        if self.claimant >= 0:
            return [BELIEVE, CHALLENGE]
        cards = self._legal_cards(self.turn)
        if self.settings.bluff and may_claim(self, self.turn):
            return cards + [FACE_DOWN + c for c in cards]
        return cards

    @property
    def pending_claim(self) -> tuple[int, int] | None:
        """``(claimant seat, lone card id)`` of the claim waiting for an answer (R29), public;
        ``None`` when there is none. The answering seat is `turn`."""
        if self.claimant < 0:
            return None
        return self.claimant, self.pile[0] % NUM_CARD_IDS

    @property
    def num_actions(self) -> int:
        """Size of the action space: 52, or 106 with the bluff variant (R29)."""
        return self.settings.num_actions

    def _legal_cards(self, seat: int) -> list[int]:
        if self.settings.decks == 1:
            return sorted(self.hands[seat])
        return sorted({p % NUM_CARD_IDS for p in self.hands[seat]})

    def hand_card_ids(self, seat: int) -> list[int]:
        """Card ids in ``seat``'s hand, sorted (a card held twice, with two decks, twice).

        Raises:
            TypeError: ``seat`` is not an int.
            ValueError: ``seat`` is outside ``0..num_players - 1`` (never wrapped: -1 is refused).
        """
        return sorted(p % NUM_CARD_IDS for p in self.hands[self._seat(seat)])

    def _seat(self, seat: Any, name: str = "seat") -> int:
        """``seat`` checked as the library checks every seat (`pisti_env.util.arguments.check_int`)."""
        if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < self.num_players:
            return seat
        return check_int(seat, name, low=0, high=self.num_players - 1, kind="seat")

    @property
    def stock_size(self) -> int:
        return len(self.deck) - self.stock_pos

    @property
    def pile_top(self) -> int | None:
        """Card id of the face-up top card of the pile, or ``None`` when the pile is empty."""
        return self.pile[-1] % NUM_CARD_IDS if self.pile else None

    def hand_scores(self) -> list[dict[str, int]]:
        """Score breakdown of the hand in progress per side, counting every card (omniscient).

        Keys: ``cards``, ``card_points``, ``majority``, ``pisti``, ``double_pisti``,
        ``pisti_points``, ``total`` (R20–R22). Majority is awarded as if the hand ended now.
        With the bluff variant (R29) also ``bluff_points`` (points this side received from
        claims: believed, proven or caught) and the counts of this side's claims:
        ``bluff_claims``, ``bluff_believed``, ``bluff_challenged_true``,
        ``bluff_challenged_false``; ``pisti`` then includes its believed and proven claims, and
        ``total`` its bluff points.
        """
        counts = self.counts
        majority = majority_points(counts[Counter.CAPTURED])  # R21, as if the hand ended now
        bluff_rows = BLUFF_RESULT_ROWS.items() if self.settings.bluff else ()
        result = []
        for side in range(self.num_sides):
            # The keys in HAND_RESULT_KEYS' order; "majority" and "total" are computed below.
            r = {key: counts[COUNTED_RESULT_ROWS[key]][side] if key in COUNTED_RESULT_ROWS else 0
                 for key in HAND_RESULT_KEYS}
            r["majority"] = majority[side]
            for key, row in bluff_rows:
                r[key] = counts[row][side]
            # R22: card points, the majority, pişti points and (R29) bluff points.
            r["total"] = r["card_points"] + r["majority"] + r["pisti_points"] + r.get("bluff_points", 0)
            result.append(r)
        return result

    # ------------------------------------------------------------------ the move
    def step(self, action: int) -> None:
        """Take action ``action`` for the seat to move: play that card id face up (R9–R19);
        with the bluff variant also play a card face down (``FACE_DOWN + id``) or answer a
        claim (``BELIEVE``, ``CHALLENGE``) (R29).

        Raises ``TypeError`` for a non-integer action and ``ValueError`` for an id out of
        range, a card not in the hand, an action not allowed now (naming the legal ones), or a
        finished game; the state is then unchanged.
        """
        if self.done:
            raise ValueError("the game is over: no more actions; start a new game (env.reset())")
        seat = self.turn
        hand = self.hands[seat]
        if action.__class__ is int and 0 <= action < NUM_CARD_IDS and action in hand and self.claimant < 0:
            p = action
        else:
            kind, p = resolve_action(self, action, seat)
            if kind == BELIEVE:
                answer(self, p == CHALLENGE)
                return
            if kind == FACE_DOWN:
                play_face_down(self, p, seat)
                return
        hand.remove(p)
        self.played_by[p] = _PLAYED_BY + seat
        self.history.append((seat, p % NUM_CARD_IDS))
        self.in_hands -= 1
        pile = self.pile
        rank = RANK[p]
        if pile and (rank == RANK[pile[-1]] or rank == JACK):  # R10, R11
            capture(self, p, seat)
        else:  # R12 (and R11: a Jack on an empty pile just lies there)
            pile.append(p)
            self.where[p] = _PILE_UP
        pass_turn(self, seat)

    # ------------------------------------------------------------------ copies
    def clone(self) -> "Game":
        """An independent copy (the random generator included): every attribute is copied
        deeply by `_copy_state`, so the copy shares no mutable object with this game,
        whatever attributes the game holds."""
        g = Game.__new__(Game)
        g.__dict__.update({name: _copy_state(value) for name, value in self.__dict__.items()})
        return g

    def unknown_cards(self, seat: int) -> list[int]:
        """Physical cards whose identity ``seat`` cannot know (R31), ascending; see
        `pisti_env.game.determinize.unknown_cards`. A seat outside ``0..num_players - 1`` is a
        ``ValueError``, a seat that is not an int a ``TypeError``."""
        return unknown_cards(self, self._seat(seat))

    def determinize(
        self, seat: int, rng: random.Random | int | None = None, *, claim: bool | None = None
    ) -> "Game":
        """A copy in which everything ``seat`` cannot know (R31) is dealt again uniformly;
        ``claim=True``/``False`` keeps only worlds in which a pending claim's hidden face-down
        card is / is not of the lone card's rank (R29). See
        `pisti_env.game.determinize.determinize` for the deal order, ``rng`` and the errors
        (a seat is checked like every seat; ``rng`` must be a ``random.Random``, an int seed or
        ``None``: anything else is a ``TypeError``)."""
        return determinize(self, self._seat(seat), rng, claim=claim)


# What a copy of a game may share with it: immutable values (Settings is a frozen dataclass).
_IMMUTABLE = frozenset({int, bool, float, str, bytes, type(None), Settings})


def _holds_only_immutables(items: Any) -> bool:
    """Whether every item of ``items`` is immutable: an immutable value or a tuple of them. The
    check runs at C speed, so a flat container is copied in one step."""
    kinds = set(map(type, items))
    if tuple in kinds:
        kinds.discard(tuple)
        kinds.update(map(type, chain.from_iterable(item for item in items if item.__class__ is tuple)))
    return kinds <= _IMMUTABLE


def _copy_state(value: Any) -> Any:
    """A copy of one attribute of a [`Game`][pisti_env.game.Game] that shares no mutable object with ``value``.

    Immutable values are returned as they are; lists, tuples and dicts are copied level by
    level, a ``bytearray`` by value, a random generator by its state. Any other type raises
    ``TypeError``: a new kind of state must be taught here rather than be shared between a game
    and its copies (the real game and a search world).
    """
    cls = value.__class__
    if cls in _IMMUTABLE:
        return value
    if cls is list:
        return value.copy() if _holds_only_immutables(value) else [_copy_state(item) for item in value]
    if cls is tuple:
        return value if _holds_only_immutables(value) else tuple(_copy_state(item) for item in value)
    if cls is dict:
        if _holds_only_immutables(value.values()):
            return value.copy()
        return {key: _copy_state(item) for key, item in value.items()}
    if cls is bytearray:
        return bytearray(value)
    if isinstance(value, random.Random):
        rng = random.Random()
        rng.setstate(value.getstate())
        return rng
    raise TypeError(f"Game.clone cannot copy a {cls.__name__}: teach pisti_env.game.engine._copy_state about it")


def new_game(
    *, seed: int | None = None, deck: Sequence[int | str] | None = None, dealer: int | None = None, **settings: Any
) -> Game:
    """Convenience: ``Game(make_settings(**settings), seed=..., deck=..., dealer=...)``."""
    return Game(make_settings(**settings), seed=seed, deck=deck, dealer=dealer)
