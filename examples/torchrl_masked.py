"""TorchRL PPO on the batched engine: a masked policy learns to beat ``greedy``, then plays the
evaluation harness's duplicate deals.

    pip install -e ".[torchrl]"
    python examples/torchrl_masked.py --minutes 10        # then evaluates vs random, greedy
    python examples/torchrl_masked.py --help              # every hyperparameter
    python examples/torchrl_masked.py --export agents/torchrl-ppo.pt  # also the actor, for pisti-benchmark

The env is `pisti_env.integrations.torchrl_batched.PistiTorchRLEnv`: ``num_envs`` games
of ``pisti/Pisti-v0`` in one TorchRL ``EnvBase`` of ``batch_size=[num_envs]``, the learner's
seat drawn per episode, ``greedy`` (batched) at the other seat, a 2-player single hand. Its
observations, masks and rewards stay torch tensors from the engine to the loss.

The loop is TorchRL's own PPO pieces, in the order of its PPO tutorial:

* the actor: an MLP whose logits feed `torchrl.modules.MaskedCategorical` with the env's
  ``action_mask`` (it only ever samples a legal card); the critic: a second MLP
  (`torchrl.modules.ValueOperator`);
* a `torchrl.collectors.Collector` gathers ``num_envs * num_steps`` decisions per batch
  (shape ``(num_envs, num_steps)``), resetting nothing itself: the engine restarts a finished
  game in the step that ends it, and the env's partial reset only hands over that game's new
  first observation (see the env's docstring);
* `torchrl.objectives.value.GAE` computes advantages and value targets on the batch;
  the rewards (points) are scaled by ``reward_scale`` first, which keeps returns near unit
  scale for the critic and leaves the policy's objective unchanged;
* `torchrl.objectives.ClipPPOLoss` (clipped surrogate, entropy bonus, clipped value
  loss) over ``update_epochs`` passes of shuffled minibatches, Adam with gradient clipping and
  a learning rate annealed to 0 over the budget.

Rewards: each is what the learner received since its previous decision (its own plays and the
opponent's), so an episode's rewards add up to the hand's score difference; the recipe's test
checks it on every episode TorchRL collected.

Reproducibility: ``--seed`` seeds the networks, the sampling, the minibatches and the env's
deals; a step budget (``--frames`` with ``--minutes 0``) repeats a run exactly on the same
machine and thread count. The wall-clock budget stops the run (and anneals the learning rate)
by the clock.

The turn-based self-play recipe on ``pisti_v0`` (TorchRL's ``PettingZooWrapper``, every seat
one agent of a group) is ``examples/torchrl_pettingzoo.py``.
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Callable, Sequence

import torch
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from pisti_env.agents import SeatView
from pisti_env.integrations.torchrl_batched import PistiTorchRLEnv
from training.harness import recipes
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API

# PPO's settings; train()'s docstring says what each one does.
DEFAULTS: dict[str, Any] = dict(
    num_steps=32,
    update_epochs=2,
    num_minibatches=8,
    learning_rate=1e-3,
    anneal_lr=True,
    gamma=1.0,
    gae_lambda=0.8,
    reward_scale=0.3,
    clip_epsilon=0.2,
    entropy_coeff=0.01,
    value_coeff=0.25,
    max_grad_norm=0.5,
    hidden=128,
)


# The batch entries ClipPPOLoss reads (the clipped value loss needs the collected state_value).
LOSS_KEYS = ("observation", "action_mask", "action", "action_log_prob", "state_value", "advantage", "value_target")


def make_env(num_envs: int = 1024, seed: int | None = 0, opponent: str = "greedy", device: str = "cpu", **settings: Any) -> PistiTorchRLEnv:
    """``num_envs`` games against ``opponent`` (default: 2 players, single hands), seeded ``seed``."""
    return PistiTorchRLEnv(num_envs, opponent=opponent, device=device, seed=seed, **settings)


def _mlp(inputs: int, hidden: int, outputs: int, output_gain: float) -> nn.Sequential:
    """Two tanh layers of ``hidden`` units, orthogonal weights and zero biases (CleanRL's
    initialisation: a small output gain starts the policy near uniform over the legal cards)."""
    layers = [nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, outputs)]
    for linear, gain in zip(layers[::2], (math.sqrt(2), math.sqrt(2), output_gain)):
        nn.init.orthogonal_(linear.weight, gain)
        nn.init.zeros_(linear.bias)
    return nn.Sequential(*layers)


def make_modules(env: PistiTorchRLEnv, hidden: int) -> tuple[ProbabilisticActor, ValueOperator]:
    """The masked actor and the critic (two MLPs over the observation)."""
    size = env.observation_spec["observation"].shape[-1]
    actions = env.action_spec.space.n
    logits = TensorDictModule(_mlp(size, hidden, actions, 0.01), in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    ).to(env.device)
    critic = ValueOperator(_mlp(size, hidden, 1, 1.0), in_keys=["observation"]).to(env.device)
    return actor, critic


def train(
    env: PistiTorchRLEnv,
    frames: int,
    minutes: float = 0.0,
    seed: int = 0,
    on_batch: Callable[[TensorDictBase], None] | None = None,
    log: Callable[[str], None] | None = None,
    **ppo: Any,
) -> tuple[ProbabilisticActor, dict[str, float]]:
    """PPO on ``env`` for ``frames`` learner decisions at most (all games together) or
    ``minutes`` of wall clock (0: no limit), whichever comes first. Returns the actor and the
    run's figures (``frames``, ``seconds``, ``steps_per_s``).

    ``on_batch`` (optional) sees every batch the collector gathered, as the env gave it, before
    learning from it; ``log`` gets a progress line per batch. ``ppo`` overrides `DEFAULTS`:

    * ``num_steps``: steps per game per batch; a batch holds ``num_envs * num_steps`` decisions.
    * ``update_epochs``: passes of PPO over each batch.
    * ``num_minibatches``: minibatches per pass (one gradient step each).
    * ``learning_rate``: Adam's step size at the start; ``anneal_lr``: decay it linearly to 0
      over the budget (frames or minutes, whichever is further along).
    * ``gamma``: discount per decision; 1 keeps a return equal to the score difference.
    * ``gae_lambda``: GAE's λ, from TD(0) (0) to Monte Carlo returns (1).
    * ``reward_scale``: rewards (points) are multiplied by this before GAE and the value fit.
    * ``clip_epsilon``: how far a step may move the probability ratio of a played card from 1;
      the value prediction is clipped by the same amount around the batch's.
    * ``entropy_coeff``: weight of the entropy bonus (over the legal cards).
    * ``value_coeff``: weight of the critic's squared error in the loss (TorchRL's "l2": no ½).
    * ``max_grad_norm``: gradients are clipped to this norm.
    * ``hidden``: width of the two hidden layers of each MLP.
    """
    unknown = sorted(set(ppo) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unknown PPO setting(s) {unknown}; known: {sorted(DEFAULTS)}")
    cfg = {**DEFAULTS, **ppo}
    N = env.batch_size[0]
    batch_size = N * cfg["num_steps"]
    if batch_size % cfg["num_minibatches"]:
        raise ValueError(f"num_envs * num_steps ({batch_size}) must divide into num_minibatches ({cfg['num_minibatches']})")
    torch.manual_seed(seed)
    generator = torch.Generator(device=env.device).manual_seed(seed)
    actor, critic = make_modules(env, cfg["hidden"])
    # GAE reads the values the collector's policy computed on the way (value_network=None): one
    # critic pass per step instead of two more over the whole batch.
    advantage = GAE(gamma=cfg["gamma"], lmbda=cfg["gae_lambda"], value_network=None)
    loss = ClipPPOLoss(
        actor, critic, clip_epsilon=cfg["clip_epsilon"], entropy_coeff=cfg["entropy_coeff"],
        critic_coeff=cfg["value_coeff"], loss_critic_type="l2", normalize_advantage=True,
        clip_value=cfg["clip_epsilon"],
    )
    optimizer = torch.optim.Adam(loss.parameters(), lr=cfg["learning_rate"], eps=1e-5)
    frames = (frames // batch_size) * batch_size or batch_size  # whole batches
    collector = Collector(
        env, TensorDictSequential(actor, critic), frames_per_batch=batch_size, total_frames=frames,
        auto_register_policy_transforms=False,  # the policy keeps no recurrent state
    )
    budget = minutes * 60.0 if minutes > 0 else math.inf
    start, seen = time.perf_counter(), 0
    running = torch.zeros(N, device=env.device)  # each game's points so far in its episode, for the log
    for batch in collector:
        seen += batch.numel()
        if on_batch is not None:
            on_batch(batch)
        finished, finished_return = 0, 0.0
        for t in range(batch.shape[1]):
            running += batch["next", "reward"][:, t, 0]
            done = batch["next", "done"][:, t, 0]
            finished, finished_return = finished + int(done.sum()), finished_return + float(running[done].sum())
            running.masked_fill_(done, 0.0)
        batch["next", "reward"] = batch["next", "reward"] * cfg["reward_scale"]
        with torch.no_grad():
            # Step t's next observation is step t + 1's observation (a finished game's too: the
            # engine restarted it, and its value is not bootstrapped), so the next values are
            # the batch's own, shifted, and the critic's on the last step's next observation.
            last = critic(batch["next"][:, -1].select("observation"))["state_value"]
            batch["next", "state_value"] = torch.cat([batch["state_value"][:, 1:], last[:, None]], 1)
            advantage(batch)
        # What the loss reads, flat: minibatches then gather these only (not the next observations).
        flat = batch.select(*LOSS_KEYS).reshape(-1)
        elapsed = time.perf_counter() - start
        progress = max(seen / frames, elapsed / budget)
        optimizer.param_groups[0]["lr"] = cfg["learning_rate"] * (1.0 - progress) if cfg["anneal_lr"] else cfg["learning_rate"]
        for _ in range(cfg["update_epochs"]):
            for index in torch.randperm(batch_size, generator=generator, device=env.device).chunk(cfg["num_minibatches"]):
                terms = loss(flat[index])
                total = terms["loss_objective"] + terms["loss_entropy"] + terms["loss_critic"]
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), cfg["max_grad_norm"])
                optimizer.step()
        collector.update_policy_weights_()
        elapsed = time.perf_counter() - start
        if log is not None:
            mean_return = finished_return / finished if finished else math.nan
            log(f"{seen:,} steps, {elapsed:.0f} s ({seen / elapsed:,.0f} steps/s): {finished} episodes, mean return "
                f"{mean_return:+.2f} points, entropy {float(terms['entropy']):.3f}")
        if elapsed >= budget:
            break
    collector.shutdown()
    seconds = time.perf_counter() - start
    return actor, {"frames": seen, "seconds": seconds, "steps_per_s": seen / seconds}


class TorchRLPlayer:
    """The trained actor as a harness player: the most probable legal card of ``act(view)``'s
    observation (what the seat may know, R30), as ``pisti_v0`` would show it: the mode of the
    actor's ``MaskedCategorical``, computed on its logits network (``actor[0]``) directly."""

    name = "torchrl-ppo"

    def __init__(self, actor: ProbabilisticActor) -> None:
        self.network = actor[0].module  # the MLP that gives the logits
        self.device = next(self.network.parameters()).device

    def reset(self, seed: int | None = None) -> None:
        """The player is deterministic: nothing to reseed."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        with torch.no_grad():
            logits = self.network(torch.as_tensor(observation["observation"], device=self.device))
        logits[torch.as_tensor(observation["action_mask"] == 0, device=self.device)] = -torch.inf
        return int(logits.argmax())


def margins(actor: ProbabilisticActor, deals: int, seed: int = 0) -> dict[str, dict[str, float]]:
    """The policy's mean score difference per hand (95% CI) against ``random`` and ``greedy``
    on ``deals`` duplicate 2-player deals, each played once from either seat."""
    return baseline_margins(TorchRLPlayer(actor), deals=deals, seed=seed, num_players=2)


def add_ppo_flags(parser: argparse.ArgumentParser, defaults: dict[str, Any]) -> None:
    """A flag for every PPO setting in ``defaults`` (``learning_rate`` -> ``--learning-rate``),
    its default the dict's value; ``train()``'s docstring explains each."""
    for name, value in defaults.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=value, help="see train()")
        else:
            parser.add_argument(flag, type=type(value), default=value, help="see train() (default: %(default)s)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--minutes", type=float, default=10.0, help="wall-clock training budget (0: none)")
    parser.add_argument("--frames", type=int, default=100_000_000, help="learner decisions to train for at most")
    parser.add_argument("--num-envs", type=int, default=1024, help="games stepped together (the env's batch size)")
    parser.add_argument("--opponent", default="greedy", help="the other seat's player (a batched one)")
    recipes.add_run_flags(parser, seed=1, save="where to save the actor's state_dict (.pt)", export=True)
    parser.add_argument("--device", default="cpu", help="torch device of the env and the networks")
    add_ppo_flags(parser, DEFAULTS)
    args = parser.parse_args(argv)
    for name in ("num_envs", "frames", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.minutes < 0:
        parser.error("--minutes must be >= 0")
    torch.set_num_threads(args.threads)
    try:
        env = make_env(args.num_envs, seed=args.seed, opponent=args.opponent, device=args.device)
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    ppo = {name: getattr(args, name) for name in DEFAULTS}
    progress, seen = recipes.Progress("torchrl_masked", steps=args.frames, seconds=args.minutes * 60.0), [0]

    def collected(batch: TensorDictBase) -> None:  # a batch is most of an update's time: its end tells the pace
        seen[0] += batch.numel()
        progress.update(seen[0])

    actor, figures = train(env, args.frames, minutes=args.minutes, seed=args.seed, on_batch=collected,
                           log=lambda line: print(line, flush=True), **ppo)
    if args.save:
        torch.save(actor.state_dict(), args.save)
    if args.export:  # the logits network, played by argmax as TorchRLPlayer plays it
        recipes.export_policy_file(actor[0].module, args.export, settings=dict(num_players=2, target=None),
                                   name="torchrl-ppo", recipe="examples/torchrl_masked.py", steps=figures["frames"])
    recipes.report(figures["frames"], figures["seconds"], args.deals, lambda: margins(actor, args.deals))


if __name__ == "__main__":
    main()
