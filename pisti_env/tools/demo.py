"""``pisti-demo``: watch one game of random legal play, printed as text after every move."""

from __future__ import annotations

import random

import numpy as np

from ..envs.env import env as make_env
from .flags import ArgumentParser, add_settings_arguments, fail, non_negative_int, values_of
from ..rules.settings import SETTING_NAMES


def build_parser() -> ArgumentParser:
    """The command line of ``pisti-demo``."""
    parser = ArgumentParser(prog="pisti-demo", description="Play one Pişti game with random legal moves and print it.")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="deal and policy seed, >= 0 (default 0)")
    parser.add_argument("--quiet", action="store_true", help="print only the final result")
    add_settings_arguments(parser, defaults={"target": None})  # one hand unless a target is given
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the demo with ``argv`` (default ``sys.argv[1:]``); returns the exit status (2 with a
    one-line message on stderr for bad flags or settings)."""
    args = build_parser().parse_args(argv)

    try:
        env = make_env(**values_of(args, SETTING_NAMES), render_mode="ansi")
    except (ValueError, TypeError) as error:  # bad settings: one line, no traceback
        return fail("pisti-demo", error)
    env.reset(seed=args.seed)
    rng = random.Random(args.seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    result = None
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if "hand_result" in info:
            result = info
        if termination or truncation:
            env.step(None)
            continue
        card = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        env.step(card)
        if not args.quiet:
            print(env.render(), end="\n\n")
    game = env.unwrapped.game
    print("final match scores per side:", game.match_scores)
    if result is not None:
        for side, r in enumerate(result["hand_result"]):
            print(f"  side {side} last hand: {r}")
    print("summed 'diff' reward per agent:", {a: round(r, 2) for a, r in totals.items()})
    print("winner:", "draw" if game.winner is None else f"side {game.winner}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
