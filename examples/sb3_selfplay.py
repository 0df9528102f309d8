"""Self-play with sb3-contrib's MaskablePPO on the batched engine: the learner against frozen
snapshots of itself, then measured on duplicate deals with the evaluation harness.

    pip install -e ".[sb3]"
    python examples/sb3_selfplay.py --minutes 10                     # the batched door (default)
    python examples/sb3_selfplay.py --door step --steps 200000       # pisti_v0, one game at a time

The learner holds one seat (drawn per episode) of a 2-player single hand (``target=None``). On
the batched door ([`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv], ``--num-envs`` games in
one VecEnv) the other seat is played by a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool]:
``--first`` at first, then the last ``--pool`` frozen copies of the learner's policy, a new copy
joining every ``--snapshot-every`` steps (`SnapshotCallback`).
Each game's opponent is one snapshot, drawn per game whenever the pool changes, and every
snapshot chooses for all of its games in one batched forward pass, sampling its actions.

``--door step`` is the step-by-step form: `SelfPlayEnv`
steps the AEC env ``pisti_v0`` for ``--envs`` games in SB3's ``DummyVecEnv``, each with its
own `SnapshotPool` (one snapshot drawn per episode), and
gives the learner every reward ``pisti_v0`` credits its seat. It takes any opponent (a policy
callable, a player without a batched form), at Python speed.

On both doors an episode's return is the hand's final score difference. This script reuses
``train``, ``make_vec_env`` and ``report`` of ``sb3_maskable_ppo.py`` (keep both files
together): the final model plays ``pisti-eval``'s duplicate deals against ``random`` and
``greedy``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Sequence

import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

from pisti_env.integrations import selfplay
from pisti_env.integrations.sb3 import PolicySnapshot, SnapshotCallback, SnapshotPool

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling recipe, however this file is run
from training.harness import recipes  # noqa: E402
from sb3_maskable_ppo import SETTINGS, add_ppo_flags, check_flags, make_vec_env, ppo_overrides, report, train  # noqa: E402


def make_selfplay_vec_env(num_envs: int = 1024, pool_size: int = 5, first: str = "random") -> tuple[VecEnv, SnapshotPool]:
    """The batched door: ``num_envs`` games whose other seat is played by one batched pool.

    ``pool_size``: how many of the latest snapshots the pool keeps (1 = always the newest;
    more = more varied, older opponents). ``first``: who plays before the first snapshot."""
    pool = SnapshotPool(first=first, size=pool_size)
    return make_vec_env(num_envs, opponent=pool), pool


# ---------------------------------------------------------------------------- the step-by-step door
def make_env(pool_size: int = 5, seed: int = 0) -> tuple[selfplay.SelfPlayEnv, selfplay.SnapshotPool]:
    """One step-by-step self-play env over ``pisti_v0`` (learner's seat drawn per episode) and
    the pool that plays its other seat, one snapshot drawn per episode."""
    pool = selfplay.SnapshotPool(first="random", size=pool_size, seed=seed)
    env = selfplay.SelfPlayEnv(opponent=pool, **SETTINGS)
    env.reset(seed=seed)
    return env, pool


def make_step_vec_env(num_envs: int, pool_size: int = 5, seed: int = 0) -> tuple[DummyVecEnv, list[selfplay.SnapshotPool]]:
    """``num_envs`` step-by-step self-play envs in SB3's ``DummyVecEnv``, each with its own pool
    (so each draws its own opponent per episode); snapshots go to all."""
    built = [make_env(pool_size, seed + i) for i in range(num_envs)]
    return DummyVecEnv([lambda env=env: Monitor(env) for env, _ in built]), [pool for _, pool in built]


class StepSnapshotCallback(BaseCallback):
    """The step-by-step door's callback: a frozen `PolicySnapshot` of the learner (also a
    one-game player, sampling its actions) joins every pool of ``pools`` every ``every``
    environment steps (it plays from each env's next episode on)."""

    def __init__(self, pools: selfplay.SnapshotPool | Sequence[selfplay.SnapshotPool], every: int) -> None:
        super().__init__()
        self.pools = [pools] if isinstance(pools, selfplay.SnapshotPool) else list(pools)
        self.every, self._last = every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self._last = self.num_timesteps
            frozen = PolicySnapshot(self.model.policy)  # one frozen copy, shared by the pools
            for pool in self.pools:
                pool.add(frozen)
        return True


def main(argv: Sequence[str] | None = None) -> None:
    parser = recipes.recipe_parser(__doc__)
    parser.add_argument("--door", choices=("batched", "step"), default="batched",
                        help="batched: PistiSB3VecEnv with a batched snapshot pool (default); step: SelfPlayEnv over pisti_v0")
    parser.add_argument("--snapshot-every", type=int, default=200_000, help="steps between two snapshots joining the pool")
    parser.add_argument("--pool", type=int, default=5, help="snapshots kept in the pool")
    parser.add_argument("--first", default="random", help="who plays before the first snapshot (batched door; a batched player)")
    parser.add_argument("--num-envs", type=int, default=1024, help="games stepped together (batched door)")
    parser.add_argument("--envs", type=int, default=8, help="envs stepped together in DummyVecEnv (step door)")
    parser.add_argument("--rollout", type=int, default=2048, help="steps per PPO rollout, over all envs (step door)")
    add_ppo_flags(parser)
    recipes.add_run_flags(parser, seed=0, save="where to save the model (.zip)")
    args = parser.parse_args(argv)
    check_flags(parser, args)
    torch.set_num_threads(args.threads)

    start = time.perf_counter()
    if args.door == "batched":
        try:  # a --first without a batched form: one line, not a traceback
            env, pool = make_selfplay_vec_env(args.num_envs, args.pool, args.first)
        except (TypeError, ValueError) as error:
            parser.error(str(error))
        callback: BaseCallback = SnapshotCallback(pool, args.snapshot_every)
        model = train(env, args.steps, seed=args.seed, callback=callback, minutes=args.minutes, progress="sb3_selfplay",
                      **ppo_overrides(args))
        added = pool.added
    else:
        env, pools = make_step_vec_env(args.envs, args.pool, args.seed)
        callback = StepSnapshotCallback(pools, args.snapshot_every)
        ppo = dict(ppo_overrides(args), n_steps=max(1, args.rollout // args.envs))
        model = train(env, args.steps, seed=args.seed, callback=callback, minutes=args.minutes, progress="sb3_selfplay", **ppo)
        added = pools[0].added
    report(model, model.num_timesteps, time.perf_counter() - start, args.deals, args.seed, args.save, note=f", {added} snapshots")


if __name__ == "__main__":
    main()
