"""Self-play PPO with Tianshou 2.0 on ``pisti_v0``: one masked network plays every seat.

    pip install -e ".[tianshou]"
    python examples/tianshou_pettingzoo_selfplay.py --steps 120000

The step-by-step door: Tianshou's ``PettingZooEnv`` over the AEC env, one Python game per
worker. For training against a fixed opponent at the batched engine's speed, see
``examples/tianshou_masked.py`` (`pisti_env.integrations.tianshou_batched`); this one is
for what needs the AEC env: every seat played by the learner, Tianshou's multi-agent API.

Tianshou's own ``PettingZooEnv`` wraps ``pisti_v0`` as it is (2-player single hands here,
``target=None``). It hands the policy ``{"agent_id", "obs", "mask"}`` for the seat to move,
and the network applies the mask to its logits, so an illegal card is never drawn. Every seat is
played by the same network (self-play); the collector gathers whole hands from
``DummyVectorEnv`` copies of the game and ``SelfPlayPPO`` learns from every seat's decisions.

**Rewards.** Tianshou's wrapper returns every seat's reward at every step (a vector), so
nothing is lost on the way in: summed over a hand, each column is that seat's final score
difference. What needs care is which decision a reward belongs to. In a card game most of a
seat's rewards arrive on the *other* seats' moves (the opponent captures a pile the seat left
behind), and Tianshou's multi-agent algorithms (``MultiAgentOnPolicyAlgorithm``, 2.0's
``MultiAgentPolicyManager``) give each seat only the reward of the rows where it moved itself
(over 500 random hands that matched a seat's score difference in about 1 hand in 20, and never
for both seats) and bootstrap from the next row's observation, the *opponent's*. ``credit_seats``
below fixes both before PPO sees the data: each decision of a seat is credited with everything
that seat received from its move until its next move (the first also with what it got before
its first move, the last with everything to the end of the hand), and its next observation is
its own next decision. Each seat's credited rewards then add up exactly to its final score
difference, and one PPO (one network, one optimiser) learns from both seats' decisions.

At the end the trained network plays ``pisti-eval``'s duplicate deals against ``random`` and
``greedy`` through the harness API (a small adapter makes it a player).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, ReplayBuffer, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OnPolicyTrainerParams
from tianshou.utils.net.discrete import DiscreteCritic

from pisti_env.envs import pisti_v0
from pisti_env.rules.cards import NUM_CARD_IDS, TABLE_SIZE
from pisti_env.integrations.tianshou_batched import MaskedActor, ObsTrunk  # the masked network, shared with the batched door
from training.harness import recipes

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from tianshou_masked import margins  # noqa: E402  (the batched recipe's evaluation: the same actor, the same deals)

# Tianshou's episode statistics warn that each episode's return is a vector (one per seat): it is.
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

SETTINGS = dict(num_players=2, target=None)  # 2-player single hands, as pisti-eval's deals
HAND_ROWS = NUM_CARD_IDS - TABLE_SIZE  # decisions in one hand of SETTINGS: every card not dealt to the table


def make_env(**settings: Any) -> PettingZooEnv:
    """``pisti_v0`` in Tianshou's own PettingZoo wrapper (``settings`` override ``SETTINGS``)."""
    return PettingZooEnv(pisti_v0.env(**{**SETTINGS, **settings}))


