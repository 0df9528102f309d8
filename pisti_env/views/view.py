"""What one seat may know, as a read-only object: the input of every player (R30–R31).

A [`SeatView`][pisti_env.SeatView] wraps a [`Game`][pisti_env.game.Game] and a seat and answers only
questions that seat could answer itself at the table (R30): its own hand, the face-up pile,
every card shown this hand and who played it, the public counters, hand and stock sizes, the
shown stock-bottom card (R28), the match scores and the settings; with the bluff variant (R29)
also the pending claim, the record of this hand's claims and the bluff points and counts
(`ClaimQueries`). It never hands out other hands, the stock order, table cards the seat
has not seen or face-down cards other seats played and nobody has seen (R31). Its card counting
is `counting` applied to its game and seat.

Building a view is cheap (two attribute stores); everything is computed on first use and
cached, so a player pays only for what it reads. A view describes the game at the moment it
was built: build a new one for every decision. It never hands out its game; only pimc's
rollouts, in worlds the search dealt itself, read theirs whole (`pisti_env.agents.pimc.WorldView`).

The harness builds views straight from a ``Game``; inside the PettingZoo environment use
`view_for_agent`. Players that want the environment's observation vector call
[`SeatView.observation`][pisti_env.SeatView.observation].
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import Any

import numpy as np

from ..rules import locations as loc
from ..rules.actions import FACE_DOWN
from ..rules.cards import NUM_CARD_IDS
from ..rules.counters import BLUFF_COUNTERS, BLUFF_RESULT_ROWS, Counter
from ..game.engine import Game
from .observation import ObservationEncoder
from ..rules.settings import Settings
from . import counting

_ENCODERS: dict[Settings, ObservationEncoder] = {}


def encoder_for(settings: Settings) -> ObservationEncoder:
    """The (cached) observation encoder of the environment for ``settings``."""
    enc = _ENCODERS.get(settings)
    if enc is None:
        enc = _ENCODERS[settings] = ObservationEncoder(settings)
    return enc


def _side_counter(row: Counter, doc: str) -> property:
    """A read-only [`SeatView`][pisti_env.SeatView] attribute: the game's per-side counter ``row``, every row
    being public (R30), as a fresh ``list[int]`` indexed by side (zeros for a bluff row of a game
    without the variant, R29)."""
    index = int(row)

    def read(view: SeatView) -> list[int]:
        return list(view._game.counter(index))

    return property(read, doc=doc)


class ClaimQueries:
    """The bluff variant's part of [`SeatView`][pisti_env.SeatView] (R29): the pending claim, the face-down
    card when the seat may know it, the record of this hand's claims and the bluff counters.
    Without the variant there never is a claim and the counters read zeros."""

    _game: Game
    seat: int

    @property
    def pending_claim(self) -> tuple[int, int] | None:
        """``(claimant seat, lone card id)`` of the claim waiting for an answer, or ``None``;
        public (R30). The answering seat is the seat to move."""
        return self._game.pending_claim

    @property
    def claim_card(self) -> int | None:
        """The face-down card id of the pending claim when this seat may know it: its own
        claim, or the shown stock-bottom card played face down (R28); else ``None`` (R31)."""
        game = self._game
        if game.claimant < 0:
            return None
        code = game.where[game.claim_card]
        if code == loc.PILE_DOWN + self.seat or code == loc.PILE_DOWN_SHOWN:
            return game.claim_card % NUM_CARD_IDS
        return None

    @property
    def lone_card_seat(self) -> int | None:
        """The seat that played the lone table card (the one that would answer a claim), or
        ``None`` when the table does not hold exactly one played card."""
        game = self._game
        if len(game.pile) != 1:
            return None
        seat = loc.played_by_seat(game.played_by[game.pile[0]])
        return None if seat < 0 else seat

    @property
    def claims(self) -> list[tuple[int, int, int, int, int]]:
        """This hand's answered claims, in order: ``(claimant, answerer, lone card id, 104 or
        105, face-down card id or -1)``; the card id only where everyone knows it (challenged,
        or the shown stock-bottom card, R28)."""
        return list(self._game.claims)

    @property
    def bluff_counts(self) -> dict[str, list[int]]:
        """Per-side claim counts this hand (public): ``bluff_claims``, ``bluff_believed``,
        ``bluff_challenged_true``, ``bluff_challenged_false``."""
        return {name: list(self._game.counter(BLUFF_RESULT_ROWS[name])) for name in BLUFF_COUNTERS}


class SeatView(ClaimQueries):
    """Read-only view of a game limited to what ``seat`` may know (R30–R31): what a player's
    `act(view)` receives.

    What it answers, by group (each a read-only attribute unless called with `()`):

    * the seat and the table: `seat`, `side`, `side_of`, `num_players`, `num_sides`, `dealer`,
      `current_seat`, `is_my_turn`, `done`, `settings`;
    * its own cards and choices: `hand` (card ids), `legal_actions` (action ids; a card id is
      `suit * 13 + rank`, R2), `may_claim`;
    * the pile: `pile_top` (a card id or `None`), `pile_size`, `pile_hidden`, `pile_known`,
      `pile_known_points`;
    * what was shown: `history` (`(seat, card id)` in order), `played_ranks`, `stock_bottom`,
      `stock_bottom_holder`;
    * card counting: `unseen`, `unseen_rank_counts`, `unseen_points`, `public_rank_counts`,
      `unseen_count_of(seat)`, `unseen_known_by(seat)`;
    * the score: `captured_count`, `public_points`, `pisti_points`, `pistis`, `match_scores`,
      `last_capturer`, `hand_sizes`, `stock_size`, `cards_left_in_hand`, `hands_completed`;
    * the bluff variant (R29): `pending_claim`, `claim_card`, `lone_card_seat`, `claims`,
      `bluff_counts`, `bluff_points`;
    * for search and networks: `determinize(rng)`, a whole game consistent with what the seat
      knows, and `observation()`, the environment's observation of the seat.

    Attributes, not methods, because a view is one moment of one game: build a new one per
    decision, and each answer is computed on first use and cached. A
    [`Game`][pisti_env.game.Game] changes as it steps, so what it computes is a method to call
    again after each step (`game.legal_actions()` where a view has `view.legal_actions`); the
    view's methods are the answers that take an argument, draw at random or build a new array.

    Args:
        game: the engine state. The view keeps a reference and reads it lazily, so do not step
            the game while a player is still using the view.
        seat: the seat whose knowledge the view holds, ``0 .. num_players - 1``.

    Raises ``TypeError`` if ``game`` is not a [`Game`][pisti_env.game.Game] or ``seat`` is not
    an int, ``ValueError`` if ``seat`` is out of range.
    """

    def __init__(self, game: Game, seat: int) -> None:
        if not isinstance(game, Game):
            raise TypeError(f"game must be a pisti_env.Game, got {type(game).__name__}")
        if seat.__class__ is not int:
            if isinstance(seat, bool) or not hasattr(seat, "__index__"):
                raise TypeError(f"seat must be an int, got {type(seat).__name__} {seat!r}")
            seat = int(seat)
        if not 0 <= seat < game.num_players:
            raise ValueError(f"seat must be 0..{game.num_players - 1}, got {seat}")
        self._game = game
        self.seat = seat

    # ------------------------------------------------------------------ table and settings
    @property
    def settings(self) -> Settings:
        """The game's settings (public, R30): players, partnerships, the variants."""
        return self._game.settings

    @property
    def num_players(self) -> int:
        """Seats at the table."""
        return self._game.num_players

    @property
    def num_sides(self) -> int:
        """Sides that score: the seats, or two with partnerships (R4)."""
        return self._game.num_sides

    @property
    def side(self) -> int:
        """This seat's side (R4)."""
        return self._game.side_of[self.seat]

    @property
    def side_of(self) -> tuple[int, ...]:
        """The side of every seat (R4)."""
        return self._game.side_of

    @property
    def dealer(self) -> int:
        """The dealer's seat this hand (R5)."""
        return self._game.dealer

    @property
    def current_seat(self) -> int:
        """The seat to move."""
        return self._game.turn

    @property
    def is_my_turn(self) -> bool:
        """Whether this seat is to move (and the game is not over)."""
        return not self._game.done and self._game.turn == self.seat

    @property
    def done(self) -> bool:
        """Whether the game (match or single hand) is over."""
        return self._game.done

    # ------------------------------------------------------------------ own cards and actions
    @cached_property
    def hand(self) -> list[int]:
        """Card ids in this seat's hand, sorted (a card held twice, with two decks, twice)."""
        return self._game.hand_card_ids(self.seat)

    @cached_property
    def legal_actions(self) -> list[int]:
        """Sorted action ids this seat may take now: card ids (R9); with the bluff variant also
        ``52 + card id`` (face down) on a lone card, or only 104/105 (believe/challenge) when
        answering a claim (R29). Empty when it is not its turn."""
        game = self._game
        if game.done or game.turn != self.seat:
            return []
        return game.legal_actions()

    @property
    def may_claim(self) -> bool:
        """Whether this seat may now play a card face down claiming a pişti (R29)."""
        legal = self.legal_actions
        return bool(legal) and FACE_DOWN <= legal[-1] < FACE_DOWN + NUM_CARD_IDS

    # ------------------------------------------------------------------ the table pile
    @property
    def pile_size(self) -> int:
        """Cards in the table pile (hidden ones included: their number is public, R8)."""
        return len(self._game.pile)

    @property
    def pile_top(self) -> int | None:
        """Card id of the face-up top card, or ``None`` when the pile is empty."""
        return self._game.pile_top

    @property
    def pile_hidden(self) -> int:
        """Table cards in the pile that were never turned up (R8)."""
        return self._game.pile_hidden

    @cached_property
    def pile_known(self) -> list[int]:
        """Card ids in the pile everyone has seen (face up, R7 Jacks), bottom first."""
        return counting.pile_known(self._game)

    @cached_property
    def pile_known_points(self) -> int:
        """Points (R20) of [`pile_known`][pisti_env.SeatView.pile_known]."""
        return counting.points(self.pile_known)

    # ------------------------------------------------------------------ card counting (counting.py)
    @cached_property
    def unseen(self) -> list[int]:
        """Card ids this seat cannot identify (R31), ascending: `counting.unseen`."""
        return counting.unseen(self._game, self.seat)

    @cached_property
    def unseen_rank_counts(self) -> list[int]:
        """For each rank (0 = A … 12 = K), how many cards of it are [`unseen`][pisti_env.SeatView.unseen]."""
        return counting.rank_counts(self.unseen)

    @cached_property
    def unseen_points(self) -> int:
        """Total points (R20) of the [`unseen`][pisti_env.SeatView.unseen] cards."""
        return counting.points(self.unseen)

    def unseen_count_of(self, seat: int) -> int:
        """How many cards ``seat`` cannot identify (`counting.unseen_count`, public)."""
        return counting.unseen_count(self._game, seat)

    def unseen_known_by(self, seat: int) -> int:
        """How many of the [`unseen`][pisti_env.SeatView.unseen] cards ``seat`` can identify (public)."""
        return counting.unseen_known_by(self._game, self.seat, seat)

    @cached_property
    def public_rank_counts(self) -> list[int]:
        """For each rank, how many cards of it every seat can place: `counting.public_rank_counts`."""
        return counting.public_rank_counts(self._game)

    @cached_property
    def played_ranks(self) -> list[int]:
        """For each rank, how many cards of it are in [`history`][pisti_env.SeatView.history]."""
        return counting.played_ranks(self._game)

    @property
    def history(self) -> list[tuple[int, int]]:
        """Every card shown this hand, in order, as ``(seat, card id)``: plays face up, and
        face-down cards once challenged (R29); a believed face-down card never appears."""
        return list(self._game.history)

    @property
    def stock_bottom(self) -> int | None:
        """The shown stock-bottom card id (R28), or ``None`` when the setting is off."""
        sb = self._game.stock_bottom
        return None if sb is None else sb % NUM_CARD_IDS

    @cached_property
    def stock_bottom_holder(self) -> int | None:
        """The seat now holding the shown stock-bottom card (R28), or ``None``."""
        return counting.stock_bottom_holder(self._game)

    # ------------------------------------------------------------------ public counters (R30)
    captured_count = _side_counter(Counter.CAPTURED, "Cards captured this hand per side (R21).")
    public_points = _side_counter(Counter.PUBLIC_POINTS, "Points this hand every seat can count per side (R30).")
    pisti_points = _side_counter(Counter.PISTI_POINTS, "Pişti points this hand per side (R13–R17).")
    pistis = _side_counter(Counter.PISTIS, "Piştis this hand per side, double ones included (R13–R17; a believed or "
                                           "proven claim counts, R29): every seat sees them made.")
    match_scores = _side_counter(Counter.MATCH_SCORES, "Match totals of the finished hands per side (R24).")
    bluff_points = _side_counter(Counter.BLUFF_POINTS, "Bluff points received this hand per side (R29).")

    @property
    def hand_sizes(self) -> list[int]:
        """Cards in hand per seat."""
        return [len(h) for h in self._game.hands]

    @property
    def stock_size(self) -> int:
        """Cards left in the stock (R6, R18)."""
        return self._game.stock_size

    @property
    def cards_left_in_hand(self) -> int:
        """Cards still to be played this hand by everyone: in hands plus the stock."""
        return self._game.in_hands + self._game.stock_size

    @property
    def hands_completed(self) -> int:
        """Hands finished so far in a match (R24)."""
        return self._game.hands_completed

    @property
    def last_capturer(self) -> int | None:
        """The side that captured last this hand, or ``None``."""
        last = self._game.last_capturer
        return None if last < 0 else last

    # ------------------------------------------------------------------ search and encoding
    def determinize(self, rng: random.Random | int | None = None, *, claim: bool | None = None) -> Game:
        """A full game consistent with what this seat knows, everything else dealt at random
        ([`Game.determinize`][pisti_env.game.Game.determinize]: the sample depends only on ``rng`` and on what the seat knows,
        so a search player seeded alike plays alike on the real game and on any determinization).

        Args:
            rng: a ``random.Random`` (advanced in place), an int seed, or ``None`` (fresh entropy).
            claim: ``True``/``False``: only worlds where the pending claim's face-down card,
                unseen by this seat, is / is not of the lone card's rank (R29).
        """
        return self._game.determinize(self.seat, rng, claim=claim)

    def observation(self) -> dict[str, np.ndarray]:
        """The environment's observation of this seat: ``{"observation": float32 vector,
        "action_mask": int8[52]}`` (106 entries with the bluff variant, R29), exactly as
        ``pisti_v0`` would give it (R30)."""
        game = self._game
        mask = np.zeros(game.num_actions, dtype=np.int8)
        legal = self.legal_actions
        if legal:
            mask[legal] = 1
        return {"observation": encoder_for(game.settings).encode(game, self.seat), "action_mask": mask}

    def __repr__(self) -> str:
        return f"SeatView(seat={self.seat}, hand={self.hand}, pile_top={self.pile_top}, pile_size={self.pile_size})"


def view_for_agent(env: Any, agent: str) -> SeatView:
    """The [`SeatView`][pisti_env.SeatView] of ``agent`` (e.g. ``"player_0"``) in a ``pisti_v0`` environment,
    wrapped or not, so the scripted players can play inside the AEC loop.

    Raises ``ValueError`` for an unknown agent name or an environment that was not reset.
    """
    raw = env.unwrapped
    mapping = getattr(raw, "agent_name_mapping", None)
    if mapping is None or not hasattr(raw, "game"):
        raise TypeError(f"env must be a pisti_v0 environment, got {type(raw).__name__}")
    if agent not in mapping:
        raise ValueError(f"unknown agent {agent!r}; agents are {list(mapping)}")
    if raw.game is None:
        raise ValueError("the environment has no game yet: call env.reset() first")
    return SeatView(raw.game, mapping[agent])
