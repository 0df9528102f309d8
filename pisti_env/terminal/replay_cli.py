"""``pisti-replay``: step through a recorded game (``pisti-play`` writes one for every game,
``pisti-eval --save-games N`` for the first deals of each table).

Examples::

    pisti-replay runs/play/pisti-play-20260101-120000-seed7.jsonl
    pisti-replay runs/eval_expert_greedy/games.jsonl --game 3 --seat 1 --pause
    pisti-replay runs/eval_expert_greedy/games.jsonl --game 1-20 --html page.html

Every game is played through the engine again ([`pisti_env.tools.replay.iter_replay`][pisti_env.tools.replay.iter_replay]), which
checks that every deck, hand result and the final scores come out as recorded. By default
every hand is shown after each move (the spectator's table of `pisti_env.envs.render`); with
``--seat S`` only what seat S may know (its screen before each of its moves, R30–R31). Piped or
written to a file, its lines are as wide as what they hold (a terminal's are cut at its width).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from ..agents import SeatView
from ..tools.flags import ArgumentParser, fail, non_negative_int, positive_int, printable, seconds, writable_file
from ..tools.replay import RecordedGame, ReplayError, iter_replay, read_replays


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-replay", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="a replay file (JSON lines)")
    parser.add_argument("--game", type=game_range, default=None, metavar="K|A-B",
                        help="show only game K of the file (1-based), or games A to B")
    parser.add_argument("--seat", type=non_negative_int, default=None, help="show only what this seat may know")
    parser.add_argument("--pause", action="store_true",
                        help="wait for Enter after each move (q then Enter stops; the end of input stops too)")
    parser.add_argument("--delay", type=seconds, default=0.0, help="seconds to wait after each move, 0..3600 (default 0)")
    parser.add_argument("--quiet", action="store_true", help="only check the games and print their results")
    parser.add_argument("--no-color", action="store_true", help="no colours (also when NO_COLOR is set)")
    parser.add_argument("--html", type=writable_file, default=None, metavar="OUT.html",
                        help="write the game(s) as one self-contained web page to step through (with --seat: "
                             "only what that seat may know) instead of showing them; a page holds at most "
                             f"{MAX_PAGE_STEPS} steps (about 16 MB): choose fewer games with --game for a larger "
                             "file")
    return parser


def game_range(text: str) -> tuple[int, int]:
    """An argparse ``type=``: ``K`` (one game) or ``A-B`` (games A to B), 1-based, as ``(A, B)``."""
    first, dash, last = text.partition("-")
    try:
        low = positive_int(first)
        high = positive_int(last) if dash else low
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a game number K or a range A-B (1-based), got {text!r}") from None
    if high < low:
        raise argparse.ArgumentTypeError(f"the range {text!r} ends before it starts")
    return low, high


MAX_PAGE_STEPS = 3000  # pisti_env.terminal.replay_html.MAX_PAGE_FRAMES (not imported for --help)
NAME_LIMIT = 40  # characters of a name from the file shown on the screen


def _names(recorded: RecordedGame) -> list[str]:
    """A display name per seat: the file's ``meta.names`` or the players' specs, as plain text
    (file content is data: escapes and control characters removed, long names cut)."""
    names = recorded.header["meta"].get("names")
    if not (isinstance(names, list) and len(names) == len(recorded.players)):
        names = [f"{spec} ({s})" for s, spec in enumerate(recorded.players)]
    return [printable(n, NAME_LIMIT) for n in names]


def _wait_for_enter() -> bool:
    """Wait for a line of input; ``True`` means stop (``q``, or the input ended)."""
    try:
        return input().strip().lower() == "q"
    except EOFError:
        return True


def show_game(recorded: RecordedGame, number: int, console, args: argparse.Namespace) -> bool:
    """Replay one game on ``console``; returns ``False`` when the person stopped it."""
    from rich.text import Text

    from ..envs.render import render_text
    from .events import describe_move, hand_summary, result_line, snapshot
    from .screen import render_screen, side_names

    names = _names(recorded)
    meta = recorded.header["meta"]
    seat = args.seat
    source = printable(meta.get("source", "unknown source"), NAME_LIMIT)
    console.print(Text(f"── Game {number}: {' · '.join(names)} · {source} ──", style="bold"))
    before = None
    sides: list[str] = []
    for _, record, game in iter_replay(recorded):
        kind = record["type"]
        watcher = SeatView(game, seat if seat is not None else 0)
        if not sides:
            sides = side_names(names, watcher)
        if kind == "action" and not args.quiet:
            console.print(describe_move(before, watcher, record["seat"], record["action"], names, viewer=seat))
        if kind == "hand_end" and not args.quiet:
            console.print(hand_summary(record["result"], sides, record["match_scores"], record["hand"],
                                       recorded.settings.target))
        if kind == "end":
            if record["complete"]:
                console.print(result_line(game.winner, sides, game.match_scores, recorded.settings.target is not None))
            else:
                why = f" ({printable(record['reason'], 200)})" if isinstance(record.get("reason"), str) else ""
                console.print(Text(f"The game was left unfinished after {game.hands_completed} hand(s){why}.",
                                   style="bold"))
            console.print("The engine reproduces every recorded deck and result.")
            return True
        if not args.quiet and not game.done and kind in ("hand", "action"):
            if seat is None:
                console.print(render_text(game, names), highlight=False, markup=False)
            elif game.turn == seat:
                console.print(render_screen(watcher, names))
            if args.delay > 0:
                time.sleep(args.delay)
            if args.pause and _wait_for_enter():
                return False
        before = snapshot(watcher)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from rich.console import Console

    console = Console(no_color=args.no_color or None, highlight=False, emoji=False)
    if not console.is_terminal:  # piped or to a file: lines as wide as their data, not cut at 80 columns
        console.soft_wrap = True
    try:
        games = read_replays(args.file)
        if args.game is not None and not args.game[1] <= len(games):
            given = args.game[0] if args.game[0] == args.game[1] else f"{args.game[0]}-{args.game[1]}"
            raise ValueError(f"--game must be 1..{len(games)} (the file holds {len(games)} game(s)), got {given}")
        chosen = range(len(games)) if args.game is None else range(args.game[0] - 1, args.game[1])
        if args.html is not None:
            from .replay_html import check_page_size

            check_page_size([(games[i], ()) for i in chosen])  # before any game is replayed or drawn
        for i in chosen:
            n = games[i].settings.num_players
            if args.seat is not None and not 0 <= args.seat < n:
                raise ValueError(f"--seat must be 0..{n - 1} for game {i + 1}, got {args.seat}")
            if args.html is None and not show_game(games[i], i + 1, console, args):
                break
        if args.html is not None:
            from .replay_html import write_replay_html

            frames = write_replay_html(args.html, [(games[i], _names(games[i])) for i in chosen], args.seat)
            console.print(f"Wrote {args.html}: {len(chosen)} game(s), {frames} frames.", markup=False)
    except (OSError, ReplayError, ValueError) as err:
        return fail("pisti-replay", err)
    except KeyboardInterrupt:
        console.print("\nStopped.", markup=False)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
