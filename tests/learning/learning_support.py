"""What the learning-protocol tests share: a tiny learning task (the pisti-2p game on a few
deals against two opponents) and a tiny PPO command, so a seed trains and is rated in seconds."""

from __future__ import annotations

import dataclasses

from training.benchmark.tasks import deal_set_hash, get_task
from training.learning.algorithms import resolve_algorithm
from training.learning.protocol import LearningTask, get_learning_task

TINY_BUDGET = 8 * 16 * 16  # 8 evaluation points, one update of 16 games x 16 steps each
TINY_PPO = "python -m training.algorithms.ppo --num-envs 16 --rollout-steps 16"


def tiny_task(final_deals: int = 12, curve_deals: int = 6) -> LearningTask:
    """pisti-2p's game and anchors, ``final_deals`` deals for the last point, ``curve_deals`` for the others."""
    base = get_task("pisti-2p")
    game = dataclasses.replace(base, count=final_deals, panel=("random", "greedy"),
                               deal_hash=deal_set_hash(base.game_settings, base.seed, final_deals))
    return dataclasses.replace(get_learning_task("pisti-2p"), game=game, curve_count=curve_deals,
                               curve_hash=deal_set_hash(base.game_settings, base.seed, curve_deals))


def tiny_ppo(name: str = "tiny-ppo"):
    return resolve_algorithm(name, TINY_PPO)
