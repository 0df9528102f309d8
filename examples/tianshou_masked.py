"""Tianshou 2.0 PPO on the batched engine: a masked actor-critic learns to beat ``greedy``.

    pip install -e ".[tianshou]"
    python examples/tianshou_masked.py --minutes 10          # then evaluates vs random, greedy
    python examples/tianshou_masked.py --opponent self       # self-play: snapshots of the learner
    python examples/tianshou_masked.py --help                # every hyperparameter
    python examples/tianshou_masked.py --export agents/tianshou-ppo.pt  # also the actor, for pisti-benchmark

Tianshou's own pieces do the work: its ``Collector`` gathers rollouts into a
``VectorReplayBuffer``, its ``PPO`` computes GAE and runs the clipped updates, its
``DiscreteActorPolicy`` samples from the masked logits. The env is
[`PistiTianshouVectorEnv`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv]: ``--envs`` games of
the batched engine behind Tianshou's vector-env interface (its ``BaseVectorEnv``), the learner
holding one seat (drawn per episode) of a 2-player single hand (``target=None``) and ``greedy``,
batched, playing the other. Observations are ``Batch(obs=..., mask=...)``; the actor
(`MaskedActor`) sets the logits of illegal
cards to the lowest float, so they are never played.

Each reward is the learner's share of the score difference since its previous decision (an
episode's rewards add up to the hand's score difference). The door's reset mapping (the engine
deals a finished game's next hand inside the step; Tianshou's ``reset(env_id)`` then hands it
over without dealing again) is in the integration module's docstring.

The loop below is what Tianshou's ``OnPolicyTrainer`` does (collect ``--envs`` x
``--steps-per-env`` decisions, one PPO update, clear the buffer), written out so the run can
stop on a wall-clock budget and anneal the learning rate by it. The defaults (512 games x 32
steps, 2 passes of 16 minibatches of 1,024 rows) take more gradient steps per decision than
``examples/cleanrl_ppo_vector.py`` (1024 x 32, 8 minibatches): Tianshou's collector and buffer
cost more per decision, so a 10-minute budget holds fewer of them. At the end the trained actor plays ``pisti-eval``'s
duplicate deals against ``random`` and ``greedy`` through the harness API.

Self-play (``--opponent self``): the other seat is played by a
[`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool] of frozen copies of the learner's actor
(``--pool-size`` newest, one drawn per game; ``random`` until the first), a new copy joining
every ``--snapshot-every`` decisions (`actor_snapshot`).
The pool is a batched player, so self-play runs on the same door at the same speed; the
step-by-step ``examples/tianshou_pettingzoo_selfplay.py`` (a learner at every seat of
``pisti_v0``) remains for what this cannot do: more seats learning at once, players without a
batched form.

Reproducibility: ``--seed`` seeds the network, the sampling, Tianshou's minibatch shuffles
(NumPy's global generator) and the deals; the same seed and ``--total-steps`` give the same run
on the same machine and thread count (a ``--minutes`` budget stops by the clock, so it is not
repeatable step for step).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch.optim.lr_scheduler import LambdaLR, LRScheduler
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory, LRSchedulerFactory
from tianshou.data import Collector, VectorReplayBuffer
from tianshou.utils.torch_utils import policy_within_training_step
from tianshou.utils.net.discrete import DiscreteCritic

from pisti_env.integrations.snapshots import SnapshotPool
from pisti_env.integrations.tianshou_batched import ActorPlayer, MaskedActor, ObsTrunk, PistiTianshouVectorEnv, actor_snapshot
from training.harness import recipes
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API

SETTINGS = dict(num_players=2, target=None)  # 2-player single hands, as pisti-eval's deals


def make_env(num_envs: int, opponent: Any = "greedy", **settings: Any) -> PistiTianshouVectorEnv:
    """``num_envs`` games on the batched engine, the learner against ``opponent`` (a batched
    player: a spec, or an object with ``act_batch`` such as a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool])."""
    return PistiTianshouVectorEnv(num_envs, opponent=opponent, **{**SETTINGS, **settings})


# ----------------------------------------------------------------------------- the algorithm
def orthogonal_init(module: torch.nn.Module, output_gain: float) -> None:
    """CleanRL's initialisation: orthogonal weights (gain sqrt(2), the last layer ``output_gain``)
    and zero biases. A small actor output gain starts the policy near uniform."""
    linears = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    for k, linear in enumerate(linears):
        torch.nn.init.orthogonal_(linear.weight, output_gain if k == len(linears) - 1 else math.sqrt(2))
        torch.nn.init.zeros_(linear.bias)


class BudgetLinearLR(LRSchedulerFactory):
    """The learning rate decays linearly to 0 over the run: over ``updates`` updates or
    ``seconds`` of wall clock from the scheduler's creation, whichever is further along."""

    def __init__(self, updates: int, seconds: float = math.inf) -> None:
        self.updates, self.seconds = updates, seconds

    def create_scheduler(self, optim: torch.optim.Optimizer) -> LRScheduler:
        start = time.perf_counter()

        def factor(update: int) -> float:
            return max(0.0, 1.0 - max(update / self.updates, (time.perf_counter() - start) / self.seconds))

        return LambdaLR(optim, lr_lambda=factor)


