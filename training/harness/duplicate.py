"""Duplicate deals: every deal is played once per seating, so the deal's luck cancels.

A table compares *entries* (the players' specs). A *seating* gives the entry in each seat;
every deal (or match) is played once per seating, with the same cards and the same dealer:

* two sides (2 players, or 4 in partnerships, R4): the seat rotations, so each player holds
  each seat once (``A B`` then ``B A``; ``A B A B`` then ``B A B A``, partners opposite);
* three or more sides: every distinct order of the lineup (6 for three players), so each
  player holds each seat equally often *and* follows each other player equally often. Plain
  rotations keep the playing order cyclic (A always after C), which favours whoever follows
  the weakest player; ``seatings="rotations"`` still gives them.

Game ``i`` of an evaluation is seeded from (master seed, stream, ``i``) (deck and dealer,
R5–R6), so two evaluations with the same seed see the same deals, whatever the number of
worker processes; each player is reseeded from the game seed, its seating and its seat.
Results come back in game order.

A player that raises (anything but ``KeyboardInterrupt``: ``SystemExit`` too, which would end
the program or a worker process with nothing said) or chooses an illegal action is a
[`PlayerError`][training.harness.duplicate.PlayerError] naming its spec, on either engine.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pisti_env import Game, Settings
from pisti_env.agents import Player, SeatView, make_player
from pisti_env.tools.replay import GameRecorder

DEAL, MATCH = 0, 1  # seed streams: single-hand deals and whole matches
SEATING_MODES = ("auto", "rotations", "permutations")
MAX_FAILURE_CHARS = 200


class PlayerError(ValueError):
    """A player at a table failed: it raised, or it chose an illegal action.

    Attributes:
        player: the player's spec at the table (its entry).
        problem: what it did, e.g. ``"chose an illegal action: ..."``.
    """

    def __init__(self, player: str, problem: str) -> None:
        super().__init__(player, problem)  # both in args: the error pickles back from a worker process
        self.player, self.problem = player, problem

    def __str__(self) -> str:
        return f"player {self.player!r} {self.problem}"


def failure_text(error: BaseException) -> str:
    """An exception raised by a player's (or an agent's) own code as one short line: its type
    and its first line of text, cut to `MAX_FAILURE_CHARS` characters."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= MAX_FAILURE_CHARS else text[: MAX_FAILURE_CHARS - 1] + "…"


def stream_seed(master_seed: int, stream: int, index: int) -> int:
    """A 63-bit seed for item ``index`` of a stream, derived from the master seed (NumPy's
    ``SeedSequence``, so neighbouring indices give unrelated games)."""
    words = np.random.SeedSequence([int(master_seed) & 0xFFFFFFFFFFFFFFFF, stream, index]).generate_state(2)
    return (int(words[0]) << 31) ^ int(words[1])


def player_seed(game_seed: int, seating: int, seat: int) -> int:
    """Seed of the player in ``seat`` at seating number ``seating`` of the game seeded ``game_seed``."""
    return (game_seed * 1_000_003 + seating * 64 + seat + 1) & 0x7FFFFFFFFFFFFFFF


def make_seatings(lineup: Sequence[int], settings: Settings, mode: str = "auto") -> tuple[tuple[int, ...], ...]:
    """The seatings (entry per seat) a deal is played with, without repeats.

    Args:
        lineup: the entry of each seat in the first seating (e.g. ``[0, 1, 0, 1]``).
        settings: the table's settings (seats and sides).
        mode: ``"rotations"``, ``"permutations"`` (every distinct order; only for tables of
            three or more sides, where no partnership can be broken) or ``"auto"``
            (rotations with two sides, permutations otherwise).
    """
    n = settings.num_players
    if len(lineup) != n:
        raise ValueError(f"a lineup needs one entry per seat: {n} seats, got {len(lineup)}")
    if mode not in SEATING_MODES:
        raise ValueError(f"seatings must be one of {SEATING_MODES}, got {mode!r}")
    if mode == "auto":
        mode = "rotations" if settings.num_sides == 2 else "permutations"
    if mode == "permutations" and settings.partnerships:
        raise ValueError("seatings='permutations' would split partnerships (R4); use 'rotations'")
    if mode == "rotations":
        orders = (tuple(lineup[(s + r) % n] for s in range(n)) for r in range(n))
    else:
        orders = itertools.permutations(lineup)
    return tuple(dict.fromkeys(orders))


