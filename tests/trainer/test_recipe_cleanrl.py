"""The CleanRL-style recipe (examples/cleanrl_ppo_vector.py) on a tiny budget: it trains to the
end, every action it took was legal, the rewards it saw add up to the hands' score differences,
the same seed gives the same losses, and its harness evaluation runs. Needs only torch (the
vector env's own dependency), so it runs in the main suite."""

from __future__ import annotations

import math

import gymnasium
import numpy as np
import pytest
import torch

from helpers import example_module


@pytest.fixture(scope="module")
def recipe():
    return example_module("cleanrl_ppo_vector")


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """The recipe sets torch's thread count (one thread: fast on a shared CPU); put it back."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def tiny(recipe, **overrides):
    """A few updates of a few games: seconds, with no clock in the way (minutes=0)."""
    values = dict(seed=3, num_envs=32, num_steps=32, total_timesteps=32 * 32 * 3, minutes=0.0,
                  hidden_sizes=(32, 32), num_minibatches=4, log_every=0, eval_deals=0, threads=1)
    values.update(overrides)
    return recipe.Args(**values)


class Referee(gymnasium.vector.VectorWrapper):
    """Between the recipe and the vector env: checks each action against the mask the recipe was
    shown, and for each finished episode the return it saw against the hand's final score
    difference (from the finished episode's ``final_info``)."""

    def __init__(self, env: gymnasium.vector.VectorEnv) -> None:
        super().__init__(env)
        self.illegal, self.actions, self.episodes = 0, 0, []
        self._mask = None
        self._return = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._mask = obs["action_mask"].bool().clone()
        self._return = torch.zeros(self.num_envs, dtype=torch.float64)
        return obs, info

    def step(self, actions):
        rows = torch.arange(self.num_envs)
        self.illegal += int((~self._mask[rows, actions]).sum())
        self.actions += self.num_envs
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        assert isinstance(rewards, torch.Tensor) and isinstance(obs["observation"], torch.Tensor)  # torch outputs
        self._return += rewards.double()
        self._mask = obs["action_mask"].bool().clone()
        done = (terminated | truncated).numpy()
        if done.any():
            final = info["final_info"]
            for game in np.flatnonzero(done):
                scores, side = final["match_scores"][game], final["side"][game]
                self.episodes.append((float(self._return[game]), float(scores[side] - scores[1 - side])))
            self._return[torch.from_numpy(done)] = 0.0
        return obs, rewards, terminated, truncated, info


def test_cleanrl_recipe_trains_legally_and_its_returns_are_the_score_differences(recipe):
    args = tiny(recipe)
    env = Referee(recipe.make_envs(args))
    agent, history = recipe.train(args, envs=env)
    assert len(history) == 3  # ran to the end of its step budget
    assert env.actions == 3 * args.batch_size and env.illegal == 0
    assert len(env.episodes) >= args.num_envs  # each game finished at least one hand
    for seen, final in env.episodes:
        assert seen == pytest.approx(final, abs=1e-6)
    for metrics in history:
        assert all(math.isfinite(v) for k, v in metrics.items() if k != "charts/episodic_return")
    results = recipe.margins(agent, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) and math.isfinite(r["half_width"]) for r in results.values())


def test_cleanrl_recipe_is_reproducible_with_its_seed(recipe):
    def losses(seed):
        _, history = recipe.train(tiny(recipe, seed=seed, total_timesteps=32 * 32 * 2))
        return [{k: v for k, v in m.items() if k != "charts/SPS"} for m in history]

    first = losses(5)
    assert losses(5) == first
    assert losses(6) != first


def test_cleanrl_recipe_gae_stops_at_episode_ends(recipe):
    """SAME_STEP autoreset: a transition whose own step ended the episode never bootstraps."""
    rewards = torch.tensor([[1.0], [2.0], [4.0]])
    values = torch.tensor([[10.0], [20.0], [30.0]])
    dones = torch.tensor([[False], [True], [False]])
    advantages, returns = recipe.gae(rewards, values, dones, torch.tensor([100.0]), gamma=1.0, gae_lambda=1.0)
    assert returns[:, 0].tolist() == [3.0, 2.0, 104.0]
    assert torch.equal(advantages, returns - values)


def test_cleanrl_recipe_flags_and_bad_arguments(recipe):
    args = recipe.parse_args(["--num-envs", "64", "--hidden-sizes", "16", "8", "--no-anneal-lr", "--minutes", "0.5"])
    assert (args.num_envs, args.hidden_sizes, args.anneal_lr, args.minutes) == (64, (16, 8), False, 0.5)
    with pytest.raises(ValueError, match="num_minibatches"):
        recipe.Args(num_envs=10, num_steps=3, num_minibatches=4)
    with pytest.raises(ValueError, match="minutes"):
        recipe.Args(minutes=-1.0)
    with pytest.raises(ValueError, match="num_envs"):
        recipe.Args(num_envs=0)
    args = tiny(recipe)
    with pytest.raises(TypeError, match="output='torch'"):
        recipe.train(args, envs=gymnasium.make_vec("pisti/Pisti-v0", num_envs=args.num_envs, target=None))
