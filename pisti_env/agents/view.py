"""What one seat may know, as a read-only object: the input of every player (R30–R31).

A :class:`SeatView` wraps a :class:`~pisti_env.game.Game` and a seat and answers only
questions that seat could answer itself at the table (R30): its own hand, the face-up pile,
every card shown this hand and who played it, the public counters, hand and stock sizes, the
shown stock-bottom card (R28), the match scores and the settings; with the bluff variant (R29)
also the pending claim, the record of this hand's claims and the bluff points and counts. It
never hands out other hands, the stock order, table cards the seat has not seen or face-down
cards other seats played and nobody has seen (R31).

Building a view is cheap (two attribute stores); everything is computed on first use and
cached, so a player pays only for what it reads. A view describes the game at the moment it
was built: build a new one for every decision.

The harness builds views straight from a ``Game``; inside the PettingZoo environment use
:func:`view_for_agent`. Players that want the environment's observation vector call
:meth:`SeatView.observation`.
"""

from __future__ import annotations

import random
from functools import cached_property
from typing import Any

import numpy as np

from .. import locations as loc
from ..actions import FACE_DOWN
from ..cards import NUM_CARD_IDS, NUM_RANKS, RANK
from ..counters import BLUFF_COUNTERS, BLUFF_RESULT_ROWS
from ..game import Game
from ..observation import ObservationEncoder
from ..rules import Settings
from ..scoring import POINTS

_ENCODERS: dict[Settings, ObservationEncoder] = {}


def encoder_for(settings: Settings) -> ObservationEncoder:
    """The (cached) observation encoder of the environment for ``settings``."""
    enc = _ENCODERS.get(settings)
    if enc is None:
        enc = _ENCODERS[settings] = ObservationEncoder(settings)
    return enc


