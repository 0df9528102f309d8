"""``pisti-play``: play Pişti in the terminal against trained checkpoints or baselines.

Examples::

    pisti-play                                   # a match to 151 against the shipped 2-player policy
    pisti-play --opponent expert --target 0      # one hand against the expert baseline
    pisti-play --players 4 --partner expert --opponent pimc
    pisti-play --bluff --opponent checkpoints/pisti-bluff --seat 1 --seed 7

Type a card code (``10D``, ``js``) or its number in your hand; ``?`` lists the legal moves,
``h`` shows what the shipped policy would play with its probabilities, ``q`` quits; with the
bluff variant ``d 7H`` plays face down and ``b``/``c`` answer a claim. Every game is written
as a JSON-lines replay (``--replay-out``; ``pisti-replay FILE`` steps through it).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Sequence

from ..agents import Player, checkpoint_location, make_player
from ..tools.flags import (
    ArgumentParser, add_settings_arguments, check_path, fail, non_negative_int, printable, seconds, values_of,
    writable_file,
)
from ..tools.replay import line_writer
from ..rules.settings import SETTING_NAMES, Settings, make_settings

DEFAULT_DELAY = 0.6


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-play", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponent", default=None,
                        help="the other side's players: a baseline (random, greedy, expert, pimc[:n=32], bluffer, "
                             "challenger) or a checkpoint path (default: the shipped policy trained for these "
                             "settings; where none fits, expert, and the game says so)")
    parser.add_argument("--partner", default=None,
                        help="your partner with 4 players in partnerships (R4); default: the same as --opponent")
    parser.add_argument("--seat", type=non_negative_int, default=0, help="your seat, 0 .. players-1 (default 0)")
    parser.add_argument("--seed", type=non_negative_int, default=None,
                        help="deals and players' seed, >= 0 (default: a fresh one, printed and recorded)")
    parser.add_argument("--delay", type=seconds, default=DEFAULT_DELAY,
                        help=f"seconds to wait after each move of another seat, 0..3600 (default {DEFAULT_DELAY})")
    parser.add_argument("--no-color", action="store_true", help="no colours (also when NO_COLOR is set)")
    parser.add_argument("--hint-policy", default=None,
                        help="the policy behind h, built before the game (default: the shipped checkpoint trained "
                             "for these settings; where none fits, expert, and the game says so)")
    parser.add_argument("--replay-out", type=writable_file, default=None, metavar="FILE",
                        help="the replay file to write (default runs/play/pisti-play-<time>-seed<seed>.jsonl)")
    web = parser.add_argument_group("in a browser (the web extra: pip install 'pisti[web]')")
    web.add_argument("--web", action="store_true",
                     help="play in a browser: start a local web server and open its page (pisti_env.terminal.web)")
    web.add_argument("--host", default="127.0.0.1",
                     help="the address the server listens on (default 127.0.0.1, this machine only; another "
                          "address prints a warning)")
    web.add_argument("--port", type=non_negative_int, default=0, help="its port (default 0: a free one)")
    web.add_argument("--no-browser", action="store_true", help="only print the page's address")
    web.add_argument("--idle-minutes", type=positive_minutes, default=30,
                     help="minutes after which an idle game is dropped, recorded as unfinished (default 30)")
    add_settings_arguments(parser)
    return parser


def positive_minutes(text: str) -> float:
    """An argparse ``type=``: minutes, a number in (0, 1440]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected minutes, a number in (0, 1440], got {text!r}") from None
    if not 0 < value <= 1440:
        raise argparse.ArgumentTypeError(f"expected minutes in (0, 1440], got {text!r}")
    return value


def _short(spec: str) -> str:
    """A checkpoint spec by its directory's name (options kept), any other spec as it is."""
    location = checkpoint_location(spec)
    if location is None:
        return spec
    path, options = location
    return os.path.basename(os.path.normpath(path)) + (f":{options}" if options else "")


