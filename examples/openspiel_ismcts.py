"""OpenSpiel recipe: Pişti as an OpenSpiel game, OpenSpiel's own checks and IS-MCTS on it, and
that IS-MCTS as a pisti player measured on duplicate deals.

Needs the ``openspiel`` extra: ``pip install -e ".[openspiel]"``. Then::

    python examples/openspiel_ismcts.py --players 2 --n 100 --deals 150

1. ``import pisti_env.agents.openspiel`` registers the game ``python_pisti`` (one hand;
   the deal as chance nodes; ``players`` 2–4 and the rule variants as parameters), so
   ``pyspiel.load_game("python_pisti", {...})`` works like any OpenSpiel game.
2. `check` runs OpenSpiel's random-simulation test on it.
3. `play_hand` plays one hand with OpenSpiel's API alone: its ``ISMCTSBot`` for seat 0
   (drawing its worlds with the state's ``resample_from_infostate``) against uniformly random
   seats; the returns are the hand's score differences.
4. `margins` measures the registry's ``ismcts`` player (the same bot, from a seat's
   view) against ``random`` and ``greedy`` on duplicate deals through the harness, as
   ``pisti-eval ismcts:n=100 greedy --deals 150 --matches 0`` does.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from pisti_env.agents.ismcts import UCT_C
from pisti_env.agents import openspiel as pisti_openspiel
from training.harness import recipes
from training.harness.evaluate import baseline_margins


def load(players: int = 2, **variants: Any) -> pyspiel.Game:
    """The OpenSpiel game: ``players`` 2–4 and any variant parameter (``bluff=True``, ...)."""
    return pyspiel.load_game(pisti_openspiel.SHORT_NAME, {"players": players, **variants})


def check(game: pyspiel.Game, sims: int = 5) -> None:
    """OpenSpiel's own random-simulation test (legal actions, chance outcomes, observations,
    returns within the utility bounds and summing to zero)."""
    pyspiel.random_sim_test(game, num_sims=sims, serialize=False, verbose=False)


def play_hand(game: pyspiel.Game, n: int, seed: int, uct_c: float = UCT_C) -> list[float]:
    """One hand, OpenSpiel's ``ISMCTSBot`` (``n`` simulations a move) at seat 0 and uniformly
    random seats elsewhere; returns every seat's score difference."""
    rng = np.random.RandomState(seed)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c, n, random_state=rng)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            action = rng.choice(outcomes, p=probs)
        elif state.current_player() == 0:
            action = bot.step(state)
        else:
            action = rng.choice(state.legal_actions())
        state.apply_action(int(action))
    return state.returns()


def margins(n: int, deals: int, seed: int = 0, players: int = 2, progress: bool = False) -> dict[str, dict[str, float]]:
    """The ``ismcts:n=<n>`` player's mean score difference per hand (95% CI) against
    ``random`` and ``greedy`` on ``deals`` duplicate deals, each played from every seat;
    ``progress``: a bar with the time left for each baseline's deals (the slow part) on stderr."""
    return baseline_margins(f"ismcts:n={n}", deals=deals, seed=seed, num_players=players, progress=progress)


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--players", type=int, default=2, help="2, 3 or 4")
    parser.add_argument("--n", type=int, default=100, help="IS-MCTS simulations per decision")
    parser.add_argument("--deals", type=int, default=150, help="duplicate deals per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    game = load(args.players)
    check(game)
    print(f"{game}: OpenSpiel's random_sim_test passed")
    start = time.perf_counter()
    returns = play_hand(game, args.n, args.seed)
    print(f"one hand, OpenSpiel ISMCTSBot at seat 0 vs random: returns {returns} "
          f"({time.perf_counter() - start:.1f} s)")
    for baseline, r in margins(args.n, args.deals, args.seed, args.players, progress=True).items():
        print(f"ismcts:n={args.n} vs {baseline}: {r['mean']:+.2f} ± {r['half_width']:.2f} points per hand "
              f"({args.deals} duplicate deals)")


if __name__ == "__main__":
    main()
