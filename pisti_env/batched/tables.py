"""The static side of the batched engine: everything a transition reads besides the state and
the actions, built once per engine (settings, seed, reward mode, and the rule tables as
tensors on the engine's device)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..rules import locations as loc
from ..rules.cards import HAND_SIZE, NUM_CARD_IDS, RANK
from ..rules.counters import Counter, hand_result_keys, num_counters
from ..rules.settings import Settings
from ..rules.scoring import POINTS, captures, is_double_pisti, pisti_value
from .state import CODE_DTYPE, CODE_WIDTH

PILE_CLASSES = 3  # what a face-up play's outcome needs of the pile's size: empty, one card, more
PLAY_COLUMNS = ("capture", "pisti_points", "pistis", "double_pistis")  # the columns of ``Tables.play``


@dataclass(frozen=True)
class Tables:
    """Read-only inputs, besides the state and the actions, of the engine's functions
    (transitions, observations, masks, critic inputs) for a batch of ``batch_size`` games.

    Packed codes (``location * CODE_WIDTH + playing seat``) index the flattened tables:
    ``relabel[k * num_codes + code]`` and ``legal[seat * num_codes + code]``.
    """

    settings: Settings
    seed: int  # feeds every deck and first dealer (see `.decks`)
    reward_mode: str  # "diff" or "win", as the AEC env
    batch_size: int
    device: torch.device
    side_ids: torch.Tensor  # (S,) 0..S-1
    seat_ids: torch.Tensor  # (n,) 0..n-1
    num_players: int
    num_sides: int
    num_rows: int  # rows of ``side_counts``: the bluff rows only with the variant (R29)
    result_keys: tuple[str, ...]  # keys of ``BatchStep.hand_result``, in order
    num_locations: int  # location codes in use: the bluff variant's (R29) only with it
    num_codes: int  # packed codes in use: num_locations * CODE_WIDTH
    rank: torch.Tensor  # (52,) rank of each card id
    points: torch.Tensor  # (52,) card points (R20)
    side_of: torch.Tensor  # (n,) side of each seat (R4)
    # (1 + S) * num_codes: row 0 keeps every code; row 1 + side relabels a capture or sweep
    # (R10, R11, R19) by that side: the pile's public cards to its shown captures, the
    # never-turned ones to its hidden captures (R8).
    relabel: torch.Tensor
    # n * num_codes bool: the codes of cards seat may play, those in its hand (R9).
    legal: torch.Tensor
    # The outcome of a face-up play (R10–R17), one row per (card, top card, pile class, last
    # card of the hand), row ``((card * 52 + top) * PILE_CLASSES + min(pile size, 2)) * L +
    # last`` (L = 2 with ``last_card_pisti=False``, else 1 and no ``last`` term): the columns
    # of PLAY_COLUMNS, built with the Python engine's own `pisti_env.rules.scoring` functions.
    play: torch.Tensor
    # (2n, 3) int32, row ``seat * 2 + capture``: the ``relabel`` offset of the pile's cards
    # (0: keep), the played card's new code, and the seat's side.
    seat_play: torch.Tensor
    next_seat: torch.Tensor  # (n,) the seat after each seat in playing order
    # (n, 4n) codes, row ``first``: each card of a deal that starts at seat ``first`` in the
    # hand of the seat that receives it (R6.2: one card at a time, in playing order, four
    # times round; never played: playing-seat code NOBODY).
    deal_codes: torch.Tensor
    seats_are_sides: bool  # each seat its own side, in order (no partnerships): per-side is per-seat
    minus_ones: torch.Tensor  # (B, 1) int64 -1s: a seat's card leaves its hand
    # (B, 6) int64: where counter rows CAPTURED .. PISTI_POINTS of side 0 of each game lie in
    # the flattened ``side_counts`` (add the side): game b, row r at (b * rows + r) * S.
    face_up_counters: torch.Tensor

    def tensor(self, x: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        """``x`` (an array-like) as a tensor on the engine's device."""
        return _as_tensor(x, self.device, dtype)


def _as_tensor(x: Any, device: torch.device, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x), dtype=dtype, device=device)


