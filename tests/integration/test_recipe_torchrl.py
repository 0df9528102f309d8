"""The TorchRL recipe on the batched door (examples/torchrl_masked.py, ``PistiTorchRLEnv``) on a
tiny budget: it runs to the end, every action the collector played was legal against the mask
the policy was shown, and the rewards TorchRL saw add up, episode by episode, to the hands'
score differences as the engine scored them. Needs the ``torchrl`` extra (``pip install -e
".[torchrl]"``); CI installs it."""

from __future__ import annotations

import math

import pytest
import torch

pytest.importorskip("torchrl")

from pisti_env.game.rewards import side_difference  # noqa: E402

from helpers import example_module  # noqa: E402
from library_support import assert_player_follows  # noqa: E402


class Referee:
    """Between the TorchRL env and its vector env: each finished episode's final score
    difference of the learner's side (R30), per game, from the finished episode's infos."""

    def __init__(self, env) -> None:
        vector = env.vector
        self.finals: list[list[float]] = [[] for _ in range(vector.num_envs)]
        step = vector.step

        def refereed_step(actions):
            result = step(actions)
            infos = result[-1]
            if "final_info" in infos:
                final = infos["final_info"]
                for game in infos["_final_info"].nonzero()[0]:
                    scores = final["match_scores"][game].tolist()
                    self.finals[game].append(side_difference(scores, int(final["side"][game])))
            return result

        vector.step = refereed_step


class Ledger:
    """What the collector saw, batch after batch: illegal actions (against the ``action_mask``
    the policy was shown) and each finished episode's reward sum, per game."""

    def __init__(self, games: int) -> None:
        self.illegal, self.moves = 0, 0
        self.episodes: list[list[float]] = [[] for _ in range(games)]
        self._running = torch.zeros(games, dtype=torch.float64)

    def __call__(self, batch) -> None:  # (games, steps)
        legal = batch["action_mask"].gather(-1, batch["action"].unsqueeze(-1)).squeeze(-1)
        self.illegal += int((~legal).sum())
        self.moves += legal.numel()
        rewards = batch["next", "reward"].squeeze(-1).double()
        done = batch["next", "done"].squeeze(-1)
        for t in range(batch.shape[1]):
            self._running += rewards[:, t]
            for game in done[:, t].nonzero().squeeze(1).tolist():
                self.episodes[game].append(float(self._running[game]))
            self._running[done[:, t]] = 0.0


def test_torchrl_recipe_trains_legally_and_its_rewards_add_up_to_the_score_differences():
    torch.set_num_threads(1)
    recipe = example_module("torchrl_masked")
    env = recipe.make_env(16, seed=3)
    referee, ledger = Referee(env), Ledger(16)
    actor, figures = recipe.train(env, frames=16 * 32 * 3, seed=3, on_batch=ledger, num_minibatches=4, hidden=32)
    assert figures["frames"] == 16 * 32 * 3 and ledger.moves == figures["frames"] and ledger.illegal == 0
    assert sum(map(len, ledger.episodes)) >= 3 * 16  # 24 learner decisions a hand
    assert ledger.episodes == [pytest.approx(final, abs=1e-4) for final in referee.finals]  # float32 rewards
    results = recipe.margins(actor, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


def test_torchrl_recipe_is_reproducible_with_its_seed():
    torch.set_num_threads(1)
    recipe = example_module("torchrl_masked")

    def run(seed):
        actor, _ = recipe.train(recipe.make_env(8, seed=seed), frames=8 * 32 * 2, seed=seed, num_minibatches=2, hidden=16)
        return torch.cat([p.detach().flatten() for p in actor.parameters()])

    first = run(5)
    assert torch.equal(first, run(5))
    assert not torch.equal(first, run(6))


def test_train_refuses_bad_settings():
    recipe = example_module("torchrl_masked")
    env = recipe.make_env(4, seed=0)
    with pytest.raises(TypeError, match="unknown PPO setting"):
        recipe.train(env, frames=128, learning_rat=1e-3)
    with pytest.raises(ValueError, match="num_minibatches"):
        recipe.train(env, frames=128, num_steps=3, num_minibatches=5)


def test_recipe_cli_refuses_bad_flags_with_a_one_line_error(capsys):
    recipe = example_module("torchrl_masked")
    for argv in (["--num-envs", "0"], ["--minutes", "-1"], ["--opponent", "pimc"]):
        with pytest.raises(SystemExit) as error:
            recipe.main(argv)
        assert error.value.code == 2
        assert "Traceback" not in capsys.readouterr().err


def test_harness_player_plays_the_actors_masked_mode():
    """``TorchRLPlayer`` (the logits network, illegal cards masked, argmax) picks what the
    TorchRL actor itself picks deterministically, and only legal cards."""
    from tensordict import TensorDict
    from torchrl.envs import ExplorationType, set_exploration_type

    recipe = example_module("torchrl_masked")
    torch.manual_seed(0)
    actor, _ = recipe.make_modules(recipe.make_env(2, seed=0), hidden=32)

    def actors_mode(observation: dict) -> int:
        data = TensorDict(
            {
                "observation": torch.as_tensor(observation["observation"])[None],
                "action_mask": torch.as_tensor(observation["action_mask"] == 1)[None],
            },
            batch_size=[1],
        )
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            return int(actor(data)["action"][0])

    assert_player_follows(recipe.TorchRLPlayer(actor), actors_mode)
