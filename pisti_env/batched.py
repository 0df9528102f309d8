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
``ten_diamonds_pisti_bonus``, ``show_stock_bottom``. Not supported (clear ``ValueError``):
two decks (5–6 players) and the bluff variant.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Sequence

import numpy as np
import torch

from .cards import JACK, NUM_CARD_IDS, POINTS, RANK, TEN_DIAMONDS, parse_card
from .game import (
    HAND_SIZE,
    LOC_CAPT_HIDDEN,
    LOC_CAPT_SHOWN,
    LOC_HAND,
    LOC_HAND_SHOWN,
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
NUM_LOCATIONS = LOC_CAPT_HIDDEN + 6  # location codes are 0..28
NUM_CODES = NUM_LOCATIONS * CODE_WIDTH  # packed card codes: location * 256 + playing seat
CODE_DTYPE = torch.int32  # codes and the indices built from them stay below 2**31; half the bytes of int64



class Row(IntEnum):
    """Rows of ``BatchState.side_counts`` (B, len(Row), sides): the per-side counters."""

    CAPTURED = 0  # cards captured this hand
    CARD_POINTS = 1  # their points (R20), hidden ones included
    PUBLIC_POINTS = 2  # points everyone can count this hand (R30)
    PISTIS = 3  # piştis this hand (R13; R14 with double_pisti=10)
    DOUBLE_PISTIS = 4  # double piştis this hand (R14)
    PISTI_POINTS = 5  # their points (R13-R17)
    MATCH_SCORES = 6  # totals of the finished hands of this episode (R24)

_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class BatchState:
    """The state of B games; every field is a tensor with the batch on dimension 0.

    ``code[b, card]`` is ``where * 256 + played_by``: the card's location code and its
    playing-seat code, exactly as ``Game.where`` / ``Game.played_by`` of the Python engine
    (see the ``where`` and ``played_by`` properties);
    ``deck[b]`` this hand's deck (card ids, item 0 dealt first, after the R28 cut);
    ``side_counts[b, k, side]`` the per-side counters of :class:`Row`.
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
    episode where ``done``). ``rewards[b, s]`` is seat ``s``'s reward for this step (the AEC
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
        relabel = np.tile(np.arange(NUM_CODES).reshape(NUM_LOCATIONS, CODE_WIDTH), (self.num_sides + 1, 1, 1))
        for side in range(self.num_sides):
            relabel[1 + side, LOC_PILE_UP] += (LOC_CAPT_SHOWN + side - LOC_PILE_UP) * CODE_WIDTH
            relabel[1 + side, LOC_PILE_JACK] += (LOC_CAPT_SHOWN + side - LOC_PILE_JACK) * CODE_WIDTH
            relabel[1 + side, LOC_PILE_HIDDEN] += (LOC_CAPT_HIDDEN + side - LOC_PILE_HIDDEN) * CODE_WIDTH
        self._relabel = t(relabel.reshape(-1), CODE_DTYPE)
        # The encoder's tables: a card's feature row for each observer is the sum of the rows
        # of its location code and of its playing-seat code, precomputed for every pair and
        # flattened: entry seat * NUM_CODES + code.
        rows = self.encoder.feature_rows[:, :NUM_LOCATIONS, None, :] + self.encoder.feature_rows[:, None, :, :]
        self._feature_pairs = t(rows.reshape(-1, rows.shape[-1]), torch.float32)
        self._num_features = self.encoder.layout.num_card_features
        self._card_rows = torch.empty(batch_size * NUM_CARD_IDS, self._num_features, device=dev)
        self._pair_buffer = torch.empty(batch_size, NUM_CARD_IDS, dtype=CODE_DTYPE, device=dev)
        self._hand_feature = self.encoder.layout.feature_index["hand"]
        self._cards_size = self.encoder.layout.cards_size
        legal = np.zeros((n, NUM_LOCATIONS, CODE_WIDTH), dtype=bool)
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
        self.state: BatchState | None = None

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
            side_counts=torch.zeros(B, len(Row), S, dtype=torch.int64, device=dev),
            reward_base=torch.zeros(B, S, dtype=torch.int64, device=dev),
            hands_completed=zeros,
            episode=zeros,
            attempt=zeros,
            slot=torch.arange(B, device=dev),
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
            hand_result={k: torch.zeros(B, S, dtype=torch.int64, device=dev) for k in _RESULT_KEYS},
            match_scores=state.side_counts[:, Row.MATCH_SCORES],
            winner=torch.full((B,), -1, dtype=torch.int64, device=dev),
        )

    def step(self, actions: torch.Tensor | Sequence[int], observation_out: torch.Tensor | None = None) -> BatchStep:
        """Every game's seat to move plays ``actions[b]`` (a card id); see :class:`BatchStep`.

        ``observation_out``: an optional (B, observation_size) float32 tensor on the engine's
        device to write the observations into (a trainer's rollout storage, say); it saves
        allocating fresh memory for them at every step, the largest single cost on a CPU.

        Raises ``ValueError`` naming the first game with an illegal card (and that game's legal
        cards); the state is then unchanged."""
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
            relabel = ((side[takers] + 1) * NUM_CODES)[:, None] + code[takers]
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
        state = state.replace(
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

        # R18: deal again when every hand is empty; R19–R26 when the stock is empty too.
        hands_empty = in_hands == 0
        need_deal = hands_empty & (state.stock_pos < NUM_CARD_IDS)
        hand_over = hands_empty & ~need_deal
        if bool(need_deal.any()):
            state = self._deal(state, need_deal)
        S = self.num_sides
        hand_result = {k: torch.zeros(B, S, dtype=torch.int64, device=dev) for k in _RESULT_KEYS}
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
        code = self._relabel.index_select(0, (((taker + 1) * sweep)[:, None] * NUM_CODES + state.code).view(-1))
        counts = state.side_counts.clone()
        counts[:, Row.CAPTURED] += taker_onehot * state.pile_size[:, None]
        counts[:, Row.CARD_POINTS] += taker_onehot * (state.pile_points_public + state.pile_points_hidden)[:, None]

        # R21: 3 points for strictly the most cards; R22 totals.
        cards = counts[:, Row.CAPTURED]
        is_best = cards == cards.max(1, keepdim=True).values
        majority = is_best * (is_best.sum(1, keepdim=True) == 1) * MAJORITY_POINTS
        total = counts[:, Row.CARD_POINTS] + majority + counts[:, Row.PISTI_POINTS]
        hand_result = {
            "cards": cards,
            "card_points": counts[:, Row.CARD_POINTS],
            "majority": majority,
            "pisti": counts[:, Row.PISTIS],
            "double_pisti": counts[:, Row.DOUBLE_PISTIS],
            "pisti_points": counts[:, Row.PISTI_POINTS],
            "total": total,
        }
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
            raise TypeError(f"actions must be an integer tensor of card ids, got dtype {actions.dtype}")
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {tuple(actions.shape)}")
        a = actions.to(device=self.device, dtype=torch.int64)
        in_range = (a >= 0) & (a < NUM_CARD_IDS)
        code = state.code.gather(1, a.clamp(0, NUM_CARD_IDS - 1)[:, None]).squeeze(1)
        legal = in_range & self._legal[state.turn * NUM_CODES + code]
        if not bool(legal.all()):
            b = int((~legal).nonzero()[0, 0])
            seat = int(state.turn[b])
            held = self._legal[seat * NUM_CODES + state.code[b]].nonzero().squeeze(1).tolist()
            raise ValueError(
                f"illegal action {int(a[b])} in game {b}: seat {seat} may play only {held} "
                f"(card ids 0..51 held in its hand)"
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
        return BatchStep(
            seat=state.turn,
            observation=observation,
            action_mask=hand > 0,
            rewards=rewards,
            done=done,
            hand_over=hand_over,
            hand_result=hand_result,
            match_scores=match_scores,
            winner=winner,
        )

    def action_mask(self, state: BatchState) -> torch.Tensor:
        """(B, 52) bool: the cards the seat to move holds (R9)."""
        index = (state.turn * NUM_CODES)[:, None] + state.code
        return self._legal.index_select(0, index.view(-1)).view(self.batch_size, NUM_CARD_IDS)

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
        pair = torch.add(state.code, (seat * NUM_CODES).to(CODE_DTYPE)[:, None], out=self._pair_buffer)
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
        return obs


# (B, 52) fields a step copies once and then updates in place (cheaper than a copy per change).
_OWNED = ("code", "deck")
_RESULT_KEYS = ("cards", "card_points", "majority", "pisti", "double_pisti", "pisti_points", "total")


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
