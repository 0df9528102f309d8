"""Train RLlib's PPO (new API stack) on the batched engine: each env runner steps N games of
``gymnasium.make_vec("pisti/Pisti-v0")`` at once; then measure the policy on duplicate deals.

    pip install -e ".[rllib]"
    python examples/rllib_ppo_vector.py --minutes 10        # then evaluates vs random, greedy
    python examples/rllib_ppo_vector.py --steps 500000      # a step budget instead

The learner holds one seat (drawn per episode) of a 2-player single hand (``target=None``);
``--opponent`` (default ``greedy``, any player with a batched form) plays the other seat of
every game. The env is [`pisti_env.integrations.rllib.PistiVectorRLlibEnv`][pisti_env.integrations.rllib.PistiVectorRLlibEnv]: the vector
env on the batched engine with Gymnasium's next-step autoreset (what RLlib's env runner
expects) and the observation keys RLlib's ``ActionMaskingTorchRLModule`` reads. Each runner
steps ``--envs-per-runner`` games with one engine step and one forward pass; every reward is
the learner's share of the score difference since its previous decision, so an episode's
return is the hand's final score difference. At the end the trained module plays
``pisti-eval``'s duplicate deals against ``random`` and ``greedy`` through the harness API (as
a batched player, on the batched engine).

For a learner at every seat (self-play), other player counts and variants, or opponents
without a batched form, ``examples/rllib_ppo.py`` trains on the step-by-step multi-agent env.

Hyperparameters (``make_config``'s arguments, PPO's names in RLlib), chosen with short runs on
a 2-core CPU:

* ``lr`` 1e-3: Adam's step size for the policy and the value network.
* ``train_batch_size`` 8192: env steps sampled per iteration (32 vector steps of 256 games).
* ``minibatch_size`` 2048, ``num_epochs`` 2: each iteration makes two passes over the batch
  in four minibatches; RLlib's cost per minibatch is large, so few and large ones.
* ``gamma`` 1.0: no discount: a return is the hand's score difference (24 decisions).
* ``lambda_`` 0.8: GAE's bias/variance trade-off (a value estimate after a few decisions is
  already good in a short hand).
* ``clip_param`` 0.2: PPO's clip range for the probability ratio.
* ``entropy_coeff`` 0.01: bonus for a spread-out policy (keeps it exploring).
* ``vf_clip_param`` inf: returns here are points (tens): no clipping of the value loss.
* ``use_kl_loss`` False: the clipped objective only, as in the PPO paper and CleanRL (RLlib's
  default adds an adaptive KL penalty, which slowed learning here).
* ``hidden`` (128, 128), ``activation`` tanh: the policy MLP and the (separate) value MLP.

Sampling: ``--env-runners`` 0 samples in the driver (on one machine the cheapest: no actor,
no transfer of episodes); ``--envs-per-runner`` 256 games per runner. ``--torch-threads`` 1:
small networks gain nothing from more threads, and on a busy CPU more threads contend.

Running the env runners on a Ray cluster
----------------------------------------
Sampling is done by env runners (Ray actors, one CPU each); the learner stays in the driver.
Install the project on every node (``pip install -e ".[rllib]"``, the same Python and Ray
versions), then::

    ray start --head --port=6379                # on the head node
    ray start --address=<head-ip>:6379          # on every other node
    python examples/rllib_ppo_vector.py --address auto --env-runners 8 --envs-per-runner 256

``--address`` joins that cluster (``auto``: the one this machine belongs to; ``HOST:PORT``;
``ray://HOST:10001`` through Ray Client). Without it the script starts a private Ray instance
on this machine that listens on 127.0.0.1 only, with no dashboard. See
``docs/libraries/rllib.md`` for what a cluster exposes on the network.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable, Sequence

import ray
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module import RLModule
from torch import nn

from pisti_env.integrations.rllib import ACTION_MASK, OBSERVATIONS, RLModulePlayer, single_agent_ppo_config, train, with_training
from training.harness import ray_backend
from training.harness import recipes
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API

GAME = {"num_players": 2, "target": None}  # the settings trained and evaluated


# PPO's hyperparameters (the module docstring explains each one); ``train_batch_size`` is RLlib's
# ``train_batch_size_per_learner``; make_config's keywords override them.
PPO: dict[str, Any] = dict(lr=1e-3, train_batch_size=8192, minibatch_size=2048, num_epochs=2, gamma=1.0, lambda_=0.8, clip_param=0.2,
                       entropy_coeff=0.01, vf_clip_param=float("inf"))


def make_config(
    *,
    opponent: str = "greedy",
    env_runners: int = 0,
    envs_per_runner: int = 256,
    seed: int = 0,
    activation: str = "tanh",
    hidden: Sequence[int] = (128, 128),
    **ppo: Any,
) -> PPOConfig:
    """PPO against ``opponent`` on 2-player single hands (``ppo``: `PPO`'s
    hyperparameters to change; see the module docstring for each)."""
    config = single_agent_ppo_config(
        {"opponent": opponent, **GAME}, hidden=hidden, activation=activation, num_env_runners=env_runners,
        num_envs_per_env_runner=envs_per_runner, seed=seed,
    )
    return with_training(config.training(use_kl_loss=False), PPO, ppo)  # PPO's clipping alone (RLlib adds a KL penalty by default)


def margins(algo: Algorithm, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The trained module's mean score difference per hand (95% interval) against ``random``
    and ``greedy`` on ``deals`` duplicate deals, each played from either seat."""
    return baseline_margins(RLModulePlayer(algo.get_module()), deals=deals, seed=seed, **GAME)


