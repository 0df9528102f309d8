"""Train RLlib's PPO (new API stack) on ``pisti_v0`` with one action-masked policy for every
seat, then measure it on duplicate deals with the evaluation harness.

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py --minutes 10      # or --steps 250000

Every seat of a 2-player single hand (``target=None``) plays with the same module, so the
policy learns from both sides of every game (self-play). This is the step-by-step multi-agent
door, for what the batched one (``examples/rllib_ppo_vector.py``: the learner against a fixed
batched opponent, N games per env runner, several times faster) cannot do: a learner at every
seat, any player count and variant, players without a batched form. The env is the project's adapter
``pisti_env.integrations.rllib.PistiMultiAgentEnv``: the seat to move gets
``{"observations", "action_mask"}`` (the keys RLlib's ``ActionMaskingTorchRLModule`` reads),
each seat's rewards reach that seat's own return, and an episode's seat returns add up to zero
(``env_runners/agent_episode_returns_mean`` in the results shows it). At the end the trained
module plays ``pisti-eval``'s duplicate deals against ``random`` and ``greedy`` through the
harness API. (At start RLlib's env check steps with an unmasked random action; the warning
"illegal action … the episode ends" comes from that check, never from training.)

Hyperparameters (``train``'s arguments, PPO's names in RLlib):

* ``lr`` 3e-4: Adam's step size for the policy and the value network.
* ``train_batch_size`` 4000: env steps (decisions of any seat) sampled per iteration.
* ``minibatch_size`` 256, ``num_epochs`` 4: each iteration makes ``num_epochs`` passes over
  the batch in minibatches of this many agent steps.
* ``gamma`` 1.0: no discount: a return is the hand's score difference, and a hand is short
  (24 decisions per seat with 2 players).
* ``lambda_`` 0.95: GAE's bias/variance trade-off for the advantages.
* ``clip_param`` 0.2: PPO's clip range for the probability ratio.
* ``entropy_coeff`` 0.01: bonus for a spread-out policy (keeps it exploring).
* ``vf_clip_param`` inf: RLlib clips the value loss at this value; returns here are points
  (tens), so no clipping.
* ``hidden`` (256, 256): the widths of the policy MLP and of the (separate) value MLP.

Sampling (``make_config``'s other arguments): ``env_runners`` 0 samples in the driver
(``num_env_runners``), ``envs_per_runner`` 16 games stepped together per runner
(``num_envs_per_env_runner``: one forward pass for all of them, the main speed-up on a small
machine). ``--torch-threads`` 1: the driver's torch threads (the learner, and the sampler
with ``--env-runners 0``); these small networks gain nothing from more, and on a busy machine
more threads contend (a PPO update took 17× longer with 2 threads on a loaded 2-core machine).

Running the env runners on a Ray cluster
----------------------------------------
Sampling is done by env runners (Ray actors, one CPU each); the learner stays in the driver.
Install the project on every node (``pip install -e ".[rllib]"``, same Python and Ray
versions), then::

    # on the head node
    ray start --head --port=6379
    # on every other node
    ray start --address=<head-ip>:6379
    # on the head node: connect to the cluster and spread 8 env runners over it
    python examples/rllib_ppo.py --address auto --env-runners 8 --envs-per-runner 16

``--address`` is passed to ``ray.init(address=...)`` (``auto`` finds the local node's cluster;
``ray://<head-ip>:10001`` connects through Ray Client from another machine). Without it the
script starts a private Ray instance on this machine that listens on 127.0.0.1 only, with no
dashboard (see ``docs/libraries/rllib.md`` for what a cluster exposes). ``--env-runners`` sets
``num_env_runners`` (0, the default, samples in the driver), ``--envs-per-runner``
``num_envs_per_env_runner`` (games per runner, stepped together). ``ray stop`` on each node
ends the cluster.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig

from pisti_env.integrations.rllib import SHARED_MODULE, RLModulePlayer, ppo_config, train, with_training  # noqa: F401  (train: for callers)
from training.harness import ray_backend
from training.harness import recipes
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from rllib_ppo_vector import run  # noqa: E402  (the batched recipe's train-save-report tail, shared)

GAME = {"num_players": 2, "target": None}  # the settings trained and evaluated


# PPO's hyperparameters (the module docstring explains each one); ``train_batch_size`` is RLlib's
# ``train_batch_size_per_learner``; make_config's keywords override them.
PPO: dict[str, Any] = dict(lr=3e-4, train_batch_size=4000, minibatch_size=256, num_epochs=4, gamma=1.0, lambda_=0.95, clip_param=0.2,
                       entropy_coeff=0.01, vf_clip_param=float("inf"))


def make_config(
    *,
    env_runners: int = 0,
    envs_per_runner: int = 16,
    seed: int = 0,
    hidden: Sequence[int] = (256, 256),
    **ppo: Any,
) -> PPOConfig:
    """PPO on 2-player single hands, one shared masked module (``ppo``: `PPO`'s
    hyperparameters to change; see the module docstring for each)."""
    config = ppo_config(
        GAME, hidden=hidden, num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner, seed=seed
    )
    return with_training(config, PPO, ppo)


def margins(algo: Algorithm, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The shared module's mean score difference per hand (95% CI) against ``random`` and
    ``greedy`` on ``deals`` duplicate deals, each played once from either seat."""
    return baseline_margins(RLModulePlayer(algo.get_module(SHARED_MODULE)), deals=deals, seed=seed, **GAME)


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none; then --steps)")
    parser.add_argument("--steps", type=int, default=None, help="env steps (decisions of any seat) to train for at most")
    recipes.add_run_flags(parser, seed=0, save="directory to save the algorithm's checkpoint in", threads="--torch-threads")
    parser.add_argument("--env-runners", type=int, default=0, help="num_env_runners (0: sample in the driver)")
    parser.add_argument("--envs-per-runner", type=int, default=16, help="num_envs_per_env_runner")
    parser.add_argument("--address", default=None, help="ray.init(address=...): a running cluster ('auto')")
    args = parser.parse_args(argv)
    if not args.minutes and args.steps is None:
        parser.error("give --minutes > 0 or --steps: training needs a budget")

    torch.set_num_threads(args.torch_threads)
    ray_backend.connect(args.address or ray_backend.LOCAL)
    config = make_config(env_runners=args.env_runners, envs_per_runner=args.envs_per_runner, seed=args.seed)

    def log(result: dict[str, Any]) -> None:
        runners = result["env_runners"]
        seats = runners.get("agent_episode_returns_mean", {})
        print(
            f"iter {result['training_iteration']:3d}  steps {runners['num_env_steps_sampled_lifetime']:>9,}  "
            f"seat returns {', '.join(f'{a} {r:+.2f}' for a, r in sorted(seats.items()))}  "
            f"(sum {sum(seats.values()):+.1e})",
            flush=True,
        )

    run(config, args, log, margins, name="rllib_ppo")  # train, save, report, stop: as the batched recipe

if __name__ == "__main__":
    main()
