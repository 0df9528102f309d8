"""The Pişti rules engine: one match (or one hand) as a plain Python object.

Everything here follows ``RULES.md``; comments cite its rule numbers. The engine never reads
the clock or global random state: every random choice comes from the ``random.Random`` seeded
by the caller (R5, R7). The rule facts themselves (location codes, action ids, scores, counter
rows) live in :mod:`~pisti_env.locations`, :mod:`~pisti_env.actions`, :mod:`~pisti_env.scoring`
and :mod:`~pisti_env.counters`.

State is kept in a few flat containers so that a step is cheap:

* ``hands[seat]``: the physical cards (``copy * 52 + id``, see :mod:`pisti_env.cards`) in
  each hand; ``pile``: the table pile, bottom first; ``deck[stock_pos:]``: the stock.
* ``where[p]``: a location code (:mod:`pisti_env.locations`) for every physical card. It records
  both where a card is and who may know it (R30–R31), and is what the observation encoder reads.
* ``played_by[p]``: ``loc.PLAYED_BY + seat`` for the seat that played card ``p`` face up this
  hand, or ``loc.NOBODY``.
* ``counts[row][side]``: the per-side counters, one row per :class:`~pisti_env.counters.Counter`
  (the rows of the batched engine's ``side_counts``): captured cards, points, piştis, the match
  totals and, with the bluff variant, bluff points and claim counts. They are updated as cards
  move; the old attribute names (``captured_count``, ``match_scores``, ...) read the live rows.

:attr:`Game.public_total` (every point of a side that all seats can count, R30) is computed from
the table: the match total plus this hand's face-up card points, pişti and bluff points; hidden
card points and the majority join it at the end of the hand.

The bluff variant (R29, ``bluff=True``): actions are plain ints, so face-down plays
(``FACE_DOWN + card id`` = 52–103) and the answers (``BELIEVE`` = 104, ``CHALLENGE`` = 105)
extend the same action space. A face-down play leaves the lone card in ``pile`` and puts the
claim in ``claimant``/``claim_card`` (the card at ``loc.PILE_DOWN + claimant``, known to its
player only); the answer is a turn of its own (``turn`` moves to the seat that played the lone
card), then play goes on with the seat after the claimant. A believed card is captured at
``loc.CAPT_DOWN + claimant``: its side counts it, but only its player knows it (R30, R31).
"""

from __future__ import annotations

import random
from itertools import chain
from typing import Any, Sequence

from . import locations as loc
from .actions import BELIEVE, CHALLENGE, FACE_DOWN, action_to_text
from .cards import HAND_SIZE, IS_JACK, JACK, NUM_CARD_IDS, RANK, TABLE_SIZE, card_to_text, parse_card
from .counters import BLUFF_RESULT_ROWS, COUNTED_RESULT_ROWS, HAND_RESULT_KEYS, Counter, num_counters
from .rules import Settings, make_settings
from .scoring import CHALLENGE_FACTOR, POINTS, bluff_stake, is_double_pisti, majority_points, pisti_value

# Counter rows the hot path (a face-up play, a capture) updates, as plain ints: looking up an
# enum member costs more than the update itself.
_CAPTURED, _CARD_POINTS, _PUBLIC_POINTS = int(Counter.CAPTURED), int(Counter.CARD_POINTS), int(Counter.PUBLIC_POINTS)
_PISTIS, _DOUBLE_PISTIS, _PISTI_POINTS = int(Counter.PISTIS), int(Counter.DOUBLE_PISTIS), int(Counter.PISTI_POINTS)
_MATCH_SCORES = int(Counter.MATCH_SCORES)


def _counter_row(row: Counter, doc: str) -> property:
    """A read-only attribute for one row of ``Game.counts`` (see :meth:`Game.counter`)."""
    index = int(row)
    return property(lambda game: game.counter(index), doc=doc)