def build(
    env: PistiTianshouVectorEnv,
    hidden: Sequence[int] = (128, 128),
    lr: float = 1e-3,
    schedule: LRSchedulerFactory | None = None,
    **ppo: Any,
) -> PPO:
    """Tianshou's PPO with a masked actor and a critic, two tanh MLPs over the observation.

    Args:
        env: a `make_env` env (only its spaces are read).
        hidden: hidden layer sizes of the actor's and the critic's (separate) MLPs.
        lr: Adam's learning rate (at the start, with a ``schedule``).
        schedule: how the learning rate changes after each update (``None``: constant).
        **ppo: Tianshou ``PPO`` arguments over these defaults: ``gamma=1.0`` (a hand is short and
            its score difference is the goal), ``gae_lambda=0.8`` (GAE's bias/variance
            trade-off), ``eps_clip=0.2`` (PPO's ratio clip, also the value clip),
            ``value_clip=True`` (the value update stays near the rollout's prediction),
            ``advantage_normalization=True`` (per minibatch), ``ent_coef=0.01`` (entropy bonus),
            ``vf_coef=0.5`` (value-loss weight), ``return_scaling=True`` (the critic learns
            returns divided by their running standard deviation: points are tens, not ones),
            ``max_grad_norm=0.5`` (gradient clipping) and ``max_batchsize=8192`` (rows per
            forward pass when PPO computes values and log-probabilities before an update).
    """
    space = env.observation_space[0]
    obs_dim = int(np.prod(space["observation"].shape))
    num_actions = int(env.action_space[0].n)
    actor = MaskedActor(ObsTrunk(obs_dim, hidden, torch.nn.Tanh), num_actions)
    critic = DiscreteCritic(preprocess_net=ObsTrunk(obs_dim, hidden, torch.nn.Tanh))
    orthogonal_init(actor, output_gain=0.01)
    orthogonal_init(critic, output_gain=1.0)
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space[0], deterministic_eval=True)
    options = dict(gamma=1.0, gae_lambda=0.8, eps_clip=0.2, value_clip=True, advantage_normalization=True,
                   ent_coef=0.01, vf_coef=0.5, return_scaling=True, max_grad_norm=0.5, max_batchsize=8192)
    options.update(ppo)
    optim = AdamOptimizerFactory(lr=lr, eps=1e-5)
    if schedule is not None:
        optim = optim.with_lr_scheduler_factory(schedule)
    return PPO(policy=policy, critic=critic, optim=optim, **options)


