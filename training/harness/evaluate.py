"""``pisti-eval``: pit players against each other on duplicate deals and rate them.

Examples::

    pisti-eval expert greedy --deals 10000 --seed 0 --out runs/eval_expert_greedy
    pisti-eval random greedy expert --deals 2000          # a round-robin ladder of three
    pisti-eval expert greedy --players 4 --matches 200 --target 151 --workers 2

Players are baseline names (``random``, ``greedy``, ``expert``, ``pimc``, ``bluffer``, ``challenger``, ``ismcts``, with options as
``pimc:n=32,rollout=random``) or checkpoint paths, built by the one registry
([`pisti_env.agents.make_player`][pisti_env.agents.make_player]; a checkpoint needs torch, read by the trainer's
``load_policy``). Two sides (2 players, or 4 in partnerships, R4) make a table of two
players; with 3 or 4 players without partnerships a table seats that many. With more players
than a table holds every combination plays (a round-robin ladder); with fewer, the players
take the seats in turn (``A B A`` for two players at a 3-seat table).

Output: a table on the terminal, ``report.json`` with every figure and the settings that
produced it, ``ladder.png`` and ``heatmap.png`` in ``--out``; with ``--save-games N`` also
``games.jsonl``, the first N deals (and matches) of each table as replays (``pisti-replay``).

Engines (``--engine``): when a table seats a checkpoint (or another player that is not a
scripted baseline) and every player has a batched form (``random``, ``greedy``, ``bluffer``,
``challenger``, checkpoints), its deals play on the batched engine
(`training.harness.batched_play`: the same deals, the same choices, far faster);
otherwise, and for matches, on the Python engine (`training.harness.duplicate`), which
plays scripted baselines as fast without torch.
``--engine python`` forces the Python engine, to cross-check; ``--engine batched`` refuses a
table that cannot play batched. Checkpoints, ``random`` and ``greedy`` give the same result of
every deal on both engines; ``bluffer`` and ``challenger`` draw their random choices from
another stream on the batched engine (same distribution, reproducible with the seed).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import itertools
import os
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from pisti_env import Settings, make_settings
from pisti_env.agents import Player, make_player

from pisti_env.util.arguments import check_int
from pisti_env.tools.flags import (
    ArgumentParser, add_settings_arguments, check_path, fail, non_negative_int, positive_int, torch_device, values_of,
    writable_dir,
)
from pisti_env.tools.replay import write_records
from pisti_env.tools.versions import versions

from .analysis import ladder_ratings, summarize_table, win_matrices
from .batched_play import ENGINES, play_batched, why_not_batched, worth_batching
from .duplicate import DEAL, MATCH, SEATING_MODES, Table, default_workers, make_seatings, pop_replays, run_games
from .report import format_report, write_json
from .margins import BASELINES, baseline_margins  # noqa: E402,F401  (the recipes' figure, importable from here)

RATING_METHOD_2 = "Bradley–Terry on hand outcomes (draw = half a win), Elo scale"
RATING_METHOD_N = "Bradley–Terry on the pairwise outcomes within each hand (draw = half a win), Elo scale"
SETTING_FLAGS = [f.name for f in dataclasses.fields(Settings) if f.name != "target"]  # --target: the matches' own


def unique_names(specs: Sequence[str]) -> list[str]:
    """Report names for the players: the spec, with ``#2``, ``#3`` … for repeats."""
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        names.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return names


