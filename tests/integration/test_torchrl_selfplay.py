"""The TorchRL self-play recipe on the batched group door (examples/torchrl_selfplay.py,
``PistiSelfPlayTorchRLEnv``) on a tiny budget: it runs to the end, every play the collector made
was legal against the mask the policy was shown, and each seat's rewards add up over every
episode to its final score difference as the engine scored it (R30). Needs the ``torchrl``
extra."""

from __future__ import annotations

import math

import pytest
import torch

pytest.importorskip("torchrl")

from pisti_env.batched import BatchedPisti  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402

from helpers import example_module  # noqa: E402


def test_torchrl_selfplay_recipe_trains_legally_and_every_seats_rewards_add_up(monkeypatch):
    torch.set_num_threads(1)
    recipe = example_module("torchrl_selfplay")
    games, seats = 8, 2
    finals: list[list[list[float]]] = [[] for _ in range(games)]
    step = BatchedPisti.step

    def refereed(engine, actions, *args, **kwargs):  # every engine the env builds, resets included
        out = step(engine, actions, *args, **kwargs)
        side_of = engine.side_of.tolist()
        for game in out.done.nonzero().squeeze(1).tolist():
            scores = out.match_scores[game].tolist()
            finals[game].append([side_difference(scores, side_of[s]) for s in range(seats)])
        return out

    monkeypatch.setattr(BatchedPisti, "step", refereed)
    seen: list[list[list[float]]] = [[] for _ in range(games)]
    running = torch.zeros(games, seats, dtype=torch.float64)
    illegal = moves = 0

    def ledger(batch) -> None:  # (games, plays)
        nonlocal illegal, moves
        group = batch[recipe.GROUP]
        moved = group["mask"]
        assert bool((moved.sum(-1) == 1).all())  # one seat moves per game and step
        legal = group["action_mask"].gather(-1, group["action"].unsqueeze(-1)).squeeze(-1)
        illegal += int((moved & ~legal).sum())
        moves += int(moved.sum())
        rewards = batch["next", recipe.GROUP, "reward"].squeeze(-1).double()
        done = batch["next", "done"].squeeze(-1)
        for t in range(batch.shape[1]):
            running.add_(rewards[:, t])
            for game in done[:, t].nonzero().squeeze(1).tolist():
                seen[game].append(running[game].tolist())
                running[game].zero_()

    env = recipe.make_env(games, seed=3)
    actor = recipe.train(env, frames=games * 96 * 2, seed=3, on_batch=ledger, frames_per_batch=games * 96,
                         minibatch_size=games * 48, epochs=1, hidden=32)
    assert illegal == 0 and moves == games * 96 * 2
    for game in range(games):
        assert len(seen[game]) == 4  # 48 plays a 2-player hand
        assert seen[game] == [pytest.approx(f, abs=1e-4) for f in finals[game]]
    results = recipe.margins(actor, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())
