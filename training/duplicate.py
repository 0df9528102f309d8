"""Duplicate deals: every deal played once per seat rotation, so the deal's luck cancels.

A *table* is a list of player specs, one per **lineup position**; at rotation ``r`` seat ``s``
is taken by lineup position ``(s + r) % n``, so over the ``n`` rotations of a deal every
position sits in every seat once, with the same cards and the same dealer. A lineup lists
*entries* (the players compared), e.g. ``[0, 1]`` for two players, ``[0, 1, 0, 1]`` for
partnerships (R4: seats 0+2 against 1+3), ``[0, 1, 2]`` for three.

Deal ``i`` of an evaluation is the game seeded from (master seed, ``i``) (deck and dealer,
R5–R6), so two evaluations with the same seed see the same deals, whatever the number of
worker processes; each player is reseeded from the deal seed, its rotation and its seat.
Results come back in deal order.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pisti_env import Game, Settings
from pisti_env.agents import SeatView
from pisti_env.agents.base import Player

DEAL, MATCH = 0, 1  # seed streams: single-hand deals and whole matches


def stream_seed(master_seed: int, stream: int, index: int) -> int:
    """A 63-bit seed for item ``index`` of a stream, derived from the master seed (NumPy's
    ``SeedSequence``, so neighbouring indices give unrelated games)."""
    words = np.random.SeedSequence([int(master_seed) & 0xFFFFFFFFFFFFFFFF, stream, index]).generate_state(2)
    return (int(words[0]) << 31) ^ int(words[1])


def player_seed(game_seed: int, rotation: int, seat: int) -> int:
    """Seed of the player in ``seat`` at ``rotation`` of the game seeded ``game_seed``."""
    return (game_seed * 1_000_003 + rotation * 64 + seat + 1) & 0x7FFFFFFFFFFFFFFF


def seat_positions(num_players: int, rotation: int) -> list[int]:
    """Lineup position sitting in each seat at ``rotation``."""
    return [(seat + rotation) % num_players for seat in range(num_players)]


@dataclass(frozen=True)
class Table:
    """What a batch of games is played with.

    Attributes:
        specs: player spec of each lineup position (``len == num_players``).
        settings: the game settings; ``target`` decides single hands (``None``) or matches.
    """

    specs: tuple[str, ...]
    settings: Settings

    def __post_init__(self) -> None:
        if len(self.specs) != self.settings.num_players:
            raise ValueError(
                f"a table needs one player spec per seat: {self.settings.num_players} seats, got {len(self.specs)}"
            )


def play_game(game: Game, players: Sequence[Player]) -> Game:
    """Play ``game`` to its end (a hand, or a match) with ``players[seat]`` in each seat."""
    step = game.step
    while not game.done:
        seat = game.turn
        step(players[seat].act(SeatView(game, seat)))
    return game


def play_rotations(table: Table, players: Sequence[Player], game_seed: int) -> list[dict[str, Any]]:
    """Play the game seeded ``game_seed`` once per rotation.

    Args:
        table: the specs and settings.
        players: one player object per lineup position (built from ``table.specs``).
        game_seed: seeds the deck(s) and first dealer.

    Returns one record per rotation: ``dealer`` (of the first hand), ``totals`` (per side: the hand's total, or the
    match total), ``winner`` (side or ``None``) and ``hands`` (hands played).
    """
    n = table.settings.num_players
    records = []
    for rotation in range(n):
        positions = seat_positions(n, rotation)
        seated = [players[p] for p in positions]
        for seat, player in enumerate(seated):
            player.reset(player_seed(game_seed, rotation, seat))
        game = Game(table.settings, seed=game_seed)
        dealer = game.dealer
        play_game(game, seated)
        records.append(
            {
                "dealer": dealer,
                "totals": list(game.match_scores),
                "winner": game.winner,
                "hands": game.hands_completed,
            }
        )
    return records


# ---------------------------------------------------------------------------- workers
_WORKER: dict[str, Any] = {}


def _init_worker(table: Table, loader: Callable[[str], Player]) -> None:
    _WORKER["table"] = table
    _WORKER["players"] = [loader(spec) for spec in table.specs]


def _play_chunk(job: tuple[int, int, int, int]) -> list[list[dict[str, Any]]]:
    master_seed, stream, start, stop = job
    table, players = _WORKER["table"], _WORKER["players"]
    return [play_rotations(table, players, stream_seed(master_seed, stream, i)) for i in range(start, stop)]


def default_workers() -> int:
    """Worker processes by default: every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_games(
    table: Table,
    count: int,
    master_seed: int,
    *,
    stream: int = DEAL,
    workers: int = 1,
    loader: Callable[[str], Player] | None = None,
    chunk: int = 0,
    progress: Callable[[int], None] | None = None,
) -> list[list[dict[str, Any]]]:
    """Play ``count`` duplicate games (each once per rotation) and return their records in order.

    Args:
        table: the specs and settings.
        count: number of deals (or matches).
        master_seed: the evaluation's seed; game ``i`` is seeded by :func:`stream_seed`.
        stream: :data:`DEAL` or :data:`MATCH`, so matches do not replay the hand deals.
        workers: processes to use; the results do not depend on it.
        loader: builds a player from a spec (default :func:`training.players.load_player`).
        chunk: games per job (0: automatic).
        progress: called with the number of games just finished, for a progress bar.
    """
    if loader is None:
        from .players import load_player as loader
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an int >= 0, got {count!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if count == 0:
        return []
    if chunk <= 0:
        chunk = max(1, min(100, count // (workers * 8) or 1))
    jobs = [(master_seed, stream, s, min(s + chunk, count)) for s in range(0, count, chunk)]
    results: list[list[dict[str, Any]]] = []

    def collect(chunks: Iterator[list[list[dict[str, Any]]]]) -> None:
        for part in chunks:
            results.extend(part)
            if progress is not None:
                progress(len(part))

    if workers == 1 or len(jobs) == 1:
        _init_worker(table, loader)
        try:
            collect(map(_play_chunk, jobs))
        finally:
            _WORKER.clear()
    else:
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        with ctx.Pool(min(workers, len(jobs)), initializer=_init_worker, initargs=(table, loader)) as pool:
            collect(pool.imap(_play_chunk, jobs))
    return results
