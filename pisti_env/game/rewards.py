"""The reward conventions every environment shares (``pisti_v0``, the single-agent and the
vector Gymnasium envs; the batched engine computes the same on tensors).

* ``"diff"``: a side's value is its public total minus the mean of the other sides' (R30);
  each step rewards the change of that value, so an episode sums to the final score difference.
* ``"win"``: at the end, +1 for the winning side and −1 for the others; in a drawn single hand
  the sides tied for the best total get 0.
"""

from __future__ import annotations

from typing import Sequence

from .engine import Game

REWARD_MODES = ("diff", "win")


def side_difference(public: Sequence[float], side: int) -> float:
    """``"diff"``'s value of ``side``: its public total minus the mean of the other sides'."""
    own = public[side]
    return own - (sum(public) - own) / (len(public) - 1)


def win_rewards(game: Game) -> list[float]:
    """``"win"``'s reward per side for a finished ``game`` (R25)."""
    if game.winner is not None:
        return [1.0 if side == game.winner else -1.0 for side in range(game.num_sides)]
    best = max(game.match_scores)  # a drawn single hand
    return [0.0 if score == best else -1.0 for score in game.match_scores]
