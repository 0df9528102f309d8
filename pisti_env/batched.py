"""A batched Pişti engine in PyTorch: B games held as tensors, stepped together on CPU or CUDA.

Pgx-style: the state is a :class:`BatchState` of plain tensors and :func:`step` is a pure
function ``(state, actions) -> (state, BatchStep)``; there is no Python loop over games.
:class:`BatchedPisti` wraps the two for convenience (``reset`` / ``step``) and restarts
finished games automatically, so a trainer's batch stays full.

The rules are those of :mod:`pisti_env.game` (RULES.md R1–R28 for one deck), and so is the
state: ``code[b, card] = where * 256 + played_by`` packs the Python engine's location code of
each card (``Game.where``, the ``LOC_*`` codes) and its playing-seat code (``Game.played_by``)
into one integer, one row per game. Card moves that touch many cards at once (a capture, the
sweep) relabel a row through a small table; everything else is per-game counters. The observation is built by applying the Python
encoder's own lookup tables (:class:`ObservationEncoder`: ``plane_lut``, ``count_gather``,
``count_scale``, ``static``) to those codes, so the two engines share one definition of the
encoding; ``tests/test_batched.py`` checks them equal, bit for bit, on thousands of random
games.

Decks come from a counter-based hash of ``(seed, game slot, episode, hand, attempt)``: game
``i``'s trajectory depends neither on the other games nor on B, and is the same on every
device. Torch's random generators are never used.

Supported: 2, 3, 4 players, partnerships, single hands (``target=None``) and matches
(``target``, ``win_margin``), ``double_pisti``, ``last_card_pisti``,
``ten_diamonds_pisti_bonus``, ``show_stock_bottom``, and the bluff variant (R29: ``bluff``,
``bluff_jack_double``; 106 actions as in :mod:`pisti_env.game`). Not supported (clear
``ValueError``): two decks (5–6 players).

The bluff variant adds a pending claim to the state (``claimant``, ``claim_card``) and five
per-side counters (the bluff rows of :class:`Row`); its logic sits behind Python-level
``if self.settings.bluff`` tests, so a game without it runs exactly the operations it ran
before the variant existed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Sequence

import numpy as np
import torch

from .cards import JACK, NUM_CARD_IDS, RANK, TEN_DIAMONDS, parse_card
from .scoring import POINTS
from .game import (
    BELIEVE,
    BLUFF_COUNTERS,
    BLUFF_STAKE,
    CHALLENGE,
    FACE_DOWN,
    HAND_SIZE,
    LOC_CAPT_DOWN,
    LOC_CAPT_HIDDEN,
    LOC_CAPT_SHOWN,
    LOC_HAND,
    LOC_HAND_SHOWN,
    LOC_PILE_DOWN,
    LOC_PILE_DOWN_SHOWN,
    LOC_PILE_HIDDEN,
    LOC_PILE_JACK,
    LOC_PILE_UP,
    LOC_STOCK,
    LOC_STOCK_SHOWN,
    MAJORITY_POINTS,
    NOBODY,
    PISTI_POINTS,
    PLAYED_BY,
    TABLE_SIZE,
)
from .observation import COUNT_SOURCES, ObservationEncoder
from .rules import make_settings

CODE_WIDTH = 256  # location and playing-seat codes are bytes (see pisti_env.game)
NUM_LOCATIONS = LOC_PILE_DOWN_SHOWN + 1  # location codes are 0..50 (38..50: face-down cards, R29)
PLAIN_LOCATIONS = LOC_CAPT_HIDDEN + 6  # without the bluff variant codes stop at 28: smaller
# tables (the observation's lookup is the hottest gather of a step, and it stays in cache)
CODE_DTYPE = torch.int32  # codes and the indices built from them stay below 2**31; half the bytes of int64



class Row(IntEnum):
    """Rows of ``BatchState.side_counts`` (B, rows, sides): the per-side counters."""

    CAPTURED = 0  # cards captured this hand
    CARD_POINTS = 1  # their points (R20), hidden ones included
    PUBLIC_POINTS = 2  # points everyone can count this hand (R30)
    PISTIS = 3  # piştis this hand (R13; R14 with double_pisti=10)
    DOUBLE_PISTIS = 4  # double piştis this hand (R14)
    PISTI_POINTS = 5  # their points (R13-R17)
    MATCH_SCORES = 6  # totals of the finished hands of this episode (R24)
    # The bluff variant only (R29; without it ``side_counts`` stops at MATCH_SCORES):
    BLUFF_POINTS = 7  # bluff points received this hand (public at once, R30)
    BLUFF_CLAIMS = 8  # claims this side made this hand
    BLUFF_BELIEVED = 9  # ... believed
    BLUFF_CHALLENGED_TRUE = 10  # ... challenged and true
    BLUFF_CHALLENGED_FALSE = 11  # ... challenged and false (bluffs caught)


PLAIN_ROWS = Row.MATCH_SCORES + 1  # rows of ``side_counts`` without the bluff variant
# The claim block's per-side values in the order of ``ObservationEncoder._encode_bluff`` and the
# bluff keys of ``Game.hand_scores``: the names come from the Python engine.
BLUFF_ROWS = dict(zip(("bluff_points", *BLUFF_COUNTERS), range(Row.BLUFF_POINTS, len(Row))))
if len(BLUFF_ROWS) != len(Row) - PLAIN_ROWS:
    raise AssertionError("Row's bluff rows and pisti_env.game.BLUFF_COUNTERS disagree")

_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class BatchState:
    """The state of B games; every field is a tensor with the batch on dimension 0.

    ``code[b, card]`` is ``where * 256 + played_by``: the card's location code and its
    playing-seat code, exactly as ``Game.where`` / ``Game.played_by`` of the Python engine
    (see the ``where`` and ``played_by`` properties);
    ``deck[b]`` this hand's deck (card ids, item 0 dealt first, after the R28 cut);
    ``side_counts[b, k, side]`` the per-side counters of :class:`Row` (the bluff rows only with
    the bluff variant); ``claimant``/``claim_card`` the pending claim (R29), as ``Game.claimant``
    and ``Game.claim_card`` (always -1 without the variant).
    """

    code: torch.Tensor  # (B, 52) int32: location code (LOC_*) * 256 + playing-seat code
    deck: torch.Tensor  # (B, 52) int64 card ids
    stock_pos: torch.Tensor  # (B,) next deck index to deal
    turn: torch.Tensor  # (B,) seat to move
    dealer: torch.Tensor  # (B,)
    in_hands: torch.Tensor  # (B,) cards held by all seats together
    hand_sizes: torch.Tensor  # (B, n)
    top: torch.Tensor  # (B,) top card of the pile (meaningless when the pile is empty)
    pile_size: torch.Tensor  # (B,)
    pile_hidden: torch.Tensor  # (B,) never-turned table cards in the pile (R8)
    pile_points_public: torch.Tensor  # (B,) points of the pile's public cards
    pile_points_hidden: torch.Tensor  # (B,) points of its never-turned cards
    last_capturer: torch.Tensor  # (B,) side, -1 = nobody yet
    side_counts: torch.Tensor  # (B, len(Row), sides) int64
    reward_base: torch.Tensor  # (B, sides) public totals at the last reward (R30)
    hands_completed: torch.Tensor  # (B,) in this episode
    episode: torch.Tensor  # (B,) episodes started in this slot (feeds the deck hash)
    attempt: torch.Tensor  # (B,) deck draws for this hand (> 0 after a void deal, R7)
    slot: torch.Tensor  # (B,) the game's slot number 0..B-1 (feeds the deck hash)
    claimant: torch.Tensor  # (B,) seat of the pending claim of a pişti (R29), -1: none
    claim_card: torch.Tensor  # (B,) its face-down card id, -1: none

    def replace(self, **changes: torch.Tensor) -> "BatchState":
        return dataclasses.replace(self, **changes)

    @property
    def where(self) -> torch.Tensor:
        """(B, 52) location codes, as ``Game.where``."""
        return self.code // CODE_WIDTH

    @property
    def played_by(self) -> torch.Tensor:
        """(B, 52) playing-seat codes, as ``Game.played_by``."""
        return self.code % CODE_WIDTH

    @property
    def public_total(self) -> torch.Tensor:
        """(B, sides) every point of each side that all seats can count (R30)."""
        return self.side_counts[:, Row.MATCH_SCORES] + self.side_counts[:, Row.PUBLIC_POINTS]


@dataclass(frozen=True)
class BatchStep:
    """What :meth:`BatchedPisti.step` returns, for every game of the batch.

    ``seat``, ``observation`` and ``action_mask`` describe the seat to move next (in the new
    episode where ``done``); the mask has 52 entries, or 106 with the bluff variant (R29). ``rewards[b, s]`` is seat ``s``'s reward for this step (the AEC
    env's ``rewards``). ``done``: the episode ended at this step and the game restarted.
    ``hand_over``: a hand ended at this step; ``hand_result`` then holds its per-side
    breakdown (keys of ``Game.hand_scores``). Where ``done``, ``match_scores`` and ``winner``
    (a side, or -1 for a drawn single hand) describe the finished episode.
    """

    seat: torch.Tensor
    observation: torch.Tensor
    action_mask: torch.Tensor
    rewards: torch.Tensor
    done: torch.Tensor
    hand_over: torch.Tensor
    hand_result: dict[str, torch.Tensor]
    match_scores: torch.Tensor
    winner: torch.Tensor


class BatchedPisti:
    """B Pişti games stepped together on one device.

    Args:
        batch_size: number of games B.
        device: torch device (``"cpu"``, ``"cuda"``, …); everything lives there.
        seed: seeds every deck and first dealer (through the counter-based hash).
        reward: ``"diff"`` or ``"win"``, as in the AEC env.
        **settings: game settings (RULES.md's table); unsupported ones raise ``ValueError``.
    """

    def __init__(
        self,
        batch_size: int,
        *,
        device: str | torch.device = "cpu",
        seed: int = 0,
        reward: str = "diff",
        **settings: Any,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if reward not in ("diff", "win"):
            raise ValueError(f"reward must be 'diff' or 'win', got {reward!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        self.settings = s = make_settings(**settings)
        if s.decks != 1:
            raise ValueError(
                f"the batched engine supports one deck (2, 3 or 4 players), got num_players={s.num_players}, "
                f"decks={s.decks}; use pisti_env.Game or pisti_env.env for 5-6 players"
            )
        self.batch_size = batch_size
        self.device = torch.device(device)
        self.seed = seed
        self.reward_mode = reward
        self.num_players = n = s.num_players
        self.num_sides = s.num_sides
        self.encoder = ObservationEncoder(s)
        self.observation_size = self.encoder.layout.size
        self.num_actions = s.num_actions  # 52, or 106 with the bluff variant (R29)
        num_locations = NUM_LOCATIONS if s.bluff else PLAIN_LOCATIONS
        self._num_locations = num_locations
        self._num_codes = num_codes = num_locations * CODE_WIDTH  # packed codes: location * 256 + seat
        self._num_rows = len(Row) if s.bluff else PLAIN_ROWS
        self._result_keys = _RESULT_KEYS + (tuple(BLUFF_ROWS) if s.bluff else ())
        dev = self.device

        def t(x: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.as_tensor(np.asarray(x), dtype=dtype, device=dev)

        self._rank = t(RANK[:NUM_CARD_IDS])
        self._points = t(POINTS[:NUM_CARD_IDS])
        self._side_of = t([s.side_of(i) for i in range(n)])
        self._rows = torch.arange(batch_size, device=dev)
        self._side_ids = torch.arange(self.num_sides, device=dev)
        self._seat_ids = torch.arange(n, device=dev)
        # Relabelling a capture or sweep (R10, R11, R19): row 0 keeps every code; row 1 + side
        # sends the pile's public cards to that side's shown captures and its never-turned
        # cards to that side's hidden ones (R8).
        relabel = np.tile(np.arange(num_codes).reshape(num_locations, CODE_WIDTH), (self.num_sides + 1, 1, 1))
        for side in range(self.num_sides):
            relabel[1 + side, LOC_PILE_UP] += (LOC_CAPT_SHOWN + side - LOC_PILE_UP) * CODE_WIDTH
            relabel[1 + side, LOC_PILE_JACK] += (LOC_CAPT_SHOWN + side - LOC_PILE_JACK) * CODE_WIDTH
            relabel[1 + side, LOC_PILE_HIDDEN] += (LOC_CAPT_HIDDEN + side - LOC_PILE_HIDDEN) * CODE_WIDTH
        self._relabel = t(relabel.reshape(-1), CODE_DTYPE)
        # The encoder's tables: a card's feature row for each observer is the sum of the rows
        # of its location code and of its playing-seat code, precomputed for every pair and
        # flattened: entry seat * num_codes + code.
        rows = self.encoder.feature_rows[:, :num_locations, None, :] + self.encoder.feature_rows[:, None, :, :]
        self._feature_pairs = t(rows.reshape(-1, rows.shape[-1]), torch.float32)
        self._num_features = self.encoder.layout.num_card_features
        self._card_rows = torch.empty(batch_size * NUM_CARD_IDS, self._num_features, device=dev)
        self._pair_buffer = torch.empty(batch_size, NUM_CARD_IDS, dtype=CODE_DTYPE, device=dev)
        self._hand_feature = self.encoder.layout.feature_index["hand"]
        self._cards_size = self.encoder.layout.cards_size
        legal = np.zeros((n, num_locations, CODE_WIDTH), dtype=bool)
        for seat in range(n):
            legal[seat, [LOC_HAND + seat, LOC_HAND_SHOWN + seat]] = True
        self._legal = t(legal.reshape(-1), torch.bool)
        self._count_gather = t(self.encoder.count_gather)
        self._count_scale = t(self.encoder.count_scale, torch.float32)
        self._rel_side = t(self.encoder.rel_side)
        layout = self.encoder.layout
        rest_at = layout.cards_size  # the observation after the card block, offsets from here
        self._static_rest = t(self.encoder.static[rest_at:], torch.float32)[None, :]
        self._counts = slice(layout.counts_start - rest_at, layout.counts_stop - rest_at)
        self._top_at = self.encoder.top_feature
        self._last_capturer_at = layout.by_name["last_capturer"].start - rest_at
        self._dealer_at = layout.by_name["dealer"].start - rest_at
        self._to_move_at = layout.by_name["to_move"].start - rest_at
        if s.bluff:
            self._init_claim_block(t)
        self._init_hidden_categories(t)
        self.state: BatchState | None = None

    def _init_claim_block(self, t: Any) -> None:
        """The claim block of the observation (R29), from the encoder's own tables: where its
        fields start (relative to the part after the card block), which absolute side feeds
        each seat-relative entry (the inverse of ``rel_side``) and the scales."""
        layout, S = self.encoder.layout, self.num_sides
        rest_at = layout.cards_size
        claimant = layout.by_name["claimant"]
        self._claimant_at = slice(claimant.start - rest_at, claimant.stop - rest_at)
        self._bluff_at = slice(layout.by_name["bluff_points"].start - rest_at, layout.size - rest_at)
        self._bluff_rows = list(BLUFF_ROWS.values())
        gather = np.zeros((self.num_players, len(BLUFF_ROWS) * S), dtype=np.int64)
        for seat, rel in enumerate(self.encoder.rel_side):
            for r in range(len(BLUFF_ROWS)):
                gather[seat, r * S + rel] = r * S + np.arange(S)  # as ``block[:, rel] = values``
        self._bluff_gather = t(gather)
        self._bluff_scale = t(self.encoder._bluff_scale, torch.float32)  # (one definition of the scales)

    def _init_hidden_categories(self, t: Any) -> None:
        """Hidden information (for a trainer's critic only, never an observation): per observer
        seat and location code, the category of a card the observer cannot see (R31): in the
        hand of the next seat, ..., of the last seat (n - 1 categories), in the stock, a
        never-turned table card (R8: still on the table or captured by another side), and with
        the bluff variant a face-down card of another seat never shown (R29: pending or
        believed, a partner's too, R30); the last index is "none of these"."""
        n, S = self.num_players, self.num_sides
        categories = n + 1 + self.settings.bluff
        hidden = np.full((n, self._num_locations), categories, dtype=np.int64)
        for seat in range(n):
            for k in range(1, n):
                other = (seat + k) % n
                hidden[seat, [LOC_HAND + other, LOC_HAND_SHOWN + other]] = k - 1
                if self.settings.bluff:
                    hidden[seat, [LOC_PILE_DOWN + other, LOC_CAPT_DOWN + other]] = n + 1
            hidden[seat, [LOC_STOCK, LOC_STOCK_SHOWN]] = n - 1
            hidden[seat, LOC_PILE_HIDDEN] = n
            side = self.settings.side_of(seat)
            hidden[seat, [LOC_CAPT_HIDDEN + other for other in range(S) if other != side]] = n
        self._hidden_category = t(hidden.reshape(-1))
        self._hidden_ids = torch.arange(categories, device=self.device)
        self.hidden_information_size = NUM_CARD_IDS * categories

    # ------------------------------------------------------------------ public API
    def reset(
        self,
        decks: Sequence[Sequence[int | str]] | torch.Tensor | None = None,
        dealers: Sequence[int] | torch.Tensor | None = None,
        observation_out: torch.Tensor | None = None,
    ) -> BatchStep:
        """Start B new episodes; optionally from given first-hand decks (B × 52 card ids or
        text codes, item 0 dealt first) and dealers (B seats). Later hands and episodes draw
        their decks from the seed. ``observation_out``: see :meth:`step`."""
        B, dev = self.batch_size, self.device
        given_decks = None if decks is None else self._validated_decks(decks)
        given_dealers = None if dealers is None else self._validated_dealers(dealers)
        n, S = self.num_players, self.num_sides
        zeros = torch.zeros(B, dtype=torch.int64, device=dev)
        state = BatchState(
            code=torch.full((B, NUM_CARD_IDS), LOC_STOCK * CODE_WIDTH + NOBODY, dtype=CODE_DTYPE, device=dev),
            deck=torch.zeros(B, NUM_CARD_IDS, dtype=torch.int64, device=dev),
            stock_pos=zeros,
            turn=zeros,
            dealer=zeros,
            in_hands=zeros,
            hand_sizes=torch.zeros(B, n, dtype=torch.int64, device=dev),
            top=zeros,
            pile_size=zeros,
            pile_hidden=zeros,
            pile_points_public=zeros,
            pile_points_hidden=zeros,
            last_capturer=zeros - 1,
            side_counts=torch.zeros(B, self._num_rows, S, dtype=torch.int64, device=dev),
            reward_base=torch.zeros(B, S, dtype=torch.int64, device=dev),
            hands_completed=zeros,
            episode=zeros,
            attempt=zeros,
            slot=torch.arange(B, device=dev),
            claimant=zeros - 1,
            claim_card=zeros - 1,
        )
        everything = torch.ones(B, dtype=torch.bool, device=dev)
        state = self._start_hands(state, everything, new_episode=everything, decks=given_decks, dealers=given_dealers)
        self.state = state
        return self.peek(state, observation_out)

    def peek(self, state: BatchState | None = None, observation_out: torch.Tensor | None = None) -> BatchStep:
        """The seat to move, its observation and mask in ``state`` (default: the current
        state), as a :class:`BatchStep` with no rewards and no episode or hand ended."""
        state = self.state if state is None else state
        if state is None:
            raise ValueError("call reset() first")
        B, S, dev = self.batch_size, self.num_sides, self.device
        none = torch.zeros(B, dtype=torch.bool, device=dev)
        return self._output(
            state,
            observation_out,
            rewards=torch.zeros(B, self.num_players, dtype=torch.float32, device=dev),
            done=none,
            hand_over=none,
            hand_result={k: torch.zeros(B, S, dtype=torch.int64, device=dev) for k in self._result_keys},
            match_scores=state.side_counts[:, Row.MATCH_SCORES],
            winner=torch.full((B,), -1, dtype=torch.int64, device=dev),
        )

    def step(self, actions: torch.Tensor | Sequence[int], observation_out: torch.Tensor | None = None) -> BatchStep:
        """Every game's seat to move takes ``actions[b]``: a card id, or with the bluff variant
        any action id of :mod:`pisti_env.game` (R29: ``FACE_DOWN + id``, ``BELIEVE``,
        ``CHALLENGE``); see :class:`BatchStep`.

        ``observation_out``: an optional (B, observation_size) float32 tensor on the engine's
        device to write the observations into (a trainer's rollout storage, say); it saves
        allocating fresh memory for them at every step, the largest single cost on a CPU.

        Raises ``ValueError`` naming the first game with an illegal action (and that game's
        legal ones); the state is then unchanged."""
        if self.state is None:
            raise ValueError("call reset() before step()")
        self.state, out = self.step_state(self.state, actions, observation_out)
        return out

    def step_state(
        self, state: BatchState, actions: torch.Tensor | Sequence[int], observation_out: torch.Tensor | None = None
    ) -> tuple[BatchState, BatchStep]:
        """The pure step: ``(state, actions) -> (next state, BatchStep)``; ``state`` is not
        modified."""
        a = self._validated_actions(state, actions)
        B, dev = self.batch_size, self.device
        if self.settings.bluff:
            state = self._bluff_move(state, a)
        else:
            state = self._play_face_up(state, a)

        # R18: deal again when every hand is empty; R19–R26 when the stock is empty too.
        hands_empty = state.in_hands == 0
        if self.settings.bluff:  # R29: a pending claim is answered before any deal or hand end
            hands_empty = hands_empty & (state.claimant < 0)
        need_deal = hands_empty & (state.stock_pos < NUM_CARD_IDS)
        hand_over = hands_empty & ~need_deal
        if bool(need_deal.any()):
            state = self._deal(state, need_deal)
        S = self.num_sides
        hand_result = {k: torch.zeros(B, S, dtype=torch.int64, device=dev) for k in self._result_keys}
        done = torch.zeros(B, dtype=torch.bool, device=dev)
        winner = torch.full((B,), -1, dtype=torch.int64, device=dev)
        match_scores = state.side_counts[:, Row.MATCH_SCORES]
        if bool(hand_over.any()):
            state = state.replace(deck=state.deck.clone())  # new hands will write decks in place
            state, hand_result, done, winner = self._end_hands(state, hand_over)
            match_scores = state.side_counts[:, Row.MATCH_SCORES]

        rewards = self._rewards(state, done, winner)
        state = state.replace(reward_base=state.public_total)
        if bool(done.any()):
            state = self._start_hands(state, done, new_episode=done)
        return state, self._output(state, observation_out, rewards, done, hand_over, hand_result, match_scores, winner)

    # ------------------------------------------------------------------ the moves
    def _play_face_up(self, state: BatchState, a: torch.Tensor) -> BatchState:
        """Every game's seat to move plays card ``a`` face up (R9–R17); the turn passes to the
        next seat (the caller deals or ends the hand when the hands are empty). Returns a new
        state whose ``code`` is the step's own copy."""
        settings = self.settings
        seat = state.turn
        side = self._side_of[seat]
        side_onehot = (side[:, None] == self._side_ids).long()  # (B, S); F.one_hot would sync to check
        seat_onehot = (seat[:, None] == self._seat_ids).long()  # (B, n)

        # R10, R11: a card of the top card's rank, or a Jack, takes a non-empty pile.
        rank = self._rank[a]
        is_jack = rank == JACK
        top_rank = self._rank[state.top]
        capture = (state.pile_size > 0) & ((rank == top_rank) | is_jack)
        in_hands = state.in_hands - 1
        last_card = (in_hands == 0) & (state.stock_pos == NUM_CARD_IDS)

        # R13–R17: piştis on a lone card.
        lone = capture & (state.pile_size == 1)
        plain_pisti = lone & ~is_jack  # R13
        jack_on_jack = lone & is_jack & (top_rank == JACK)  # R14
        if not settings.last_card_pisti:  # R16
            plain_pisti = plain_pisti & ~last_card
            jack_on_jack = jack_on_jack & ~last_card
        dp = settings.double_pisti
        pisti_points = plain_pisti * PISTI_POINTS + jack_on_jack * dp
        if settings.ten_diamonds_pisti_bonus:  # R17
            with_ten = plain_pisti & ((a == TEN_DIAMONDS) | (state.top == TEN_DIAMONDS))
            pisti_points = pisti_points + with_ten * settings.ten_diamonds_pisti_bonus
        counts_as_pisti = plain_pisti | (jack_on_jack & (dp == 10))
        counts_as_double = jack_on_jack & (dp == 20)

        # Card movements: a capture relabels the pile's cards as the side's captures (the
        # never-turned ones stay hidden, R8); the played card goes on the pile or to the side.
        # ``code`` is this step's own copy: from here on it is updated in place (the input state
        # stays untouched, so the step remains a pure function).
        code = state.code.clone()
        takers = capture.nonzero().squeeze(1)
        if takers.numel():
            relabel = ((side[takers] + 1) * self._num_codes)[:, None] + code[takers]
            code[takers] = self._relabel.index_select(0, relabel.view(-1)).view(-1, NUM_CARD_IDS)
        location = torch.where(capture, LOC_CAPT_SHOWN + side, LOC_PILE_UP)
        code[self._rows, a] = (location * CODE_WIDTH + PLAYED_BY + seat).to(CODE_DTYPE)

        card_points = self._points[a]
        taken_public = (state.pile_points_public + card_points) * capture
        taken_hidden = state.pile_points_hidden * capture
        deltas = torch.stack(
            [
                (state.pile_size + 1) * capture,  # Row.CAPTURED
                taken_public + taken_hidden,  # Row.CARD_POINTS
                taken_public + pisti_points,  # Row.PUBLIC_POINTS
                counts_as_pisti.long(),  # Row.PISTIS
                counts_as_double.long(),  # Row.DOUBLE_PISTIS
                pisti_points,  # Row.PISTI_POINTS
                torch.zeros_like(a),  # Row.MATCH_SCORES
            ],
            1,
        )
        if self._num_rows > PLAIN_ROWS:  # the bluff rows: a face-up play leaves them alone
            deltas = torch.nn.functional.pad(deltas, (0, self._num_rows - PLAIN_ROWS))
        return state.replace(
            code=code,
            in_hands=in_hands,
            hand_sizes=state.hand_sizes - seat_onehot,
            top=torch.where(capture, state.top, a),
            pile_size=torch.where(capture, 0, state.pile_size + 1),
            pile_hidden=torch.where(capture, 0, state.pile_hidden),
            pile_points_public=torch.where(capture, 0, state.pile_points_public + card_points),
            pile_points_hidden=torch.where(capture, 0, state.pile_points_hidden),
            last_capturer=torch.where(capture, side, state.last_capturer),
            side_counts=state.side_counts + deltas[:, :, None] * side_onehot[:, None, :],
            turn=(seat + 1) % self.num_players,
        )

    def _bluff_move(self, state: BatchState, a: torch.Tensor) -> BatchState:
        """R29: each game takes its own kind of action: a face-up card (``a`` < 52), a face-down
        one (52–103) or an answer (104, 105). Each kind is computed for the whole batch and
        kept where it was taken; the kinds nobody took are skipped."""
        card = a % FACE_DOWN  # the card played, face up or down (meaningless for an answer)
        moved = self._play_face_up(state, card)
        face_down = (a >= FACE_DOWN) & (a < BELIEVE)
        if bool(face_down.any()):
            moved = _select(face_down, self._play_face_down(state, card), moved)
        answer = a >= BELIEVE
        if bool(answer.any()):
            moved = _select(answer, self._answer_claim(state, a == CHALLENGE), moved)
        return moved

    def _play_face_down(self, state: BatchState, card: torch.Tensor) -> BatchState:
        """R29: the seat to move plays ``card`` face down on the lone card, claiming a pişti;
        the seat that played the lone card answers next. The card is known to its player only
        (``LOC_PILE_DOWN + seat``), or to everyone if it is the shown stock bottom (R28), and
        its playing-seat code stays NOBODY until it is shown."""
        seat, rows = state.turn, self._rows
        code = state.code.clone()
        held_shown = code[rows, card] // CODE_WIDTH == LOC_HAND_SHOWN + seat  # R28
        location = torch.where(held_shown, LOC_PILE_DOWN_SHOWN, LOC_PILE_DOWN + seat)
        code[rows, card] = (location * CODE_WIDTH + NOBODY).to(CODE_DTYPE)
        lone_player = (state.code[rows, state.top] % CODE_WIDTH).long() - PLAYED_BY
        claims = self._deltas({Row.BLUFF_CLAIMS: torch.ones_like(seat)})
        return state.replace(
            code=code,
            in_hands=state.in_hands - 1,
            hand_sizes=state.hand_sizes - (seat[:, None] == self._seat_ids).long(),
            side_counts=state.side_counts + self._to_side(claims, self._side_of[seat]),
            claimant=seat,
            claim_card=card,
            turn=lone_player,
        )

    def _answer_claim(self, state: BatchState, challenge: torch.Tensor) -> BatchState:
        """R29: the seat to move believes (``challenge`` False) or challenges the pending claim;
        scored as ``Game._answer``. Then the seat after the claimant moves (the caller deals or
        ends the hand when the hands are empty). Rows without a claim compute garbage that the
        caller drops."""
        rows = self._rows
        claimant, card, lone = state.claimant.clamp(min=0), state.claim_card.clamp(min=0), state.top
        side = self._side_of[claimant]
        stake = torch.full_like(lone, BLUFF_STAKE)
        if self.settings.bluff_jack_double:  # house rule: 20 / 40 / 40 on a lone Jack
            stake = stake * (1 + (self._rank[lone] == JACK))
        true_claim = self._rank[card] == self._rank[lone]  # a Jack on a lone non-Jack is a bluff
        taken = ~challenge | true_claim  # believed or proven: both cards to the claimant's side
        caught = ~taken  # both cards stay, the shown card on top
        code = state.code.clone()
        card_code = code[rows, card]
        # Everyone sees the card once challenged; a believed one stays hidden unless it is the
        # shown stock bottom (R28, R30).
        public_card = challenge | (card_code // CODE_WIDTH == LOC_PILE_DOWN_SHOWN)
        location = torch.where(
            caught, LOC_PILE_UP, torch.where(public_card, LOC_CAPT_SHOWN + side, LOC_CAPT_DOWN + claimant)
        )
        played_by = torch.where(challenge, PLAYED_BY + claimant, NOBODY)
        code[rows, card] = (location * CODE_WIDTH + played_by).to(CODE_DTYPE)
        lone_code = code[rows, lone]
        captured_lone = self._relabel[(side + 1) * self._num_codes + lone_code]  # a capture (R19)
        code[rows, lone] = torch.where(taken, captured_lone, lone_code)

        lone_points, card_points = self._points[lone], self._points[card]
        own_bluff = stake * torch.where(challenge, 2, 1) * taken
        their_bluff = 2 * stake * caught  # the challenger's side alone (R29)
        public = (lone_points + card_points * public_card) * taken
        claim_rows = self._deltas(
            {
                Row.CAPTURED: 2 * taken,
                Row.CARD_POINTS: (lone_points + card_points) * taken,
                Row.PUBLIC_POINTS: public + own_bluff,
                Row.PISTIS: taken,  # a believed or proven claim counts as a pişti
                Row.BLUFF_POINTS: own_bluff,
                Row.BLUFF_BELIEVED: ~challenge,
                Row.BLUFF_CHALLENGED_TRUE: challenge & true_claim,
                Row.BLUFF_CHALLENGED_FALSE: caught,
            }
        )
        answer_rows = self._deltas({Row.PUBLIC_POINTS: their_bluff, Row.BLUFF_POINTS: their_bluff})
        answerer_side = self._side_of[state.turn]
        counts = state.side_counts + self._to_side(claim_rows, side) + self._to_side(answer_rows, answerer_side)
        none = torch.full_like(claimant, -1)
        return state.replace(
            code=code,
            top=torch.where(taken, lone, card),
            pile_size=torch.where(taken, 0, state.pile_size + 1),
            pile_hidden=torch.where(taken, 0, state.pile_hidden),
            pile_points_public=torch.where(taken, 0, state.pile_points_public + card_points),
            pile_points_hidden=torch.where(taken, 0, state.pile_points_hidden),
            last_capturer=torch.where(taken, side, state.last_capturer),
            side_counts=counts,
            claimant=none,
            claim_card=none,
            turn=(claimant + 1) % self.num_players,
        )

    def _deltas(self, rows: dict[Row, torch.Tensor]) -> torch.Tensor:
        """(B, rows of ``side_counts``) counter changes: the given rows, zero elsewhere."""
        zero = torch.zeros(self.batch_size, dtype=torch.int64, device=self.device)
        return torch.stack([rows.get(Row(r), zero).long() for r in range(self._num_rows)], 1)

    def _to_side(self, deltas: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
        """(B, rows, S): per-game counter changes ``deltas`` (B, rows) credited to ``side``."""
        return deltas[:, :, None] * (side[:, None] == self._side_ids).long()[:, None, :]

    # ------------------------------------------------------------------ rules pieces
    def _deal(self, state: BatchState, mask: torch.Tensor) -> BatchState:
        """R6.2/R18: four cards to each seat, one at a time from the first player, where
        ``mask``; with one deck every deal is a full round."""
        n = self.num_players
        per_deal = HAND_SIZE * n
        order = torch.arange(per_deal, device=self.device)
        cards = state.deck.gather(1, (state.stock_pos[:, None] + order).clamp(max=NUM_CARD_IDS - 1))
        first = (state.dealer + 1) % n
        receiver = (first[:, None] + order % n) % n  # (B, 4n)
        current = state.code.gather(1, cards)
        # R28: the shown stock-bottom card stays in view in the hand that receives it. (A card
        # in the stock was never played: its playing-seat code is NOBODY.)
        shown = current == LOC_STOCK_SHOWN * CODE_WIDTH + NOBODY
        dealt = torch.where(shown, LOC_HAND_SHOWN + receiver, LOC_HAND + receiver) * CODE_WIDTH + NOBODY
        state.code.scatter_(1, cards, torch.where(mask[:, None], dealt.to(CODE_DTYPE), current))  # owned: see step_state
        return state.replace(
            stock_pos=state.stock_pos + per_deal * mask,
            in_hands=state.in_hands + per_deal * mask,
            hand_sizes=state.hand_sizes + HAND_SIZE * mask[:, None],
            turn=torch.where(mask, first, state.turn),
        )

    def _end_hands(
        self, state: BatchState, mask: torch.Tensor
    ) -> tuple[BatchState, dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
        """End the hand of the games in ``mask``: returns the new state, the hand results
        (B, sides), whether each episode ended, and its winner (-1: none or a draw)."""
        B, S = self.batch_size, self.num_sides
        idx = mask.nonzero().squeeze(1)
        sub, result, done, winner = self._finish_hands(_take(state, idx))
        hand_result = {
            key: torch.zeros(B, S, dtype=torch.int64, device=self.device).index_copy(0, idx, value)
            for key, value in result.items()
        }
        return (
            _put(state, idx, sub),
            hand_result,
            torch.zeros(B, dtype=torch.bool, device=self.device).index_copy(0, idx, done),
            torch.full((B,), -1, dtype=torch.int64, device=self.device).index_copy(0, idx, winner),
        )

    def _finish_hands(
        self, state: BatchState
    ) -> tuple[BatchState, dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
        """R19 sweep, R20–R23 scoring, R24–R26 match end and R5 next dealer, for every game of
        ``state`` (a sub-batch whose hands just ran out of cards)."""
        S = self.num_sides
        settings = self.settings
        # R19: the last capturer (the dealer's side as a safety net) takes what is left.
        taker = torch.where(state.last_capturer >= 0, state.last_capturer, self._side_of[state.dealer])
        sweep = state.pile_size > 0
        taker_onehot = (taker[:, None] == self._side_ids) * sweep[:, None]  # (k, S)
        code = self._relabel.index_select(0, (((taker + 1) * sweep)[:, None] * self._num_codes + state.code).view(-1))
        counts = state.side_counts.clone()
        counts[:, Row.CAPTURED] += taker_onehot * state.pile_size[:, None]
        counts[:, Row.CARD_POINTS] += taker_onehot * (state.pile_points_public + state.pile_points_hidden)[:, None]

        # R21: 3 points for strictly the most cards; R22 totals.
        cards = counts[:, Row.CAPTURED]
        is_best = cards == cards.max(1, keepdim=True).values
        majority = is_best * (is_best.sum(1, keepdim=True) == 1) * MAJORITY_POINTS
        total = counts[:, Row.CARD_POINTS] + majority + counts[:, Row.PISTI_POINTS]
        if settings.bluff:  # R22: every bluff point received counts too
            total = total + counts[:, Row.BLUFF_POINTS]
        hand_result = {
            "cards": cards,
            "card_points": counts[:, Row.CARD_POINTS],
            "majority": majority,
            "pisti": counts[:, Row.PISTIS],
            "double_pisti": counts[:, Row.DOUBLE_PISTIS],
            "pisti_points": counts[:, Row.PISTI_POINTS],
            "total": total,
        }
        if settings.bluff:  # the bluff keys of Game.hand_scores (R29)
            hand_result.update({name: counts[:, row] for name, row in BLUFF_ROWS.items()})
        # The hand folds into the match total, all of it public now (R30): public_total stays
        # "match total + this hand's public points", as Game.public_total.
        counts[:, Row.MATCH_SCORES] += total
        counts[:, Row.PUBLIC_POINTS] = 0
        scores = counts[:, Row.MATCH_SCORES]

        # R25, R26: does the episode end here?
        top2 = scores.topk(2, dim=1).values
        unique = top2[:, 0] > top2[:, 1]
        if settings.target is None:
            done = torch.ones_like(unique)
        else:
            done = unique & (top2[:, 0] >= settings.target) & (top2[:, 0] - top2[:, 1] >= settings.win_margin)
        winner = torch.where(done & unique, scores.argmax(1), -1)
        zeros = torch.zeros_like(state.pile_size)
        state = state.replace(
            code=code.view_as(state.code),
            side_counts=counts,
            pile_size=zeros,
            pile_hidden=zeros,
            pile_points_public=zeros,
            pile_points_hidden=zeros,
            hands_completed=state.hands_completed + 1,
        )
        # The match goes on where nobody won yet: the first player deals next (R5).
        state = self._start_hands(state, ~done, new_episode=torch.zeros_like(done))
        return state, hand_result, done, winner

    def _rewards(self, state: BatchState, done: torch.Tensor, winner: torch.Tensor) -> torch.Tensor:
        """Per-seat rewards of this step, exactly as the AEC env computes them."""
        if self.reward_mode == "diff":
            delta = (state.public_total - state.reward_base).float()  # (B, S)
            others = (delta.sum(1, keepdim=True) - delta) / (self.num_sides - 1)
            per_side = delta - others
        else:
            scores = state.side_counts[:, Row.MATCH_SCORES]
            best = scores.max(1, keepdim=True).values
            won = winner[:, None] == self._side_ids
            draw_best = (winner < 0)[:, None] & (scores == best)
            per_side = torch.where(won, 1.0, torch.where(draw_best, 0.0, -1.0)) * done[:, None]
        return per_side[:, self._side_of]

    def _start_hands(
        self,
        state: BatchState,
        mask: torch.Tensor,
        new_episode: torch.Tensor,
        decks: torch.Tensor | None = None,
        dealers: torch.Tensor | None = None,
    ) -> BatchState:
        """Deal a new hand to the games in ``mask``; where ``new_episode`` too, a new episode
        starts (scores to 0, a dealer drawn from the seed or taken from ``dealers``)."""
        idx = mask.nonzero().squeeze(1)
        if idx.numel() == 0:
            return state
        fresh = self._new_hands(
            _take(state, idx),
            new_episode[idx],
            None if decks is None else decks[idx],
            None if dealers is None else dealers[idx],
        )
        return _put(state, idx, fresh)

    def _new_hands(
        self,
        state: BatchState,
        new_episode: torch.Tensor,
        decks: torch.Tensor | None,
        dealers: torch.Tensor | None,
    ) -> BatchState:
        """A new hand for every game of ``state`` (a sub-batch): R5 dealer, R6 deal, R7 Jacks
        on top, R28 shown stock bottom."""
        n = self.num_players
        episode = state.episode + new_episode
        hands_completed = torch.where(new_episode, 0, state.hands_completed)
        if decks is None:
            deck, attempt = self._hashed_decks(state.slot, episode, hands_completed)
        else:
            deck, attempt = decks, torch.zeros_like(state.attempt)
        if dealers is None:
            dealers = self._hash(self.seed, state.slot, episode, -1, 0) % n
        dealer = torch.where(new_episode, dealers, (state.dealer + 1) % n)

        # R6.1 and R7: table cards; Jacks on top slide under the pile and stay public.
        table = deck[:, :TABLE_SIZE]
        jack_on = self._rank[table] == JACK
        leading_jacks = torch.cumprod(jack_on.flip(1).long(), 1).sum(1)  # Jacks on top, from item 3 down
        top_pos = TABLE_SIZE - 1 - leading_jacks  # the card left face up
        position = torch.arange(TABLE_SIZE, device=self.device)
        is_top = position == top_pos[:, None]
        is_public_jack = position > top_pos[:, None]
        is_hidden = position < top_pos[:, None]
        table_codes = torch.where(is_top, LOC_PILE_UP, torch.where(is_public_jack, LOC_PILE_JACK, LOC_PILE_HIDDEN))
        code = torch.full_like(state.code, LOC_STOCK * CODE_WIDTH + NOBODY)
        code = code.scatter(1, table, (table_codes * CODE_WIDTH + NOBODY).to(CODE_DTYPE))
        if self.settings.show_stock_bottom:  # R28: the deck's last card is shown
            code = code.scatter(1, deck[:, -1:], LOC_STOCK_SHOWN * CODE_WIDTH + NOBODY)
        table_points = self._points[table]

        counts = torch.zeros_like(state.side_counts)
        counts[:, Row.MATCH_SCORES] = state.side_counts[:, Row.MATCH_SCORES] * ~new_episode[:, None]
        zeros = torch.zeros_like(state.turn)
        fresh = state.replace(
            code=code,
            deck=deck,
            stock_pos=zeros + TABLE_SIZE,
            dealer=dealer,
            in_hands=zeros,
            hand_sizes=torch.zeros_like(state.hand_sizes),
            top=table.gather(1, top_pos[:, None]).squeeze(1),
            pile_size=zeros + TABLE_SIZE,
            pile_hidden=top_pos,
            pile_points_public=(table_points * (is_top | is_public_jack)).sum(1),
            pile_points_hidden=(table_points * is_hidden).sum(1),
            last_capturer=zeros - 1,
            side_counts=counts,
            reward_base=state.reward_base * ~new_episode[:, None],
            hands_completed=hands_completed,
            episode=episode,
            attempt=attempt,
        )
        return self._deal(fresh, torch.ones_like(new_episode))

    # ------------------------------------------------------------------ decks
    @staticmethod
    def _mix(x: torch.Tensor) -> torch.Tensor:
        """A 32-bit integer hash (xor-shift-multiply rounds); int64 tensors holding values
        below 2**32, multipliers below 2**31 so nothing overflows."""
        x = x & _MASK32
        x = ((x ^ (x >> 16)) * 0x7FEB352D) & _MASK32
        x = ((x ^ (x >> 15)) * 0x2C1B3C6D) & _MASK32
        x = ((x ^ (x >> 16)) * 0x297A2D39) & _MASK32
        return x ^ (x >> 15)

    def _hash(self, seed: int, *parts: torch.Tensor | int) -> torch.Tensor:
        h = self._mix(torch.as_tensor(seed & _MASK32, device=self.device) ^ 0x5BD1E995)
        h = h ^ (seed >> 32)
        for part in parts:
            h = self._mix(h * 31 + torch.as_tensor(part, device=self.device) + 0x9E3779B)
        return h

    def _hashed_decks(
        self, slot: torch.Tensor, episode: torch.Tensor, hand: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One deck per row: a permutation keyed by (seed, slot, episode, hand, attempt); a
        void deal (four Jacks on the table, R7) draws again with the next attempt."""
        k = slot.shape[0]
        deck = torch.empty(k, NUM_CARD_IDS, dtype=torch.int64, device=self.device)
        attempt = torch.zeros(k, dtype=torch.int64, device=self.device)
        todo = torch.arange(k, device=self.device)
        cards = torch.arange(NUM_CARD_IDS, device=self.device)
        for _ in range(100):  # a void deal has probability 1/270725: this loop runs once or twice
            key = self._hash(self.seed, slot[todo], episode[todo], hand[todo], attempt[todo])
            new = torch.argsort(self._mix(key[:, None] * 64 + cards), dim=1, stable=True)
            if self.settings.show_stock_bottom:
                new = _cut_stock_bottom(new, self._rank)
            deck[todo] = new
            void = (self._rank[new[:, :TABLE_SIZE]] == JACK).all(1)
            if not bool(void.any()):
                return deck, attempt
            todo = todo[void]
            attempt[todo] += 1
        raise RuntimeError("could not draw a non-void deal in 100 attempts")  # pragma: no cover

    def _validated_decks(self, decks: Any) -> torch.Tensor:
        B = self.batch_size
        if isinstance(decks, torch.Tensor):
            rows = decks.tolist()
        else:
            rows = [list(d) for d in decks]
        if len(rows) != B:
            raise ValueError(f"decks must hold one deck per game ({B}), got {len(rows)}")
        ids = []
        for i, row in enumerate(rows):
            if len(row) != NUM_CARD_IDS:
                raise ValueError(f"deck of game {i} must hold 52 cards, got {len(row)}")
            cards = [parse_card(c) for c in row]
            if sorted(cards) != list(range(NUM_CARD_IDS)):
                raise ValueError(f"deck of game {i} must hold every card exactly once")
            if all(RANK[c] == JACK for c in cards[:TABLE_SIZE]):
                raise ValueError(f"deck of game {i} deals four Jacks to the table: a void deal (R7)")
            ids.append(cards)
        deck = torch.tensor(ids, dtype=torch.int64, device=self.device)
        if self.settings.show_stock_bottom:
            deck = _cut_stock_bottom(deck, self._rank)
        return deck

    def _validated_dealers(self, dealers: Any) -> torch.Tensor:
        values = dealers.tolist() if isinstance(dealers, torch.Tensor) else list(dealers)
        if len(values) != self.batch_size:
            raise ValueError(f"dealers must hold one seat per game ({self.batch_size}), got {len(values)}")
        for i, d in enumerate(values):
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d < self.num_players:
                raise ValueError(f"dealer of game {i} must be a seat 0..{self.num_players - 1}, got {d!r}")
        return torch.tensor(values, dtype=torch.int64, device=self.device)

    def _validated_actions(self, state: BatchState, actions: Any) -> torch.Tensor:
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(np.asarray(actions))
        if actions.dtype.is_floating_point or actions.dtype == torch.bool or actions.is_complex():
            what = "action ids" if self.settings.bluff else "card ids"
            raise TypeError(f"actions must be an integer tensor of {what}, got dtype {actions.dtype}")
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {tuple(actions.shape)}")
        a = actions.to(device=self.device, dtype=torch.int64)
        if self.settings.bluff:
            return self._validated_bluff_actions(state, a)
        in_range = (a >= 0) & (a < NUM_CARD_IDS)
        code = state.code.gather(1, a.clamp(0, NUM_CARD_IDS - 1)[:, None]).squeeze(1)
        legal = in_range & self._legal[state.turn * self._num_codes + code]
        if not bool(legal.all()):
            b = int((~legal).nonzero()[0, 0])
            seat = int(state.turn[b])
            held = self._legal[seat * self._num_codes + state.code[b]].nonzero().squeeze(1).tolist()
            raise ValueError(
                f"illegal action {int(a[b])} in game {b}: seat {seat} may play only {held} "
                f"(card ids 0..51 held in its hand)"
            )
        return a

    def _validated_bluff_actions(self, state: BatchState, a: torch.Tensor) -> torch.Tensor:
        """R29: ``a`` must be legal in the 106-action mask of each game."""
        in_range = (a >= 0) & (a < self.num_actions)
        mask = self.action_mask(state)
        legal = in_range & mask.gather(1, a.clamp(0, self.num_actions - 1)[:, None]).squeeze(1)
        if not bool(legal.all()):
            b = int((~legal).nonzero()[0, 0])
            seat = int(state.turn[b])
            allowed = mask[b].nonzero().squeeze(1).tolist()
            raise ValueError(
                f"illegal action {int(a[b])} in game {b}: seat {seat} may take only {allowed} (R29: card ids "
                f"0..51 face up, 52 + card id face down on a lone table card, 104 believe and 105 challenge "
                f"a pending claim)"
            )
        return a

    # ------------------------------------------------------------------ observations
    def _output(
        self,
        state: BatchState,
        observation_out: torch.Tensor | None,
        rewards: torch.Tensor,
        done: torch.Tensor,
        hand_over: torch.Tensor,
        hand_result: dict[str, torch.Tensor],
        match_scores: torch.Tensor,
        winner: torch.Tensor,
    ) -> BatchStep:
        observation = self.observe(state, out=observation_out)
        # The mover's legal cards (R9) are its hand: the "hand" feature of its observation.
        hand = observation[:, self._hand_feature : self._cards_size : self._num_features]
        mask = hand > 0
        if self.settings.bluff:
            mask = self._bluff_mask(state, mask)
        return BatchStep(
            seat=state.turn,
            observation=observation,
            action_mask=mask,
            rewards=rewards,
            done=done,
            hand_over=hand_over,
            hand_result=hand_result,
            match_scores=match_scores,
            winner=winner,
        )

    def action_mask(self, state: BatchState) -> torch.Tensor:
        """(B, 52) bool: the cards the seat to move holds (R9); with the bluff variant (B, 106),
        see :meth:`_bluff_mask`."""
        index = (state.turn * self._num_codes)[:, None] + state.code
        held = self._legal.index_select(0, index.view(-1)).view(self.batch_size, NUM_CARD_IDS)
        return self._bluff_mask(state, held) if self.settings.bluff else held

    def _bluff_mask(self, state: BatchState, held: torch.Tensor) -> torch.Tensor:
        """(B, 106) bool, R29: the ``held`` cards face up, and face down where a claim is
        allowed; only believe and challenge while a claim waits for its answer."""
        pending = state.claimant >= 0
        face_up = held & ~pending[:, None]
        face_down = held & self._may_claim(state)[:, None]
        return torch.cat([face_up, face_down, pending[:, None].expand(-1, CHALLENGE - BELIEVE + 1)], 1)

    def _may_claim(self, state: BatchState) -> torch.Tensor:
        """(B,) bool, R29 as ``Game._may_claim``: exactly one card on the table, played face up
        by another side, no claim pending; with ``last_card_pisti=False`` not on the hand's
        very last card (R16)."""
        lone_by = (state.code.gather(1, state.top[:, None]).squeeze(1) % CODE_WIDTH).long()
        lone_player = (lone_by - PLAYED_BY).clamp(0, self.num_players - 1)
        other_side = self._side_of[lone_player] != self._side_of[state.turn]
        may = (state.claimant < 0) & (state.pile_size == 1) & (lone_by != NOBODY) & other_side
        if not self.settings.last_card_pisti:
            may = may & ~((state.in_hands == 1) & (state.stock_pos == NUM_CARD_IDS))
        return may

    def observe(
        self, state: BatchState, seat: torch.Tensor | None = None, out: torch.Tensor | None = None
    ) -> torch.Tensor:
        """(B, size) observations of ``seat`` (default: the seat to move), built with the
        Python encoder's tables; written into ``out`` when given."""
        B, n, S = self.batch_size, self.num_players, self.num_sides
        if out is not None and (
            out.shape != (B, self.observation_size) or out.dtype != torch.float32 or out.device != self.device
        ):
            raise ValueError(
                f"observation_out must be a float32 tensor of shape ({B}, {self.observation_size}) on "
                f"{self.device}, got {out.dtype} {tuple(out.shape)} on {out.device}"
            )
        if seat is None:
            seat = state.turn
        # Card block: each card's (location, playing seat) pair selects its feature row.
        pair = torch.add(state.code, (seat * self._num_codes).to(CODE_DTYPE)[:, None], out=self._pair_buffer)
        k = self._num_features
        # (Into a buffer kept between calls: fresh memory of this size costs more than the copy.)
        rows_of_features = torch.index_select(self._feature_pairs, 0, pair.view(-1), out=self._card_rows)
        obs = torch.empty(B, self.observation_size, device=self.device) if out is None else out
        obs[:, : self._cards_size].view(B, NUM_CARD_IDS, k).copy_(rows_of_features.view(B, NUM_CARD_IDS, k))
        rows = self._rows
        obs[rows, state.top * k + self._top_at] = (state.pile_size > 0).float()
        # The rest: counts, one-hots and the static entries (offsets relative to its start).
        rest = obs[:, self._cards_size :]
        rest.copy_(self._static_rest.expand(B, -1))
        sources = {  # the game counters of the count block, by the names the layout uses
            "hand_sizes": state.hand_sizes,
            "stock_size": (NUM_CARD_IDS - state.stock_pos)[:, None],
            "pile_size": state.pile_size[:, None],
            "pile_hidden": state.pile_hidden[:, None],
            "captured_count": state.side_counts[:, Row.CAPTURED],
            "pisti_count": state.side_counts[:, Row.PISTIS],
            "double_pisti_count": state.side_counts[:, Row.DOUBLE_PISTIS],
            "pisti_points": state.side_counts[:, Row.PISTI_POINTS],
            "public_points": state.side_counts[:, Row.PUBLIC_POINTS],
            "match_scores": state.side_counts[:, Row.MATCH_SCORES],
            "hands_completed": state.hands_completed[:, None],
        }
        counts = torch.cat([sources[name] for name in COUNT_SOURCES], 1).float()
        rest[:, self._counts] = counts.gather(1, self._count_gather[seat]) * self._count_scale
        last = torch.where(state.last_capturer >= 0, self._rel_side[seat, state.last_capturer.clamp(min=0)], S)
        at = self._cards_size
        obs[rows, at + self._last_capturer_at + last] = 1.0
        obs[rows, at + self._dealer_at + (state.dealer - seat) % n] = 1.0
        obs[rows, at + self._to_move_at + (state.turn - seat) % n] = 1.0
        if self.settings.bluff:
            self._observe_claims(state, seat, rest)
        return obs

    def _observe_claims(self, state: BatchState, seat: torch.Tensor, rest: torch.Tensor) -> None:
        """The claim block (R29, R30), as ``ObservationEncoder._encode_bluff``: the pending
        claim's seat (one-hot, seat-relative; all 0 when none), then each side's bluff points and
        claim counters in seat-relative side order, scaled by the encoder's scales. Written into
        ``rest``, the observation after its card block."""
        claim = ((state.claimant - seat) % self.num_players)[:, None] == self._seat_ids
        rest[:, self._claimant_at] = (claim & (state.claimant >= 0)[:, None]).float()
        values = state.side_counts[:, self._bluff_rows].reshape(self.batch_size, -1).float()
        rest[:, self._bluff_at] = values.gather(1, self._bluff_gather[seat]) * self._bluff_scale

    def hidden_information(self, state: BatchState, seat: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 52 * (n + 1)) float (52 * (n + 2) with the bluff variant): for each card,
        one-hot, whether it lies in the hand of the seat 1, ..., n - 1 places after ``seat``
        (default: the seat to move), in the stock, face down from the deal (R8: on the table or
        captured by another side), or (bluff variant) face down from another seat's claim,
        pending or believed (R29). Exactly what ``seat`` may NOT know (R30–R31): for a
        trainer's value network only; a policy must never read it."""
        if seat is None:
            seat = state.turn
        category = self._hidden_category[(seat * self._num_locations)[:, None] + state.where.long()]  # (B, 52)
        return (category[:, :, None] == self._hidden_ids).float().view(self.batch_size, self.hidden_information_size)


# (B, 52) fields a step copies once and then updates in place (cheaper than a copy per change).
_OWNED = ("code", "deck")
_RESULT_KEYS = ("cards", "card_points", "majority", "pisti", "double_pisti", "pisti_points", "total")


def _select(mask: torch.Tensor, chosen: BatchState, other: BatchState) -> BatchState:
    """Field by field, the games of ``chosen`` where ``mask`` and of ``other`` elsewhere (a
    field both hold as the same tensor is kept as it is)."""
    fields = {}
    for f in dataclasses.fields(BatchState):
        x, y = getattr(chosen, f.name), getattr(other, f.name)
        fields[f.name] = x if x is y else torch.where(mask.view(-1, *(1,) * (x.dim() - 1)), x, y)
    return BatchState(**fields)


def _take(state: BatchState, idx: torch.Tensor) -> BatchState:
    """The sub-batch of rows ``idx``."""
    return BatchState(**{f.name: getattr(state, f.name).index_select(0, idx) for f in dataclasses.fields(BatchState)})


def _put(state: BatchState, idx: torch.Tensor, sub: BatchState) -> BatchState:
    """``state`` with rows ``idx`` replaced by the sub-batch ``sub``. Out of place, except the
    (B, 52) fields in ``_OWNED``, which the step has copied already (see
    ``BatchedPisti.step_state``) and updates in place."""
    fields = {}
    for f in dataclasses.fields(BatchState):
        whole, part = getattr(state, f.name), getattr(sub, f.name)
        fields[f.name] = whole.index_copy_(0, idx, part) if f.name in _OWNED else whole.index_copy(0, idx, part)
    return BatchState(**fields)


def _cut_stock_bottom(deck: torch.Tensor, rank: torch.Tensor) -> torch.Tensor:
    """R28 cut, as ``pisti_env.game``: if the last card is a Jack, move the last non-Jack to the
    end of the deck."""
    is_jack = rank[deck] == JACK
    idx = torch.arange(NUM_CARD_IDS, device=deck.device).expand_as(deck)
    last_non_jack = torch.where(~is_jack, idx, -1).max(1).values  # (B,)
    need = is_jack[:, -1]
    # New order: every index except last_non_jack, then last_non_jack.
    after = idx >= last_non_jack[:, None]
    source = torch.where(after, (idx + 1).clamp(max=NUM_CARD_IDS - 1), idx)
    source[:, -1] = last_non_jack
    cut = deck.gather(1, source)
    return torch.where(need[:, None], cut, deck)
