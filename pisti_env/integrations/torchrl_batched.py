"""TorchRL environments on the batched engine: N Pişti games in one ``EnvBase``, torch end to end.

Needs the ``torchrl`` extra (``pip install -e ".[torchrl]"``); ``import pisti_env`` never
imports this module.

Two forms, both ``batch_size=[N]`` on the engine's device, observations and masks straight from
the engine's tensors (no NumPy on the way):

* `PistiTorchRLEnv`, **single agent**: each of the N games is a game of
  ``pisti/Pisti-v0``: the learner holds one seat, the other seats are played by a built-in
  player's batched form (``"greedy"``, ``"random"``, a checkpoint path, ...). It is
  [`pisti_env.envs.vector.PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] (``output="torch"``) behind TorchRL's API, so its
  observations, masks and rewards are that env's, game for game. Keys::

      observation   (N, obs_size) float32     what the learner may know (R30)
      action_mask   (N, num_actions) bool     its legal actions
      action        (N,) int64                 a card id (an action id with the bluff variant)
      reward        (N, 1) float32            everything the learner received since its
                                              previous decision (``reward="diff"``: an
                                              episode's rewards add up to the score difference)
      done, terminated, truncated  (N, 1) bool  (episodes terminate, never truncate)

* `PistiSelfPlayTorchRLEnv`, **multi-agent**: every seat of every game is an agent of one
  group (``"agents"``, shape ``(N, num_players)``), the layout of TorchRL's multi-agent
  (MAPPO/IPPO) loops, for self-play with one shared policy. Each step one seat per game plays
  (turn-based): the group's ``"mask"`` is True for that seat only, its ``"action_mask"`` is the
  seat's legal actions (all True for the others, whose sampled actions are not played: use
  ``"mask"`` as the loss mask). Every seat sees its own observation at every step (R30), and
  every seat is rewarded at every step with the change of its side's score difference, so each
  seat's rewards over an episode add up to its final score difference (as ``pisti_v0``'s).

**Action masks.** The action spec is a ``Categorical`` whose mask is kept equal to the
``action_mask`` just returned, so ``env.rand_action()`` (and ``check_env_specs``) only ever
samples legal actions; a policy should use `torchrl.modules.MaskedCategorical` with the
``action_mask`` key (a ``Collector`` given ``policy=None`` samples from its own copy of the spec,
without the masks). An illegal action raises ``ValueError`` naming the game and its legal
actions, and changes nothing.

**Autoreset.** The engine restarts a finished game inside the step that ends it (its batch stays
full), TorchRL's "auto-resetting env" convention: where ``("next", "done")`` is True,
``("next", "observation")`` and ``("next", "action_mask")`` are already the first ones of the
game's next episode (the terminal observation is not kept; episodes only terminate, so no value
is bootstrapped from it). The collector's partial reset that follows (``"_reset"`` True for
those games) changes nothing and returns those same observations. A reset without ``"_reset"``
(or with ``"_reset"`` all True) starts all N games anew; the engine cannot restart one game in
mid-episode, so a partial ``"_reset"`` naming a game that did not just finish raises
``ValueError``.
Wrapping the env with TorchRL's ``auto_reset=True`` is not needed (its NaN fill of the next
observations would poison GAE's value of terminal steps).

**Seeding.** ``set_seed(s)`` (or ``seed=`` at construction) makes the next full reset
``PistiVectorEnv.reset(seed=s)`` (or [`BatchedPisti`][pisti_env.batched.BatchedPisti] with that seed):
the same seed and actions play the same games. Unseeded, a full reset draws fresh decks.
"""

from __future__ import annotations

import random
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from ..util.arguments import check_int
from ..batched import BatchedPisti
from ..rules.settings import make_settings
from .doors import door_vector_env

SEED_BOUND = 2**63  # engine seeds drawn below this
GROUP = "agents"  # the multi-agent form's one group: every seat of every game


def _done_spec(shape: tuple[int, ...], device: torch.device) -> Composite:
    flag = Categorical(2, shape=(*shape, 1), dtype=torch.bool, device=device)
    return Composite(done=flag.clone(), terminated=flag.clone(), truncated=flag.clone(), shape=shape, device=device)


def _check_seed(seed: Any) -> int | None:
    return None if seed is None else check_int(seed, "seed", low=0, none=True)


def _full_reset_needed(tensordict: TensorDictBase | None, just_done: torch.Tensor) -> bool:
    """Whether a ``_reset`` call restarts every game (True) or changes nothing (False: the
    games it names finished at the last step and the engine has restarted them already). See
    the module docstring on autoreset."""
    reset = None
    if tensordict is not None:
        reset = tensordict.get("_reset", None)
        if reset is None:
            reset = tensordict.get((GROUP, "_reset"), None)
    if reset is None:
        return True
    reset = reset.reshape(just_done.shape[0], -1).any(-1).to(just_done.device)
    if not bool((reset & ~just_done).any()):
        return False
    if bool(reset.all()):
        return True
    raise ValueError(
        "a partial reset ('_reset') may only name games whose episode just ended (the engine has "
        "restarted them); the batched engine cannot restart a game in mid-episode. Reset every game "
        "(no '_reset', or all True) instead"
    )