def evaluate(
    players: Sequence[str],
    *,
    num_players: int = 2,
    partnerships: bool | None = None,
    deals: int = 2000,
    matches: int = 100,
    target: int = 151,
    seed: int = 0,
    workers: int = 1,
    bootstrap: int = 200,
    seatings: str = "auto",
    loader: Callable[[str], Player] | None = None,
    progress: bool = False,
    save_games: int = 0,
    replay_path: str | None = None,
    ray: str | None = None,
    engine: str = "auto",
    threads: int | None = None,
    device: str = "cpu",
    **variants: Any,
) -> dict[str, Any]:
    """Play the evaluation and return the report (see the module docstring).

    Args:
        players: player specs (two or more).
        num_players: seats at the table (R3). partnerships: R4 (default: with 4 players).
        deals: duplicate single-hand deals per table (each played once per seat rotation).
        matches: duplicate matches to ``target`` per table (each once per rotation).
        target: the match target (R24).
        seed: master seed; the same seed deals the same games.
        workers: processes (the figures do not depend on it).
        bootstrap: resamples for the rating intervals.
        seatings: how each deal is seated, see `training.harness.duplicate.make_seatings`.
        loader: builds a player from a spec (default [`pisti_env.agents.make_player`][pisti_env.agents.make_player] for
            the table's settings, which refuses a checkpoint trained for another game).
        progress: show a progress bar (tqdm) on stderr.
        save_games: write the first ``save_games`` deals (and matches) of each table, every
            seating, as replays (`pisti_env.tools.replay`) to ``replay_path``.
        ray: play the games as Ray tasks at this address (``"local"``, ``"auto"``,
            ``HOST:PORT``) instead of ``workers`` processes; the figures are the same. Tables
            on the batched engine play in this process.
        engine: ``"auto"`` (the batched engine for a table's deals when every player has a
            batched form and one is not a scripted baseline, see
            `training.harness.batched_play.why_not_batched` and ``worth_batching``), ``"python"``
            (always the Python engine) or ``"batched"`` (``ValueError`` for a table that cannot
            play batched). Matches always play on the Python engine. Each table's ``engine``
            in the report says which played its deals.
        threads: torch threads for the deals on the batched engine (default 1; set for those
            deals, then restored; ``pisti-eval`` defaults to every core). More threads pay only
            on idle cores: on this project's 2-core machine, 10,000 deals of a checkpoint
            against greedy took 4.0 s on two threads and 6.1 s on one when idle, but 64 s on
            two against 7 s on one while other jobs held the cores.
        device: the batched engine's device. Without a ``loader``, checkpoints given by path
            are loaded there for the batched deals (and on the CPU for the Python engine's);
            a ``loader`` must put a checkpoint player's network there itself.
        **variants: other game settings of RULES.md (``double_pisti``, ``last_card_pisti``, …).
    """
    specs = list(players)
    if len(specs) < 2:
        raise ValueError(f"evaluate needs at least two players, got {specs}")
    deals = check_int(deals, "deals", low=0)
    matches = check_int(matches, "matches", low=0)
    workers = check_int(workers, "workers", low=1)
    threads = 1 if threads is None else check_int(threads, "threads", low=1)
    bootstrap = check_int(bootstrap, "bootstrap", low=0)
    if seatings not in SEATING_MODES:
        raise ValueError(f"seatings must be one of {SEATING_MODES}, got {seatings!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    save_games = check_int(save_games, "save_games", low=0)
    if save_games and not replay_path:
        raise ValueError("save_games needs a replay_path to write the replays to")
    if deals == 0 and matches == 0:
        raise ValueError("nothing to play: deals and matches are both 0")
    hand_settings = make_settings(num_players=num_players, partnerships=partnerships, target=None, **variants)
    match_settings = make_settings(num_players=num_players, partnerships=partnerships, target=target, **variants)
    if loader is None:
        loader = functools.partial(make_player, settings=hand_settings)  # the Python engine's: on the CPU
        batched_loader = functools.partial(make_player, settings=hand_settings, device=device)
    else:
        batched_loader = loader
    built = {spec: batched_loader(spec) for spec in specs}  # fail early, in this process, on a bad spec
    names = unique_names(specs)
    n = hand_settings.num_players
    per_table = 2 if hand_settings.num_sides == 2 else n
    groups = [tuple(range(len(specs)))] if len(specs) <= per_table else list(
        itertools.combinations(range(len(specs)), per_table)
    )

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(groups) * (deals + matches), unit="deal", file=sys.stderr, dynamic_ncols=True)
    start = time.perf_counter()
    tables, rating_inputs, replays = [], [], []
    for group in groups:
        lineup = [pos % len(group) for pos in range(n)]  # players take the seats in turn
        table_seatings = make_seatings(lineup, hand_settings, seatings)
        group_specs = tuple(specs[g] for g in group)
        kwargs = dict(workers=workers, loader=loader, progress=bar.update if bar else None, save_games=save_games,
                      ray=ray)
        t0 = time.perf_counter()
        deal_table = Table(group_specs, table_seatings, hand_settings)
        deal_engine = _deal_engine(deal_table, [built[s] for s in group_specs], engine) if deals else "python"
        if deal_engine == "batched":
            deal_records = _play_batched(deal_table, [built[s] for s in group_specs], deals, seed, threads,
                                         bar.update if bar else None, save_games, device)
        else:
            deal_records = run_games(deal_table, deals, seed, stream=DEAL, **kwargs)
        match_records = run_games(
            Table(group_specs, table_seatings, match_settings), matches, seed, stream=MATCH, **kwargs
        )
        replays += pop_replays(deal_records + match_records, {"table": list(group_specs), "versions": versions()})
        summary = summarize_table(deal_records, match_records, table_seatings, [names[g] for g in group],
                                  hand_settings)
        summary["seconds"] = time.perf_counter() - t0
        summary["engine"] = deal_engine
        tables.append(summary)
        if deals:
            rating_inputs.append((list(group), win_matrices(deal_records, table_seatings, hand_settings)))
    if bar is not None:
        bar.close()

    m = len(specs)
    diff_sum = np.zeros((m, m))
    diff_count = np.zeros((m, m))
    for group, table in zip(groups, tables):
        for pair in table["pairs"]:
            if "score_diff" in pair:
                i, j = group[table["players"].index(pair["a"])], group[table["players"].index(pair["b"])]
                diff_sum[i, j] += pair["score_diff"]["mean"]
                diff_sum[j, i] -= pair["score_diff"]["mean"]
                diff_count[i, j] += 1
                diff_count[j, i] += 1
    score_matrix = [[float(diff_sum[i, j] / diff_count[i, j]) if diff_count[i, j] else None for j in range(m)]
                    for i in range(m)]

    report: dict[str, Any] = {
        "settings": {
            "players": specs,
            "num_players": n,
            "partnerships": hand_settings.partnerships,
            "deals": deals,
            "matches": matches,
            "target": target,
            "seed": seed,
            "workers": workers,
            "ray": ray,
            "bootstrap": bootstrap,
            "game_settings": hand_settings.to_dict(),
            "seatings": seatings,
            "engine": engine,
        },
        "versions": versions(),
        "tables": tables,
        "score_matrix": {"players": names, "mean_score_diff_per_hand": score_matrix},
    }
    if rating_inputs:
        ladder = ladder_ratings(rating_inputs, m, bootstrap=bootstrap, seed=seed)
        ladder["players"] = names
        ladder["method"] = RATING_METHOD_2 if per_table == 2 else RATING_METHOD_N
        report["ladder"] = ladder
    if replays:
        write_records(replays, replay_path)  # type: ignore[arg-type]
        report["settings"]["replays"] = {"games": save_games, "path": replay_path}
    report["timing"] = {
        "seconds": time.perf_counter() - start,
        "games": sum(len(t["seatings"]) for t in tables) * (deals + matches),
    }
    return report