def build_tables(settings: Settings, *, batch_size: int, device: torch.device, seed: int, reward_mode: str) -> Tables:
    """The `Tables` of an engine (its arguments already validated)."""
    n, S = settings.num_players, settings.num_sides
    num_locations = loc.NUM_LOCATIONS if settings.bluff else loc.NUM_PLAIN_LOCATIONS  # smaller tables
    # without the variant: the observation's lookup is a step's hottest gather, and it stays in cache
    num_codes = num_locations * CODE_WIDTH

    def t(x: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        return _as_tensor(x, device, dtype)

    relabel = np.tile(np.arange(num_codes).reshape(num_locations, CODE_WIDTH), (S + 1, 1, 1))
    for side in range(S):
        relabel[1 + side, loc.PILE_UP] += (loc.CAPT_SHOWN + side - loc.PILE_UP) * CODE_WIDTH
        relabel[1 + side, loc.PILE_JACK] += (loc.CAPT_SHOWN + side - loc.PILE_JACK) * CODE_WIDTH
        relabel[1 + side, loc.PILE_HIDDEN] += (loc.CAPT_HIDDEN + side - loc.PILE_HIDDEN) * CODE_WIDTH
    legal = np.zeros((n, num_locations, CODE_WIDTH), dtype=bool)
    seat_play = np.zeros((n, 2, 3), dtype=np.int64)
    for seat in range(n):
        legal[seat, [loc.HAND + seat, loc.HAND_SHOWN + seat]] = True
        side = settings.side_of(seat)
        seat_play[seat, 0] = (0, loc.PILE_UP * CODE_WIDTH + loc.PLAYED_BY + seat, side)  # R12
        seat_play[seat, 1] = ((1 + side) * num_codes, (loc.CAPT_SHOWN + side) * CODE_WIDTH + loc.PLAYED_BY + seat, side)
    return Tables(
        settings=settings,
        seed=seed,
        reward_mode=reward_mode,
        batch_size=batch_size,
        device=device,
        side_ids=torch.arange(S, device=device),
        seat_ids=torch.arange(n, device=device),
        num_players=settings.num_players,
        num_sides=settings.num_sides,
        num_rows=num_counters(settings.bluff),
        result_keys=hand_result_keys(settings.bluff),
        num_locations=num_locations,
        num_codes=num_codes,
        rank=t(RANK[:NUM_CARD_IDS]),
        points=t(POINTS[:NUM_CARD_IDS]),
        side_of=t([settings.side_of(i) for i in range(n)]),
        relabel=t(relabel.reshape(-1), CODE_DTYPE),
        legal=t(legal.reshape(-1), torch.bool),
        play=t(play_table(settings)),
        seat_play=t(seat_play.reshape(2 * n, 3), CODE_DTYPE),
        next_seat=t([(seat + 1) % n for seat in range(n)]),
        deal_codes=t(
            [[(loc.HAND + (first + j) % n) * CODE_WIDTH + loc.NOBODY for j in range(HAND_SIZE * n)] for first in range(n)],
            CODE_DTYPE,
        ),
        seats_are_sides=[settings.side_of(i) for i in range(n)] == list(range(S)),
        minus_ones=torch.full((batch_size, 1), -1, dtype=torch.int64, device=device),
        face_up_counters=t(
            (np.arange(batch_size)[:, None] * num_counters(settings.bluff) + np.arange(Counter.MATCH_SCORES)) * S
        ),
    )


def play_table(settings: Settings) -> np.ndarray:
    """The rows of ``Tables.play``: for each card played face up on a pile with that top card
    (meaningless when empty), pile class and (with ``last_card_pisti=False``) whether it is
    the hand's very last card, whether it captures (R10, R11), its pişti points (R13–R17,
    ``pisti_value``) and whether it counts as a pişti or a double pişti (R14)."""
    lasts = (False,) if settings.last_card_pisti else (False, True)
    rows = np.zeros((NUM_CARD_IDS, NUM_CARD_IDS, PILE_CLASSES, len(lasts), len(PLAY_COLUMNS)), dtype=np.int64)
    for card in range(NUM_CARD_IDS):
        for top in range(NUM_CARD_IDS):
            for pile in range(1, PILE_CLASSES):  # an empty pile (class 0) takes nothing: all 0
                for i, last in enumerate(lasts):
                    points = pisti_value(card, top, pile, settings, last)
                    double = bool(points) and is_double_pisti(card, top, settings)
                    rows[card, top, pile, i] = (captures(card, top), points, bool(points) and not double, double)
    return rows.reshape(-1, len(PLAY_COLUMNS))
