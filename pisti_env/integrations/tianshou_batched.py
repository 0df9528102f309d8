"""Tianshou's vector-env interface over the batched engine: N learner games in one object.

    from pisti_env.integrations.tianshou_batched import PistiTianshouVectorEnv

    envs = PistiTianshouVectorEnv(num_envs=1024, opponent="greedy", num_players=2, target=None)
    collector = tianshou.data.Collector(algorithm, envs, VectorReplayBuffer(1024 * 32, 1024))

[`PistiTianshouVectorEnv`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv] is a `tianshou.env.BaseVectorEnv` (what Tianshou's
``Collector`` and trainers take) built on [`pisti_env.envs.vector.PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]: the same
games, the same observations, masks and rewards, one batched engine instead of N Python envs
behind N workers. Each game is the single-agent task of ``pisti/Pisti-v0``: the learner holds
one seat, every other seat is played by a batched player (``opponent``, ``partner``).

**Observations.** A `tianshou.data.Batch` with ``obs`` ((N, size) float32, the seat's
observation vector) and ``mask`` ((N, actions) bool, its legal actions): the layout Tianshou's
masked discrete policies read (``batch.obs.obs``, ``batch.obs.mask``), the same as its own
``PettingZooEnv`` gives, without ``agent_id`` (there is one learner per game).
``observation_space`` (one per game, as Tianshou's vector envs list them) is the single game's
Dict space of ``pisti/Pisti-v0``: its ``"observation"`` is ``obs``, its ``"action_mask"`` is
``mask``.

**Rewards.** Those of ``PistiVectorEnv``, unchanged: a step's reward is everything the learner
received since its previous decision, so an episode's rewards add up to its final score
difference (``reward="diff"``) and a reward earned on the other seats' moves reaches the
learner with its next decision.

**Reset mapping.** The engine restarts a finished game inside the step that ends it (Gymnasium's
``SAME_STEP`` autoreset); Tianshou instead expects the caller to ``reset(env_id=...)`` every game
whose episode ended before stepping it again. The door maps one onto the other:

* ``step`` returns ``terminated=True`` for a game whose episode ended; the engine has already
  dealt its next episode. Its ``obs_next`` is that next episode's first observation (the engine
  keeps no terminal observation; PPO and GAE never bootstrap from a terminated transition), and
  the door holds that observation for the game.
* ``reset(env_id=ids)`` on games whose episode just ended hands back the held first
  observations and deals nothing: each game is dealt once, and no dealt game is skipped.
  Rewards the learner earns in the new episode before its first decision still arrive with its
  first step (they belong to the new episode).
* ``reset()`` (all games, as ``Collector.reset`` calls it) deals N new games; a seed given to it,
  or set before by `seed`, makes the deals repeatable.
* Stepping a game whose episode ended before it was reset, or resetting only part of the games
  while some of them are mid-episode, is a ``RuntimeError`` / ``ValueError``: the engine cannot
  restart one game on its own, and a silent re-deal would lose a game.

**Steps.** The games move together: ``step(action, id)`` takes every game once (``id`` ``None``
or a permutation of ``range(N)``, actions in ``id``'s order); ``Collector.collect(n_step=...)``
does exactly that. Collecting a number of *episodes* (``n_episode``) lets Tianshou drop games
from a step, which the batched engine cannot do: use ``n_step`` collection (Tianshou's on-policy
recipes do). An illegal action is a ``ValueError`` naming the game and its legal actions.

**Infos.** An object array of dicts, one per game. Empty by default: Tianshou turns the N
dicts into one of its ``Batch`` objects at every step (twice), which with keys costs several
times the engine's own step. With ``infos=True`` each holds ``env_id`` and the learner's
``seat`` and ``side`` for the transition (the finished episode's, on its last step).

**Networks.** `ObsTrunk` and `MaskedActor` read this layout (and
``PettingZooEnv``'s): the actor sets the logits of illegal actions to the lowest float, so
Tianshou's categorical policy never samples them and gives them log-probability ``-inf``-like
values that never enter a loss.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from tianshou.data import Batch
from tianshou.env import BaseVectorEnv
from tianshou.utils.net.common import MLP, AbstractDiscreteActor, ModuleWithVectorOutput

from ..agents import SeatView
from ..util.arguments import check_int
from .doors import door_vector_env
from .snapshots import ModuleSnapshot


class PistiTianshouVectorEnv(BaseVectorEnv):
    """N single-agent Pişti games on the batched engine as a Tianshou vector env (see the
    module docstring for the reset mapping).

    Args:
        num_envs: the number of games N (Tianshou's ``env_num``).
        infos: fill the per-game info dicts (``env_id``, ``seat``, ``side``); ``False``
            (default) hands out empty dicts, which Tianshou's collector handles far faster.
        **options: [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]'s arguments: ``opponent`` (default
            ``"greedy"``; a player with a batched form, or an object with ``act_batch`` such as
            a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool]), ``partner``, ``seat``,
            ``reward``, ``device`` (the engine's and the players'; outputs are NumPy) and the
            game settings.
    """

    def __init__(self, num_envs: int = 1, infos: bool = False, **options: Any) -> None:
        if not isinstance(infos, bool):
            raise TypeError(f"infos must be a bool, got {infos!r}")
        # BaseVectorEnv.__init__ builds one worker per env; there are no workers here, only the
        # fields its methods and Tianshou's collectors read.
        self.vector = door_vector_env(type(self).__name__, num_envs, "numpy", options)
        self.env_num = self.vector.num_envs
        self.wait_num, self.timeout, self.is_async = self.env_num, None, False
        self.waiting_conn, self.waiting_id, self.ready_id = [], [], list(range(self.env_num))
        self.is_closed = False
        self.workers = []
        self.with_infos = infos
        self._spaces = {
            "action_space": self.vector.single_action_space,
            "observation_space": self.vector.single_observation_space,
            "metadata": self.vector.metadata,
            "spec": None,
            "reward_range": (-np.inf, np.inf),
        }
        self._seed: int | None = None
        self._obs: Batch | None = None  # every game's current observation
        self._seat = np.zeros(self.env_num, dtype=np.int64)
        self._side = np.zeros(self.env_num, dtype=np.int64)
        self._ended = np.zeros(self.env_num, dtype=bool)  # episode ended, next one's first obs held

    # ------------------------------------------------------------------ attributes
    def get_env_attr(self, key: str, id: int | Sequence[int] | np.ndarray | None = None) -> list[Any]:
        """One value per game in ``id`` (all: ``None``): the single game's ``action_space``,
        ``observation_space``, ``metadata``, ``spec`` or ``reward_range``, or an attribute of
        the underlying [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] (the same for every game)."""
        self._assert_is_not_closed()
        ids = self._ids(id, "id")
        value = self._spaces[key] if key in self._spaces else getattr(self.vector, key)
        return [value] * len(ids)

    def set_env_attr(self, key: str, value: Any, id: int | Sequence[int] | np.ndarray | None = None) -> None:
        """Refused: the games share one engine, so an attribute cannot differ between them."""
        raise NotImplementedError("the games share one batched engine: set attributes on env.vector instead")

    # ------------------------------------------------------------------ helpers
    def _ids(self, id: int | Sequence[int] | np.ndarray | None, name: str) -> np.ndarray:
        if id is None:
            return np.arange(self.env_num)
        ids = np.atleast_1d(np.asarray(id))
        if ids.ndim != 1 or not (np.issubdtype(ids.dtype, np.integer) or ids.size == 0):
            raise TypeError(f"{name} must be an int, a sequence of ints or None, got {id!r}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.env_num):
            raise ValueError(f"{name} must name games 0..{self.env_num - 1}, got {ids.tolist()}")
        if np.unique(ids).size != ids.size:
            raise ValueError(f"{name} names a game twice: {ids.tolist()}")
        return ids.astype(np.int64)

    def _store(self, observation: dict[str, np.ndarray], infos: dict[str, Any]) -> None:
        self._obs = Batch(obs=observation["observation"], mask=observation["action_mask"].astype(bool))
        self._seat, self._side = infos["seat"], infos["side"]

    def _infos(self, ids: np.ndarray, seat: np.ndarray, side: np.ndarray) -> np.ndarray:
        infos = np.empty(len(ids), dtype=object)
        if not self.with_infos:
            infos[:] = [{} for _ in range(len(ids))]
            return infos
        infos[:] = [{"env_id": int(i), "seat": int(s), "side": int(d)} for i, s, d in zip(ids, seat[ids], side[ids])]
        return infos

    # ------------------------------------------------------------------ reset
    def reset(
        self, env_id: int | Sequence[int] | np.ndarray | None = None, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Batch, np.ndarray]:
        """Returns ``(observations, infos)`` of the games in ``env_id`` (all: ``None``).

        Games whose episode ended in the last step get their next episode's first observation,
        already dealt; all games together (``env_id`` ``None`` or every id) are dealt anew, with
        ``seed`` (or the one given to [`seed`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv.seed]) and ``options`` as
        [`PistiVectorEnv.reset`][pisti_env.envs.vector.PistiVectorEnv.reset] takes them. Anything else is a ``ValueError``."""
        self._assert_is_not_closed()
        ids = self._ids(env_id, "env_id")
        fresh = self._obs is None or seed is not None or options is not None or not self._ended[ids].all()
        if fresh:
            if ids.size != self.env_num:
                if self._obs is None:
                    raise ValueError("the first reset deals every game: call reset() with env_id=None")
                if seed is not None or options is not None:
                    raise ValueError("a seed or options deal every game anew: pass them to reset() with env_id=None")
                raise ValueError(
                    f"reset(env_id=...) can only hand out the next episode of games whose episode just ended "
                    f"(games {ids[~self._ended[ids]].tolist()} are mid-episode); reset() with env_id=None deals every game anew"
                )
            if seed is None:
                seed, self._seed = self._seed, None
            observation, infos = self.vector.reset(seed=seed, options=options)
            self._store(observation, infos)
        self._ended[ids] = False
        return self._obs[ids], self._infos(ids, self._seat, self._side)

    def seed(self, seed: int | Sequence[int] | None = None) -> list[int | None]:
        """Seed the next full [`reset`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv.reset] (every game's deal comes from one engine seed: a
        sequence's first value is used). Returns that seed, once per game."""
        self._assert_is_not_closed()
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seed = list(seed)[0]
        self._seed = None if seed is None else check_int(seed, "seed", low=0)
        return [self._seed] * self.env_num

    # ------------------------------------------------------------------ step
    def step(
        self, action: np.ndarray | Sequence[int] | Any, id: int | Sequence[int] | np.ndarray | None = None
    ) -> tuple[Batch, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learners' actions (in ``id``'s order), then the other seats' moves until every game
        is at its learner's turn again. Returns ``(obs_next, rewards, terminated, truncated,
        infos)`` in ``id``'s order; see the module docstring for finished games."""
        self._assert_is_not_closed()
        if self._obs is None:
            raise RuntimeError("call reset() before step()")
        ids = self._ids(id, "id")
        if ids.size != self.env_num:
            raise ValueError(
                f"the {self.env_num} games move together: step every game once (id=None or a permutation of "
                f"range({self.env_num})), got {ids.size} ids; collect with n_step, not n_episode"
            )
        if self._ended.any():
            raise RuntimeError(
                f"games {np.flatnonzero(self._ended).tolist()} finished their episode: reset(env_id=...) them before stepping"
            )
        if action is None:
            raise ValueError("action must be given: this vector env is synchronous")
        chosen = np.asarray(action.cpu() if hasattr(action, "cpu") else action)
        if chosen.shape != (self.env_num,):
            raise ValueError(f"action must hold one action per game ({self.env_num},), got shape {chosen.shape}")
        actions = np.empty(self.env_num, dtype=np.int64)
        actions[ids] = chosen
        observation, rewards, terminated, truncated, infos = self.vector.step(actions)  # raises if illegal
        seat, side = infos["seat"], infos["side"]
        done = terminated | truncated
        if done.any():  # this transition's seat is the finished episode's
            final = infos["final_info"]
            seat, side = np.where(done, final["seat"], seat), np.where(done, final["side"], side)
        self._store(observation, infos)
        self._ended = done.copy()
        return self._obs[ids], rewards[ids], terminated[ids], truncated[ids], self._infos(ids, seat, side)

    # ------------------------------------------------------------------ rest
    def render(self, **kwargs: Any) -> list[Any]:
        """Nothing to render: ``render_mode`` is not supported on the batched engine."""
        return [None] * self.env_num

    def close(self) -> None:
        """Release the engine; any call after this raises."""
        self._assert_is_not_closed()
        self.vector.close()
        self.is_closed = True