def _deal_engine(table: Table, players: Sequence[Player], engine: str) -> str:
    """``"batched"`` or ``"python"``: where ``table``'s deals play for the ``engine`` asked."""
    if engine == "python":
        return "python"
    reason = why_not_batched(table, players)
    if reason is None and (engine == "batched" or worth_batching(players)):
        return "batched"
    if engine == "batched":
        raise ValueError(f"engine='batched': {list(table.specs)} cannot play on the batched engine: {reason}")
    return "python"


def _play_batched(
    table: Table, players: Sequence[Player], deals: int, seed: int, threads: int,
    progress: Callable[[int], None] | None, save_games: int, device: str,
) -> list[list[dict[str, Any]]]:
    """`play_batched` with ``threads`` torch threads, restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return play_batched(table, players, deals, seed, stream=DEAL, progress=progress, save_games=save_games,
                            device=device)
    finally:
        torch.set_num_threads(before)


def write_outputs(report: dict[str, Any], out_dir: str) -> list[str]:
    """Write ``report.json``, ``ladder.png`` and ``heatmap.png`` into ``out_dir``; returns the paths."""
    from .plots import plot_heatmap, plot_ladder

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, "report.json")]
    write_json(report, paths[0])
    ladder = report.get("ladder")
    if ladder:
        path = os.path.join(out_dir, "ladder.png")
        plot_ladder(ladder["players"], ladder["ratings"], ladder.get("ci_low"), ladder.get("ci_high"), path)
        paths.append(path)
        path = os.path.join(out_dir, "heatmap.png")
        matrix = report["score_matrix"]
        plot_heatmap(matrix["players"], matrix["mean_score_diff_per_hand"], path)
        paths.append(path)
    return paths


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="pisti-eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("players", nargs="+", help="baseline names (random, greedy, expert, pimc[:n=32], bluffer[:claim=1,answer=believe], challenger, ismcts[:n=100] with the openspiel extra) or checkpoint paths")
    parser.add_argument("--deals", type=non_negative_int, default=2000, help="duplicate deals per table (default 2000)")
    parser.add_argument("--matches", type=non_negative_int, default=100, help="duplicate matches per table (default 100; 0: none)")
    parser.add_argument("--target", type=positive_int, default=151, help="match target (R24, default 151)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="master seed (default 0)")
    parser.add_argument("--workers", type=positive_int, default=default_workers(), help="processes for the Python engine (default: every core)")
    parser.add_argument("--threads", type=positive_int, default=default_workers(),
                        help="torch threads for the batched engine's deals (default: every core; on a machine "
                             "busy with other jobs 1 is faster)")
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="play the deals as Ray tasks: on a new local instance (no ADDRESS), the cluster "
                             "this machine joined ('auto') or HOST:PORT; needs the ray extra")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="where the deals play: auto (the batched engine when a checkpoint plays and every player "
                             "has a batched form: random, greedy, bluffer, challenger, checkpoints; else the Python "
                             "engine), python "
                             "(always, to cross-check) or batched (refuse a table that cannot); matches always "
                             "play on the Python engine")
    parser.add_argument("--device", type=torch_device, default=None,
                        help="the torch device of the batched engine's deals and of the checkpoints playing them "
                             "(cpu, cuda, cuda:1; default cpu)")
    parser.add_argument("--bootstrap", type=non_negative_int, default=200, help="bootstrap resamples for the rating intervals")
    parser.add_argument("--seatings", choices=SEATING_MODES, default="auto",
                        help="seat rotations, or every order of the players (auto: rotations with two sides)")
    parser.add_argument("--out", type=writable_dir, default=None, metavar="DIR",
                        help="output directory, created if missing: report.json, ladder.png, heatmap.png, "
                             "games.jsonl (default runs/eval_<players>)")
    parser.add_argument("--no-plots", action="store_true", help="write report.json only")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print its whole traceback before the one-line message: where in a "
                             "player's own code it raised")
    parser.add_argument("--save-games", type=non_negative_int, default=0, metavar="N",
                        help="write the first N deals (and matches) of each table as replays to <out>/games.jsonl "
                             "(pisti-replay reads them; default 0)")
    add_settings_arguments(parser, exclude=("target",))  # matches use --target; deals are single hands
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = values_of(args, SETTING_FLAGS)
    out = args.out or os.path.join("runs", "eval_" + "_".join(
        "".join(ch if ch.isalnum() else "-" for ch in os.path.basename(p)) for p in args.players))
    try:
        check_path(writable_dir, out, "--out")  # before the games, not after them
        report = evaluate(
            args.players,
            deals=args.deals,
            matches=args.matches,
            target=args.target,
            seed=args.seed,
            workers=args.workers,
            threads=args.threads,
            bootstrap=args.bootstrap,
            seatings=args.seatings,
            progress=not args.quiet,
            save_games=args.save_games,
            replay_path=os.path.join(out, "games.jsonl"),
            ray=args.ray,
            engine=args.engine,
            device=args.device or "cpu",
            **settings,
        )
    except (ValueError, TypeError, RuntimeError, OSError) as err:
        return fail("pisti-eval", err, debug=args.debug)
    print(format_report(report))
    try:
        if args.no_plots:
            os.makedirs(out, exist_ok=True)
            path = os.path.join(out, "report.json")
            write_json(report, path)
            paths = [path]
        else:
            paths = write_outputs(report, out)
    except OSError as err:  # a full disk, or the folder removed during the games
        return fail("pisti-eval", f"cannot write the report into {out!r}: {err.strerror or err}")
    print("wrote " + ", ".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
