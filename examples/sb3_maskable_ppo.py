"""Train sb3-contrib's MaskablePPO on the batched engine (N games in one SB3 ``VecEnv``), then
measure it on duplicate deals with the evaluation harness.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo.py --minutes 10                 # the batched door (default)
    python examples/sb3_maskable_ppo.py --door step --steps 300000   # the step-by-step env
    python examples/sb3_maskable_ppo.py --export agents/sb3.pt       # also the policy, for pisti-benchmark

The learner holds one seat (drawn per episode) of a 2-player single hand (``target=None``);
``opponent`` plays the other. The default door is
[`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv]: ``--num-envs`` games stepped together by
the batched engine, the opponent choosing for all of them at once, wrapped in SB3's
``VecMonitor`` (episode returns in the logs). ``--door step`` trains on ``pisti/Pisti-v0``'s
step-by-step env ([`PistiEnv`][pisti_env.envs.single_agent.PistiEnv], one game, Python engine), which
takes any player, batched form or not, at the cost of speed.

On either door MaskablePPO reads the masks through ``action_masks`` and the policy takes the
Dict observation as it is (``MultiInputPolicy``). Every reward the learner gets is its share of
the score difference since its previous decision, so an episode's return is the hand's final
score difference. At the end the trained policy plays ``pisti-eval``'s duplicate deals against
``random`` and ``greedy`` through the harness API (as a batched player: the deals run on the
batched engine too).

Hyperparameters (the batched door's defaults, chosen with 3-minute runs on a 2-core CPU): many
games and a large rollout (1024 games x 32 steps) keep the library's per-sample overhead small;
minibatches of 1024 (32 per rollout, 2 epochs) give many updates per sample; 64x64 actor and
critic (the forward and backward passes are most of the time: a smaller network trains on more
steps and beat 128x128 and minibatches of 4096 at a 3-minute budget); ``gamma=1`` (one hand,
rewards are points), ``gae_lambda=0.8``, learning rate 1e-3 decayed to 0 over the budget.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Callable, Sequence

import gymnasium
import torch
from torch import nn
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

import pisti_env  # registers "pisti/Pisti-v0"
from pisti_env.integrations.sb3 import PistiSB3VecEnv, PolicySnapshot
from training.harness import recipes
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API

SETTINGS = dict(num_players=2, target=None)  # the game margins() evaluates: 2-player single hands

# The batched door's PPO settings (see the module docstring); ``train(..., **ppo)`` overrides them.
BATCHED_PPO = dict(
    n_steps=32, batch_size=1024, n_epochs=2, learning_rate=1e-3, gamma=1.0, gae_lambda=0.8,
    ent_coef=0.01, clip_range=0.2, max_grad_norm=0.5,
    policy_kwargs=dict(net_arch=dict(pi=[64, 64], vf=[64, 64])),
)
# The step-by-step env's (one game: shorter rollouts, smaller minibatches).
STEP_PPO = dict(n_steps=2048, batch_size=256, learning_rate=3e-4, gamma=1.0, ent_coef=0.01)


def make_vec_env(num_envs: int = 1024, opponent: Any = "greedy", terminal_observation: bool = False, **settings: Any) -> VecEnv:
    """The batched door: ``num_envs`` games against ``opponent`` (a player with a batched form, or
    an object with ``act_batch`` such as a snapshot pool), with ``VecMonitor``'s episode infos.
    ``terminal_observation``: off by default, since MaskablePPO reads it only for truncated
    episodes and these never truncate (building it costs as much as the engine's step)."""
    env = PistiSB3VecEnv(num_envs, opponent=opponent, terminal_observation=terminal_observation, **{**SETTINGS, **settings})
    return VecMonitor(env)


def make_env(opponent: str = "greedy", seed: int = 0) -> gymnasium.Env:
    """The step-by-step door: one game of ``pisti/Pisti-v0`` against ``opponent`` (any player)."""
    env = gymnasium.make(pisti_env.GYM_ENV_ID, opponent=opponent, **SETTINGS)
    env.reset(seed=seed)
    return env


class ShowProgress(BaseCallback):
    """Progress and the time left after each update (`training.harness.recipes.Progress`:
    SB3 starts a rollout once the previous update is done)."""

    def __init__(self, progress: recipes.Progress) -> None:
        super().__init__()
        self.progress = progress

    def _on_rollout_start(self) -> None:
        self.progress.update(self.num_timesteps)

    def _on_step(self) -> bool:
        return True


class TimeBudget(BaseCallback):
    """Stops training once ``seconds`` have passed (checked at every environment step)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds, self.start = seconds, time.perf_counter()

    def _on_step(self) -> bool:
        return time.perf_counter() - self.start < self.seconds


def decaying(rate: float, steps: int, seconds: float = math.inf) -> Callable[[float], float]:
    """A learning-rate schedule that falls linearly to 0 over the budget: ``steps`` (SB3's
    ``progress_remaining``) or ``seconds`` of wall clock, whichever is further along."""
    start = time.perf_counter()

    def schedule(progress_remaining: float) -> float:
        spent = max(1.0 - progress_remaining, (time.perf_counter() - start) / seconds)
        return rate * max(0.0, 1.0 - spent)

    return schedule


def train(
    env: gymnasium.Env | VecEnv, steps: int, seed: int = 0, callback: Any = None, minutes: float = 0.0,
    progress: str | None = "sb3_maskable_ppo", **ppo: Any
) -> MaskablePPO:
    """MaskablePPO on ``env`` for ``steps`` learner decisions (summed over the games) or
    ``minutes`` of wall clock (0: no limit), whichever ends first; the learning rate decays to 0
    over that budget. ``callback`` (an SB3 callback or a list) goes to ``learn``; ``progress``:
    the name its progress lines on stderr start with (``None``: none); ``ppo`` overrides the
    door's defaults (`BATCHED_PPO` on a [`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv], `STEP_PPO` else)."""
    batched = isinstance(getattr(env, "unwrapped", None), PistiSB3VecEnv)  # under any VecEnv wrappers
    options = dict(BATCHED_PPO if batched else STEP_PPO, verbose=0)
    options.update(ppo)
    seconds = minutes * 60.0 if minutes > 0 else math.inf
    options["learning_rate"] = decaying(options["learning_rate"], steps, seconds)
    model = MaskablePPO("MultiInputPolicy", env, seed=seed, **options)
    callbacks = [TimeBudget(seconds)] + (list(callback) if isinstance(callback, (list, tuple)) else [callback] if callback else [])
    if progress is not None:
        callbacks.append(ShowProgress(recipes.Progress(progress, steps=steps, seconds=seconds)))
    return model.learn(total_timesteps=steps, callback=callbacks)


def margins(model: MaskablePPO, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The model's mean score difference per hand (95% CI) against ``random`` and ``greedy`` on
    ``deals`` duplicate deals, each played once from either seat: its most likely legal action,
    through `PolicySnapshot`, a harness player with a batched form (so the deals run on
    the batched engine)."""
    player = PolicySnapshot(model.policy, deterministic=True, name="maskable-ppo")
    return baseline_margins(player, deals=deals, seed=seed, **SETTINGS)


class ActorLogits(nn.Module):
    """A MaskablePPO policy's action logits as one module, ``(observation, action_mask) ->
    logits``: ``MultiInputPolicy`` reads the Dict observation, the mask (as 0/1 floats) an input
    feature beside the observation vector, so the exported file feeds it both."""

    def __init__(self, policy: Any) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        features = self.policy.extract_features({"observation": observation, "action_mask": action_mask.float()},
                                                self.policy.pi_features_extractor)
        return self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))


def export(model: MaskablePPO, path: str) -> str:
    """Write the model's policy to ``path`` as a ``pisti-export`` file that plays its most likely
    legal action, as `margins` does (`training.harness.recipes.export_policy_file`)."""
    frozen = PolicySnapshot(model.policy, deterministic=True).policy  # a fresh copy of the weights, on the CPU below
    return recipes.export_policy_file(ActorLogits(frozen), path, settings=SETTINGS, name="sb3-maskable-ppo",
                                      recipe="examples/sb3_maskable_ppo.py", steps=model.num_timesteps, reads_mask=True)


def add_ppo_flags(parser: argparse.ArgumentParser) -> None:
    """The training budget, and flags that override the door's PPO settings (`BATCHED_PPO`
    / `STEP_PPO`)."""
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none)")
    parser.add_argument("--steps", type=int, default=100_000_000, help="learner decisions to train for at most")
    parser.add_argument("--n-steps", type=int, default=None, help="steps per game per rollout (batched default 32)")
    parser.add_argument("--batch-size", type=int, default=None, help="minibatch size (batched default %d)" % BATCHED_PPO["batch_size"])
    parser.add_argument("--n-epochs", type=int, default=None, help="passes over each rollout (batched default %d)" % BATCHED_PPO["n_epochs"])
    parser.add_argument("--learning-rate", type=float, default=None, help="Adam's step size at the start (batched default 1e-3)")
    parser.add_argument("--hidden", type=int, nargs="+", default=None, help="widths of the actor's and the critic's hidden layers (batched default 64 64)")


def check_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A one-line error (exit code 2) for a count below 1 (``--deals`` below 0: 0 skips the
    evaluation) or a negative budget."""
    if args.deals < 0:
        parser.error(f"--deals must be at least 0 (0: no evaluation), got {args.deals}")
    for name in ("steps", "num_envs", "threads", "n_steps", "batch_size", "n_epochs", "envs", "rollout", "pool", "snapshot_every"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.hidden is not None and min(args.hidden) < 1:
        parser.error(f"--hidden widths must be at least 1, got {args.hidden}")
    if not args.minutes >= 0 or (args.learning_rate is not None and not args.learning_rate > 0):
        parser.error("--minutes must be >= 0 and --learning-rate > 0")


def ppo_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The PPO settings given on the command line (the others stay the door's defaults)."""
    given = {name: getattr(args, name) for name in ("n_steps", "batch_size", "n_epochs", "learning_rate")}
    if args.hidden is not None:
        given["policy_kwargs"] = dict(net_arch=dict(pi=list(args.hidden), vf=list(args.hidden)))
    return {name: value for name, value in given.items() if value is not None}


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--door", choices=("batched", "step"), default="batched",
                        help="batched: PistiSB3VecEnv (default); step: the step-by-step pisti/Pisti-v0 env")
    parser.add_argument("--num-envs", type=int, default=1024, help="games stepped together (batched door)")
    add_ppo_flags(parser)
    parser.add_argument("--opponent", default="greedy", help="a player spec (default greedy)")
    recipes.add_run_flags(parser, seed=0, save="where to save the model (.zip)", export=True)
    args = parser.parse_args(argv)
    check_flags(parser, args)
    torch.set_num_threads(args.threads)

    try:  # a bad player spec (or one without a batched form): one line, not a traceback
        env = make_vec_env(args.num_envs, args.opponent) if args.door == "batched" else make_env(args.opponent, args.seed)
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    start = time.perf_counter()
    model = train(env, args.steps, seed=args.seed, minutes=args.minutes, **ppo_overrides(args))
    if args.export:
        export(model, args.export)
    report(model, model.num_timesteps, time.perf_counter() - start, args.deals, args.seed, args.save)


def report(model: MaskablePPO, steps: int, seconds: float, deals: int, seed: int = 0, save: str | None = None, note: str = "") -> None:
    """Save the model to ``save`` if given, print the training speed and the load average
    (``note`` appended), and its `margins` against ``random`` and ``greedy`` on ``deals``
    duplicate deals (0: none)."""
    if save:
        model.save(save)
    recipes.report(steps, seconds, deals, lambda: margins(model, deals, seed), note=note)


if __name__ == "__main__":
    main()
