"""What a believed claim's capture is worth beyond its stake (R29), measured by rollouts.

``pisti-capture-value POLICY [--opponent SPEC] [--states N] [--rollouts R] [--seed N]``
(or ``python -m training.bluff.capture_value``)

The solved claim game (`training.bluff.claim_game`) needs ``A``, the points a believed
claim is worth to the claimant beyond its stake against playing face up: it takes both cards,
and the answerer must then lead onto an empty table, which hands the claimant the next claim
chance. This estimates ``A`` for a policy playing itself, or as the claimant against an
``--opponent`` (any player spec, say a best response from ``pisti-exploit``: how much its
bluffs' captures are worth to it): at ``N`` claim chances of the policy's where the claimant
does not hold the lone rank, it plays on three ways, ``R`` times each to the hand's end with
the same players:

* face up (the policy's likeliest face-up card);
* a bluff (its likeliest face-down card), believed;
* the same bluff, challenged (caught);

and reports ``A`` = E[believed] - stake - E[face up] and ``B`` = E[caught] + 2·stake - E[face up]
(what a caught bluff costs beyond its stake; the model takes it as 0), each the claimant's
side's score difference over the answerer's at the hand's end, with a 95% interval over the
states; and ``A`` apart for the chances on the hand's last deal (the stock empty: no next
deal, and R19 gives the last cards to the last capturer) and on the deals before it
(``--claim-capture-value-last-deal``). A single hand is played (no match), seeded, so the
figures repeat.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from typing import Any, Sequence

from pisti_env.tools.flags import ArgumentParser, checkpoint_dir, fail, non_negative_int, positive_int


def capture_value(policy: str, states: int = 150, rollouts: int = 6, seed: int = 0,
                  opponent: str | None = None) -> dict[str, Any]:
    """``{"A": {"mean", "half_width", "states"}, "B": {...}, "A_by_deal": {"earlier": {...},
    "last": {...}}, ...}`` for the checkpoint ``policy`` (a bluff-variant policy;
    ``ValueError`` otherwise) as the claimant, against itself or the player spec ``opponent``
    in the other side's seats; see the module docstring."""
    from pisti_env import Game, make_settings
    from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
    from pisti_env.agents.registry import make_player
    from pisti_env.views.view import SeatView
    from pisti_env.rules.cards import NUM_CARD_IDS, RANK
    from pisti_env.rules.locations import PLAYED_BY
    from pisti_env.rules.scoring import bluff_stake
    from pisti_env.policies.loader import load_policy

    player = load_policy(policy)
    settings = make_settings(**{**player.metadata["settings"], "target": None})
    if not settings.bluff:
        raise ValueError(f"{policy} is not a bluff-variant policy (R29): it makes no claims")
    player.reset(seed)  # its draws
    # With an opponent: the policy's side is seat 0's, and only its claim chances are taken.
    rival = player if opponent is None else make_player(opponent, seed + 1, settings=settings)
    rng = random.Random(seed)

    def plays_policy(game: Game, seat: int) -> bool:
        return rival is player or game.side_of[seat] == game.side_of[0]

    def act(game: Game) -> int:
        seat = game.turn
        return (player if plays_policy(game, seat) else rival).act(SeatView(game, seat))

    def outcome(game: Game, side: int, answering_side: int) -> float:
        while not game.done:
            game.step(act(game))
        result = game.last_hand_result
        return result[side]["total"] - result[answering_side]["total"]

    a_values: list[float] = []
    b_values: list[float] = []
    last_deal: list[bool] = []
    game_seed = seed
    while len(a_values) < states:
        game = Game(settings, seed=game_seed)
        game_seed += 1
        while not game.done and len(a_values) < states:
            legal = game.legal_actions()
            seat = game.turn
            lone = game.pile[-1] if game.pile else None
            chance = any(FACE_DOWN <= a < BELIEVE for a in legal)
            if chance and plays_policy(game, seat) and not any(RANK[c % NUM_CARD_IDS] == RANK[lone % NUM_CARD_IDS] for c in game.hands[seat]) \
                    and rng.random() < 0.5:  # every other chance: the states spread over the hands
                p = player.action_probabilities(SeatView(game, seat))  # its likeliest card of each kind
                last_deal.append(game.stock_size == 0)
                up = max((a for a in p if a < FACE_DOWN), key=p.get)
                down = max((a for a in p if FACE_DOWN <= a < BELIEVE), key=p.get)
                side, answering_side = game.side_of[seat], game.side_of[game.played_by[lone] - PLAYED_BY]
                stake = bluff_stake(lone % NUM_CARD_IDS, settings)
                means = []
                for first, answer in ((up, None), (down, BELIEVE), (down, CHALLENGE)):
                    total = 0.0
                    for _ in range(rollouts):
                        branch = game.clone()
                        branch.step(first)
                        if answer is not None:
                            branch.step(answer)
                        total += outcome(branch, side, answering_side)
                    means.append(total / rollouts)
                a_values.append(means[1] - stake - means[0])
                b_values.append(means[2] + 2 * stake - means[0])
            game.step(act(game))
    by_deal = {name: _mean_ci([a for a, last in zip(a_values, last_deal) if last == want])
               for name, want in (("earlier", False), ("last", True))}
    return {"A": _mean_ci(a_values), "B": _mean_ci(b_values), "A_by_deal": by_deal, "states": states,
            "rollouts": rollouts, "seed": seed, "opponent": opponent}


def _mean_ci(values: list[float]) -> dict[str, float]:
    """Mean, 95% half-width and count (NaN for none)."""
    n = len(values)
    if n == 0:
        return {"mean": math.nan, "half_width": math.nan, "states": 0}
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
    return {"mean": mean, "half_width": 1.96 * math.sqrt(var / n), "states": n}


def build_parser() -> argparse.ArgumentParser:
    """``pisti-capture-value``'s flags."""
    parser = ArgumentParser(prog="pisti-capture-value", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", type=checkpoint_dir, help="a bluff-variant policy checkpoint directory")
    parser.add_argument("--opponent", default=None, metavar="SPEC",
                        help="the answering side: any player spec or checkpoint (default: POLICY itself); "
                             "only POLICY's claim chances are taken")
    parser.add_argument("--states", type=positive_int, default=150, help="claim chances to branch from")
    parser.add_argument("--rollouts", type=positive_int, default=6, help="rollouts per branch and state")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seeds the deals and the policy's draws")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        result = capture_value(args.policy, args.states, args.rollouts, args.seed, args.opponent)
    except (ValueError, TypeError) as error:  # a checkpoint error is a ValueError
        return fail("pisti-capture-value", error)
    a, b = result["A"], result["B"]
    print(f"A (a believed claim's capture, beyond its stake) = {a['mean']:+.2f} ± {a['half_width']:.2f} points; "
          f"B (a caught bluff, beyond its stake) = {b['mean']:+.2f} ± {b['half_width']:.2f} "
          f"({result['states']} claim chances, {result['rollouts']} rollouts per branch)")
    for name, part in result["A_by_deal"].items():
        figure = f"{part['mean']:+.2f} ± {part['half_width']:.2f}" if part["states"] > 1 else "too few to say"
        print(f"  A on the {'last deal' if name == 'last' else 'deals before the last'}: {figure} "
              f"({part['states']} claim chances)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