class ModuleLogits(nn.Module):
    """The action-masking RLModule's logits as one module, ``(observation, action_mask) ->
    logits``: what `RLModulePlayer` asks it (``forward_inference`` on the observation
    and the mask as 0/1 floats), so the exported file chooses as the player does."""

    def __init__(self, module: RLModule) -> None:
        super().__init__()
        self.module = module

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        batch = {Columns.OBS: {OBSERVATIONS: observation, ACTION_MASK: action_mask.float()}}
        return self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]


def export(algo: Algorithm, path: str, steps: int) -> str:
    """Write the trained module to ``path`` as a ``pisti-export`` file that plays its most likely
    legal action, as `margins` does (`training.harness.recipes.export_policy_file`)."""
    return recipes.export_policy_file(ModuleLogits(algo.get_module()), path, settings=GAME, name="rllib-ppo",
                                      recipe="examples/rllib_ppo_vector.py", steps=steps, reads_mask=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none; then --steps)")
    parser.add_argument("--steps", type=int, default=None, help="env steps (learner decisions) to train for at most")
    recipes.add_run_flags(parser, seed=0, save="directory to save the algorithm's checkpoint in", threads="--torch-threads",
                          export=True)
    parser.add_argument("--opponent", default="greedy", help="the other seat's player (one with a batched form)")
    parser.add_argument("--env-runners", type=int, default=0, help="num_env_runners (0: sample in the driver)")
    parser.add_argument("--envs-per-runner", type=int, default=256, help="num_envs_per_env_runner: games per runner")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--train-batch-size", type=int, default=8192)
    parser.add_argument("--minibatch-size", type=int, default=2048)
    parser.add_argument("--num-epochs", type=int, default=2)
    parser.add_argument("--address", default=None,
                        help="a Ray cluster to run the env runners on ('auto', HOST:PORT); default: a private local instance")
    args = parser.parse_args(argv)
    if not args.minutes and args.steps is None:
        parser.error("give --minutes > 0 or --steps: training needs a budget")

    torch.set_num_threads(args.torch_threads)
    ray_backend.connect(args.address or ray_backend.LOCAL)
    config = make_config(
        opponent=args.opponent, env_runners=args.env_runners, envs_per_runner=args.envs_per_runner, seed=args.seed,
        lr=args.lr, train_batch_size=args.train_batch_size, minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs,
    )

    start = time.perf_counter()

    def log(result: dict[str, Any]) -> None:
        runners = result["env_runners"]
        print(
            f"iter {result['training_iteration']:3d}  {time.perf_counter() - start:5.0f} s  "
            f"steps {runners['num_env_steps_sampled_lifetime']:>9,}  "
            f"return {runners.get('episode_return_mean', float('nan')):+.2f}",
            flush=True,
        )

    run(config, args, log, margins)


def run(
    config: PPOConfig,
    args: argparse.Namespace,
    on_result: Callable[[dict[str, Any]], None],
    margins: Callable[[Algorithm, int, int], dict[str, dict[str, float]]],
    name: str = "rllib_ppo_vector",
) -> None:
    """Both RLlib recipes' run: train on ``config`` for ``args``' budget (``--minutes``,
    ``--steps``; ``on_result`` sees every iteration's result; progress lines on stderr start
    with ``name``), save the algorithm (``--save``),
    print the speed and ``margins(algo, deals, seed)`` (``--deals``), then stop it and Ray."""
    sampled = [0]
    progress = recipes.Progress(name, steps=args.steps, seconds=args.minutes * 60.0, unit="env steps")

    def record(result: dict[str, Any]) -> None:
        sampled[0] = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        on_result(result)
        progress.update(sampled[0])

    start = time.perf_counter()
    algo = train(config, steps=args.steps, minutes=args.minutes or None, on_result=record)
    seconds = time.perf_counter() - start
    if args.save:
        print(f"saved to {algo.save_to_path(args.save)}")
    if getattr(args, "export", None):  # this recipe's flag (the multi-agent recipe has none)
        export(algo, args.export, sampled[0])
    recipes.report(sampled[0], seconds, args.deals, lambda: margins(algo, args.deals, args.seed), "env steps")
    algo.stop()
    ray.shutdown()

if __name__ == "__main__":
    main()
