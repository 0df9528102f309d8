"""Stable-Baselines3's native door to the batched engine: N games in one ``VecEnv``.

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from pisti_env.integrations.sb3 import PistiSB3VecEnv

    env = VecMonitor(PistiSB3VecEnv(num_envs=1024, opponent="greedy", num_players=2, target=None))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=4096).learn(1_000_000)

[`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv] is a `stable_baselines3.common.vec_env.VecEnv` over
[`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] (``pisti/Pisti-v0``'s vector env): the N games are
held by one batched engine and stepped together, the other seats choosing with their players'
batched form. It gives SB3 what SB3's own ``DummyVecEnv`` of N [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv]
would give, game for game, without a Python loop over the games:

* **Observations**: the Dict ``{"observation": (N, size) float32, "action_mask": (N, actions)
  int8}`` (``MultiInputPolicy``); ``env_method("action_masks")`` gives each game's legal
  actions as bools, which is what sb3-contrib's ``get_action_masks`` and ``MaskablePPO`` read.
* **Rewards**: each game's reward is everything its learner received since its previous
  decision (the other seats' moves included), so an episode's rewards add up to its final
  score difference (``reward="diff"``) or to ±1/0 (``"win"``). Rewards the learner receives in
  a new episode before its first decision come with its first step.
* **Dones and autoreset**, SB3's convention: a game whose episode ended returns ``done=True``
  and already the first observation of its next episode; its info holds
  ``"terminal_observation"`` (the learner's observation of the finished game, a Dict with an
  all-zero mask, exactly what ``PistiEnv`` returns at its last step) and
  ``"TimeLimit.truncated": False`` (episodes only terminate).
* **Infos** (one dict per game): ``"seat"`` and ``"side"`` of the learner of the step's episode,
  ``"TimeLimit.truncated"``; where a hand ended, ``"hand_result"`` (per side, as
  ``PistiEnv``) and ``"match_scores"``. ``VecMonitor`` adds ``"episode"`` on top.
* **Seeding**: ``seed(s)`` (what SB3's ``set_random_seed`` calls) takes effect at the next
  ``reset``, which then plays the same games for the same actions; one seed covers all N games
  (the engine derives each game's decks from it).
* **Opponents**: any player with a batched form (``"random"``, ``"greedy"``, ``"expert"``, a
  checkpoint path, an object with ``act_batch``), and for self-play a
  [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool] (shared with the other batched doors)
  of frozen copies of the learner's own policy (`PolicySnapshot`), refreshed during
  training by `SnapshotCallback`.

``get_attr``/``set_attr``/``env_method`` reach the one [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] shared by the N
games (a method runs once and its result is given to every index asked), except
``env_method("action_masks")``, which gives each game its own mask.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from ..batched import BatchState
from ..batched.to_game import to_games
from ..views.observation import ObservationEncoder
from .doors import door_vector_env
from .snapshots import FrozenPolicy, SnapshotPool


class _FinalMoves:
    """Stands in for a [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]'s engine and remembers, for every engine step in
    which episodes ended, the state before it and the actions taken. The engine restarts a
    finished game inside that step, so this is what the terminal observation is rebuilt from."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.records: list[tuple[BatchState, torch.Tensor, torch.Tensor]] = []

    def step(self, actions: Any, observation_out: Any = None, active: Any = None, observation_format: str = "float") -> Any:
        before = self.engine.state
        out = self.engine.step(actions, observation_out, active, observation_format)
        if bool(out.done.any()):
            self.records.append((before, torch.as_tensor(actions), out.done))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


