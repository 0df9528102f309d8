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
from ..flags import ArgumentParser, add_settings_arguments, fail, values_of
from ..replay import line_writer
from ..rules import SETTING_NAMES, Settings, make_settings

DEFAULT_DELAY = 0.6


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-play", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponent", default=None,
                        help="the other side's players: a baseline (random, greedy, expert, pimc[:n=32], bluffer, "
                             "challenger) or a checkpoint path (default: the shipped policy trained for these "
                             "settings, else expert)")
    parser.add_argument("--partner", default=None,
                        help="your partner with 4 players in partnerships (R4); default: the same as --opponent")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 .. players-1 (default 0)")
    parser.add_argument("--seed", type=int, default=None,
                        help="deals and players' seed (default: a fresh one, printed and recorded)")
    parser.add_argument("--delay", type=float, default=DEFAULT_DELAY,
                        help=f"seconds to wait after each move of another seat (default {DEFAULT_DELAY})")
    parser.add_argument("--no-color", action="store_true", help="no colours (also when NO_COLOR is set)")
    parser.add_argument("--hint-policy", default=None,
                        help="the policy behind h (default: the shipped checkpoint trained for these settings)")
    parser.add_argument("--replay-out", default=None,
                        help="the replay file to write (default runs/play/pisti-play-<time>-seed<seed>.jsonl)")
    add_settings_arguments(parser)
    return parser


def _short(spec: str) -> str:
    """A checkpoint spec by its directory's name (options kept), any other spec as it is."""
    location = checkpoint_location(spec)
    if location is None:
        return spec
    path, options = location
    return os.path.basename(os.path.normpath(path)) + (f":{options}" if options else "")


def _opponents(settings: Settings, args: argparse.Namespace, seed: int) -> tuple[list[Player | None], list[str]]:
    """A player per seat (``None`` for the person's) and the spec of each seat."""
    opponent = args.opponent
    if opponent is None:
        from .hint import shipped_policy

        found = shipped_policy(settings)
        opponent = os.path.relpath(found[0]) if found is not None else "expert"
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
        spec = partner if settings.side_of(s) == settings.side_of(args.seat) else opponent
        players.append(make_player(spec, seed=seed * 16 + s, settings=settings))
        specs.append(spec)
    return players, specs


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from rich.console import Console
    from rich.text import Text

    from .hint import Hinter
    from .session import PlaySession

    console = Console(no_color=args.no_color or None, highlight=False, emoji=False)
    try:
        settings = make_settings(**values_of(args, SETTING_NAMES))
        if not 0 <= args.seat < settings.num_players:
            raise ValueError(f"--seat must be 0..{settings.num_players - 1}, got {args.seat}")
        if args.delay < 0:
            raise ValueError(f"--delay must be >= 0 seconds, got {args.delay}")
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
        players, specs = _opponents(settings, args, seed)
    except (TypeError, ValueError) as err:
        return fail("pisti-play", err)
    names = ["you" if s == args.seat else f"{_short(spec)} ({s})" for s, spec in enumerate(specs)]
    path = args.replay_out or os.path.join("runs", "play", f"pisti-play-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}.jsonl")
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    from training.harness.report import versions

    meta = {"source": "pisti-play", "person_seat": args.seat, "names": names, "versions": versions()}
    console.print(f"Pişti: you are seat {args.seat}; seed {seed}; replay: {path}", highlight=False)
    with open(path, "w", encoding="utf-8") as stream:
        session = PlaySession(settings, args.seat, players, names, console, lambda prompt: console.input(Text(prompt)),
                              line_writer(stream),
                              hint=Hinter(settings, args.hint_policy), delay=args.delay, seed=seed, specs=specs,
                              meta=meta)
        try:
            session.run()
        except KeyboardInterrupt:
            session.recorder.finish()
            console.print("\nInterrupted; the game is recorded as unfinished.")
            return 130
    console.print(f"Replay written to {path} (pisti-replay {path})", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
