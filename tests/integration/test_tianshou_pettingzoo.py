"""The step-by-step Tianshou recipe (examples/tianshou_pettingzoo_selfplay.py, Tianshou's
``PettingZooEnv`` over ``pisti_v0``) on a tiny budget: self-play PPO runs to the end, every
card the policy played was legal under the mask it was shown, Tianshou's ``PettingZooEnv``
passed on every reward of ``pisti_v0`` (each seat's column adds up to its final score
difference), and the rewards PPO learned from, after the recipe credits each seat its own
(``credit_seats``), add up to every seat's final score difference too. Needs the ``tianshou``
extra (``pip install -e ".[tianshou]"``); CI installs it."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("tianshou")

import torch  # noqa: E402  (tianshou needs it)
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402

from pisti_env.envs import pisti_v0  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402

from helpers import example_module  # noqa: E402
from library_support import one_thread  # noqa: E402,F401  (a fixture)


@pytest.fixture(scope="module")
def recipe():
    """examples/tianshou_pettingzoo_selfplay.py, imported by its name from examples/."""
    return example_module("tianshou_pettingzoo_selfplay")


class Referee(PettingZooEnv):
    """Tianshou's wrapper, watched: checks each action against the mask the policy was shown
    (the last observation handed out), and per finished hand keeps the sum of the reward vectors
    handed out and every seat's final score difference from the game itself."""

    def __init__(self, env) -> None:
        self.illegal, self.hands, self._mask, self._seen = 0, [], None, None
        super().__init__(env)  # resets

    def reset(self, *args, **kwargs):
        obs, info = super().reset(*args, **kwargs)
        self._mask, self._seen = np.array(obs["mask"], dtype=bool), np.zeros(len(self.agents))
        return obs, info

    def step(self, action):
        self.illegal += not self._mask[int(action)]
        obs, rewards, terminated, truncated, info = super().step(action)
        self._seen += rewards
        self._mask = np.array(obs["mask"], dtype=bool)
        if terminated or truncated:
            game = self.env.unwrapped.game
            final = {a: side_difference(game.match_scores, game.settings.side_of(i)) for a, i in self.agent_idx.items()}
            self.hands.append((dict(zip(self.agents, self._seen.tolist())), final))
        return obs, rewards, terminated, truncated, info


@pytest.mark.usefixtures("one_thread")
def test_tianshou_self_play_recipe_trains_legally_and_every_seat_learns_from_its_score_difference(recipe):
    referees = [Referee(pisti_v0.env(**recipe.SETTINGS)) for _ in range(3)]
    envs = DummyVectorEnv([lambda r=r: r for r in referees])
    record: list[tuple[int, str, float]] = []
    torch.manual_seed(3)
    algorithm = recipe.build(referees[0], hidden=(64,), record=record)
    stats = recipe.train(algorithm, envs, steps=1200, hands_per_update=9, epochs_per_update=1, minibatch=128, seed=3)
    assert stats["steps"] >= 1200

    assert sum(r.illegal for r in referees) == 0
    hands = [hand for r in referees for hand in r.hands]
    assert len(hands) >= 25
    for seen, final in hands:  # Tianshou's wrapper drops no reward of pisti_v0
        assert seen == pytest.approx(final, abs=1e-9)

    # What PPO learned from: per env, hand by hand, one (agent, return) per seat.
    for env, referee in enumerate(referees):
        learned = [(agent, total) for e, agent, total in record if e == env]
        assert len(learned) == 2 * len(referee.hands)
        for k, (_, final) in enumerate(referee.hands):
            assert dict(learned[2 * k : 2 * k + 2]) == pytest.approx(final, abs=1e-9)

    results = recipe.margins(algorithm, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


@pytest.mark.usefixtures("one_thread")
def test_tianshou_recipe_same_seed_trains_the_same_weights(recipe):
    def run() -> tuple[list, list[torch.Tensor]]:
        record: list[tuple[int, str, float]] = []
        torch.manual_seed(5)
        algorithm = recipe.build(recipe.make_env(), hidden=(32,), record=record)
        envs = DummyVectorEnv([recipe.make_env for _ in range(2)])
        recipe.train(algorithm, envs, steps=400, hands_per_update=4, epochs_per_update=1, minibatch=64, seed=5)
        return record, [p.detach().clone() for p in algorithm.parameters()]

    (record_a, weights_a), (record_b, weights_b) = run(), run()
    assert record_a == record_b and len(record_a) >= 16
    assert all(torch.equal(a, b) for a, b in zip(weights_a, weights_b))


def test_credit_seats_refuses_a_rollout_cut_mid_hand(recipe):
    """A seat's last decision in a cut hand has no known reward yet: a clear error, not a guess."""
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, ReplayBuffer

    env = recipe.make_env()
    buffer = ReplayBuffer(200)
    collector = Collector(MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space).policy, DummyVectorEnv([lambda: env]), buffer)
    collector.reset()
    collector.collect(n_step=recipe.HAND_ROWS + 5)  # one whole hand and the start of the next
    batch, indices = buffer.sample(0)
    with pytest.raises(ValueError, match="whole hands"):
        recipe.credit_seats(batch, buffer, indices, env.agent_idx)
    whole = recipe.credit_seats(batch[: recipe.HAND_ROWS], buffer, indices[: recipe.HAND_ROWS], env.agent_idx)
    assert len(whole) == recipe.HAND_ROWS and whole.terminated.sum() == 2
