"""The TorchRL self-play recipe on ``pisti_v0`` (examples/torchrl_pettingzoo.py, TorchRL's
PettingZooWrapper) on a tiny budget: it runs to the end, every
action the collector played was legal against the mask the policy was shown, and the rewards
TorchRL saw add up, seat by seat, to the games' score differences (rewards on the other seats'
plays and on the last play included). Needs the ``torchrl`` extra (``pip install -e
".[torchrl]"``); CI installs it."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

pytest.importorskip("torchrl")

from pettingzoo.utils.wrappers import BaseWrapper  # noqa: E402

from pisti_env.game.rewards import side_difference  # noqa: E402

from helpers import example_module  # noqa: E402
from library_support import assert_player_follows  # noqa: E402


class Referee(BaseWrapper):
    """Between TorchRL and ``pisti_v0``: at each game's end, every seat's final score
    difference (R30) from the game itself."""

    def __init__(self, env) -> None:
        super().__init__(env)
        self.finals: list[list[float]] = []

    def step(self, action) -> None:
        super().step(action)
        if self.agents and all(self.terminations.values()):
            game = self.unwrapped.game
            side_of = game.settings.side_of
            self.finals.append([side_difference(game.match_scores, side_of(s)) for s in range(len(self.agents))])


def refereeing(referees: list[Referee]):
    """A ``wrap`` for the recipe's ``make_env``: each table gets a referee, kept in ``referees``."""

    def wrap(aec):
        referees.append(Referee(aec))
        return referees[-1]

    return wrap


class Ledger:
    """What the collector saw, batch after batch, table by table: illegal actions of the seat to
    move (against the ``action_mask`` it was shown) and each finished episode's reward sum per
    seat."""

    def __init__(self, group: str, tables: int, seats: int) -> None:
        self.group, self.illegal, self.moves = group, 0, 0
        self.episodes: list[list[list[float]]] = [[] for _ in range(tables)]
        self._running = torch.zeros(tables, seats, dtype=torch.float64)

    def __call__(self, batch) -> None:
        batch = batch.reshape(-1, batch.shape[-1])  # (tables, plays)
        group = batch[self.group]
        moved = group["mask"]  # (tables, plays, seats): True for the seat that played
        assert bool((moved.sum(-1) == 1).all()), "exactly one seat moves per step (turn-based)"
        action, shown = group["action"], group["action_mask"]
        legal = shown.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        self.illegal += int((moved & ~legal).sum())
        self.moves += int(moved.sum())
        rewards = batch["next", self.group, "reward"].squeeze(-1).double()
        done = batch["next", "done"].squeeze(-1)
        for table, episodes in enumerate(self.episodes):
            for t in range(batch.shape[1]):
                self._running[table] += rewards[table, t]
                if done[table, t]:
                    episodes.append(self._running[table].tolist())
                    self._running[table].zero_()


def assert_same(ledger: Ledger, referees: list[Referee]) -> None:
    referees = [r for r in referees if r.finals]  # SerialEnv also builds a table only to read its specs
    assert len(ledger.episodes) == len(referees)
    for episodes, referee in zip(ledger.episodes, referees):
        assert len(episodes) == len(referee.finals) and episodes
        for seen, final in zip(episodes, referee.finals):
            assert seen == pytest.approx(final, abs=1e-4)  # float32 rewards


def test_torchrl_recipe_trains_legally_and_its_rewards_add_up_to_the_score_differences():
    torch.set_num_threads(1)
    recipe = example_module("torchrl_pettingzoo")
    referees: list[Referee] = []
    env = recipe.make_env(2, seed=3, wrap=refereeing(referees), illegal_action="raise")  # two tables (SerialEnv)
    ledger = Ledger(recipe.GROUP, 2, 2)
    actor = recipe.train(
        env, frames=960, seed=3, on_batch=ledger, frames_per_batch=480, minibatch_size=240, epochs=1, hidden=32
    )
    assert ledger.illegal == 0 and ledger.moves == 960
    assert sum(map(len, ledger.episodes)) >= 15  # 48 plays a hand
    assert_same(ledger, referees)
    results = recipe.margins(actor, deals=4, seed=1)
    assert set(results) == {"random", "greedy"}
    assert all(math.isfinite(r["mean"]) for r in results.values())


@pytest.mark.parametrize(
    "settings, steps",
    [
        (dict(num_players=3), 400),
        (dict(num_players=4, partnerships=True), 400),
        (dict(bluff=True), 400),  # R29: answers are turns of their own
        (dict(target=151), 1200),  # a match: several hands, rewards on the way
    ],
    ids=["3p", "4p-partners", "bluff", "match"],
)
def test_torchrl_wrapper_credits_every_seat_its_rewards_R30(settings, steps):
    """Random legal play (TorchRL's masked ``rand_action``) through the recipe's env: the
    rewards TorchRL records add up per seat to each game's score differences."""
    recipe = example_module("torchrl_pettingzoo")
    referees: list[Referee] = []
    env = recipe.make_env(seed=5, wrap=refereeing(referees), illegal_action="raise", **settings)
    ledger = Ledger(recipe.GROUP, 1, settings.get("num_players", 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = env.rollout(steps, break_when_any_done=False)
    ledger(data)
    assert ledger.illegal == 0
    assert_same(ledger, referees)


def test_train_refuses_unknown_settings():
    recipe = example_module("torchrl_pettingzoo")
    with pytest.raises(TypeError, match="unknown PPO setting"):
        recipe.train(recipe.make_env(seed=0), frames=48, learning_rat=1e-3)
    with pytest.raises(ValueError, match="num_envs"):
        recipe.make_env(0)


def test_harness_player_plays_the_actors_masked_mode():
    """``TorchRLPlayer`` (the logits network, illegal cards masked, argmax) picks what the
    TorchRL actor itself picks deterministically, and only legal cards."""
    from tensordict import TensorDict
    from torchrl.envs import ExplorationType, set_exploration_type

    recipe = example_module("torchrl_pettingzoo")
    torch.manual_seed(0)
    actor, _ = recipe.make_modules(recipe.make_env(seed=0), hidden=32)

    def actors_mode(observation: dict) -> int:
        group = TensorDict(
            {
                "observation": {"observation": torch.as_tensor(observation["observation"])[None]},
                "action_mask": torch.as_tensor(observation["action_mask"] == 1)[None],
            },
            batch_size=[1],
        )
        with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
            return int(actor(TensorDict({recipe.GROUP: group}))[recipe.GROUP, "action"][0])

    assert_player_follows(recipe.TorchRLPlayer(actor), actors_mode)
