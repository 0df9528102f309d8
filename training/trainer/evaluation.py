"""Evaluating a run's policy against its baselines on duplicate deals (the harness)."""

from __future__ import annotations

import torch

from pisti_env.policies.metadata import play_mode
from pisti_env.policies.player import CheckpointPlayer

from .train import Trainer


def evaluate_against_baselines(
    trainer: Trainer, deals: int | None = None, seed: int | None = None
) -> dict[str, float]:
    """Duplicate-deal evaluation (the harness) of the current policy against each of the
    config's ``eval_baselines``, over ``deals`` (default: the config's ``eval_deals``) deals
    seeded with ``seed`` (default: the update number): per baseline, the mean score difference per hand
    (``eval/<spec>_margin``) and its 95% half-width (``eval/<spec>_ci95``). A baseline with a
    batched form (``random``, ``greedy``, ...) plays on the batched engine, on the trainer's
    device and threads (`training.harness.batched_play`); any other through the Python
    engine, in this process."""
    from pisti_env.agents import make_player
    from training.harness.evaluate import evaluate

    c = trainer.config
    learner = CheckpointPlayer(trainer.shipped_policy(), {"settings": trainer.settings.to_dict(), "name": "learner"},
                               play=play_mode(trainer.settings))  # as it will be saved

    def loader(spec: str):
        return learner if spec == "learner" else make_player(spec, settings=trainer.settings)

    results: dict[str, float] = {}
    s = trainer.settings
    variants = {k: v for k, v in s.to_dict().items() if k not in ("num_players", "partnerships", "target")}
    for baseline in c.eval_baselines:
        report = evaluate(
            ["learner", baseline], num_players=s.num_players, partnerships=s.partnerships,
            deals=c.eval_deals if deals is None else deals, matches=0,
            seed=trainer.update if seed is None else seed, workers=1, bootstrap=0, loader=loader,
            threads=torch.get_num_threads(), device=str(trainer.device), **variants,
        )
        diff = report["tables"][0]["pairs"][0]["score_diff"]  # learner − baseline, per hand
        results[f"eval/{baseline}_margin"] = float(diff["mean"])
        results[f"eval/{baseline}_ci95"] = float(diff["half_width"])
    trainer.network.train()
    return results