# ----------------------------------------------------------------------------- reward credit
def credit_seats(batch: Batch, buffer: ReplayBuffer, indices: np.ndarray, columns: dict[str, int]) -> Batch:
    """Tianshou's rollout (one row per decision, ``rew`` a vector of every seat's reward) as
    every seat's own trajectory: rows grouped by hand and seat, in time order, each with the
    seat's own reward from its move up to its next move (scalar ``rew``), ``obs_next`` its own
    next decision, and ``terminated`` on its last decision of the hand.

    The first decision of a seat in a hand also gets what the seat received before it, so a
    seat's rewards add up to its final score difference. Every hand must be complete: collect
    whole episodes (``collection_step_num_episodes``); a rollout cut mid-hand is a ValueError.
    ``columns``: each agent's index in the reward vector (``PettingZooEnv.agent_idx``).
    """
    n = len(batch)
    agents = np.asarray(batch.obs.agent_id)
    rew = np.asarray(batch.rew, dtype=np.float64)
    done = np.logical_or(batch.terminated, batch.truncated)
    source = np.searchsorted(buffer.subbuffer_edges, indices, side="right") - 1  # which env's part
    ends = np.flatnonzero(done | (np.r_[source[1:], -1] != source))  # a hand's last row
    if ends.size == 0 or not done[ends].all():
        raise ValueError("credit_seats needs whole hands: collect with collection_step_num_episodes")
    cumulative = np.vstack([np.zeros((1, rew.shape[1])), np.cumsum(rew, axis=0)])
    order, credit, terminal, next_row = [], np.zeros(n), np.zeros(n, bool), np.arange(n)
    for start, end in zip(np.r_[0, ends[:-1] + 1], ends):
        for agent in dict.fromkeys(agents[start : end + 1]):  # seats in order of first move
            column = columns[agent]
            rows = start + np.flatnonzero(agents[start : end + 1] == agent)
            window_start = np.r_[start, rows[1:]]  # the first move also takes the hand's start
            window_stop = np.r_[rows[1:], end + 1]
            credit[rows] = cumulative[window_stop, column] - cumulative[window_start, column]
            next_row[rows[:-1]] = rows[1:]
            terminal[rows[-1]] = True
            order.append(rows)
    order = np.concatenate(order)
    seat_batch = Batch(
        obs=batch.obs[order],
        act=batch.act[order],
        rew=credit[order],
        terminated=terminal[order],
        truncated=np.zeros(n, bool),
        obs_next=batch.obs[next_row[order]],
        info=batch.info[order],
        env=source[order],  # the env each row came from
    )
    return seat_batch


class SelfPlayPPO(PPO):
    """Tianshou's PPO, fed each seat's own trajectory (`credit_seats`) instead of the
    interleaved rows of all seats.

    Args:
        columns: each agent's index in the reward vector (``PettingZooEnv.agent_idx``).
        record: a list that gets ``(env, agent, return)`` for every seat of every hand PPO
            learned from (the sum of the rewards it was given), for checks; or ``None``.
        **ppo: Tianshou ``PPO``'s arguments.
    """

    def __init__(self, *, columns: dict[str, int], record: list[tuple[int, str, float]] | None = None, **ppo: Any) -> None:
        super().__init__(**ppo)
        self.columns = dict(columns)
        self.record = record

    def _preprocess_batch(self, batch: Batch, buffer: ReplayBuffer, indices: np.ndarray) -> Batch:
        for part in getattr(buffer, "buffers", [buffer]):
            if len(part) >= part.maxsize:  # it may have wrapped around and overwritten a hand
                raise ValueError(
                    f"a part of the rollout buffer ({part.maxsize} rows) filled up and may have lost the start of a "
                    f"hand: hands here are longer than HAND_ROWS={HAND_ROWS}; raise it"
                )
        seats = credit_seats(batch, buffer, indices, self.columns)
        if self.record is not None:
            ends = np.flatnonzero(seats.terminated)
            totals = np.add.reduceat(seats.rew, np.r_[0, ends[:-1] + 1])
            self.record.extend(zip(seats.env[ends].tolist(), seats.obs.agent_id[ends].tolist(), totals.tolist()))
        own = ReplayBuffer.from_data(
            obs=seats.obs, act=seats.act, rew=seats.rew, terminated=seats.terminated,
            truncated=seats.truncated, done=seats.terminated, obs_next=seats.obs_next,
        )
        return super()._preprocess_batch(seats, own, np.arange(len(seats)))