# ----------------------------------------------------------------------------- training
def train(
    algorithm: PPO,
    envs: PistiTianshouVectorEnv,
    total_steps: int,
    minutes: float = 0.0,
    steps_per_env: int = 32,
    epochs: int = 2,
    minibatches: int = 16,
    seed: int = 0,
    on_update: Callable[[dict[str, float]], None] | None = None,
) -> dict[str, float]:
    """PPO for ``total_steps`` learner decisions (all games counted) or ``minutes`` of wall
    clock (0: no limit), whichever comes first.

    Args:
        algorithm: from `build`.
        envs: a `make_env` env (seeded here from ``seed``).
        total_steps: decisions to collect at most.
        minutes: wall-clock budget, checked before each update's collection.
        steps_per_env: vector steps per rollout: a rollout holds ``len(envs) * steps_per_env``
            decisions.
        epochs: passes over each rollout (PPO's ``repeat``).
        minibatches: minibatches per pass (the minibatch holds rollout / minibatches rows).
        seed: seeds torch (the sampling; the weights are drawn in `build`), NumPy's global
            generator (Tianshou shuffles the minibatches with it) and the deals.
        on_update: called after each update with that update's figures.

    Returns ``{"steps", "seconds", "steps_per_s", "updates", "episodes", "mean_return"}``
    (``mean_return``: the mean return of the episodes finished in the last update's rollout).
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    envs.seed(seed)
    rollout = len(envs) * steps_per_env
    collector = Collector(algorithm, envs, VectorReplayBuffer(rollout, len(envs)))
    collector.reset()
    budget = minutes * 60.0 if minutes > 0 else math.inf
    start, steps, updates, episodes, mean_return = time.perf_counter(), 0, 0, 0, math.nan
    while steps < total_steps and time.perf_counter() - start < budget:
        with policy_within_training_step(algorithm.policy):  # sample (not argmax) while training
            collected = collector.collect(n_step=rollout)
            stats = algorithm.update(buffer=collector.buffer, batch_size=rollout // minibatches, repeat=epochs)
        collector.reset_buffer(keep_statistics=True)
        steps += collected.n_collected_steps
        updates += 1
        episodes += collected.n_collected_episodes
        if collected.n_collected_episodes:
            mean_return = float(np.mean(collected.returns))
        if on_update is not None:
            on_update({"update": updates, "steps": steps, "seconds": time.perf_counter() - start,
                       "episodes": collected.n_collected_episodes, "mean_return": mean_return,
                       "loss": stats.loss.mean, "entropy": stats.ent_loss.mean})
    seconds = time.perf_counter() - start
    return {"steps": steps, "seconds": seconds, "steps_per_s": steps / seconds, "updates": updates,
            "episodes": episodes, "mean_return": mean_return}


def snapshots_into(pool: SnapshotPool, algorithm: PPO, every: int) -> Callable[[dict[str, float]], None]:
    """Self-play: an ``on_update`` callback for `train` that adds a frozen copy of the
    learner's actor to ``pool`` (the env's opponent) whenever ``every`` more decisions were
    collected; it plays the other seat from the next collection on."""
    due = [every]

    def refresh(figures: dict[str, float]) -> None:
        if figures["steps"] >= due[0]:
            pool.add(actor_snapshot(algorithm.policy.actor))
            due[0] = figures["steps"] + every

    return refresh


# ----------------------------------------------------------------------------- evaluation
def margins(algorithm: PPO, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The policy's mean score difference per hand (95% CI) against ``random`` and ``greedy``
    on ``deals`` duplicate deals, each played once from either seat."""
    algorithm.eval()
    return baseline_margins(ActorPlayer(algorithm.policy.actor), deals=deals, seed=seed, **SETTINGS)