# ---------------------------------------------------------------------------------- networks
class ObsTrunk(ModuleWithVectorOutput):
    """An MLP over the observation vector (``obs.obs``; the mask is not an input).

    Args:
        obs_dim: the observation vector's size.
        hidden: the sizes of its hidden layers; it ends with the last one's activation.
        activation: the activation after each hidden layer (``torch.nn.ReLU`` by default).
    """

    def __init__(self, obs_dim: int, hidden: Sequence[int], activation: type[torch.nn.Module] = torch.nn.ReLU) -> None:
        super().__init__(output_dim=hidden[-1])
        self.mlp = MLP(input_dim=obs_dim, hidden_sizes=hidden, activation=activation)

    def forward(self, obs: Batch, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        return self.mlp(obs.obs), state


class MaskedActor(AbstractDiscreteActor):
    """Logits over the actions from a trunk and a linear head, with the illegal actions' set to
    the lowest float (``obs.mask`` False), so the categorical policy gives them probability 0:
    sampled, argmax and log-probabilities alike."""

    def __init__(self, trunk: ModuleWithVectorOutput, num_actions: int) -> None:
        super().__init__(output_dim=num_actions)
        self.trunk = trunk
        self.head = torch.nn.Linear(trunk.get_output_dim(), num_actions)

    def get_preprocess_net(self) -> ModuleWithVectorOutput:
        return self.trunk

    def forward(self, obs: Batch, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        features, _ = self.trunk(obs)
        logits = self.head(features)
        legal = torch.as_tensor(obs.mask, dtype=torch.bool, device=logits.device)  # NumPy (collector) or torch (snapshots)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class ActorPlayer:
    """A masked actor (`MaskedActor` or any module mapping ``Batch(obs, mask)`` to
    logits) as a player of the evaluation harness and ``pisti-eval``'s API: on the seat's own
    observation (``SeatView.observation()``, R30) it plays the most probable legal action."""

    def __init__(self, actor: torch.nn.Module, name: str = "tianshou-ppo") -> None:
        self.actor, self.name = actor, name

    def reset(self, seed: int | None = None) -> None:
        """The player is deterministic: nothing to reseed."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        obs = Batch(obs=observation["observation"][None], mask=observation["action_mask"][None].astype(bool))
        with torch.no_grad():
            logits, _ = self.actor(obs)
        return int(logits.argmax(dim=-1)[0])


def actor_snapshot(actor: torch.nn.Module, deterministic: bool = False, name: str = "tianshou-snapshot") -> ModuleSnapshot:
    """A frozen copy of a masked actor (`MaskedActor`, or any module mapping
    ``Batch(obs, mask)`` to ``(logits, state)``) as a batched player: the opponent of a
    [`PistiTianshouVectorEnv`][pisti_env.integrations.tianshou_batched.PistiTianshouVectorEnv] or a member of a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool]
    (self-play). It samples from the legal actions unless ``deterministic``."""
    return ModuleSnapshot(actor, lambda net, obs, mask: net(Batch(obs=obs, mask=mask))[0], deterministic, name)
