"""A fast duplicate-deal score margin on the batched engine, for use during training.

The same ``games`` single-hand deals are played once for each seat the learner can take (its
side against the opponent elsewhere), so deal luck cancels as in the full harness
(``pisti-eval``), which remains the reference for published figures.
"""

from __future__ import annotations

from typing import Callable

import torch

from pisti_env.batched import BatchedPisti
from pisti_env.rules import Settings

Act = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@torch.no_grad()
def duplicate_margin(
    learner: Act, opponent: Act, settings: Settings, games: int, seed: int = 0, device: str = "cpu"
) -> tuple[float, float]:
    """Mean score difference per hand (learner's side − mean of the others) and its standard
    error, over ``games`` deals each played with the learner in every seat position.

    ``learner`` and ``opponent`` map (observations, masks) to cards.
    """
    kwargs = {k: v for k, v in settings.to_dict().items() if k not in ("target", "win_margin")}
    n = settings.num_players
    per_deal = torch.zeros(games, device=device)
    for learner_seat in range(n):
        engine = BatchedPisti(games, seed=seed, device=device, target=None, **kwargs)
        out = engine.reset()
        side_of = engine._side_of
        on_learner_side = side_of == side_of[learner_seat] if settings.partnerships else torch.arange(n) == learner_seat
        total = torch.zeros(games, device=device)
        finished = torch.zeros(games, dtype=torch.bool, device=device)
        while not bool(finished.all()):
            mine = on_learner_side.to(device)[out.seat]
            action = torch.where(mine, learner(out.observation, out.action_mask), opponent(out.observation, out.action_mask))
            out = engine.step(action)
            total += out.rewards[:, learner_seat] * ~finished
            finished |= out.done
        per_deal += total / n
    mean = float(per_deal.mean())
    stderr = float(per_deal.std() / games**0.5) if games > 1 else float("nan")
    return mean, stderr