def export(algorithm: PPO, path: str, steps: int) -> str:
    """Write the trained actor to ``path`` as a ``pisti-export`` file that plays its most likely
    legal action, as `margins` does (`training.harness.recipes.export_policy_file`).
    The file takes the observation vector alone: the actor's trunk and head, without the
    ``Batch`` the mask travels in (the file masks the illegal actions itself)."""
    actor = algorithm.policy.actor
    logits = torch.nn.Sequential(actor.trunk.mlp, actor.head)
    return recipes.export_policy_file(logits, path, settings=SETTINGS, name="tianshou-ppo",
                                      recipe="examples/tianshou_masked.py", steps=steps)


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none)")
    parser.add_argument("--total-steps", type=int, default=100_000_000, help="learner decisions to train for at most")
    parser.add_argument("--envs", type=int, default=512, help="games played side by side on the batched engine")
    parser.add_argument("--steps-per-env", type=int, default=32, help="vector steps per rollout")
    parser.add_argument("--epochs", type=int, default=2, help="passes over each rollout")
    parser.add_argument("--minibatches", type=int, default=16, help="minibatches per pass (of --envs x --steps-per-env rows)")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate at the start (annealed linearly to 0)")
    parser.add_argument("--hidden", type=int, nargs="+", default=[128, 128], help="hidden layer widths of the actor and the critic")
    parser.add_argument("--opponent", default="greedy", help="the other seat's player ('random', 'greedy', a checkpoint path, or 'self': self-play)")
    parser.add_argument("--pool-size", type=int, default=5, help="self-play: snapshots of the learner kept as opponents")
    parser.add_argument("--snapshot-every", type=int, default=200_000, help="self-play: learner decisions between snapshots")
    recipes.add_run_flags(parser, seed=1, save="where to save the weights (torch state dict)", export=True)
    parser.add_argument("--log-every", type=int, default=10, help="print progress every this many updates (0: never)")
    args = parser.parse_args(argv)
    for name in ("envs", "steps_per_env", "epochs", "minibatches", "total_steps", "pool_size", "snapshot_every"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes < 0 or args.deals < 0:
        parser.error("--minutes and --deals must be >= 0")
    if (args.envs * args.steps_per_env) % args.minibatches:
        parser.error("--envs x --steps-per-env must divide into --minibatches")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    pool = SnapshotPool(first="random", size=args.pool_size) if args.opponent == "self" else None
    try:
        envs = make_env(args.envs, opponent=pool or args.opponent)
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    updates = math.ceil(args.total_steps / (args.envs * args.steps_per_env))
    schedule = BudgetLinearLR(updates, args.minutes * 60.0 if args.minutes > 0 else math.inf)
    algorithm = build(envs, hidden=args.hidden, lr=args.lr, schedule=schedule)

    refresh = snapshots_into(pool, algorithm, args.snapshot_every) if pool is not None else None
    progress = recipes.Progress("tianshou_masked", steps=args.total_steps, seconds=args.minutes * 60.0)

    def log(figures: dict[str, float]) -> None:
        if refresh is not None:
            refresh(figures)
        progress.update(figures["steps"])
        if args.log_every and figures["update"] % args.log_every == 0:
            print(f"update {figures['update']} step {figures['steps']:,}: return {figures['mean_return']:+.2f}, "
                  f"entropy {figures['entropy']:.3f}, {figures['steps'] / figures['seconds']:,.0f} steps/s", flush=True)

    stats = train(algorithm, envs, args.total_steps, minutes=args.minutes, steps_per_env=args.steps_per_env,
                  epochs=args.epochs, minibatches=args.minibatches, seed=args.seed, on_update=log)
    if args.save:
        torch.save(algorithm.state_dict(), args.save)
    if args.export:
        export(algorithm, args.export, stats["steps"])
    note = f", {pool.added} snapshots" if pool is not None else ""
    recipes.report(stats["steps"], stats["seconds"], args.deals, lambda: margins(algorithm, args.deals), note=note)


if __name__ == "__main__":
    main()
