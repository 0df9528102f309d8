"""Train one masked PPO policy for every seat of ``pisti_v0`` with TorchRL's PettingZoo wrapper,
then measure it on duplicate deals with the evaluation harness.

    pip install -e ".[torchrl]"
    python examples/torchrl_pettingzoo.py --frames 240000

This is the step-by-step door: TorchRL's ``PettingZooWrapper(use_mask=True)`` steps the
turn-based (AEC) ``pisti_v0`` as it is, one game per Python env (a few hundred plays per
second), for what needs ``pisti_v0`` itself (its wrappers, 5-6 players). The batched door,
N games in one ``EnvBase``, is ``examples/torchrl_masked.py``.

``group_map`` puts every seat in one group, ``"agents"``, so one network plays them all
(self-play): each step the group's tensordict holds every seat's observation, its
``action_mask`` (the legal cards of the seat to move, all ones for the others) and ``mask``
(True for the seat to move only).

Rewards: after every play the wrapper reads ``pisti_v0``'s ``rewards``, which hold the change
of *every* seat's score difference at that play (R30), the last play of the episode included.
So each seat's rewards over an episode add up to its final score difference, also for the
points it wins or loses on the other seats' plays; nothing needs re-crediting (the recipe's
test checks it on every episode).

The loop, in the spirit of TorchRL's multi-agent PPO tutorial:

* the actor is an MLP whose logits feed `torchrl.modules.MaskedCategorical` with the
  group's ``action_mask``, so it only ever samples a legal card for the seat to move;
* a ``Collector`` gathers ``frames_per_batch`` plays (all seats together) per batch;
* GAE (``gamma``, ``lmbda``) runs along each seat's own row of the batch, every play of the
  game being a step for every seat, so a seat's advantage sees the rewards it gets on the
  other seats' plays;
* ``ClipPPOLoss`` trains the actor on the seat that moved only (its ``loss_mask_key`` is the
  group's ``mask``: the other seats' sampled actions were never played); the critic learns the
  value of every seat's observation at every step (each is a state that seat is really in,
  and GAE reads all of them).

At the end the policy plays ``pisti-eval``'s duplicate deals against ``random`` and
``greedy`` through the harness API, as its greedy (most probable legal card) player.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
from pettingzoo import AECEnv
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import EnvBase, SerialEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

import pisti_env
from training.harness import recipes
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from torchrl_masked import TorchRLPlayer, margins  # noqa: E402,F401  (the batched recipe's harness player and evaluation)

GROUP = "agents"  # the one group every seat belongs to: one policy for all seats
OBS = (GROUP, "observation", "observation")  # pisti_v0's Dict observation keeps its inner key

# PPO's settings (see train()'s docstring for what each one does).
DEFAULTS: dict[str, Any] = dict(
    frames_per_batch=2400,
    epochs=4,
    minibatch_size=480,
    learning_rate=3e-4,
    clip_epsilon=0.2,
    entropy_coeff=0.01,
    value_coeff=0.5,
    gamma=1.0,
    lmbda=0.95,
    max_grad_norm=1.0,
    hidden=256,
)


def _table(seed: int, wrap: Callable[[AECEnv], AECEnv] | None, settings: dict[str, Any]) -> PettingZooWrapper:
    """One ``pisti_v0`` table as a TorchRL env, every seat in the group ``GROUP``."""
    aec = pisti_env.env(**settings)
    if wrap is not None:
        aec = wrap(aec)
    with warnings.catch_warnings():
        # TorchRL warns that it tests against PettingZoo 1.24.3; this recipe's test runs it on ours.
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested")
        return PettingZooWrapper(env=aec, use_mask=True, group_map={GROUP: list(aec.possible_agents)}, seed=seed)


def make_env(
    num_envs: int = 1, seed: int = 0, wrap: Callable[[AECEnv], AECEnv] | None = None, **settings: Any
) -> EnvBase:
    """``num_envs`` tables of ``pisti_env.env(**settings)`` (default: 2 players, single hands,
    ``target=None``), table ``i`` seeded ``seed + i``. Several tables are stepped one after
    another in this process (``SerialEnv``), so the policy acts for all of them in one call;
    the batches then have shape ``(num_envs, plays)``. ``wrap``, if given, is applied to each
    PettingZoo env before TorchRL wraps it (the recipe's test puts a referee there)."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    settings = {"num_players": 2, "target": None, **settings}
    if num_envs == 1:
        return _table(seed, wrap, settings)
    return SerialEnv(num_envs, [partial(_table, seed + i, wrap, settings) for i in range(num_envs)])


def observation_key(env: EnvBase) -> tuple[str, ...]:
    """Where ``env`` keeps each seat's observation vector: `OBS` for the PettingZoo
    wrapper, ``(GROUP, "observation")`` for the batched self-play env
    (`PistiSelfPlayTorchRLEnv`, same group
    layout otherwise), so `train` runs on either."""
    return OBS if OBS in env.observation_spec.keys(True, True) else (GROUP, "observation")


def make_modules(env: EnvBase, hidden: int) -> tuple[ProbabilisticActor, TensorDictModule]:
    """The masked actor and the critic, two MLPs shared by every seat of the group."""
    obs_key = observation_key(env)
    obs_size = env.observation_spec[obs_key].shape[-1]
    num_actions = env.full_action_spec[GROUP, "action"].space.n

    def mlp(out: int) -> nn.Sequential:
        return nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, out))

    logits = TensorDictModule(mlp(num_actions), in_keys=[obs_key], out_keys=[(GROUP, "logits")])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[(GROUP, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "action_log_prob"),
    )
    critic = TensorDictModule(mlp(1), in_keys=[obs_key], out_keys=[(GROUP, "state_value")])
    return actor, critic