def _opponents(
    settings: Settings, args: argparse.Namespace, seed: int
) -> tuple[list[Player | None], list[str], str | None]:
    """A player per seat (``None`` for the person's), the spec of each seat, and a note for
    the person when the default opponent (the shipped policy) had to be replaced."""
    opponent, note = args.opponent, None
    if opponent is None:
        from .hint import FALLBACK, find_shipped_policy

        found = find_shipped_policy(settings)
        if isinstance(found, str):
            opponent, note = FALLBACK, f"playing against {FALLBACK}: {found} (choose another with --opponent)"
        else:
            opponent = found[0]
    partner = args.partner if args.partner is not None else opponent
    if args.partner is not None and not settings.partnerships:
        raise ValueError("--partner needs 4 players in partnerships (R4): --players 4")
    players: list[Player | None] = []
    specs = []
    for s in range(settings.num_players):
        if s == args.seat:
            players.append(None)
            specs.append("person")
            continue
        mate = settings.side_of(s) == settings.side_of(args.seat)
        spec = partner if mate else opponent
        try:
            players.append(make_player(spec, seed=seed * 16 + s, settings=settings))
        except (ImportError, TypeError, ValueError) as err:
            flag = "--partner" if mate and args.partner is not None else "--opponent"
            raise ValueError(f"argument {flag}: {err}") from None
        specs.append(spec)
    return players, specs, note


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.web:
        from .web.cli import main_web

        return main_web(args)
    from rich.console import Console
    from rich.text import Text

    from .hint import Hinter
    from .session import PlayerFailed, PlaySession

    console = Console(no_color=args.no_color or None, highlight=False, emoji=False)
    try:
        settings = make_settings(**values_of(args, SETTING_NAMES))
        if not 0 <= args.seat < settings.num_players:
            raise ValueError(f"--seat must be 0..{settings.num_players - 1}, got {args.seat}")
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
        path = args.replay_out or os.path.join(
            "runs", "play", f"pisti-play-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}.jsonl")
        check_path(writable_file, path, "--replay-out")  # the default one too, before the game
        players, specs, note = _opponents(settings, args, seed)
        hint = Hinter(settings, args.hint_policy)
        try:
            hint.load()
        except (ImportError, TypeError, ValueError) as err:
            raise ValueError(f"argument --hint-policy: {err}") from None
    except (TypeError, ValueError, ImportError) as err:
        return fail("pisti-play", err)
    names = ["you" if s == args.seat else f"{printable(_short(spec), 40)} ({s})" for s, spec in enumerate(specs)]
    from ..tools.versions import versions

    meta = {"source": "pisti-play", "person_seat": args.seat, "names": names, "versions": versions()}
    console.print(f"Pişti: you are seat {args.seat}; seed {seed}; replay: {path}", highlight=False, markup=False)
    for line in (note, hint.note):
        if line is not None:
            console.print(Text(printable(line[0].upper() + line[1:] + "."), style="yellow"))
    try:
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as stream:
            session = PlaySession(settings, args.seat, players, names, console,
                                  lambda prompt: console.input(Text(prompt)), line_writer(stream),
                                  hint=hint, delay=args.delay, seed=seed, specs=specs, meta=meta)
            try:
                session.run()
            except PlayerFailed as failed:  # the replay is closed (its end record says why): one line
                console.print(f"The game is recorded as unfinished: {path}", highlight=False, markup=False)
                return fail("pisti-play", f"{failed}; the game ended")
            except KeyboardInterrupt:
                session.recorder.finish()
                console.print("\nInterrupted; the game is recorded as unfinished.", markup=False)
                return 130
    except OSError as err:  # the replay could not be written (disk full, removed folder)
        return fail("pisti-play", f"cannot write the replay {path!r}: {err.strerror or err}")
    console.print(f"Replay written to {path} (pisti-replay {path})", highlight=False, markup=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
