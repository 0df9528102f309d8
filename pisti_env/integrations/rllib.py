"""RLlib (new API stack) doors to pisti, and a harness player for a trained module.

Two doors, each with a PPO config and RLlib's action-masking module:

* **Batched, single-agent** ([`PistiVectorRLlibEnv`][pisti_env.integrations.rllib.PistiVectorRLlibEnv], `single_agent_ppo_config`): each
  env runner steps one ``gymnasium.make_vec("pisti/Pisti-v0", num_envs=N)`` (the vector env on
  the batched engine, [`pisti_env.envs.vector.PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]): N games in one object, the
  learner holds one seat of each and a batched player (``"greedy"``, a checkpoint, ...) the
  others. RLlib builds it through its ``vector_entry_point`` (``gym_env_vectorize_mode=
  "vector_entry_point"``) and steps it with one forward pass for the N games. RLlib's env
  runner expects Gymnasium's next-step autoreset (after a game ends, its next step only
  reports the new episode's start, and the episode records that observation as its first), so
  the env is made with ``autoreset_mode=NEXT_STEP``: the same games, decisions, masks and
  rewards as the default same-step mode (``tests/env/test_vector_next_step.py``). An episode's
  rewards add up to the learner's final score difference, as in the vector env.
* **Multi-agent, step by step** ([`PistiMultiAgentEnv`][pisti_env.integrations.rllib.PistiMultiAgentEnv], `ppo_config`):
  ``pisti_v0`` as a ``MultiAgentEnv``, every seat played by one shared module (self-play),
  for what the single-agent door cannot do: a learner at every seat, any player count and
  variant, players without a batched form.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); ``import pisti_env`` never imports
this module.

What RLlib needs that ``pisti_v0`` does not give as it is, and what [`PistiMultiAgentEnv`][pisti_env.integrations.rllib.PistiMultiAgentEnv]
does about it (the first point holds for the batched door too):

* **Observation keys.** RLlib's action-masking module
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``)
  reads ``{"observations": …, "action_mask": …}``; ``pisti_v0`` says ``"observation"``. The
  adapter renames the key (`to_rllib_observation`); the vector and the mask are
  ``pisti_v0``'s own (R30, R31: nothing a seat may not know).
* **Turns.** Only the seat to move gets an observation in a step, so RLlib asks one seat for
  one action. At the end of the episode every seat gets its last observation.
* **Illegal actions.** RLlib's env check steps with unmasked sampled actions, so the adapter
  wraps [`pisti_env.env`][pisti_env.env] (``illegal_action="penalty"``, PettingZoo's classic convention):
  an illegal action ends the episode, the offender's side is penalised and the others get the
  opposite amount. With the masking module no action is ever illegal.
* **Rewards to the seat they belong to.** ``pisti_v0`` rewards every seat at every step (an
  opponent's capture costs you points on the opponent's move). RLlib's ``MultiAgentEpisode``
  adds a seat's reward to that seat's return only once the seat has acted in the episode: a
  reward that arrives before or together with a seat's first observation goes into the
  episode's "hanging begin" cache, which per-agent returns leave out. So the adapter holds
  every seat's rewards until the seat has acted once and then passes them on with that first
  action's transition; after that a seat's rewards go out at every step (RLlib adds them to
  the transition of the seat's last action). At the end everything still held goes out. Over an episode each seat's rewards add up to its
  side's final score difference (``reward="diff"``), and the seats' returns add up to zero.

  One case RLlib cannot represent: a seat that never acted is not part of RLlib's episode at
  all, so if an illegal action ends the episode before every seat has acted, those seats'
  shares are not in RLlib's returns (they are in the adapter's rewards). A masked policy never
  gets there, and every seat acts in every hand (R6).

`ppo_config` samples whole episodes (``batch_mode="complete_episodes"``): a hand is
short (48 decisions with 2 players), and no advantage is then bootstrapped at a cut. Episodes
that RLlib cuts into chunks (``"truncate_episodes"``) keep the seats' returns too (RLlib
carries a held reward into the next chunk; the recipe test runs both).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from pisti_env import GYM_ENV_ID
from pisti_env.agents import SeatView
from pisti_env.envs.env import env as pisti_env_aec

OBSERVATIONS = "observations"  # the key RLlib's action-masking module reads
ACTION_MASK = "action_mask"
SHARED_MODULE = "shared_seat_policy"  # the one module id every seat maps to


def to_rllib_observation(observation: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A ``pisti_v0`` observation (``{"observation", "action_mask"}``) under the keys RLlib's
    action-masking module reads (``{"observations", "action_mask"}``); the arrays are shared."""
    return {OBSERVATIONS: observation["observation"], ACTION_MASK: observation["action_mask"]}