def train(
    env: EnvBase,
    frames: int,
    seed: int = 0,
    on_batch: Callable[[TensorDictBase], None] | None = None,
    minutes: float = 0.0,
    **ppo: Any,
) -> ProbabilisticActor:
    """Self-play PPO on ``env`` (from `make_env`) for ``frames`` plays (all seats and
    tables together) or ``minutes`` of wall clock (0: no limit; checked after each batch's
    update), whichever comes first; returns the actor.

    ``on_batch`` (optional) sees every batch the collector gathered, before learning from it.
    ``ppo`` overrides `DEFAULTS`:

    * ``frames_per_batch``: plays collected per batch (2400 = 50 two-player hands).
    * ``epochs``: passes of PPO over each batch.
    * ``minibatch_size``: plays per gradient step.
    * ``learning_rate``: Adam's step size, for actor and critic.
    * ``clip_epsilon``: how far a step may move the probability ratio of a played card from 1.
    * ``entropy_coeff``: weight of the entropy bonus (over the legal cards) that keeps play varied.
    * ``value_coeff``: weight of the critic's squared error (every seat, every play) in the loss.
    * ``gamma``: discount per play; 1 keeps a seat's return equal to its score difference.
    * ``lmbda``: GAE's λ, from TD(0) (0) to Monte Carlo returns (1).
    * ``max_grad_norm``: gradients are clipped to this norm.
    * ``hidden``: width of the two hidden layers of each MLP.
    """
    unknown = sorted(set(ppo) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unknown PPO setting(s) {unknown}; known: {sorted(DEFAULTS)}")
    cfg = {**DEFAULTS, **ppo}
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    actor, critic = make_modules(env, cfg["hidden"])
    loss = ClipPPOLoss(
        actor, critic, clip_epsilon=cfg["clip_epsilon"], entropy_coeff=cfg["entropy_coeff"], critic_coeff=None
    )  # critic_coeff=None: ClipPPOLoss leaves the critic's loss to us (every seat, below)
    loss.set_keys(
        action=(GROUP, "action"), sample_log_prob=(GROUP, "action_log_prob"), value=(GROUP, "state_value"),
        reward=(GROUP, "reward"), done=(GROUP, "done"), terminated=(GROUP, "terminated"),
        advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"),
    )
    loss.loss_mask_key = (GROUP, "mask")  # actor and entropy terms: the seat that moved only
    loss.make_value_estimator(ValueEstimators.GAE, gamma=cfg["gamma"], lmbda=cfg["lmbda"])
    optimizer = torch.optim.Adam(loss.parameters(), lr=cfg["learning_rate"])
    collector = Collector(
        env, actor, frames_per_batch=cfg["frames_per_batch"], total_frames=frames,
        auto_register_policy_transforms=False,  # the policy keeps no recurrent state
    )

    budget, start = (minutes * 60.0 if minutes > 0 else math.inf), time.perf_counter()
    for batch in collector:
        if on_batch is not None:
            on_batch(batch)
        with torch.no_grad():
            loss.value_estimator(batch, params=loss.critic_network_params, target_params=loss.target_critic_network_params)
        moved = batch[GROUP, "mask"]
        advantage = batch[GROUP, "advantage"]
        acting = advantage[moved]
        batch[GROUP, "advantage"] = (advantage - acting.mean()) / (acting.std() + 1e-8)
        batch = batch.reshape(-1)
        for _ in range(cfg["epochs"]):
            for index in torch.randperm(batch.shape[0], generator=generator).split(cfg["minibatch_size"]):
                minibatch = batch[index]
                terms = loss(minibatch)
                value = critic(minibatch)[GROUP, "state_value"]
                value_loss = (value - minibatch[GROUP, "value_target"]).pow(2).mean()
                total = terms["loss_objective"] + terms["loss_entropy"] + cfg["value_coeff"] * value_loss
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), cfg["max_grad_norm"])
                optimizer.step()
        collector.update_policy_weights_()
        if time.perf_counter() - start >= budget:
            break
    collector.shutdown()
    return actor


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--frames", type=int, default=240_000, help="plays to train for (all seats together)")
    parser.add_argument("--frames-per-batch", type=int, default=DEFAULTS["frames_per_batch"], help="plays per PPO batch")
    parser.add_argument("--envs", type=int, default=8, help="tables stepped together (SerialEnv)")
    recipes.add_run_flags(parser, seed=0, save="where to save the actor's state_dict (.pt)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    start, seen = time.perf_counter(), [0]
    progress = recipes.Progress("torchrl_pettingzoo", steps=args.frames, unit="plays")

    def collected(batch: TensorDictBase) -> None:
        seen[0] += batch.numel()
        progress.update(seen[0])

    actor = train(
        make_env(args.envs, seed=args.seed), args.frames, seed=args.seed, on_batch=collected, frames_per_batch=args.frames_per_batch
    )
    seconds = time.perf_counter() - start
    if args.save:
        torch.save(actor.state_dict(), args.save)
    recipes.report(args.frames, seconds, args.deals, lambda: margins(actor, args.deals, args.seed), "plays")


if __name__ == "__main__":
    main()
