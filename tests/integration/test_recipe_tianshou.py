"""The Tianshou recipe (examples/tianshou_masked.py) on a tiny budget: Tianshou's PPO trains on
the batched door (``PistiTianshouVectorEnv``) to the end, every action in every rollout PPO
learned from was legal under the mask stored with it, and each finished episode's rewards in
those rollouts add up to the learner's final score difference read from the game (rewards
earned on the opponent's moves reach the learner at its next decision, none is lost across a
rollout boundary or a reset). Same seed, same weights. Needs the ``tianshou`` extra
(``pip install -e ".[tianshou]"``); CI installs it."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tianshou")

import torch  # noqa: E402

from pisti_env.integrations.snapshots import SnapshotPool  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402

from helpers import EXAMPLES, example_module  # noqa: E402
from library_support import one_thread  # noqa: E402,F401  (a fixture)


@pytest.fixture(scope="module")
def recipe():
    """examples/tianshou_masked.py, imported by its name from examples/."""
    return example_module("tianshou_masked")


def watch(envs, algorithm):
    """Records, per game, every finished episode's final score difference from the game's own
    scores (the vector env's final infos), and every row PPO was given to learn from (the
    collector's buffer at each update), in time order."""
    finals: list[list[float]] = [[] for _ in range(len(envs))]
    rows: list[list[dict]] = [[] for _ in range(len(envs))]
    step, update = envs.vector.step, algorithm.update

    def recording_step(actions):
        out = step(actions)
        final = out[4].get("final_info")
        for game in np.flatnonzero(out[2] | out[3]):
            finals[game].append(side_difference(final["match_scores"][game].tolist(), int(final["side"][game])))
        return out

    def recording_update(buffer, **kwargs):
        for game, part in enumerate(buffer.buffers):
            batch = part[np.arange(len(part))]
            rows[game].append({"mask": batch.obs.mask.copy(), "act": batch.act.copy(),
                               "rew": batch.rew.copy(), "terminated": batch.terminated.copy()})
        return update(buffer=buffer, **kwargs)

    envs.vector.step = recording_step
    algorithm.update = recording_update
    return finals, rows


@pytest.mark.usefixtures("one_thread")
@pytest.mark.parametrize("selfplay", [False, True], ids=["vs-greedy", "self-play"])
def test_tianshou_ppo_trains_on_the_batched_door_legally_and_learns_each_score_difference(recipe, selfplay):
    """Against ``greedy``, and in self-play (``--opponent self``): the other seat played by a
    pool of frozen copies of the learner's actor, a new one after every update here."""
    pool = SnapshotPool(first="random", size=2) if selfplay else None
    envs = recipe.make_env(8, opponent=pool or "greedy")
    torch.manual_seed(3)
    algorithm = recipe.build(envs, hidden=(32,))
    finals, rows = watch(envs, algorithm)
    updates: list[dict[str, float]] = []
    refresh = recipe.snapshots_into(pool, algorithm, every=8 * 20) if selfplay else (lambda figures: None)

    def on_update(figures: dict[str, float]) -> None:
        updates.append(figures)
        refresh(figures)

    # 20 vector steps per rollout: hands (24 learner decisions) straddle the rollouts.
    stats = recipe.train(algorithm, envs, total_steps=8 * 20 * 4, steps_per_env=20, epochs=1, minibatches=2,
                         seed=3, on_update=on_update)
    assert stats["steps"] == 8 * 20 * 4 and stats["updates"] == 4 == len(updates)
    if selfplay:  # four snapshots taken, the two newest kept, each a frozen copy of the actor
        assert pool.added == 4 and len(pool.members) == 2
        assert all(m.module is not algorithm.policy.actor for m in pool.members)
    assert stats["episodes"] == sum(len(f) for f in finals) >= 16

    learned = 0
    for game in range(8):
        mask = np.concatenate([r["mask"] for r in rows[game]])
        act = np.concatenate([r["act"] for r in rows[game]])
        rew = np.concatenate([r["rew"] for r in rows[game]])
        ends = np.flatnonzero(np.concatenate([r["terminated"] for r in rows[game]]))
        assert len(act) == 80 and mask[np.arange(len(act)), act].all()  # every action legal under its mask
        returns = [rew[a : b + 1].sum() for a, b in zip(np.r_[0, ends[:-1] + 1], ends)]
        assert returns == pytest.approx(finals[game], abs=1e-9)  # every finished episode, its score difference
        learned += len(ends)
    assert learned == stats["episodes"]

    results = recipe.margins(algorithm, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


@pytest.mark.usefixtures("one_thread")
def test_tianshou_recipe_same_seed_trains_the_same_weights(recipe):
    def run() -> tuple[dict[str, float], list[torch.Tensor]]:
        envs = recipe.make_env(4)
        torch.manual_seed(5)
        algorithm = recipe.build(envs, hidden=(16,))
        stats = recipe.train(algorithm, envs, total_steps=4 * 8 * 3, steps_per_env=8, epochs=2, minibatches=2, seed=5)
        return stats, [p.detach().clone() for p in algorithm.parameters()]

    (stats_a, weights_a), (stats_b, weights_b) = run(), run()
    assert stats_a["episodes"] == stats_b["episodes"] and stats_a["mean_return"] == stats_b["mean_return"]
    assert all(torch.equal(a, b) for a, b in zip(weights_a, weights_b))


@pytest.mark.parametrize("flags, message", [
    (["--envs", "0"], "--envs must be at least 1"),
    (["--opponent", "pimc"], "pimc"),
    (["--envs", "3", "--minibatches", "5"], "divide"),
])
def test_tianshou_recipe_cli_rejects_bad_flags_in_one_line(flags, message):
    run = subprocess.run([sys.executable, str(EXAMPLES / "tianshou_masked.py"), *flags, "--deals", "0"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
