"""What a believed claim's capture is worth beyond its stake (R29), measured by rollouts.

``python -m training.harness.capture_value POLICY [--states N] [--rollouts R]``

The solved claim game (:mod:`training.trainer.claim_game`) needs ``A``, the points a believed
claim is worth to the claimant beyond its stake against playing face up: it takes both cards,
and the answerer must then lead onto an empty table, which hands the claimant the next claim
chance. This estimates ``A`` for a policy playing itself: at ``N`` claim chances of its
self-play where the claimant does not hold the lone rank, it plays on three ways, ``R`` times
each to the hand's end with the policy in every seat:

* face up (the policy's likeliest face-up card);
* a bluff (its likeliest face-down card), believed;
* the same bluff, challenged (caught);

and reports ``A`` = E[believed] - stake - E[face up] and ``B`` = E[caught] + 2·stake - E[face up]
(what a caught bluff costs beyond its stake; the model takes it as 0), each the claimant's
side's score difference over the answerer's at the hand's end, with a 95% interval over the
states. A single hand is played (no match), seeded, so the figures repeat.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from typing import Any, Sequence

from pisti_env.flags import ArgumentParser, checkpoint_dir, fail, non_negative_int, positive_int


def capture_value(policy: str, states: int = 150, rollouts: int = 6, seed: int = 0) -> dict[str, Any]:
    """``{"A": {"mean", "half_width"}, "B": {...}, "states": N}`` for the checkpoint ``policy``
    (a bluff-variant policy; ``ValueError`` otherwise), see the module docstring."""
    from pisti_env import Game, make_settings
    from pisti_env.actions import BELIEVE, CHALLENGE, FACE_DOWN
    from pisti_env.agents.view import SeatView
    from pisti_env.cards import NUM_CARD_IDS, RANK
    from pisti_env.locations import PLAYED_BY
    from pisti_env.scoring import bluff_stake
    from training.trainer.policy import load_policy

    player = load_policy(policy)
    settings = make_settings(**{**player.metadata["settings"], "target": None})
    if not settings.bluff:
        raise ValueError(f"{policy} is not a bluff-variant policy (R29): it makes no claims")
    player.reset(seed)  # its draws
    rng = random.Random(seed)

    def act(game: Game) -> int:
        return player.act(SeatView(game, game.turn))

    def outcome(game: Game, side: int, other: int) -> float:
        while not game.done:
            game.step(act(game))
        result = game.last_hand_result
        return result[side]["total"] - result[other]["total"]

    a_values: list[float] = []
    b_values: list[float] = []
    game_seed = seed
    while len(a_values) < states:
        game = Game(settings, seed=game_seed)
        game_seed += 1
        while not game.done and len(a_values) < states:
            legal = game.legal_actions()
            seat = game.turn
            lone = game.pile[-1] if game.pile else None
            chance = any(FACE_DOWN <= a < BELIEVE for a in legal)
            if chance and not any(RANK[c % NUM_CARD_IDS] == RANK[lone % NUM_CARD_IDS] for c in game.hands[seat]) \
                    and rng.random() < 0.5:  # every other chance: the states spread over the hands
                p = player.action_probabilities(SeatView(game, seat))  # its likeliest card of each kind
                up = max((a for a in p if a < FACE_DOWN), key=p.get)
                down = max((a for a in p if FACE_DOWN <= a < BELIEVE), key=p.get)
                side, other = game.side_of[seat], game.side_of[game.played_by[lone] - PLAYED_BY]  # the answerer's
                stake = bluff_stake(lone % NUM_CARD_IDS, settings)
                means = []
                for first, answer in ((up, None), (down, BELIEVE), (down, CHALLENGE)):
                    total = 0.0
                    for _ in range(rollouts):
                        branch = game.clone()
                        branch.step(first)
                        if answer is not None:
                            branch.step(answer)
                        total += outcome(branch, side, other)
                    means.append(total / rollouts)
                a_values.append(means[1] - stake - means[0])
                b_values.append(means[2] + 2 * stake - means[0])
            game.step(act(game))
    return {"A": _mean_ci(a_values), "B": _mean_ci(b_values), "states": states, "rollouts": rollouts, "seed": seed}


def _mean_ci(values: list[float]) -> dict[str, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
    return {"mean": mean, "half_width": 1.96 * math.sqrt(var / n)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="capture_value", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", type=checkpoint_dir, help="a bluff-variant policy checkpoint directory")
    parser.add_argument("--states", type=positive_int, default=150, help="claim chances to branch from")
    parser.add_argument("--rollouts", type=positive_int, default=6, help="rollouts per branch and state")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seeds the deals and the policy's draws")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        result = capture_value(args.policy, args.states, args.rollouts, args.seed)
    except ValueError as error:  # a checkpoint error is one
        return fail("capture_value", error)
    a, b = result["A"], result["B"]
    print(f"A (a believed claim's capture, beyond its stake) = {a['mean']:+.2f} ± {a['half_width']:.2f} points; "
          f"B (a caught bluff, beyond its stake) = {b['mean']:+.2f} ± {b['half_width']:.2f} "
          f"({result['states']} claim chances, {result['rollouts']} rollouts per branch)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
