"""Make the documentation's pictures: a table (``docs/img/table.png``) and a short animated clip
of a hand (``docs/img/episode.gif``), both from a game of a shipped policy.

The shipped 2-player policy (``checkpoints/pisti-2p``) plays a single hand against the
``expert`` baseline. The still is what the policy's seat sees halfway through the hand (its
own cards, the other hand as backs, R30–R31); the clip shows every move of the hand with all
cards open, as a spectator watches it. Same seed, same pictures.

Both are rasterised from the SVG by CairoSVG (``svg_to_png``, ``renderer="cairo"``), so the still
and the clip are the exact SVG picture. Usage (needs the ``pictures`` extra and torch, which the
policy runs on)::

    python docs/scripts/make_pictures.py                 # writes docs/img/table.png and episode.gif
    python docs/scripts/make_pictures.py --out /tmp/img --seed 3 --size 480x360
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import Sequence

from PIL import Image

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_player
from pisti_env.drawing import open_frame, seat_table, svg_to_png, table_svg

POLICY = "checkpoints/pisti-2p"
OPPONENT = "expert"


def play_hand(seed: int) -> tuple[list[Game], list[str], int]:
    """One hand, policy against the opponent: a copy of the game after the deal and after every
    move, the seat names, and the policy's seat."""
    settings = make_settings(target=None)
    policy_seat = seed % 2
    players = {policy_seat: make_player(POLICY, seed, settings=settings),
               1 - policy_seat: make_player(OPPONENT, seed + 1, settings=settings)}
    names = [f"policy ({POLICY.rsplit('/', 1)[-1]})" if s == policy_seat else OPPONENT for s in range(2)]
    game = Game(settings, seed=seed)
    states = [game.clone()]
    while not game.done:
        game.step(players[game.turn].act(SeatView(game, game.turn)))
        states.append(game.clone())
    return states, names, policy_seat


def write_still(states: Sequence[Game], names: list[str], seat: int, path: str, size: tuple[int, int]) -> None:
    """The policy's seat's view halfway through the hand, at its turn, with cards on the table."""
    middle = len(states) // 2
    candidates = [g for g in states[middle:] if not g.done and g.turn == seat and len(g.pile) >= 3] or [states[middle]]
    svg = table_svg(seat_table(SeatView(candidates[0], seat), names), *size)
    with open(path, "wb") as f:
        f.write(svg_to_png(svg))


def write_clip(states: Sequence[Game], names: list[str], seat: int, path: str, size: tuple[int, int], ms: int) -> None:
    """Every state of the hand with all cards open (the policy's seat at the bottom), as an
    animated GIF (the last frame held)."""
    frames = [Image.fromarray(open_frame(g, names, bottom=seat, width=size[0], height=size[1], renderer="cairo"))
              for g in states]
    durations = [ms] * (len(frames) - 1) + [ms * 4]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0,
                   optimize=True)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join("docs", "img"), help="output folder (default docs/img)")
    parser.add_argument("--seed", type=int, default=7, help="the game's seed (default 7)")
    parser.add_argument("--size", default="640x480", help="picture size WIDTHxHEIGHT (default 640x480)")
    parser.add_argument("--ms", type=int, default=900, help="milliseconds per move in the clip (default 900)")
    args = parser.parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size must look like 640x480, got {args.size!r}")
    os.makedirs(args.out, exist_ok=True)
    states, names, seat = play_hand(args.seed)
    still, clip = os.path.join(args.out, "table.png"), os.path.join(args.out, "episode.gif")
    write_still(states, names, seat, still, (width, height))
    write_clip(states, names, seat, clip, (width, height), args.ms)
    for path in (still, clip):
        print(f"wrote {path} ({os.path.getsize(path) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