class PistiSB3VecEnv(VecEnv):
    """N single-agent Pişti games on the batched engine as an SB3 ``VecEnv`` (see the module
    docstring).

    Args:
        num_envs: the number of games N (256–4096 keep a CPU busy; the engine's cost per step
            grows slowly with N).
        terminal_observation: build each finished game's ``"terminal_observation"`` (default
            ``True``). The engine restarts a finished game inside the step, so it is rebuilt
            on the Python engine from the game before its final move, which costs about as
            much as the batched step itself. SB3's algorithms read it only to bootstrap
            truncated episodes, and these episodes never truncate: ``False`` leaves it out
            (``info.get("terminal_observation")`` is then ``None``, as SB3 allows).
        **options: [`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]'s arguments: ``opponent`` (default
            ``"greedy"``; any player with a batched form, or an object with ``act_batch`` such
            as a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool]; one player chooses
            for every opponent seat of every game), ``partner``, ``seat``, ``reward``,
            ``device`` (of the engine and the players: observations reach SB3 as NumPy arrays,
            as every VecEnv's do) and the game settings.
    """

    def __init__(self, num_envs: int = 1024, terminal_observation: bool = True, **options: Any) -> None:
        if not isinstance(terminal_observation, bool):
            raise TypeError(f"terminal_observation must be True or False, got {terminal_observation!r}")
        self.terminal_observation = terminal_observation
        self.vector = door_vector_env(type(self).__name__, num_envs, "numpy", options)
        self.settings = self.vector.settings
        self._encoder = ObservationEncoder(self.settings)
        self._actions: np.ndarray | None = None
        self._started = False
        super().__init__(self.vector.num_envs, self.vector.single_observation_space, self.vector.single_action_space)

    # ------------------------------------------------------------------ the VecEnv API
    def reset(self) -> dict[str, np.ndarray]:
        """Start N new episodes, seeded by the last [`seed`][pisti_env.integrations.sb3.PistiSB3VecEnv.seed] (then forgotten, as SB3 does)."""
        options = self._options[0] or None  # PistiVectorEnv's batch options: "decks", "dealers", "seats"
        observation, info = self.vector.reset(seed=self._seeds[0], options=options)
        if self.terminal_observation:
            self.vector.engine = _FinalMoves(self.vector.engine)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = self._game_infos(info)
        self._started = True
        return observation

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """One learner decision in every game (the other seats' moves in between); see the
        module docstring for what comes back."""
        if not self._started or self._actions is None:
            raise RuntimeError("call reset() and step_async(actions) before step_wait()")
        actions, self._actions = np.asarray(self._actions).reshape(self.num_envs), None
        recorder = self.vector.engine if self.terminal_observation else None
        if recorder is not None:
            recorder.records.clear()
        observation, rewards, terminated, truncated, info = self.vector.step(actions)
        dones = terminated | truncated
        infos = self._game_infos(info, truncated)
        if dones.any():  # these infos describe the finished episode, as its last step's would
            final = info["final_info"]
            for b in np.flatnonzero(dones):
                infos[b].update(seat=int(final["seat"][b]), side=int(final["side"][b]))
            if recorder is not None:
                for b, terminal in self._terminal_observations(recorder.records, final["seat"]).items():
                    infos[b]["terminal_observation"] = terminal
            self._add_hand_results(infos, final, dones)
        return observation, rewards.astype(np.float32), dones, infos

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next [`reset`][pisti_env.integrations.sb3.PistiSB3VecEnv.reset] (SB3's convention: ``seed + i`` listed for game ``i``;
        the engine derives all N games from ``seed`` itself)."""
        return super().seed(seed)

    def close(self) -> None:
        self.vector.close()

    def action_masks(self) -> np.ndarray:
        """(N, actions) bool: each game's legal actions now."""
        return self.vector.action_masks()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vector, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.vector, attr_name, value)  # one object holds every game

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.vector.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self.vector, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    # ------------------------------------------------------------------ infos
    def _game_infos(self, info: dict[str, Any], truncated: np.ndarray | None = None) -> list[dict[str, Any]]:
        """One info dict per game from the vector env's batched infos."""
        seats, sides = info["seat"].tolist(), info["side"].tolist()
        if truncated is None:
            infos = [{"seat": seat, "side": side} for seat, side in zip(seats, sides)]
        else:
            infos = [{"seat": seat, "side": side, "TimeLimit.truncated": t} for seat, side, t in zip(seats, sides, truncated.tolist())]
        if "_hand_result" in info:  # a hand ended in a game still going (matches)
            self._add_hand_results(infos, info, info["_hand_result"])
        return infos

    @staticmethod
    def _add_hand_results(infos: list[dict[str, Any]], info: dict[str, Any], rows: np.ndarray) -> None:
        """``"hand_result"`` (per side, as ``PistiEnv``) and ``"match_scores"`` into the infos of
        the games of ``rows``."""
        if "hand_result" not in info:
            return
        keys = list(info["hand_result"])
        for b in np.flatnonzero(rows):
            scores = info["match_scores"][b]
            infos[b]["hand_result"] = [{k: int(info["hand_result"][k][b, side]) for k in keys} for side in range(len(scores))]
            infos[b]["match_scores"] = [int(x) for x in scores]

    def _terminal_observations(
        self, records: list[tuple[BatchState, torch.Tensor, torch.Tensor]], final_seats: np.ndarray
    ) -> dict[int, dict[str, np.ndarray]]:
        """Each finished game's last observation for its learner: the game before its final move
        (as a Python [`Game`][pisti_env.game.Game]), that move played, then encoded for the
        learner's seat (R30), with an all-zero mask (nothing is legal after the end)."""
        terminals: dict[int, dict[str, np.ndarray]] = {}
        mask = np.zeros(self.settings.num_actions, dtype=np.int8)
        for before, actions, done in records:
            rows = done.nonzero().squeeze(1)
            games = to_games(before, rows, self.settings)
            for b, game in zip(rows.tolist(), games):
                game.step(int(actions[b]))
                if not game.done:  # the converted game must end where the engine's did
                    raise RuntimeError(f"game {b}: the replayed final move did not end the episode")
                seat = int(final_seats[b])
                terminals[b] = {"observation": self._encoder.encode(game, seat), "action_mask": mask.copy()}
        return terminals