@dataclass(frozen=True)
class Table:
    """What a batch of games is played with.

    Attributes:
        specs: the player spec of each entry.
        seatings: per seating, the entry in each seat (see `make_seatings`).
        settings: the game settings; ``target`` decides single hands (``None``) or matches.
    """

    specs: tuple[str, ...]
    seatings: tuple[tuple[int, ...], ...]
    settings: Settings

    def __post_init__(self) -> None:
        n = self.settings.num_players
        for seating in self.seatings:
            if len(seating) != n or not all(0 <= e < len(self.specs) for e in seating):
                raise ValueError(
                    f"a seating needs one entry 0..{len(self.specs) - 1} per seat ({n} seats), got {seating}"
                )
        if not self.seatings:
            raise ValueError("a table needs at least one seating")

    def build_players(self, loader: Callable[[str], Player]) -> list[list[Player]]:
        """Player objects per entry, one for each seat the entry holds at once."""
        most = [max(seating.count(e) for seating in self.seatings) for e in range(len(self.specs))]
        return [[loader(spec) for _ in range(k)] for spec, k in zip(self.specs, most)]


def play_game(game: Game, players: Sequence[Player], step: Callable[[int], None] | None = None,
              names: Sequence[str] | None = None) -> Game:
    """Play ``game`` to its end (a hand, or a match) with ``players[seat]`` in each seat;
    ``step`` takes each action (default ``game.step``; a recorder's step records it too).

    A player that raises (anything but ``KeyboardInterrupt``) or chooses an illegal action is a
    [`PlayerError`][training.harness.duplicate.PlayerError] naming it: ``names[seat]`` (its spec
    at the table), else its ``name``."""
    step = step or game.step
    while not game.done:
        seat = game.turn
        player = players[seat]
        try:
            action = player.act(SeatView(game, seat))
        except BaseException as error:  # SystemExit included: a player never ends the program
            if _interrupts(error):
                raise
            raise PlayerError(_seat_name(names, seat, player), f"raised {failure_text(error)}") from error
        try:
            step(action)
        except (ValueError, TypeError) as error:  # the engine refuses the action, changing nothing
            raise PlayerError(_seat_name(names, seat, player), f"chose an illegal action: {error}") from None
    return game


def _interrupts(error: BaseException) -> bool:
    """Whether ``error`` is to stop the program as it is: a ``KeyboardInterrupt`` in the main
    process (Ctrl-C). In a worker process one would end the worker and leave the pool waiting
    for its chunk forever; there the main process gets its own Ctrl-C, so a worker reports it
    as the player's failure."""
    return isinstance(error, KeyboardInterrupt) and multiprocessing.parent_process() is None


def _seat_name(names: Sequence[str] | None, seat: int, player: Player) -> str:
    return str(names[seat]) if names is not None else str(getattr(player, "name", type(player).__name__))