def _legal_text(legal: list[int]) -> str:
    return f"legal now: {legal} ({', '.join(action_to_text(a) for a in legal)})"


class Game:
    """One Pişti match (``settings.target`` set) or single hand (``target=None``).

    Args:
        settings: a validated :class:`~pisti_env.rules.Settings` (default: the standard game).
        seed: seeds the game's own ``random.Random``: the first dealer (R5) and every shuffle.
        deck: optional first-hand deck, ``52 * decks`` card ids or text codes, item 0 dealt
            first (R6). Later hands of a match are shuffled from ``seed``.
        dealer: optional dealer seat of the first hand (otherwise drawn from ``seed``).

    Raises ``ValueError``/``TypeError`` for a bad deck or dealer; the object is then not built.

    The per-side counters are one table, ``counts[row][side]``, with the rows of
    :class:`~pisti_env.counters.Counter` (the bluff rows only with ``bluff``, R29);
    ``captured_count``, ``match_scores`` and the other row names read its live rows, and
    :attr:`public_total` is computed from it.
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
        self.rng = random.Random(seed)
        # The dealer is always drawn, so a given dealer does not change the decks a seed deals.
        drawn_dealer = self.rng.randrange(n)
        if dealer is not None:
            if isinstance(dealer, bool) or not hasattr(dealer, "__index__"):
                raise TypeError(f"dealer must be an int seat 0..{n - 1}, got {type(dealer).__name__} {dealer!r}")
            dealer = int(dealer)
            if not 0 <= dealer < n:
                raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
        else:
            dealer = drawn_dealer
        first_deck = None if deck is None else self._physical_deck(self._validated_deck(deck))

        self.hands_completed = 0
        self.hand_results: list[list[dict[str, int]]] = []
        self.done = False
        self.winner: int | None = None  # winning side once done; None for a drawn single hand
        self.history: list[tuple[int, int]] = []  # (seat, card id) of every play this hand
        self._start_hand(dealer, first_deck)

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
        """Row ``row`` of :attr:`counts`: the live per-side list. A bluff row of a game without
        the variant reads as zeros (R29)."""
        counts = self.counts
        return counts[row] if row < len(counts) else [0] * self.num_sides

    @property
    def public_total(self) -> list[int]:
        """Every point of each side that all seats can count (R30): its match total plus this
        hand's public points. Once the game is over the last hand is in the match totals, so it
        is the match totals alone."""
        counts = self.counts
        if self.done:
            return list(counts[_MATCH_SCORES])
        return [m + p for m, p in zip(counts[_MATCH_SCORES], counts[_PUBLIC_POINTS])]

    # ------------------------------------------------------------------ public queries
    @property
    def current_seat(self) -> int:
        """The seat to move (meaningless once :attr:`done`)."""
        return self.turn

    @property
    def last_hand_result(self) -> list[dict[str, int]] | None:
        """Per-side result of the last finished hand (see :meth:`hand_scores`), or ``None``."""
        return self.hand_results[-1] if self.hand_results else None

    def legal_actions(self) -> list[int]:
        """Sorted action ids the seat to move may take: any card in its hand (R9); with the
        bluff variant also that card face down (``FACE_DOWN + id``) when it may claim a pişti,
        and only ``BELIEVE``/``CHALLENGE`` while it answers a claim (R29)."""
        if self.done:
            return []
        if self.claimant >= 0:
            return [BELIEVE, CHALLENGE]
        cards = self._legal_cards(self.turn)
        if self.settings.bluff and self._may_claim(self.turn):
            return cards + [FACE_DOWN + c for c in cards]
        return cards

    def _may_claim(self, seat: int) -> bool:
        """R29: a face-down play needs exactly one card on the table (and no claim pending);
        with ``last_card_pisti=False`` never on the hand's very last card (R16)."""
        if self.claimant >= 0 or len(self.pile) != 1:
            return False
        lone_seat = loc.played_by_seat(self.played_by[self.pile[0]])
        # The lone card always was played face up by a seat of another side (a capture emptied
        # the table, then the previous seat played it); a guard, never met in play.
        if lone_seat < 0 or self.side_of[lone_seat] == self.side_of[seat]:
            return False
        last_card = self.in_hands == 1 and self.stock_pos == len(self.deck)
        return self.settings.last_card_pisti or not last_card

    @property
    def pending_claim(self) -> tuple[int, int] | None:
        """``(claimant seat, lone card id)`` of the claim waiting for an answer (R29), public;
        ``None`` when there is none. The answering seat is :attr:`turn`."""
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
        """Card ids in ``seat``'s hand, sorted (a card held twice, with two decks, twice)."""
        return sorted(p % NUM_CARD_IDS for p in self.hands[seat])

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
        majority = majority_points(counts[_CAPTURED])  # R21, as if the hand ended now
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
            kind, p = self._resolve_action(action, seat)
            if kind == BELIEVE:
                self._answer(p == CHALLENGE)
                return
            if kind == FACE_DOWN:
                self._play_face_down(p, seat)
                return
        hand.remove(p)
        self.played_by[p] = loc.PLAYED_BY + seat
        self.history.append((seat, p % NUM_CARD_IDS))
        self.in_hands -= 1
        pile = self.pile
        rank = RANK[p]
        if pile and (rank == RANK[pile[-1]] or rank == JACK):  # R10, R11
            self._capture(p, seat)
        else:  # R12 (and R11: a Jack on an empty pile just lies there)
            pile.append(p)
            self.where[p] = loc.PILE_UP
        self._pass_turn(seat)

    def _pass_turn(self, seat: int) -> None:
        """After ``seat``'s play: the next seat with cards moves (R3, R27), or deal again
        (R18), or the hand ends (R19)."""
        if self.in_hands:
            n = self.num_players
            nxt = seat + 1 if seat + 1 < n else 0
            hands = self.hands
            # R27: a seat whose hand is empty is skipped. (The deal order of R6/R27 fills seats
            # from the first player on, so this is a guard rather than a branch taken in play.)
            while not hands[nxt]:
                nxt = nxt + 1 if nxt + 1 < n else 0
            self.turn = nxt
        elif self.stock_pos < len(self.deck):
            self._deal_round()  # R18
        else:
            self._end_hand()

    def _resolve_action(self, action: Any, seat: int) -> tuple[int, int]:
        """Slow path of :meth:`step`: validate the action. Returns ``(0, physical card)`` for a
        face-up play, ``(FACE_DOWN, physical card)`` for a face-down one and ``(BELIEVE,
        action)`` for an answer (R29)."""
        bluff = self.settings.bluff
        top = self.num_actions - 1
        what = "an int card id" if not bluff else "an int action id"
        if isinstance(action, bool) or not hasattr(action, "__index__") or isinstance(action, str):
            raise TypeError(f"an action must be {what} 0..{top}, got {type(action).__name__} {action!r}")
        action = int(action)
        legal = self.legal_actions()
        if not 0 <= action <= top:
            if not bluff:
                raise ValueError(
                    f"action {action} is out of range: actions are card ids 0..{top}; {_legal_text(legal)}"
                )
            raise ValueError(
                f"action {action} is out of range: actions are 0..{top} (card ids 0..51 face up, "
                f"52 + card id face down, 104 believe, 105 challenge, R29); {_legal_text(legal)}"
            )
        if self.claimant >= 0:  # R29: the answer comes before anything else
            if action in (BELIEVE, CHALLENGE):
                return BELIEVE, action
            raise ValueError(
                f"illegal action {action} ({action_to_text(action)}): seat {seat} must answer seat "
                f"{self.claimant}'s claim of a pişti first, believe (104) or challenge (105) (R29); "
                f"{_legal_text(legal)}"
            )
        if action >= BELIEVE:
            raise ValueError(
                f"illegal action {action} ({action_to_text(action)}): there is no claim to answer (R29); "
                f"{_legal_text(legal)}"
            )
        card = action % FACE_DOWN
        if action >= FACE_DOWN and not self._may_claim(seat):
            raise ValueError(
                f"illegal action {action} ({action_to_text(action)}): a card may be played face down "
                f"only when exactly one card lies on the table"
                + ("" if self.settings.last_card_pisti else ", and never as the hand's last card")
                + f" (R29); {_legal_text(legal)}"
            )
        hand = self.hands[seat]
        for p in (card, card + NUM_CARD_IDS):
            if p in hand:
                return (FACE_DOWN if action >= FACE_DOWN else 0), p
        raise ValueError(
            f"illegal action {action} ({action_to_text(action)}): seat {seat} does not hold that card; "
            f"{_legal_text(legal)}"
        )

    def _play_face_down(self, p: int, seat: int) -> None:
        """R29: ``seat`` plays ``p`` face down on the lone card, claiming a pişti; the seat that
        played the lone card answers next."""
        self.hands[seat].remove(p)
        self.in_hands -= 1
        # R28: everyone saw the stock-bottom card at the deal, so it stays known face down.
        self.where[p] = loc.PILE_DOWN_SHOWN if p == self.stock_bottom else loc.PILE_DOWN + seat
        self.claimant = seat
        self.claim_card = p
        self.counts[Counter.BLUFF_CLAIMS][self.side_of[seat]] += 1
        self.turn = loc.played_by_seat(self.played_by[self.pile[0]])

    def _answer(self, challenge: bool) -> None:
        """R29: the answer to the pending claim, scored; then the seat after the claimant moves."""
        claimant, p, answerer = self.claimant, self.claim_card, self.turn
        lone = self.pile[0]
        side = self.side_of[claimant]
        stake = bluff_stake(lone, self.settings)
        counts = self.counts
        where = self.where
        if not challenge:  # believed: the stake, both cards taken, the face-down one never shown
            self._score_bluff(side, stake)
            counts[Counter.BLUFF_BELIEVED][side] += 1
            counts[_PISTIS][side] += 1
            if where[p] == loc.PILE_DOWN_SHOWN:  # known to all (R28): an ordinary shown capture
                where[p] = loc.CAPT_SHOWN + side
                self._take_claimed(lone, side, public_points=POINTS[lone] + POINTS[p])
                shown = p % NUM_CARD_IDS
            else:
                where[p] = loc.CAPT_DOWN + claimant
                self._take_claimed(lone, side, public_points=POINTS[lone])
                shown = -1
        else:
            # The card is shown: from now on it is an ordinary face-up card played by the claimant.
            self.played_by[p] = loc.PLAYED_BY + claimant
            self.history.append((claimant, p % NUM_CARD_IDS))
            shown = p % NUM_CARD_IDS
            if RANK[p] == RANK[lone]:  # a true claim (a Jack on a lone non-Jack is not, R29)
                self._score_bluff(side, CHALLENGE_FACTOR * stake)
                counts[Counter.BLUFF_CHALLENGED_TRUE][side] += 1
                counts[_PISTIS][side] += 1
                where[p] = loc.CAPT_SHOWN + side
                self._take_claimed(lone, side, public_points=POINTS[lone] + POINTS[p])
            else:  # caught: the challenger's side alone scores; both cards stay, the bluff on top
                self._score_bluff(self.side_of[answerer], CHALLENGE_FACTOR * stake)
                counts[Counter.BLUFF_CHALLENGED_FALSE][side] += 1
                self.pile.append(p)
                where[p] = loc.PILE_UP
        self.claims.append((claimant, answerer, lone % NUM_CARD_IDS, CHALLENGE if challenge else BELIEVE, shown))
        self.claimant = self.claim_card = -1
        self._pass_turn(claimant)

    def _score_bluff(self, side: int, points: int) -> None:
        """Bluff points (R29): public, independent of ``double_pisti``, never a 10♦ bonus."""
        self.counts[Counter.BLUFF_POINTS][side] += points
        self.counts[_PUBLIC_POINTS][side] += points

    def _take_claimed(self, lone: int, side: int, public_points: int) -> None:
        """A believed or proven claim takes both cards: a capture (R19)."""
        counts = self.counts
        self.where[lone] = loc.CAPT_SHOWN + side
        counts[_CAPTURED][side] += 2
        counts[_CARD_POINTS][side] += POINTS[lone] + POINTS[self.claim_card]
        counts[_PUBLIC_POINTS][side] += public_points
        self.last_capturer = side
        self.pile.clear()

    def _capture(self, p: int, seat: int) -> None:
        """Seat takes the whole pile with card ``p`` (R10, R11), scoring a pişti if any (R13–R17)."""
        pile = self.pile
        where = self.where
        counts = self.counts
        side = self.side_of[seat]
        if len(pile) == 1:
            lone = pile[0]
            settings = self.settings
            # R16: the hand's very last card (``p`` has left the hand already).
            last_card = not self.in_hands and self.stock_pos == len(self.deck)
            points = pisti_value(p, lone, 1, settings, last_card)  # R13–R17
            if points:
                counts[_DOUBLE_PISTIS if is_double_pisti(p, lone, settings) else _PISTIS][side] += 1
                counts[_PISTI_POINTS][side] += points
                counts[_PUBLIC_POINTS][side] += points
        shown = loc.CAPT_SHOWN + side
        pile_hidden = loc.PILE_HIDDEN
        hidden_points = public_points = 0
        for c in pile:
            if where[c] == pile_hidden:  # R8: known from now on to the capturing side only
                where[c] = loc.CAPT_HIDDEN + side
                hidden_points += POINTS[c]
            else:
                where[c] = shown
                public_points += POINTS[c]
        where[p] = shown
        public_points += POINTS[p]
        counts[_CAPTURED][side] += len(pile) + 1
        counts[_CARD_POINTS][side] += public_points + hidden_points
        counts[_PUBLIC_POINTS][side] += public_points
        self.last_capturer = side
        self.pile_hidden = 0
        pile.clear()

    # ------------------------------------------------------------------ deal and hand end
    def _start_hand(self, dealer: int, deck: list[int] | None) -> None:
        n, sides = self.num_players, self.num_sides
        settings = self.settings
        while deck is None:  # R7: a void deal is dealt again from a fresh shuffle
            deck = list(range(settings.num_cards))
            self.rng.shuffle(deck)
            if settings.show_stock_bottom:
                _cut_stock_bottom(deck)
            if all(IS_JACK[c] for c in deck[:TABLE_SIZE]):
                deck = None
        self.dealer = dealer
        self.deck = deck
        self.where = bytearray([loc.STOCK]) * settings.num_cards
        self.played_by = bytearray([loc.NOBODY]) * settings.num_cards
        self.hands = [[] for _ in range(n)]
        # A fresh counter table (bluff rows with the variant, R29); the match totals carry over
        # from the finished hands (R24).
        match_scores = self.counts[_MATCH_SCORES] if self.hands_completed else [0] * sides
        self.counts = [[0] * sides for _ in range(num_counters(settings.bluff))]
        self.counts[_MATCH_SCORES] = match_scores
        # R29, the bluff variant: the pending claim (claimant seat and its face-down physical
        # card, -1 when none) and the public record of this hand's claims: (claimant, answerer,
        # lone card id, BELIEVE or CHALLENGE, the face-down card id if everyone knows it —
        # challenged, or the R28 card — else -1).
        self.claimant = self.claim_card = -1
        self.claims: list[tuple[int, int, int, int, int]] = []
        self.last_capturer = -1
        self.history = []
        self.stock_bottom = deck[-1] if settings.show_stock_bottom else None  # R28
        if self.stock_bottom is not None:
            self.where[self.stock_bottom] = loc.STOCK_SHOWN

        # R6.1: items 0..3 to the table, item 3 on top face up, the rest face down.
        pile = list(deck[:TABLE_SIZE])
        for c in pile:
            self.where[c] = loc.PILE_HIDDEN
        # R7: while the top card is a Jack, move it to the bottom (public) and turn up the next.
        while IS_JACK[pile[-1]]:
            jack = pile.pop()
            pile.insert(0, jack)
            self.where[jack] = loc.PILE_JACK
        self.where[pile[-1]] = loc.PILE_UP
        self.pile = pile
        self.pile_hidden = sum(1 for c in pile if self.where[c] == loc.PILE_HIDDEN)  # public count (R8)
        self.stock_pos = TABLE_SIZE
        self.in_hands = 0
        self._deal_round()

    def _deal_round(self) -> None:
        """R6.2/R18/R27: four cards each, one at a time, from the first player round; stop when
        the stock runs out."""
        n = self.num_players
        deck, pos, end = self.deck, self.stock_pos, len(self.deck)
        hands, where = self.hands, self.where
        first = (self.dealer + 1) % n
        dealt = 0
        for _ in range(HAND_SIZE):
            for i in range(n):
                if pos == end:
                    break
                seat = (first + i) % n
                c = deck[pos]
                pos += 1
                hands[seat].append(c)
                where[c] = (loc.HAND_SHOWN if where[c] == loc.STOCK_SHOWN else loc.HAND) + seat
                dealt += 1
        self.stock_pos = pos
        self.in_hands = dealt
        self.turn = first  # the first player always receives a card

    def _end_hand(self) -> None:
        """R19 sweep, R20–R23 scoring, R24–R26 match bookkeeping, R5 next dealer."""
        pile = self.pile
        if pile:
            # R19: the last capturer takes what is left; not a capture and never a pişti.
            # (Safety net from seed 000: the dealer's side if nobody captured at all.)
            side = self.last_capturer if self.last_capturer >= 0 else self.side_of[self.dealer]
            where = self.where
            counts = self.counts
            for c in pile:
                hidden = where[c] == loc.PILE_HIDDEN
                where[c] = (loc.CAPT_HIDDEN if hidden else loc.CAPT_SHOWN) + side
                counts[_CARD_POINTS][side] += POINTS[c]
            counts[_CAPTURED][side] += len(pile)
            self.pile_hidden = 0
            pile.clear()
        result = self.hand_scores()
        scores, public = self.counts[_MATCH_SCORES], self.counts[_PUBLIC_POINTS]
        for side, r in enumerate(result):
            scores[side] += r["total"]
            public[side] = r["total"]  # everything is public at the end (R30)
        self.hand_results.append(result)
        self.hands_completed += 1

        best = max(scores)
        leaders = [s for s in range(self.num_sides) if scores[s] == best]
        target = self.settings.target
        if target is None:  # single hand: equal highest totals are a draw (R25)
            self.done = True
            self.winner = leaders[0] if len(leaders) == 1 else None
            return
        if best >= target and len(leaders) == 1:  # R25
            runner_up = max(s for i, s in enumerate(scores) if i != leaders[0])
            if best - runner_up >= self.settings.win_margin:  # R26
                self.done = True
                self.winner = leaders[0]
                return
        self._start_hand((self.dealer + 1) % self.num_players, None)  # R5

    # ------------------------------------------------------------------ copies
    def clone(self) -> "Game":
        """An independent copy (the random generator included): every attribute is copied
        deeply by :func:`_copy_state`, so the copy shares no mutable object with this game,
        whatever attributes the game holds."""
        g = Game.__new__(Game)
        g.__dict__.update({name: _copy_state(value) for name, value in self.__dict__.items()})
        return g

    def unknown_cards(self, seat: int) -> list[int]:
        """Physical cards whose identity ``seat`` cannot know (R31), ascending; see
        :func:`pisti_env.locations.unknown_codes`."""
        unknown = loc.unknown_codes(seat, self.side_of[seat])
        return [p for p, code in enumerate(self.where) if code in unknown]

    def determinize(
        self, seat: int, rng: random.Random | int | None = None, *, claim: bool | None = None
    ) -> "Game":
        """A copy in which everything ``seat`` cannot know (R31) is dealt again uniformly.

        The unknown cards (:meth:`unknown_cards`, a set the seat can work out itself) are
        shuffled and dealt into the unknown places in an order that is itself public: the
        face-down card of a pending claim (R29), other hands by seat and position, hidden table
        cards, the stock in dealing order, the hidden captures of each other side, then the
        believed face-down cards of each other seat (R29). Hand sizes, the stock size and
        everything the seat has seen are kept, and the result depends only on ``rng`` and on
        what the seat knows, never on where the hidden cards really are. ``deck[:stock_pos]``
        (the cards dealt already) is listed in ascending order, since their real deal order is
        not knowable. The copy's generator is reseeded from ``rng`` so it does not reveal the
        real shuffles of later hands either.

        Args:
            seat: the seat whose knowledge is kept.
            rng: a ``random.Random`` (advanced in place), an int seed, or ``None``.
            claim: with a pending claim whose face-down card ``seat`` cannot see (R29),
                ``True``/``False`` deals only worlds in which that card is / is not of the lone
                card's rank (uniformly among them); ``None`` (default): no condition.

        Raises ``ValueError`` for a bad seat, for ``claim`` without such a claim, or when no
        world meets ``claim``.
        """
        if isinstance(seat, bool) or not hasattr(seat, "__index__") or not 0 <= int(seat) < self.num_players:
            raise ValueError(f"seat must be an int 0..{self.num_players - 1}, got {seat!r}")
        seat = int(seat)
        if not isinstance(rng, random.Random):
            rng = random.Random(rng)
        unknown = loc.unknown_codes(seat, self.side_of[seat])
        where = self.where
        hidden_claim = self.claimant >= 0 and where[self.claim_card] in unknown
        if claim is not None and not hidden_claim:
            raise ValueError(
                f"claim={claim!r} needs a pending claim whose face-down card seat {seat} cannot see (R29); "
                "pass claim=None"
            )
        cards = self.unknown_cards(seat)  # ascending: no trace of where they really are
        rng.shuffle(cards)
        if claim is not None:
            self._condition_claim(cards, claim, rng)
        deal = iter(cards)
        g = self.clone()
        if hidden_claim:
            g.claim_card = card = next(deal)
            g.where[card] = loc.PILE_DOWN + self.claimant
        for s, hand in enumerate(g.hands):
            if s != seat:
                for i, p in enumerate(hand):
                    if where[p] in unknown:
                        hand[i] = card = next(deal)
                        g.where[card] = loc.HAND + s
        for i, p in enumerate(g.pile):
            if where[p] == loc.PILE_HIDDEN:
                g.pile[i] = card = next(deal)
                g.where[card] = loc.PILE_HIDDEN
        for i in range(g.stock_pos, len(g.deck)):
            if where[g.deck[i]] == loc.STOCK:
                g.deck[i] = card = next(deal)
                g.where[card] = loc.STOCK
        # The order in which the dealt cards came off the deck is not knowable either: list them
        # in ascending order, so the deck stays a permutation of the cards.
        stock = set(g.deck[g.stock_pos :])
        g.deck[: g.stock_pos] = [p for p in range(len(g.deck)) if p not in stock]
        captured_codes = [loc.CAPT_HIDDEN + side for side in range(self.num_sides)]
        captured_codes += [loc.CAPT_DOWN + s for s in range(self.num_players)]
        for code in captured_codes:
            if code in unknown:
                for _ in range(where.count(code)):
                    g.where[next(deal)] = code
        # Hidden captured cards may now score differently for the other sides (R20).
        card_points = [0] * self.num_sides
        for p, code in enumerate(g.where):
            side = loc.captured_by(code, self.side_of)
            if side >= 0:
                card_points[side] += POINTS[p]
        g.counts[_CARD_POINTS] = card_points
        g.rng = random.Random(rng.getrandbits(64))
        return g

    def _condition_claim(self, cards: list[int], claim: bool, rng: random.Random) -> None:
        """Make ``cards[0]`` (the pending claim's slot) a card of the lone card's rank
        (``claim=True``) or not (``False``): if it is not, swap it with one drawn uniformly from
        those that are, which leaves the deal uniform among the worlds meeting the condition."""
        rank = RANK[self.pile[0]]
        if (RANK[cards[0]] == rank) == claim:
            return
        fits = [i for i, p in enumerate(cards) if (RANK[p] == rank) == claim]
        if not fits:
            raise ValueError(
                f"no world has a {'true' if claim else 'false'} claim: "
                f"every unseen card is {'not ' if claim else ''}of the lone card's rank (R29)"
            )
        i = fits[rng.randrange(len(fits))]
        cards[0], cards[i] = cards[i], cards[0]

    # ------------------------------------------------------------------ deck helpers
    def _validated_deck(self, deck: Sequence[int | str]) -> list[int]:
        """Card ids of a deck given by the caller, checked (R6, R7, R27)."""
        if isinstance(deck, (str, bytes)) or not hasattr(deck, "__len__"):
            raise TypeError(f"deck must be a list of card ids or text codes, got {type(deck).__name__}")
        decks = self.settings.decks
        expected = NUM_CARD_IDS * decks
        if len(deck) != expected:
            raise ValueError(f"deck must hold {expected} cards ({decks} deck(s) of 52), got {len(deck)}")
        ids = [parse_card(c) for c in deck]
        counts = [0] * NUM_CARD_IDS
        for c in ids:
            counts[c] += 1
        repeated = [card_to_text(c) for c in range(NUM_CARD_IDS) if counts[c] > decks]
        missing = [card_to_text(c) for c in range(NUM_CARD_IDS) if counts[c] < decks]
        if repeated or missing:
            raise ValueError(
                f"deck must hold every card exactly {decks} time(s): repeated {repeated}, missing {missing}"
            )
        if all(IS_JACK[c] for c in ids[:TABLE_SIZE]):
            raise ValueError("deck deals four Jacks to the table: a void deal (R7); give another deck")
        return ids

    def _physical_deck(self, ids: list[int]) -> list[int]:
        """Physical indices for a list of ids: the second copy of an id becomes ``id + 52``."""
        seen = [False] * NUM_CARD_IDS
        deck = []
        for c in ids:
            deck.append(c + NUM_CARD_IDS if seen[c] else c)
            seen[c] = True
        if self.settings.show_stock_bottom:
            _cut_stock_bottom(deck)
        return deck


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
    """A copy of one attribute of a :class:`Game` that shares no mutable object with ``value``.

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
    raise TypeError(f"Game.clone cannot copy a {cls.__name__}: teach pisti_env.game._copy_state about it")


def _cut_stock_bottom(deck: list[int]) -> None:
    """R28: the shown bottom card is never a Jack; move the last non-Jack to the end."""
    if IS_JACK[deck[-1]]:
        i = max(i for i, c in enumerate(deck) if not IS_JACK[c])
        deck.append(deck.pop(i))


def new_game(
    *, seed: int | None = None, deck: Sequence[int | str] | None = None, dealer: int | None = None, **settings: Any
) -> Game:
    """Convenience: ``Game(make_settings(**settings), seed=..., deck=..., dealer=...)``."""
    return Game(make_settings(**settings), seed=seed, deck=deck, dealer=dealer)