def env_config_dict(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """RLlib's ``env_config`` for our envs as a plain dict (``None``: no settings); anything but a
    mapping is a ``TypeError``."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (RLlib's env_config) or None, got {type(config).__name__}")
    return dict(config)


def rllib_observation_space(space: spaces.Dict) -> spaces.Dict:
    """``pisti_v0``'s observation space under `to_rllib_observation`'s keys."""
    return spaces.Dict({OBSERVATIONS: space["observation"], ACTION_MASK: space["action_mask"]})


class PistiMultiAgentEnv(MultiAgentEnv):
    """``pisti_v0`` as an RLlib ``MultiAgentEnv`` (see the module docstring for what it adds).

    Agents are ``pisti_v0``'s (``player_0`` … ``player_{n-1}``, the seats in playing order,
    R3), each with ``pisti_v0``'s action space and the renamed observation space; all of them
    are in ``agents`` for the whole episode.

    Args:
        config: RLlib's ``env_config`` (any mapping; RLlib passes an ``EnvContext``):
            ``reward`` (``"diff"``, default, or ``"win"``), ``illegal_action`` (``"penalty"``,
            default, or ``"raise"``), ``render_mode`` (``None`` or ``"ansi"``), and any game
            setting of RULES.md's table (``num_players``, ``partnerships``, ``target``,
            ``bluff``, …; every rule variant and player count ``pisti_v0`` has).
        **kwargs: the same keys, for building the env directly; a key may not be in both.

    Raises:
        TypeError: ``config`` is not a mapping.
        ValueError: a key given twice, or a value ``pisti_v0`` refuses (its error names the
            setting and the allowed values).

    Attributes:
        aec: the wrapped ``pisti_v0`` env (``pisti_env.env(...)``); ``aec.unwrapped.game``
            is the game being played.

    Infos: an observed seat gets ``pisti_v0``'s info for it (``hand_result``,
    ``match_scores`` and ``side`` after a hand ends; ``illegal_move`` for an offender).
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        config = env_config_dict(config)
        twice = sorted(set(config) & set(kwargs))
        if twice:
            raise ValueError(f"{twice} given both in config and as keyword arguments; give each once")
        options = {**config, **kwargs}
        options.setdefault("illegal_action", "penalty")
        if options.get("render_mode") == "human":
            raise ValueError("render_mode must be None or 'ansi' (RLlib runs envs in worker processes)")
        super().__init__()
        self.aec = pisti_env_aec(**options)  # validates every key and value
        self._raw = self.aec.unwrapped
        self.settings = self._raw.settings
        self.render_mode = self._raw.render_mode
        self.possible_agents = list(self._raw.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: rllib_observation_space(self._raw.observation_space(a)) for a in self.possible_agents}
        self.action_spaces = {a: self._raw.action_space(a) for a in self.possible_agents}
        self._held = dict.fromkeys(self.possible_agents, 0.0)  # rewards not yet passed on
        self._acted: set[str] = set()
        self._over = True

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        return to_rllib_observation(self.aec.observe(agent))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Start an episode (``pisti_v0``'s reset: same seed, same game; ``options`` may hold
        ``"deck"`` and ``"dealer"``). Returns the observation and info of the seat to move."""
        self.aec.reset(seed=seed, options=options)
        self._held = dict.fromkeys(self.possible_agents, 0.0)
        self._acted = set()
        self._over = False
        agent = self.aec.agent_selection
        return {agent: self._observe(agent)}, {agent: dict(self._raw.infos[agent])}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """Play the action of the seat to move (``action_dict`` holds that seat only).

        Returns RLlib's five dicts: the next seat's observation (every seat's at the end), the
        rewards passed on this step (see the module docstring), ``terminateds`` and
        ``truncateds`` with ``"__all__"``, and the observed seats' infos.
        """
        if self._over:
            raise ValueError("the episode is over: call reset() to play again")
        if not isinstance(action_dict, Mapping):
            raise TypeError(f"action_dict must be a dict of agent id -> action, got {type(action_dict).__name__}")
        agent = self.aec.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"it is {agent}'s turn and only {agent} acts; got actions for {sorted(map(str, action_dict))}")
        self.aec.step(action_dict[agent])  # TypeError/ValueError on a bad action, nothing changes
        self._acted.add(agent)
        for seat, reward in self._raw.rewards.items():
            self._held[seat] += reward
        self._over = all(self._raw.terminations.values())
        observed = self.possible_agents if self._over else [self.aec.agent_selection]
        passing = self.possible_agents if self._over else [a for a in self.possible_agents if a in self._acted]
        rewards = {}
        for seat in passing:
            rewards[seat], self._held[seat] = float(self._held[seat]), 0.0
        observations = {a: self._observe(a) for a in observed}
        infos = {a: dict(self._raw.infos[a]) for a in observed}
        terminateds = {"__all__": self._over}
        if self._over:
            terminateds.update(dict.fromkeys(self.possible_agents, True))
        return observations, rewards, terminateds, {"__all__": False}, infos

    def render(self) -> str | None:
        """``pisti_v0``'s text rendering with ``render_mode="ansi"``."""
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()


def check_runners(num_env_runners: int, num_envs_per_env_runner: int) -> None:
    """``ValueError`` unless there are >= 0 remote env runners and >= 1 game per runner."""
    for name, value, minimum in (
        ("num_env_runners", num_env_runners, 0),
        ("num_envs_per_env_runner", num_envs_per_env_runner, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def shared_module_for(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn``: every seat plays with the one shared module."""
    return SHARED_MODULE


def ppo_config(
    env_config: Mapping[str, Any] | None = None,
    *,
    hidden: Sequence[int] = (256, 256),
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 1,
    seed: int | None = 0,
) -> PPOConfig:
    """A ``PPOConfig`` (new API stack, torch) that trains one action-masked module for every
    seat of [`PistiMultiAgentEnv`][pisti_env.integrations.rllib.PistiMultiAgentEnv]; set PPO's own hyperparameters with ``.training(…)``.

    Args:
        env_config: the env's settings, reward and illegal-action mode (see
            [`PistiMultiAgentEnv`][pisti_env.integrations.rllib.PistiMultiAgentEnv]); checked here by building the env once, so a bad key
            fails in the caller rather than in a Ray worker.
        hidden: sizes of the hidden layers of the policy and the value networks (two separate
            MLPs with ReLU, RLlib's default model with these widths).
        num_env_runners: remote env-runner actors that play episodes (0: the driver samples
            itself, the least memory; on a Ray cluster, as many as the cluster has CPUs to
            spare: each runner is one actor with one CPU).
        num_envs_per_env_runner: games each runner steps together (one batched forward pass
            per step over them).
        seed: seeds the env runners' games and the module's initialisation (``None``: not
            seeded).

    Episodes are sampled whole (``batch_mode="complete_episodes"``, see the module
    docstring); ``policy_mapping_fn`` maps every seat to `SHARED_MODULE`.
    """
    PistiMultiAgentEnv(env_config).close()  # a bad config fails here, not in a Ray worker
    env_config = dict(env_config or {})
    check_runners(num_env_runners, num_envs_per_env_runner)
    module = MultiRLModuleSpec(rl_module_specs={SHARED_MODULE: masked_module(hidden)})
    config = _config(PistiMultiAgentEnv, env_config, module, seed, num_env_runners=num_env_runners,
                     num_envs_per_env_runner=num_envs_per_env_runner, batch_mode="complete_episodes")
    return config.multi_agent(policies={SHARED_MODULE}, policy_mapping_fn=shared_module_for)


def _config(env: type, env_config: dict[str, Any], module: Any, seed: int | None, **env_runners: Any) -> PPOConfig:
    """The two doors' common ``PPOConfig``: torch, the env class and its config, the env
    runners' settings, the module spec, and the seed (``None``: not seeded)."""
    config = PPOConfig().framework("torch").environment(env, env_config=env_config).env_runners(**env_runners)
    config = config.rl_module(rl_module_spec=module)
    return config if seed is None else config.debugging(seed=seed)


def with_training(config: PPOConfig, defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> PPOConfig:
    """``config.training(...)`` with a recipe's PPO hyperparameters: ``defaults`` updated by
    ``overrides`` (a name that is not in ``defaults`` is a ``TypeError``). ``train_batch_size``
    stands for RLlib's ``train_batch_size_per_learner`` (the recipes train on one learner)."""
    unknown = sorted(set(overrides) - set(defaults))
    if unknown:
        raise TypeError(f"unknown PPO setting(s) {unknown}; known: {sorted(defaults)}")
    settings = {**defaults, **overrides}
    if "train_batch_size" in settings:
        settings["train_batch_size_per_learner"] = settings.pop("train_batch_size")
    return config.training(**settings)


class RLModulePlayer:
    """A trained RLlib module as a harness player (``act(view)`` on what the seat may know,
    R30): the most probable legal action under the masked logits.

    Args:
        module: a trained module: ``algo.get_module()`` (the batched door) or
            ``algo.get_module(SHARED_MODULE)`` (the multi-agent one).
        name: the player's name in reports.
    """

    def __init__(self, module: RLModule, name: str = "rllib-ppo") -> None:
        self.module = module
        self.name = name

    def reset(self, seed: int | None = None) -> None:
        """The module plays deterministically: nothing to reseed."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        return int(self._choose(torch.from_numpy(observation["observation"])[None],
                                torch.from_numpy(observation["action_mask"])[None])[0])

    def act_batch(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The batched form (the harness's batched engine, the vector env's opponents): one
        forward pass for the (B, obs) observations and (B, actions) masks; deterministic, so
        ``generator`` is not used."""
        return self._choose(observation, mask)

    def _choose(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch = {Columns.OBS: {OBSERVATIONS: observation.float(), ACTION_MASK: mask.float()}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(1)


# ------------------------------------------------------------------ the batched single-agent door
VECTOR_ENV_FIXED = ("autoreset_mode", "output")  # what PistiVectorRLlibEnv sets itself


class PistiVectorRLlibEnv(gymnasium.vector.VectorObservationWrapper):
    """The batched door's env, as RLlib builds it from ``env_config`` (RLlib takes a class or a
    registered name, and adds ``num_envs``): ``gymnasium.make_vec("pisti/Pisti-v0", ...)`` with
    next-step autoreset and numpy outputs, its observations under the keys RLlib's
    action-masking module reads (`to_rllib_observation`; arrays shared, not copied).

    Args:
        config: RLlib's ``env_config`` plus ``num_envs`` (default 1); every other key is the
            vector env's (``opponent``, ``partner``, ``seat``, ``reward``, ``device`` and the
            game settings; see [`pisti_env.envs.vector.PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv]). ``autoreset_mode``
            and ``output`` are set here and may not be given.

    Raises:
        TypeError: ``config`` is not a mapping.
        ValueError: a key the vector env refuses (its error names it), or a fixed one.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        options = env_config_dict(config)
        fixed = sorted(set(options) & set(VECTOR_ENV_FIXED))
        if fixed:
            raise ValueError(f"{fixed} are set for RLlib (next-step autoreset, numpy outputs); leave them out")
        num_envs = options.pop("num_envs", 1)
        env = gymnasium.make_vec(
            GYM_ENV_ID,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            autoreset_mode=AutoresetMode.NEXT_STEP,
            **options,
        )
        super().__init__(env)  # Gymnasium's check: the env resets at the next step
        self.single_observation_space = rllib_observation_space(env.single_observation_space)
        self.observation_space = rllib_observation_space(env.observation_space)

    def observations(self, observations: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return to_rllib_observation(observations)


def single_agent_ppo_config(
    env_config: Mapping[str, Any] | None = None,
    *,
    hidden: Sequence[int] = (256, 256),
    activation: str = "relu",
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 256,
    seed: int | None = 0,
) -> PPOConfig:
    """A ``PPOConfig`` (new API stack, torch) whose env runners each step
    ``num_envs_per_env_runner`` games of the vector env ([`PistiVectorRLlibEnv`][pisti_env.integrations.rllib.PistiVectorRLlibEnv]) with one
    action-masked module; set PPO's own hyperparameters with ``.training(…)``.

    Args:
        env_config: the vector env's opponent, learner seat, reward and game settings (see
            [`PistiVectorRLlibEnv`][pisti_env.integrations.rllib.PistiVectorRLlibEnv]); checked here by building the env once, so a bad key fails
            in the caller rather than in a Ray worker.
        hidden: sizes of the hidden layers of the policy and the value networks (two separate
            MLPs, RLlib's default model with these widths).
        activation: their activation (RLlib's names: ``"relu"``, ``"tanh"``, ...).
        num_env_runners: remote env-runner actors (0: the driver samples itself; on a Ray
            cluster, as many as it has CPUs to spare: each runner is one actor with one CPU).
        num_envs_per_env_runner: games each runner steps together (one engine step and one
            forward pass for all of them).
        seed: seeds the env runners' games and the module's initialisation (``None``: not
            seeded).
    """
    env_config = dict(env_config or {})
    check_runners(num_env_runners, num_envs_per_env_runner)
    PistiVectorRLlibEnv(env_config).close()  # a bad config fails here, not in a Ray worker
    return _config(PistiVectorRLlibEnv, env_config, masked_module(hidden, activation), seed, num_env_runners=num_env_runners,
                   num_envs_per_env_runner=num_envs_per_env_runner, gym_env_vectorize_mode="vector_entry_point")


def masked_module(hidden: Sequence[int], activation: str = "relu") -> RLModuleSpec:
    """RLlib's action-masking PPO module with separate policy and value MLPs of these widths."""
    widths = list(hidden)
    if not widths or any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in widths):
        raise ValueError(f"hidden must be a non-empty sequence of positive ints, got {hidden!r}")
    return RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": widths, "fcnet_activation": activation, "vf_share_layers": False},
    )


def train(
    config: PPOConfig,
    *,
    steps: int | None = None,
    minutes: float | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> Algorithm:
    """Build the algorithm from ``config`` and run training iterations until ``steps`` env
    steps were sampled or ``minutes`` of wall-clock time passed (checked after each
    iteration), whichever comes first; at least one of them must be given. ``on_result`` sees
    every iteration's result dict. Returns the algorithm (``algo.stop()`` it when done)."""
    if steps is None and minutes is None:
        raise ValueError("give steps, minutes or both: training needs a budget")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not minutes > 0):
        raise ValueError(f"minutes must be a positive number, got {minutes!r}")
    algo = config.build_algo()
    start = time.perf_counter()
    while True:
        result = algo.train()
        if on_result is not None:
            on_result(result)
        sampled = result["env_runners"]["num_env_steps_sampled_lifetime"]
        if steps is not None and sampled >= steps:
            return algo
        if minutes is not None and time.perf_counter() - start >= 60 * minutes:
            return algo