# ---------------------------------------------------------------------------- self-play
class PolicySnapshot(FrozenPolicy):
    """A frozen copy of an SB3 (maskable) policy as a batched player (``act_batch``) and a
    harness player (``act``), for a [`SnapshotPool`][pisti_env.integrations.snapshots.SnapshotPool].

    Args:
        policy: a ``MaskableActorCriticPolicy`` (``model.policy``); it is copied, so the
            snapshot keeps its weights while the model trains on.
        deterministic: play the most likely legal action, or (default) sample one, which keeps
            self-play opponents varied.
        name: the player's name (harness tables).
    """

    def __init__(self, policy: Any, deterministic: bool = False, name: str = "sb3-snapshot") -> None:
        super().__init__(deterministic, name, policy.device)
        # A fresh policy with the weights (a deepcopy can fail on tensors of the last update).
        self.policy = type(policy)(**policy._get_constructor_parameters())
        self.policy.load_state_dict(policy.state_dict())
        self.policy.to(policy.device)
        self.policy.set_training_mode(False)
        for p in self.policy.parameters():
            p.requires_grad_(False)

    def logits(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        obs = {"observation": observation, "action_mask": mask.to(torch.float32)}
        return self.policy.get_distribution(obs, action_masks=mask).distribution.logits


class SnapshotCallback(BaseCallback):
    """Adds a `PolicySnapshot` of the model's policy to ``pool`` every ``every``
    environment steps (summed over the games), from the next opponent move on."""

    def __init__(self, pool: SnapshotPool, every: int, deterministic: bool = False) -> None:
        super().__init__()
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be an int >= 1 (environment steps between snapshots), got {every!r}")
        self.pool, self.every, self.deterministic = pool, every, deterministic
        self._last = 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self._last >= self.every:
            self._last = self.num_timesteps
            self.pool.add(PolicySnapshot(self.model.policy, deterministic=self.deterministic))
        return True


def policy_snapshot(model: BaseAlgorithm, deterministic: bool = False) -> PolicySnapshot:
    """A frozen `PolicySnapshot` of ``model``'s current policy."""
    return PolicySnapshot(model.policy, deterministic=deterministic)


__all__ = ["PistiSB3VecEnv", "PolicySnapshot", "SnapshotCallback", "SnapshotPool", "policy_snapshot"]