class PistiTorchRLEnv(EnvBase):
    """N single-agent Pişti games (``pisti/Pisti-v0``'s) as one TorchRL env of ``batch_size=[N]``.

    Args:
        num_envs: the number of games N.
        seed: the seed of the first full reset (``None``: unseeded).
        **options: [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]'s arguments: ``opponent`` (default
            ``"greedy"``; a player with a batched form, or an object with ``act_batch`` such as
            a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool]), ``partner``, ``seat``,
            ``reward``, ``device`` (of the engine, the players and every tensor of the env) and
            the game settings (one deck: 2–4 players); default ``num_players=2`` and single
            hands (``target=None``).
    """

    def __init__(self, num_envs: int = 1, seed: int | None = None, **options: Any) -> None:
        options = {"num_players": 2, "target": None, **options}
        self.vector = door_vector_env(type(self).__name__, num_envs, "torch", options)
        self._pending_seed = _check_seed(seed)
        N, dev = self.vector.num_envs, self.vector.device
        super().__init__(device=dev, batch_size=torch.Size([N]))
        size = self.vector.single_observation_space["observation"].shape[0]
        actions = self.vector.num_actions
        self.observation_spec = Composite(
            observation=Unbounded((N, size), dtype=torch.float32, device=dev),
            action_mask=Categorical(2, shape=(N, actions), dtype=torch.bool, device=dev),
            shape=(N,), device=dev,
        )
        self.action_spec = Categorical(actions, shape=(N,), dtype=torch.int64, device=dev)
        self.reward_spec = Unbounded((N, 1), dtype=torch.float32, device=dev)
        self.done_spec = _done_spec((N,), dev)
        self._just_done = torch.zeros(N, dtype=torch.bool, device=dev)
        self._started = False

    @property
    def settings(self):
        """The game settings ([`pisti_env.rules.Settings`][pisti_env.rules.Settings])."""
        return self.vector.settings

    def _set_seed(self, seed: int | None) -> None:
        self._pending_seed = _check_seed(seed)

    def _observation(self, td: dict[str, torch.Tensor]) -> TensorDict:
        self._last = td
        mask = self.vector.action_masks()
        self.action_spec.update_mask(mask)
        return TensorDict(
            {"observation": td["observation"], "action_mask": mask}, batch_size=self.batch_size, device=self.device
        )

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDict:
        if not self._started or _full_reset_needed(tensordict, self._just_done):
            observation, _ = self.vector.reset(seed=self._pending_seed)
            self._pending_seed, self._started = None, True
        else:  # the games that just finished were restarted by the engine: nothing to do
            observation = self._last
        self._just_done = torch.zeros_like(self._just_done)
        out = self._observation(observation)
        out.update(self._flags(self._just_done))
        return out

    def _flags(self, done: torch.Tensor) -> dict[str, torch.Tensor]:
        done = done.unsqueeze(-1)
        return {"done": done, "terminated": done.clone(), "truncated": torch.zeros_like(done)}

    def _step(self, tensordict: TensorDictBase) -> TensorDict:
        observation, reward, terminated, truncated, _ = self.vector.step(tensordict.get("action"))
        self._just_done = terminated | truncated
        out = self._observation(observation)
        out.set("reward", reward.unsqueeze(-1))
        out.update({"done": self._just_done.unsqueeze(-1), "terminated": terminated.unsqueeze(-1),
                    "truncated": truncated.unsqueeze(-1)})
        return out


