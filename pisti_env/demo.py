"""``pisti-demo``: watch one game of random legal play, printed as text after every move."""

from __future__ import annotations

import argparse
import random

import numpy as np

from . import env as make_env
from .flags import add_settings_arguments, values_of


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Play one Pişti game with random legal moves and print it.")
    parser.add_argument("--seed", type=int, default=0, help="deal and policy seed (default 0)")
    parser.add_argument("--quiet", action="store_true", help="print only the final result")
    settings = add_settings_arguments(parser, defaults={"target": None})  # one hand unless a target is given
    args = parser.parse_args(argv)

    env = make_env(**values_of(args, settings), render_mode="ansi")
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


if __name__ == "__main__":
    main()