def play_seatings(
    table: Table, players: Sequence[Sequence[Player]], game_seed: int, replay_meta: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Play the game seeded ``game_seed`` once per seating.

    Args:
        table: the specs, seatings and settings.
        players: per entry, player objects (`Table.build_players`).
        game_seed: seeds the deck(s) and the first dealer.
        replay_meta: if given, record each seating's game as a replay
            (`pisti_env.tools.replay.GameRecorder`, with this ``meta`` and the seating number).

    Returns one record per seating: ``dealer`` (of the first hand), ``totals`` (per side: the
    hand's total, or the match total), ``winner`` (side or ``None``) and ``hands`` (hands played);
    with ``replay_meta`` also ``replay``, the game's replay records.
    """
    records = []
    for index, seating in enumerate(table.seatings):
        used = [0] * len(players)
        seated = []
        for e in seating:
            seated.append(players[e][used[e]])
            used[e] += 1
        names = [table.specs[e] for e in seating]
        for seat, player in enumerate(seated):
            try:
                player.reset(player_seed(game_seed, index, seat))
            except BaseException as error:
                if _interrupts(error):
                    raise
                raise PlayerError(names[seat], f"raised {failure_text(error)} in reset()") from error
        lines: list[dict[str, Any]] = []
        if replay_meta is None:
            game = Game(table.settings, seed=game_seed)
            step = None
        else:
            recorder = GameRecorder(table.settings, [table.specs[e] for e in seating], lines.append, seed=game_seed,
                                    meta={**replay_meta, "seating": index})
            game, step = recorder.game, recorder.step
        dealer = game.dealer
        play_game(game, seated, step, names)
        records.append(
            {"dealer": dealer, "totals": list(game.match_scores), "winner": game.winner, "hands": game.hands_completed}
        )
        if lines:
            records[-1]["replay"] = lines
    return records


def pop_replays(records: list[list[dict[str, Any]]], meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Take the replay records out of `run_games`' results (``save_games``), in game and
    seating order, adding ``meta`` to each game's ``meta``."""
    lines = []
    for game in records:
        for seating in game:
            for line in seating.pop("replay", ()):
                if line["type"] == "game":
                    line["meta"].update(meta)
                lines.append(line)
    return lines


# ---------------------------------------------------------------------------- workers
_WORKER: dict[str, Any] = {}


def _init_worker(table: Table, loader: Callable[[str], Player], single_threaded: bool = False) -> None:
    _WORKER["table"] = table
    _WORKER["players"] = table.build_players(loader)
    if single_threaded and "torch" in sys.modules:  # a trained policy: one thread per process
        sys.modules["torch"].set_num_threads(1)


def play_range(
    table: Table, players: Sequence[Sequence[Player]], job: tuple[int, int, int, int, int]
) -> list[list[dict[str, Any]]]:
    """Play one chunk ``(master_seed, stream, start, stop, save)``: games ``start..stop-1``, the
    games before ``save`` recorded as replays."""
    master_seed, stream, start, stop, save = job
    return [
        play_seatings(table, players, stream_seed(master_seed, stream, i),
                      {"source": "pisti-eval", "stream": stream, "game": i} if i < save else None)
        for i in range(start, stop)
    ]


def _play_chunk(job: tuple[int, int, int, int, int]) -> list[list[dict[str, Any]]]:
    return play_range(_WORKER["table"], _WORKER["players"], job)


@dataclass(frozen=True)
class RaySetup:
    """What a Ray worker builds its players from (`training.harness.ray_backend`): the
    table and the loader; shipped checkpoint paths replace their specs on the worker."""

    table: Table
    loader: Callable[[str], Player]

    def __call__(self, paths: dict[str, str]) -> tuple[Table, list[list[Player]]]:
        table = self.table
        if paths:
            table = Table(tuple(paths.get(s, s) for s in table.specs), table.seatings, table.settings)
        if "torch" in sys.modules:  # a trained policy: one thread per task
            sys.modules["torch"].set_num_threads(1)
        return table, table.build_players(self.loader)


def _play_ray_chunk(state: tuple[Table, list[list[Player]]], job: tuple[int, int, int, int, int]) -> list[list[dict[str, Any]]]:
    return play_range(state[0], state[1], job)


def chunk_jobs(
    count: int, master_seed: int, stream: int, workers: int, chunk: int = 0, save: int = 0
) -> list[tuple[int, int, int, int, int]]:
    """The chunks ``(master_seed, stream, start, stop, save)`` of ``count`` games for ``workers``
    executors (``chunk`` games each; 0: about 8 chunks per worker, at most 100 games); games
    before ``save`` are recorded as replays."""
    if chunk <= 0:
        chunk = max(1, min(100, count // (workers * 8) or 1))
    return [(master_seed, stream, s, min(s + chunk, count), save) for s in range(0, count, chunk)]


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
    save_games: int = 0,
    ray: str | None = None,
) -> list[list[dict[str, Any]]]:
    """Play ``count`` duplicate games (each once per seating) and return their records in order.

    Args:
        table: the specs, seatings and settings.
        count: number of deals (or matches).
        master_seed: the evaluation's seed; game ``i`` is seeded by `stream_seed`.
        stream: `DEAL` or `MATCH`, so matches do not replay the hand deals.
        workers: processes to use; the results do not depend on it.
        loader: builds a player from a spec (default [`pisti_env.agents.make_player`][pisti_env.agents.make_player] for
            the table's settings).
        chunk: games per job (0: automatic).
        progress: called with the number of games just finished, for a progress bar.
        save_games: record the first ``save_games`` games as replays (each record's ``replay``).
        ray: play the chunks as Ray tasks at this address (``"local"``, ``"auto"``,
            ``HOST:PORT``; see `training.harness.ray_backend`) instead of processes here;
            ``workers`` is then ignored (the cluster's CPUs decide). The results are the same.
    """
    if loader is None:
        loader = functools.partial(make_player, settings=table.settings)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an int >= 0, got {count!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if count == 0:
        return []
    if ray is not None:
        from . import ray_backend

        cpus = ray_backend.cluster_cpus(ray_backend.connect(ray))
        jobs = chunk_jobs(count, master_seed, stream, cpus, chunk, save_games)
        parts = ray_backend.map_chunks(
            RaySetup(table, loader), _play_ray_chunk, jobs, address=ray, specs=table.specs,
            on_done=None if progress is None else lambda i: progress(jobs[i][3] - jobs[i][2]),
        )
        return [record for part in parts for record in part]
    jobs = chunk_jobs(count, master_seed, stream, workers, chunk, save_games)
    results: list[list[dict[str, Any]]] = []

    def collect(chunks: Iterator[list[list[dict[str, Any]]]]) -> None:
        for part in chunks:
            results.extend(part)
            if progress is not None:
                progress(len(part))

    if workers == 1 or len(jobs) == 1:
        _init_worker(table, loader, single_threaded=False)
        try:
            collect(map(_play_chunk, jobs))
        finally:
            _WORKER.clear()
    else:
        # Forking a process whose torch has started its thread pool can deadlock the children:
        # once torch is loaded (a trained policy), start fresh interpreters instead.
        fork = "fork" in multiprocessing.get_all_start_methods() and "torch" not in sys.modules
        ctx = multiprocessing.get_context("fork" if fork else "spawn")
        with ctx.Pool(min(workers, len(jobs)), initializer=_init_worker, initargs=(table, loader, True)) as pool:
            collect(pool.imap(_play_chunk, jobs))
    return results
