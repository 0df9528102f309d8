"""Train sb3-contrib's MaskablePPO on the single-agent Gymnasium env, then measure it on
duplicate deals with the evaluation harness.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo.py --steps 300000 --opponent greedy

The learner holds one seat of a 2-player single hand (``target=None``); ``opponent`` plays the
other. ``PistiEnv.action_masks()`` is what MaskablePPO reads, and the policy takes the Dict
observation as it is (``MultiInputPolicy``). Every reward the learner gets is its share of the
score difference since its previous decision, so an episode's return is the hand's final score
difference. At the end the trained model plays ``pisti-eval``'s duplicate deals against
``random`` and ``greedy`` through the harness API (a small adapter makes it a player).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Sequence

import gymnasium
from sb3_contrib import MaskablePPO

import pisti_env  # registers "pisti/Pisti-v0"
from pisti_env.agents import SeatView
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API


def make_env(opponent: str = "greedy", seed: int = 0) -> gymnasium.Env:
    """The training env: one learner seat against ``opponent`` in 2-player single hands."""
    env = gymnasium.make(pisti_env.GYM_ENV_ID, opponent=opponent, num_players=2, target=None)
    env.reset(seed=seed)
    return env


def train(env: gymnasium.Env, steps: int, seed: int = 0, callback: Any = None, **ppo: Any) -> MaskablePPO:
    """MaskablePPO on ``env`` for ``steps`` learner decisions; ``callback`` is passed to
    ``learn`` (an SB3 callback), ``ppo`` overrides the defaults."""
    options = dict(n_steps=2048, batch_size=256, learning_rate=3e-4, gamma=1.0, ent_coef=0.01, verbose=0)
    options.update(ppo)
    model = MaskablePPO("MultiInputPolicy", env, seed=seed, **options)
    return model.learn(total_timesteps=steps, callback=callback)


class ModelPlayer:
    """A trained model (or its policy) as a harness player: ``act(view)`` on what the seat may
    know (R30). ``deterministic``: play the most likely action (default), or sample one (torch's
    generator, seeded by SB3's ``seed``)."""

    name = "maskable-ppo"

    def __init__(self, model: Any, deterministic: bool = True) -> None:
        self.model = model
        self.deterministic = deterministic

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reseed here (a sampling model draws from torch's generator)."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        action, _ = self.model.predict(
            observation, action_masks=observation["action_mask"].astype(bool), deterministic=self.deterministic
        )
        return int(action)


def margins(model: MaskablePPO, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The model's mean score difference per hand (95% CI) against ``random`` and ``greedy`` on
    ``deals`` duplicate deals, each played once from either seat."""
    return baseline_margins(ModelPlayer(model), deals=deals, seed=seed, num_players=2)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300_000, help="learner decisions to train for")
    parser.add_argument("--opponent", default="greedy", help="a player spec (default greedy)")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", default=None, help="where to save the model (.zip)")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    model = train(make_env(args.opponent, args.seed), args.steps, seed=args.seed)
    report(model, args.steps, time.perf_counter() - start, args.deals, args.seed, args.save)


def report(model: MaskablePPO, steps: int, seconds: float, deals: int, seed: int = 0, save: str | None = None, note: str = "") -> None:
    """Print the training speed (``note`` appended), save the model to ``save`` if given, and
    print its :func:`margins` against ``random`` and ``greedy`` on ``deals`` duplicate deals."""
    print(f"trained {steps:,} steps in {seconds:.0f} s ({steps / seconds:,.0f} steps/s){note}")
    if save:
        model.save(save)
    for baseline, diff in margins(model, deals, seed).items():
        print(f"vs {baseline}: {diff['mean']:+.2f} ± {diff['half_width']:.2f} points per hand ({deals} duplicate deals)")


if __name__ == "__main__":
    main()