class PistiSelfPlayTorchRLEnv(EnvBase):
    """N Pişti games with every seat an agent of the group ``"agents"``, for self-play with
    TorchRL's multi-agent loops (see the module docstring). Keys, ``P`` the number of players::

        ("agents", "observation")   (N, P, obs_size) float32   each seat's own view (R30)
        ("agents", "action_mask")   (N, P, num_actions) bool   the legal actions of the seat
                                                               to move; all True for the others
        ("agents", "mask")          (N, P) bool                True for the seat to move
        ("agents", "action")        (N, P) int64               only the mover's is played
        ("agents", "reward")        (N, P, 1) float32          each seat's change of its side's
                                                               score difference at this step
        done, terminated, truncated (N, 1) bool, also per seat under "agents"

    Args:
        num_envs: the number of games N.
        reward: ``"diff"`` (default) or ``"win"``.
        device: the torch device of the engine and every tensor of the env.
        seed: the seed of the first full reset (``None``: unseeded).
        **settings: the game settings (one deck: 2–4 players); default ``num_players=2`` and
            single hands (``target=None``).
    """

    def __init__(
        self,
        num_envs: int = 1,
        reward: str = "diff",
        device: str | torch.device = "cpu",
        seed: int | None = None,
        **settings: Any,
    ) -> None:
        num_envs = check_int(num_envs, "num_envs", low=1)
        s = make_settings(**{"num_players": 2, "target": None, **settings})
        self.engine = BatchedPisti(num_envs, device=device, seed=0, reward=reward, **s.to_dict())
        self._engine_kwargs = dict(device=device, reward=reward, **s.to_dict())
        self._pending_seed = _check_seed(seed)
        self._seeder = random.Random()
        N, P, dev = num_envs, s.num_players, self.engine.device
        super().__init__(device=dev, batch_size=torch.Size([N]))
        A, size = self.engine.num_actions, self.engine.observation_size
        self.observation_spec = Composite(
            {GROUP: Composite(
                observation=Unbounded((N, P, size), dtype=torch.float32, device=dev),
                action_mask=Categorical(2, shape=(N, P, A), dtype=torch.bool, device=dev),
                mask=Categorical(2, shape=(N, P), dtype=torch.bool, device=dev),
                shape=(N, P), device=dev,
            )},
            shape=(N,), device=dev,
        )
        self.action_spec = Composite(
            {GROUP: Composite(action=Categorical(A, shape=(N, P), dtype=torch.int64, device=dev), shape=(N, P), device=dev)},
            shape=(N,), device=dev,
        )
        self.reward_spec = Composite(
            {GROUP: Composite(reward=Unbounded((N, P, 1), dtype=torch.float32, device=dev), shape=(N, P), device=dev)},
            shape=(N,), device=dev,
        )
        done = _done_spec((N,), dev)
        done[GROUP] = _done_spec((N, P), dev)
        self.done_spec = done
        self._seats = torch.arange(P, device=dev)
        self._just_done = torch.zeros(N, dtype=torch.bool, device=dev)
        self._last: TensorDict | None = None
        self.settings = s

    def _set_seed(self, seed: int | None) -> None:
        self._pending_seed = _check_seed(seed)

    def _group(self, mover: torch.Tensor, mask: torch.Tensor) -> TensorDict:
        """Every seat's observation, the mover's mask (all True elsewhere), who moves."""
        engine, state = self.engine, self.engine.state
        N, P = self.batch_size[0], len(self._seats)
        observation = torch.stack([engine.observe(state, self._seats[k].expand(N)) for k in range(P)], 1)
        moving = mover[:, None] == self._seats
        action_mask = torch.where(moving[..., None], mask[:, None, :], True)
        self.action_spec[GROUP, "action"].update_mask(action_mask)
        return TensorDict(
            {"observation": observation, "action_mask": action_mask, "mask": moving}, batch_size=(N, P), device=self.device
        )

    def _flags(self, done: torch.Tensor) -> dict[str, Any]:
        done = done.unsqueeze(-1)
        per_seat = done.unsqueeze(1).expand(-1, len(self._seats), 1).clone()
        flags = {"done": done, "terminated": done.clone(), "truncated": torch.zeros_like(done)}
        return {**flags, GROUP: {"done": per_seat, "terminated": per_seat.clone(), "truncated": torch.zeros_like(per_seat)}}

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDict:
        if self._last is None or _full_reset_needed(tensordict, self._just_done):
            seed = self._pending_seed if self._pending_seed is not None else self._seeder.randrange(SEED_BOUND)
            engine = BatchedPisti(self.batch_size[0], seed=seed, **self._engine_kwargs)
            out = engine.reset()
            self.engine, self._pending_seed = engine, None
            group = self._group(out.seat, out.action_mask)
        else:  # the games that just finished were restarted by the engine: nothing to do
            group = self._last.clone()
        self._last = group
        self._just_done = torch.zeros_like(self._just_done)
        result = TensorDict({GROUP: group}, batch_size=self.batch_size, device=self.device)
        result.update(self._flags(self._just_done))
        return result

    def _step(self, tensordict: TensorDictBase) -> TensorDict:
        actions = tensordict.get((GROUP, "action"))
        mover = self.engine.state.turn
        out = self.engine.step(actions.gather(1, mover[:, None]).squeeze(1))  # raises on an illegal one
        self._just_done = out.done
        group = self._group(out.seat, out.action_mask)
        self._last = group
        group = group.clone(False)
        group.set("reward", out.rewards.to(torch.float32).unsqueeze(-1))
        result = TensorDict({GROUP: group}, batch_size=self.batch_size, device=self.device)
        result.update(self._flags(out.done))
        return result