class SeatView:
    """Read-only view of a game limited to what ``seat`` may know (R30–R31).

    Args:
        game: the engine state. The view keeps a reference and reads it lazily, so do not step
            the game while a player is still using the view.
        seat: the seat whose knowledge the view holds, ``0 .. num_players - 1``.

    Raises ``TypeError`` if ``game`` is not a :class:`~pisti_env.game.Game` or ``seat`` is not
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
        """The game settings (public)."""
        return self._game.settings

    @property
    def num_players(self) -> int:
        return self._game.num_players

    @property
    def num_sides(self) -> int:
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
    def current_seat(self) -> int:
        """The seat to move."""
        return self._game.turn

    @property
    def is_my_turn(self) -> bool:
        return not self._game.done and self._game.turn == self.seat

    @property
    def done(self) -> bool:
        """Whether the game (match or single hand) is over."""
        return self._game.done

    @property
    def dealer(self) -> int:
        return self._game.dealer

    # ------------------------------------------------------------------ own cards
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

    # ------------------------------------------------------------------ claims (R29)
    @property
    def pending_claim(self) -> tuple[int, int] | None:
        """``(claimant seat, lone card id)`` of the claim waiting for an answer, or ``None``;
        public (R30). The answering seat is :attr:`current_seat`."""
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
        """The seat that played the lone table card (the one that would answer a claim, R29),
        or ``None`` when the table does not hold exactly one played card."""
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
    def bluff_points(self) -> list[int]:
        """Bluff points received this hand per side (R29, public)."""
        return list(self._game.bluff_points)

    @property
    def bluff_counts(self) -> dict[str, list[int]]:
        """Per-side claim counts this hand (R29, public): ``bluff_claims``,
        ``bluff_believed``, ``bluff_challenged_true``, ``bluff_challenged_false``."""
        return {name: list(self._game.counter(BLUFF_RESULT_ROWS[name])) for name in BLUFF_COUNTERS}

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
        """Card ids in the pile that everyone has seen: face-up cards and R7 Jacks, bottom first."""
        where = self._game.where
        return [p % NUM_CARD_IDS for p in self._game.pile if where[p] == loc.PILE_UP or where[p] == loc.PILE_JACK]

    @cached_property
    def pile_known_points(self) -> int:
        """Points (R20) of the pile cards everyone has seen."""
        return sum(POINTS[c] for c in self.pile_known)

    # ------------------------------------------------------------------ card counting
    @cached_property
    def unseen(self) -> list[int]:
        """Card ids this seat cannot identify (R31): other hands, the stock, hidden table cards
        and hidden cards other sides captured. Ascending; an id twice if both copies are unseen."""
        game = self._game
        codes = loc.unknown_codes(self.seat, game.side_of[self.seat])
        return sorted(p % NUM_CARD_IDS for p, code in enumerate(game.where) if code in codes)

    def unseen_count_of(self, seat: int) -> int:
        """How many cards ``seat`` cannot identify (R31). A public number: it follows from the
        hand sizes, the stock size, the never-turned table cards and who captured them (R8)
        and the face-down cards not shown (R29)."""
        game = self._game
        codes = loc.unknown_codes(seat, game.side_of[seat])
        return sum(1 for code in game.where if code in codes)

    def unseen_known_by(self, seat: int) -> int:
        """How many of the cards this seat cannot identify ``seat`` can: its hand, its side's
        never-turned table captures (R8), its face-down cards (R29). A public number too."""
        game = self._game
        mine = loc.unknown_codes(self.seat, game.side_of[self.seat])
        theirs = loc.unknown_codes(seat, game.side_of[seat])
        return sum(1 for code in game.where if code in mine and code not in theirs)

    @cached_property
    def unseen_rank_counts(self) -> list[int]:
        """For each rank (0 = A … 12 = K), how many cards of it are unseen."""
        counts = [0] * NUM_RANKS
        for c in self.unseen:
            counts[RANK[c]] += 1
        return counts

    @cached_property
    def unseen_points(self) -> int:
        """Total points (R20) of the unseen cards."""
        return sum(POINTS[c] for c in self.unseen)

    @cached_property
    def public_rank_counts(self) -> list[int]:
        """For each rank, how many of its cards every seat has seen and can place: face up on
        the table or captured face up, Jacks of R7, the shown stock-bottom card (R28). What
        another seat surely knows (it may know more: its own hand and hidden captures)."""
        counts = [0] * NUM_RANKS
        public = loc.PUBLIC_CODES
        for p, code in enumerate(self._game.where):
            if code in public:
                counts[RANK[p]] += 1
        return counts

    @property
    def history(self) -> list[tuple[int, int]]:
        """Every card shown this hand, in order, as ``(seat, card id)``: plays face up, and
        face-down cards once challenged (R29); a believed face-down card never appears."""
        return list(self._game.history)

    @cached_property
    def played_ranks(self) -> list[int]:
        """For each rank, how many cards of it were played face up this hand."""
        counts = [0] * NUM_RANKS
        for _, c in self._game.history:
            counts[RANK[c]] += 1
        return counts

    @property
    def stock_bottom(self) -> int | None:
        """The shown stock-bottom card id (R28), or ``None`` when the setting is off."""
        sb = self._game.stock_bottom
        return None if sb is None else sb % NUM_CARD_IDS

    @cached_property
    def stock_bottom_holder(self) -> int | None:
        """The seat holding the shown stock-bottom card (R28) now, or ``None`` (in the stock,
        already played, or the setting is off)."""
        sb = self._game.stock_bottom
        if sb is None:
            return None
        seat = loc.in_hand_of(self._game.where[sb])
        return None if seat < 0 else seat

    # ------------------------------------------------------------------ public counters
    @property
    def hand_sizes(self) -> list[int]:
        """Cards in hand per seat."""
        return [len(h) for h in self._game.hands]

    @property
    def stock_size(self) -> int:
        return self._game.stock_size

    @property
    def captured_count(self) -> list[int]:
        """Cards captured this hand per side."""
        return list(self._game.captured_count)

    @property
    def pisti_points(self) -> list[int]:
        """Pişti points this hand per side (R13–R17)."""
        return list(self._game.pisti_points)

    @property
    def public_points(self) -> list[int]:
        """Points this hand every seat can count per side (R30; all points once the hand is over)."""
        return list(self._game.public_points)

    @property
    def match_scores(self) -> list[int]:
        """Match totals of the finished hands per side (R24)."""
        return list(self._game.match_scores)

    @property
    def hands_completed(self) -> int:
        return self._game.hands_completed

    @property
    def last_capturer(self) -> int | None:
        """The side that captured last this hand, or ``None``."""
        last = self._game.last_capturer
        return None if last < 0 else last

    @property
    def cards_left_in_hand(self) -> int:
        """Cards still to be played this hand by everyone: in hands plus the stock."""
        game = self._game
        return game.in_hands + game.stock_size

    # ------------------------------------------------------------------ search and encoding
    def determinize(self, rng: random.Random | int | None = None, *, claim: bool | None = None) -> Game:
        """A full game consistent with what this seat knows, everything else dealt at random
        (:meth:`Game.determinize`: the sample depends only on ``rng`` and on what the seat
        knows, so a search player seeded alike plays alike on the real game and on any
        determinization of it).

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
    """The :class:`SeatView` of ``agent`` (e.g. ``"player_0"``) in a ``pisti_v0`` environment,
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
