"""[`BatchedPisti`][pisti_env.batched.BatchedPisti]: the batched engine's face. It checks its inputs, holds the current
state, and hands the work to the pure functions of `.transitions`, the
`ObservationWriter` and the critic's `HiddenInformation`."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import torch

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..util.arguments import check_int, check_sequence
from ..rules.cards import JACK, NUM_CARD_IDS, RANK, TABLE_SIZE, parse_card
from ..views.observation import ObservationEncoder
from ..rules.settings import make_settings
from . import transitions
from .compact import FLOAT_BYTES, FORMATS
from .critic import HiddenInformation
from .decks import cut_stock_bottom
from .observe import ObservationWriter
from .state import BatchState, BatchStep
from .tables import build_tables
from .transitions import Outcome


# Memory: the bytes one game needs at the engine's peak (its tables and state, the float32
# observations a step writes, a step's temporaries) are 14.5-16.5 times the observation size on
# a CPU (``benchmarks/bench_memory.py`` measures it for 2, 4 players and the bluff variant; the
# larger figure at 20,000 games, where fixed costs weigh more, the smaller at 80,000). The
# estimate takes 16: the sizes that come near the memory's limit are large ones, so a size is
# refused only when it cannot fit, and at once, instead of a MemoryError after seconds of
# allocating.
BYTES_PER_OBSERVATION_ENTRY = 16


def available_memory(device: torch.device) -> int | None:
    """Bytes free for new tensors on ``device``: a CUDA device's free memory, the host's
    ``MemAvailable`` (Linux) or available pages elsewhere; ``None`` when it cannot be told."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    if device.type != "cpu":
        return None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _size(count: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"
        count /= 1024  # type: ignore[assignment]
    raise AssertionError


def check_memory(count: int, bytes_per_game: int, device: torch.device, name: str) -> None:
    """A ``ValueError`` when ``count`` games of ``bytes_per_game`` bytes need more memory than
    ``device`` has available, naming the argument ``name``, the estimate and the largest size
    that fits; nothing when the available memory cannot be told."""
    need = count * bytes_per_game
    have = available_memory(device)
    if have is not None and need > have:
        raise ValueError(
            f"{name}={count:,} needs about {_size(need)} ({bytes_per_game:,} bytes per game), more than the "
            f"{_size(have)} available on {device}; at most about {have // bytes_per_game:,} games fit"
        )


class BatchedPisti:
    """B Pişti games stepped together on one device.

    Args:
        batch_size: number of games B.
        device: torch device (``"cpu"``, ``"cuda"``, …); everything lives there.
        seed: seeds every deck and first dealer (through the counter-based hash).
        reward: ``"diff"`` or ``"win"``, as in the AEC env.
        **settings: game settings (RULES.md's table); unsupported ones raise ``ValueError``.

    A ``batch_size`` whose estimated memory (`BYTES_PER_OBSERVATION_ENTRY` bytes per
    observation entry and game) exceeds what ``device`` has available is a ``ValueError`` at
    once, naming the estimate.
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
        batch_size = check_int(batch_size, "batch_size", low=1)
        if reward not in ("diff", "win"):
            raise ValueError(f"reward must be 'diff' or 'win', got {reward!r}")
        seed = check_int(seed, "seed", low=0)
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
        self.num_players = s.num_players
        self.num_sides = s.num_sides
        self.num_actions = s.num_actions  # 52, or 106 with the bluff variant (R29)
        self.encoder = ObservationEncoder(s)
        check_memory(batch_size, BYTES_PER_OBSERVATION_ENTRY * self.encoder.layout.size, self.device, "batch_size")
        self.tables = build_tables(s, batch_size=batch_size, device=self.device, seed=seed, reward_mode=reward)
        self._writer = ObservationWriter(self.tables, self.encoder)
        self._hidden = HiddenInformation(self.tables)
        self.observation_size = self._writer.size
        self.packed_observation_size = self._writer.packed_size  # bytes per game, "uint8" format
        self.hidden_information_size = self._hidden.size
        self.state: BatchState | None = None

    @property
    def side_of(self) -> torch.Tensor:
        """(n,) the side of each seat (R4), on the engine's device."""
        return self.tables.side_of


    # ------------------------------------------------------------------ public API
    def reset(
        self,
        decks: Sequence[Sequence[int | str]] | torch.Tensor | None = None,
        dealers: Sequence[int] | torch.Tensor | None = None,
        observation_out: torch.Tensor | None = None,
        observation_format: str = "float",
    ) -> BatchStep:
        """Start B new episodes; optionally from given first-hand decks (B × 52 card ids or
        text codes, item 0 dealt first) and dealers (B seats). Later hands and episodes draw
        their decks from the seed. ``observation_out``, ``observation_format``: see [`step`][pisti_env.batched.BatchedPisti.step]."""
        self._check_out(observation_out, observation_format)
        given_decks = None if decks is None else self._validated_decks(decks)
        given_dealers = None if dealers is None else self._validated_dealers(dealers)
        self.state = transitions.first_state(self.tables, given_decks, given_dealers)
        return self.peek(self.state, observation_out, observation_format)

    def peek(
        self,
        state: BatchState | None = None,
        observation_out: torch.Tensor | None = None,
        observation_format: str = "float",
    ) -> BatchStep:
        """The seat to move, its observation and mask in ``state`` (default: the current
        state), as a [`BatchStep`][pisti_env.batched.state.BatchStep] with no rewards and no episode or hand ended.
        ``observation_out``, ``observation_format``: see [`step`][pisti_env.batched.BatchedPisti.step]."""
        state = self.state if state is None else state
        if state is None:
            raise ValueError("call reset() first")
        self._check_out(observation_out, observation_format)
        outcome = transitions.quiet_outcome(self.tables, state)
        return self._output(state, observation_out, outcome, observation_format)

    def step(
        self,
        actions: torch.Tensor | Sequence[int],
        observation_out: torch.Tensor | None = None,
        active: torch.Tensor | None = None,
        observation_format: str = "float",
    ) -> BatchStep:
        """Every game's seat to move takes ``actions[b]``: a card id, or with the bluff variant
        any action id of `pisti_env.rules.actions` (R29: ``FACE_DOWN + id``, ``BELIEVE``,
        ``CHALLENGE``); see [`BatchStep`][pisti_env.batched.state.BatchStep]. Finished games restart at once, so the batch
        stays full.

        ``observation_out``: an optional (B, observation_size) float32 tensor on the engine's
        device to write the observations into (a trainer's rollout storage, say); it saves
        allocating fresh memory for them at every step, the largest single cost on a CPU
        ([`observation_buffer`][pisti_env.batched.BatchedPisti.observation_buffer] makes one).

        ``observation_format``: ``"float"`` (the default: the observation vector, float32) or
        ``"uint8"``: the same vectors packed as (B, packed_observation_size) bytes, the card
        block one byte per entry (a quarter of the float memory), cheaper to write and to
        store; `pisti_env.batched.compact.expand` turns them into the float vectors, bit
        for bit. ``observation_out`` must then be such a uint8 tensor.

        ``active``: an optional (B,) bool tensor; only those games move, the others keep their
        state bit for bit and get no rewards and no ``done``/``hand_over`` (their ``actions``
        entries are ignored). The observations and masks returned are those of every game's
        seat to move, as always.

        Raises ``ValueError`` naming the first game with an illegal action (and that game's
        legal ones); the state is then unchanged."""
        if self.state is None:
            raise ValueError("call reset() before step()")
        self.state, out = self.step_state(self.state, actions, observation_out, active, observation_format)
        return out

    def step_state(
        self,
        state: BatchState,
        actions: torch.Tensor | Sequence[int],
        observation_out: torch.Tensor | None = None,
        active: torch.Tensor | None = None,
        observation_format: str = "float",
    ) -> tuple[BatchState, BatchStep]:
        """The pure step: ``(state, actions) -> (next state, BatchStep)``; ``state`` is not
        modified (see `pisti_env.batched.transitions.step`), and ``self.state`` is
        neither read nor written. ``observation_out``, ``active``, ``observation_format``: see
        [`step`][pisti_env.batched.BatchedPisti.step]."""
        self._check_out(observation_out, observation_format)  # before the step: a bad buffer must change nothing
        active = self._validated_active(active)
        a = self._validated_actions(state, actions, active)
        state, outcome = transitions.step(self.tables, state, a, active)
        return state, self._output(state, observation_out, outcome, observation_format)

    def observe(
        self,
        state: BatchState,
        seat: torch.Tensor | None = None,
        out: torch.Tensor | None = None,
        observation_format: str = "float",
    ) -> torch.Tensor:
        """(B, observation_size) observations of ``seat`` (default: the seat to move), built
        with the Python encoder's tables; written into ``out`` when given. With
        ``observation_format="uint8"`` packed, see [`step`][pisti_env.batched.BatchedPisti.step]."""
        self._check_out(out, observation_format)
        return self._writer.observe(state, state.turn if seat is None else seat, out, observation_format)

    def observation_buffer(self, observation_format: str = "float") -> torch.Tensor:
        """A fresh buffer on the engine's device for ``observation_out`` in
        ``observation_format`` ("float": (B, observation_size) float32; "uint8": (B,
        packed_observation_size) bytes)."""
        self._check_format(observation_format)
        return self._writer.empty(observation_format)

    def action_mask(self, state: BatchState) -> torch.Tensor:
        """(B, num_actions) bool: the legal actions of the seat to move (R9; R29 with the bluff
        variant)."""
        return self._writer.action_mask(state)

    def hidden_information(self, state: BatchState, seat: torch.Tensor | None = None) -> torch.Tensor:
        """(B, hidden_information_size) float: for each card, one-hot, whether it lies in the
        hand of the seat 1, ..., n - 1 places after ``seat`` (default: the seat to move), in
        the stock, face down from the deal (R8: on the table or captured by another side), or
        (bluff variant) face down from another seat's claim, pending or believed (R29).
        Exactly what ``seat`` may NOT know (R30–R31): for a trainer's value network only; a
        policy must never read it."""
        return self._hidden(state, state.turn if seat is None else seat)

    # ------------------------------------------------------------------ internals
    def _output(
        self, state: BatchState, observation_out: torch.Tensor | None, outcome: Outcome, observation_format: str
    ) -> BatchStep:
        """The [`BatchStep`][pisti_env.batched.state.BatchStep] of ``outcome``, with the next seat's observation and mask."""
        observation = self._writer.observe(state, state.turn, observation_out, observation_format)
        mask = self._writer.mover_mask(state, observation, observation_format)
        return BatchStep(seat=state.turn, observation=observation, action_mask=mask, **vars(outcome))

    def _check_format(self, observation_format: Any) -> None:
        if not isinstance(observation_format, str) or observation_format not in FORMATS:
            raise ValueError(f"observation_format must be one of {', '.join(map(repr, FORMATS))}, got {observation_format!r}")

    def _check_out(self, out: torch.Tensor | None, observation_format: str = "float") -> None:
        self._check_format(observation_format)
        if out is None:
            return
        B = self.batch_size
        size, dtype = (
            (self.observation_size, torch.float32)
            if observation_format == "float"
            else (self.packed_observation_size, torch.uint8)
        )
        if (
            not isinstance(out, torch.Tensor)
            or out.shape != (B, size)
            or out.dtype != dtype
            or out.device != self.device
            or out.stride(1) != 1  # each row in one piece (a slice of rollout storage will do)
            or (observation_format == "uint8" and out.stride(0) % FLOAT_BYTES)  # the rest read as float32
        ):
            got = f"{out.dtype} {tuple(out.shape)} on {out.device}" if isinstance(out, torch.Tensor) else type(out).__name__
            raise ValueError(
                f"observation_out must be a {str(dtype).removeprefix('torch.')} tensor of shape ({B}, {size}) on "
                f"{self.device} with contiguous rows (the {observation_format!r} observation format), got {got}"
            )

    def _validated_decks(self, decks: Any) -> torch.Tensor:
        B = self.batch_size
        what = f"a sequence of {B} decks (each a sequence of card ids or text codes) or a ({B}, 52) tensor"
        if isinstance(decks, torch.Tensor):
            rows = decks.tolist()
        else:
            rows = [list(check_sequence(d, f"deck of game {i}", "a sequence of card ids or text codes"))
                    for i, d in enumerate(check_sequence(decks, "decks", what))]
        if len(rows) != B:
            raise ValueError(f"decks must hold one deck per game ({B}), got {len(rows)}")
        ids = []
        for i, row in enumerate(rows):
            if len(row) != NUM_CARD_IDS:
                raise ValueError(f"deck of game {i} must hold {NUM_CARD_IDS} cards, got {len(row)}")
            try:
                cards = [parse_card(c) for c in row]
            except (TypeError, ValueError) as error:  # name the argument
                raise type(error)(f"deck of game {i}: {error}") from None
            if sorted(cards) != list(range(NUM_CARD_IDS)):
                raise ValueError(f"deck of game {i} must hold every card exactly once")
            if all(RANK[c] == JACK for c in cards[:TABLE_SIZE]):
                raise ValueError(f"deck of game {i} deals four Jacks to the table: a void deal (R7)")
            ids.append(cards)
        deck = torch.tensor(ids, dtype=torch.int64, device=self.device)
        return cut_stock_bottom(deck, self.tables.rank) if self.settings.show_stock_bottom else deck

    def _validated_dealers(self, dealers: Any) -> torch.Tensor:
        values = dealers.tolist() if isinstance(dealers, torch.Tensor) else list(
            check_sequence(dealers, "dealers", f"a sequence of {self.batch_size} seats or a tensor"))
        if len(values) != self.batch_size:
            raise ValueError(f"dealers must hold one seat per game ({self.batch_size}), got {len(values)}")
        values = [check_int(d, f"dealer of game {i}", low=0, high=self.num_players - 1, kind="seat")
                  for i, d in enumerate(values)]
        return torch.tensor(values, dtype=torch.int64, device=self.device)

    def _validated_active(self, active: Any) -> torch.Tensor | None:
        if active is None:
            return None
        if not isinstance(active, torch.Tensor) or active.dtype != torch.bool or active.shape != (self.batch_size,):
            got = f"{active.dtype} {tuple(active.shape)}" if isinstance(active, torch.Tensor) else type(active).__name__
            raise ValueError(f"active must be None or a bool tensor of shape ({self.batch_size},), got {got}")
        return active.to(self.device)

    def _validated_actions(self, state: BatchState, actions: Any, active: torch.Tensor | None = None) -> torch.Tensor:
        """``actions`` as a (B,) int64 tensor on the device, each legal in its game (R9; R29
        with the bluff variant: legal in the game's mask). Where ``active`` is False the entry
        is ignored: replaced by the game's first legal action, which the step then discards."""
        what = "action ids" if self.settings.bluff else "card ids"
        if not isinstance(actions, torch.Tensor):
            try:
                actions = torch.as_tensor(np.asarray(actions), device=self.device)
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(f"actions must be an integer tensor or sequence of {what}, got {type(actions).__name__}") from None
        if actions.dtype.is_floating_point or actions.dtype == torch.bool or actions.is_complex():
            raise TypeError(f"actions must be an integer tensor of {what}, got dtype {actions.dtype}")
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), got {tuple(actions.shape)}")
        a = actions.to(device=self.device, dtype=torch.int64)
        if active is not None:
            a = torch.where(active, a, self.action_mask(state).to(torch.uint8).argmax(1))
        legal = self._writer.takes_legal(state, a)
        if not bool(legal.all()):
            b = int((~legal).nonzero()[0, 0])
            seat = int(state.turn[b])
            allowed = self.action_mask(state)[b].nonzero().squeeze(1).tolist()
            if self.settings.bluff:
                raise ValueError(
                    f"illegal action {int(a[b])} in game {b}: seat {seat} may take only {allowed} (R29: card ids "
                    f"0..{NUM_CARD_IDS - 1} face up, {FACE_DOWN} + card id face down on a lone table card, "
                    f"{BELIEVE} believe and {CHALLENGE} challenge a pending claim)"
                )
            raise ValueError(
                f"illegal action {int(a[b])} in game {b}: seat {seat} may play only {allowed} "
                f"(card ids 0..{NUM_CARD_IDS - 1} held in its hand)"
            )
        return a