# ----------------------------------------------------------------------------- training
def build(env: PettingZooEnv, hidden: Sequence[int] = (256, 256), lr: float = 1e-3, **ppo: Any) -> SelfPlayPPO:
    """The self-play algorithm for ``env``'s spaces.

    Args:
        env: a `make_env` env (only its spaces are read).
        hidden: hidden layer sizes of the actor's and the critic's (separate) MLPs.
        lr: Adam's learning rate.
        **ppo: Tianshou ``PPO`` arguments over these defaults: ``gamma=1.0`` (a hand is short
            and its score difference is the goal), ``gae_lambda=0.95`` (GAE's bias/variance
            trade-off along a seat's own decisions), ``eps_clip=0.2`` (PPO's ratio clip),
            ``ent_coef=0.01`` (entropy bonus), ``vf_coef=0.5`` (value-loss weight),
            ``return_scaling=True`` (the critic learns returns divided by their running
            standard deviation: points are tens, not ones), ``max_grad_norm=0.5`` (gradient
            clipping), ``max_batchsize=4096`` (rows per forward pass when PPO computes values
            and log-probabilities before an update), and ``record`` (see `SelfPlayPPO`).
    """
    obs_dim = int(np.prod(env.observation_space["observation"].shape))
    actor = MaskedActor(ObsTrunk(obs_dim, hidden), int(env.action_space.n))
    critic = DiscreteCritic(preprocess_net=ObsTrunk(obs_dim, hidden))
    policy = DiscreteActorPolicy(actor=actor, action_space=env.action_space, deterministic_eval=True)
    options = dict(gamma=1.0, gae_lambda=0.95, eps_clip=0.2, ent_coef=0.01, vf_coef=0.5,
                   return_scaling=True, max_grad_norm=0.5, max_batchsize=4096)
    options.update(ppo)
    return SelfPlayPPO(columns=env.agent_idx, policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=lr), **options)


def train(
    algorithm: SelfPlayPPO,
    envs: DummyVectorEnv,
    steps: int,
    hands_per_update: int = 64,
    epochs_per_update: int = 4,
    minibatch: int = 512,
    seed: int = 0,
) -> dict[str, float]:
    """Self-play training for about ``steps`` decisions (all seats together).

    Args:
        algorithm: from `build`.
        envs: Tianshou vector env of `make_env` envs (seeded here from ``seed``).
        steps: decisions to collect, all seats counted (a 2-player hand has 48).
        hands_per_update: whole hands collected between two PPO updates.
        epochs_per_update: passes over each collected batch (PPO's ``repeat``).
        minibatch: rows per gradient step.
        seed: seeds torch (the policy's sampling; the initial weights are drawn in `build`),
            NumPy's global generator (Tianshou shuffles the minibatches with it) and the envs'
            deals: the same seed trains the same weights.

    Returns ``{"steps", "seconds", "steps_per_s"}``.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    envs.seed([seed + i for i in range(envs.env_num)])
    # Room for twice a fair share of the hands in each env's part of the buffer; SelfPlayPPO
    # refuses a part that filled up (it may have overwritten the start of a hand).
    room = 2 * HAND_ROWS * hands_per_update
    collector = Collector(algorithm, envs, VectorReplayBuffer(room, envs.env_num))
    params = OnPolicyTrainerParams(
        training_collector=collector,
        max_epochs=1,
        epoch_num_steps=steps,
        collection_step_num_episodes=hands_per_update,
        collection_step_num_env_steps=None,
        update_step_num_repetitions=epochs_per_update,
        batch_size=minibatch,
        test_collector=None,
        verbose=False,
        show_progress=False,
        # progress and the time left at the start of each collection (after the previous update)
        training_fn=lambda epoch, done: progress.update(done),
    )
    progress = recipes.Progress("tianshou_pettingzoo_selfplay", steps=steps)
    start = time.perf_counter()
    algorithm.run_training(params)
    seconds = time.perf_counter() - start
    done = collector.collect_step
    return {"steps": done, "seconds": seconds, "steps_per_s": done / seconds}


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--steps", type=int, default=120_000, help="decisions to train for, all seats counted")
    parser.add_argument("--envs", type=int, default=8, help="games collected side by side (DummyVectorEnv)")
    parser.add_argument("--hands", type=int, default=64, help="whole hands collected per PPO update")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each collected batch")
    parser.add_argument("--minibatch", type=int, default=512, help="rows per gradient step")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    recipes.add_run_flags(parser, seed=0, save="where to save the weights (torch state dict)")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    algorithm = build(make_env(), lr=args.lr)
    stats = train(algorithm, envs, args.steps, hands_per_update=args.hands, epochs_per_update=args.epochs,
                  minibatch=args.minibatch, seed=args.seed)
    if args.save:
        torch.save(algorithm.state_dict(), args.save)
    recipes.report(stats["steps"], stats["seconds"], args.deals, lambda: margins(algorithm, args.deals, args.seed))


if __name__ == "__main__":
    main()
