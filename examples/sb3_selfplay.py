"""Self-play with sb3-contrib's MaskablePPO on ``pisti_v0``: the learner against frozen snapshots
of itself, then measured on duplicate deals with the evaluation harness.

    pip install -e ".[sb3]"
    python examples/sb3_selfplay.py --steps 200000

The learner holds one seat of a 2-player single hand (``target=None``), drawn per episode;
the other seat is played by a :class:`~pisti_env.integrations.selfplay.SnapshotPool`: ``random``
at first, then one of the last ``--pool`` frozen copies of the learner's policy, a new copy
joining every ``--snapshot-every`` steps (an SB3 callback). The env,
:class:`~pisti_env.integrations.selfplay.SelfPlayEnv`, steps the AEC env ``pisti_v0`` and gives
the learner every reward ``pisti_v0`` credits its seat, the opponent's moves included, so an
episode's return is the hand's final score difference (PettingZoo's SB3 tutorial wrapper loses
the rewards of the opponent's moves). ``SelfPlayEnv.action_masks()`` is what MaskablePPO reads.

This script reuses ``train``, ``ModelPlayer`` and ``report`` of ``sb3_maskable_ppo.py`` (keep
both files together): a snapshot is a sampling ``ModelPlayer`` on a copy of the policy, and the
final model plays ``pisti-eval``'s duplicate deals against ``random`` and ``greedy``.
"""

from __future__ import annotations

import argparse
import time
from typing import Sequence

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from pisti_env.integrations.selfplay import SelfPlayEnv, SnapshotPool
from sb3_maskable_ppo import ModelPlayer, report, train

SETTINGS = dict(num_players=2, target=None)  # the game sb3_maskable_ppo.margins() evaluates


def make_env(pool_size: int = 5, seed: int = 0) -> tuple[SelfPlayEnv, SnapshotPool]:
    """The self-play env (learner's seat drawn per episode) and the pool that plays the other seat.

    ``pool_size``: how many of the latest snapshots the pool keeps and draws from, one per
    episode (1 = always the newest; more = more varied, older opponents)."""
    pool = SnapshotPool(first="random", size=pool_size, seed=seed)
    env = SelfPlayEnv(opponent=pool, **SETTINGS)
    env.reset(seed=seed)
    return env, pool


def snapshot(model: MaskablePPO) -> ModelPlayer:
    """A frozen copy of the model's current policy, sampling its actions (varied opponents).
    A fresh policy with the model's weights (a deepcopy can fail on tensors of the last update)."""
    policy = model.policy_class(model.observation_space, model.action_space, model.lr_schedule, **model.policy_kwargs)
    policy.load_state_dict(model.policy.state_dict())
    policy.to(model.device)
    policy.set_training_mode(False)
    return ModelPlayer(policy, deterministic=False)


def make_vec_env(num_envs: int, pool_size: int = 5, seed: int = 0) -> tuple[DummyVecEnv, list[SnapshotPool]]:
    """``num_envs`` self-play envs stepped together (the learner's forward passes batched), each
    with its own pool (so each draws its own opponent per episode); snapshots go to all."""
    built = [make_env(pool_size, seed + i) for i in range(num_envs)]
    return DummyVecEnv([lambda env=env: Monitor(env) for env, _ in built]), [pool for _, pool in built]


class SnapshotCallback(BaseCallback):
    """Adds a snapshot of the learner to every pool of ``pools`` every ``every`` environment
    steps (it plays from each env's next episode on)."""

    def __init__(self, pools: SnapshotPool | Sequence[SnapshotPool], every: int) -> None:
        super().__init__()
        self.pools = [pools] if isinstance(pools, SnapshotPool) else list(pools)
        self.every, self._last = every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self._last = self.num_timesteps
            frozen = snapshot(self.model)  # one frozen copy, shared: it keeps no state
            for pool in self.pools:
                pool.add(frozen)
        return True


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="learner decisions to train for")
    parser.add_argument("--snapshot-every", type=int, default=10_000, help="steps between two snapshots joining the pool")
    parser.add_argument("--pool", type=int, default=5, help="snapshots kept in the pool, one drawn per episode")
    parser.add_argument("--envs", type=int, default=8, help="envs stepped together (DummyVecEnv)")
    parser.add_argument("--n-steps", type=int, default=2048, help="steps per PPO rollout, over all envs")
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (small networks on CPU: 1 is fastest)")
    parser.add_argument("--save", default=None, help="where to save the model (.zip)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    env, pools = make_vec_env(args.envs, args.pool, args.seed)
    start = time.perf_counter()
    callback = SnapshotCallback(pools, args.snapshot_every)
    model = train(env, args.steps, seed=args.seed, callback=callback, n_steps=max(1, args.n_steps // args.envs))
    report(model, args.steps, time.perf_counter() - start, args.deals, args.seed, args.save, note=f", {pools[0].added} snapshots")


if __name__ == "__main__":
    main()
