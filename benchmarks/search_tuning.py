"""The search player's rule, tuned offline on exact rollout advantages (docs/research/search.md).

Self-play of the rollout policy (``pisti-2p``, argmax, 2 players, single hands) meets positions;
at each decision with two or more cards it records

* ``v``: the search's (worlds, cards) rollout values in ``--worlds`` worlds the seat samples
  (`SeatView.determinize`, as the player does), and
* ``truth``: each card's rollout value in the *real* deal, averaged over ``--redeals`` copies
  whose stock alone is shuffled again (the other hands stay real: the true belief, which the
  seat's uniform worlds do not know; the stock's order is unknowable to everyone).

Then for every rule (worlds, z, margin) it replays the decision on the first ``W`` worlds
(`pisti_env.agents.search.decide`) and sums ``truth[chosen] - truth[policy's card]`` over the
positions: the one-step advantage over the policy, whose sum over a hand's decisions is what
the search gains a hand (the performance difference lemma, at the policy's own positions).

    python benchmarks/search_tuning.py                  # 60 hands, 256 worlds: about 20 CPU-minutes
    python benchmarks/search_tuning.py --hands 4 --worlds 64 --redeals 4   # a smoke run
"""

from __future__ import annotations

import argparse
import math
import random

import numpy as np
import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_player
from pisti_env.agents.search import decide


def stock_redeal(game: Game, rng: random.Random) -> Game:
    """A copy of the real game with only the stock's order shuffled again."""
    world = game.clone()
    rest = world.deck[world.stock_pos :]
    rng.shuffle(rest)
    world.deck[world.stock_pos :] = rest
    return world


def collect(hands: int, worlds: int, redeals: int, seed: int) -> list[dict]:
    settings = make_settings(num_players=2, target=None)
    search = make_player(f"search:worlds={worlds}", seed=1, settings=settings)
    rows: list[dict] = []
    for hand in range(hands):
        game = Game(settings, seed=seed + 10_000 + hand)
        while not game.done:
            view = SeatView(game, game.turn)
            legal = view.legal_actions
            if len(legal) == 1:
                game.step(legal[0])
                continue
            base = search._policy_choice(view, view.observation(), 0)
            redeal = random.Random(hand * 7 + len(rows))  # each position's own draws
            _, truth = search.action_values(view, [stock_redeal(game, redeal) for _ in range(redeals)])
            sample = random.Random(hand * 1000 + len(rows))
            _, v = search.action_values(view, [view.determinize(sample) for _ in range(worlds)])
            rows.append({"hand": hand, "base": legal.index(base), "truth": truth.mean(0), "v": v})
            game.step(base)
    return rows


def gain_per_hand(rows: list[dict], choose) -> tuple[float, float, float]:
    """(mean gain a hand of one seat, its 95% half-width by hand, departures a seat-hand)."""
    per_hand: dict[int, float] = {}
    departures = 0
    for r in rows:
        c = choose(r)
        departures += c != r["base"]
        per_hand[r["hand"]] = per_hand.get(r["hand"], 0.0) + float(r["truth"][c] - r["truth"][r["base"]])
    g = np.array(list(per_hand.values())) / 2  # both seats searched: a seat's share
    return g.mean(), 1.96 * g.std(ddof=1) / math.sqrt(len(g)), departures / (2 * len(per_hand))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=60)
    parser.add_argument("--worlds", type=int, default=256, help="worlds sampled a decision (the largest W tried)")
    parser.add_argument("--redeals", type=int, default=16, help="stock redeals of the real game for the truth")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = collect(args.hands, args.worlds, args.redeals, args.seed)
    print(f"{len(rows)} decisions in {args.hands} hands (both seats); gain = search - policy, points a hand of one seat")
    print(f"{'rule':34s} {'gain a hand':>18s} {'departures':>11s}")
    rules = [("perfect information (truth's best)", lambda r: int(np.argmax(r["truth"])))]
    rules.append((f"argmax of the {args.worlds}-world mean", lambda r: int(np.argmax(r["v"].mean(0)))))
    for W in sorted({w for w in (32, 64, 128, 256) if w <= args.worlds} | {args.worlds}):
        for z in (0.0, 1.0, 2.0):
            for margin in (0.0, 0.25, 0.5, 1.0):
                rules.append((f"worlds {W}, z {z:g}, margin {margin:g}",
                              lambda r, W=W, z=z, m=margin: decide(r["v"][:W], r["base"], z, m)))
    for name, choose in rules:
        mean, half, dep = gain_per_hand(rows, choose)
        print(f"{name:34s} {mean:+8.2f} ± {half:5.2f}   {dep:9.2f}")


if __name__ == "__main__":
    main()
