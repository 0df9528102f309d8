"""``pimc``: perfect-information Monte Carlo search.

For each of ``n`` determinizations (the hidden cards dealt again at random, consistent with
what the seat knows: :meth:`SeatView.determinize`), every legal card is played and the hand is
rolled out to its end with a fast rollout policy; the card with the best mean score difference
(own side's hand total minus the mean of the other sides') is played. All cards are rolled out
in the same worlds with the same rollout seeds (common random numbers), so their comparison is
not drowned by deal luck.
"""

from __future__ import annotations

import random
from typing import Callable

from ..cards import NUM_CARD_IDS, POINTS
from ..game import Game
from .base import Agent
from .expert import ExpertAgent
from .greedy import greedy_card
from .view import SeatView

RolloutPolicy = Callable[[Game, random.Random], int]


def random_rollout(game: Game, rng: random.Random) -> int:
    """Rollout policy: a uniformly random legal card."""
    legal = game.legal_actions()
    return legal[rng.randrange(len(legal))]


def greedy_rollout(game: Game, rng: random.Random) -> int:
    """Rollout policy: :func:`~pisti_env.agents.greedy.greedy_card`, counting every pile card
    (a rollout runs in a determinized game, where nothing is hidden any more)."""
    pile = game.pile
    return greedy_card(
        game.legal_actions(),
        pile[-1] % NUM_CARD_IDS if pile else None,
        len(pile),
        sum(POINTS[p] for p in pile),
        game.settings,
        game.in_hands == 1 and game.stock_size == 0,
        rng,
    )


_ROLLOUT_EXPERT = ExpertAgent()


def expert_rollout(game: Game, rng: random.Random) -> int:
    """Rollout policy: the ``expert`` player for the seat to move, through that seat's view
    of the determinized game (slower than greedy, stronger)."""
    _ROLLOUT_EXPERT.rng = rng
    return _ROLLOUT_EXPERT.act(SeatView(game, game.turn))


ROLLOUT_POLICIES: dict[str, RolloutPolicy] = {
    "random": random_rollout, "greedy": greedy_rollout, "expert": expert_rollout,
}


def play_out_hand(
    game: Game, policy: RolloutPolicy, rng: random.Random, hand_index: int | None = None
) -> list[dict[str, int]]:
    """Play ``game`` (in place) with ``policy`` for every seat until hand number ``hand_index``
    (0-based; default: the hand in progress) has ended; returns that hand's per-side result
    (see :meth:`Game.hand_scores`)."""
    start = game.hands_completed if hand_index is None else hand_index
    while not game.done and game.hands_completed == start:
        game.step(policy(game, rng))
    return game.hand_results[start]


class PimcAgent(Agent):
    """Perfect-information Monte Carlo search over ``n`` determinizations.

    Args:
        seed: seeds the sampling of worlds and rollouts (see :class:`~pisti_env.agents.base.Agent`).
        n: determinizations per decision (>= 1; default 64: the value differences between cards
            are small against the spread of a hand's outcome, so few worlds give noisy choices).
        rollout: the rollout policy, ``"greedy"`` (default), ``"random"`` or ``"expert"`` (slower), or a callable
            ``(game, rng) -> card id``.
    """

    name = "pimc"

    def __init__(self, seed: int | None = None, n: int = 64, rollout: str | RolloutPolicy = "greedy") -> None:
        super().__init__(seed)
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"pimc option 'n' must be an int >= 1, got {type(n).__name__} {n!r}")
        if n < 1:
            raise ValueError(f"pimc option 'n' must be an int >= 1, got {n}")
        if isinstance(rollout, str):
            if rollout not in ROLLOUT_POLICIES:
                raise ValueError(f"pimc option 'rollout' must be one of {list(ROLLOUT_POLICIES)}, got {rollout!r}")
            self.rollout_name = rollout
            rollout = ROLLOUT_POLICIES[rollout]
        elif callable(rollout):
            self.rollout_name = getattr(rollout, "__name__", "custom")
        else:
            raise TypeError(f"pimc option 'rollout' must be a name {list(ROLLOUT_POLICIES)} or a callable")
        self.n = n
        self.rollout = rollout

    def choose(self, view: SeatView, legal: list[int]) -> int:
        side = view.side
        others = view.num_sides - 1
        totals = [0.0] * len(legal)
        rng = self.rng
        hand_index = view.hands_completed
        for _ in range(self.n):
            world = view.determinize(rng)
            rollout_seed = rng.getrandbits(64)
            for i, card in enumerate(legal):
                game = world.clone() if i < len(legal) - 1 else world
                game.step(card)
                result = play_out_hand(game, self.rollout, random.Random(rollout_seed), hand_index)
                own = result[side]["total"]
                totals[i] += own - (sum(r["total"] for r in result) - own) / others
        best = max(totals)
        choices = [c for c, t in zip(legal, totals) if t == best]
        return choices[0] if len(choices) == 1 else choices[rng.randrange(len(choices))]

    def __repr__(self) -> str:
        return f"PimcAgent(n={self.n}, rollout={self.rollout_name!r})"
