"""A Gymnasium vector env on the batched engine: N learner games at once (``pisti/Pisti-v0``).

``gymnasium.make_vec("pisti/Pisti-v0", num_envs=4096, opponent="greedy")`` returns a
[`PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv] (the id's ``vector_entry_point``). Each of the N games is the game of the
single-agent env [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv]: one learner seat, every other seat
played by a built-in player; but all N are held by one [`BatchedPisti`][pisti_env.batched.BatchedPisti]
and the other seats choose with their players' batched form (``act_batch``: ``"random"``,
``"greedy"``, ``"expert"`` (without the bluff variant or the shown stock-bottom card), any
checkpoint path, or a player object that has one; ``"pimc"`` has none and is refused).

* **Step**: every game is at the learner's turn; the learners' actions are applied, then the
  games whose seat to move is not the learner's are stepped (and only those: the engine's
  ``active`` mask) with the other players' choices until every game is at its learner's turn
  again: a varying number of moves per game (3–4 players, hand ends, R29's answers).
* **Rewards, observations, infos**: as [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv] gives them, game for game on the same
  decks (``tests/env/test_vector_env.py`` checks it): the reward is everything the learner received
  since its previous decision (``reward="diff"``: an episode's rewards add up to its final score
  difference; ``"win"``: ±1 at the end). Observation: ``{"observation": (N, size) float32,
  "action_mask": (N, actions) int8}``; [`PistiVectorEnv.action_masks`][pisti_env.envs.vector.PistiVectorEnv.action_masks] gives the masks as
  bools. ``observation_format="flat"``: the (N, size) vectors alone, and the (N, actions) int8
  masks of the observations given with them in ``infos["action_mask"]`` (NumPy or torch, as the
  observations; ``"_action_mask"`` all true). Infos (arrays with a ``"_key"`` mask,
  Gymnasium's vector convention): ``"seat"`` and ``"side"`` of each learner; where a hand ended
  since the last decision, ``"hand_result"`` (a dict of (N, sides) arrays) and
  ``"match_scores"`` (N, sides).
* **Autoreset**: ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``). A game whose
  episode ended reports ``terminated=True`` and already the first observation of its next
  episode; ``infos["final_info"]`` holds the finished episode's infos (seat, side, hand_result,
  match_scores) under the ``"_final_info"`` mask. Episodes never truncate. The engine restarts
  a finished game inside the step that ends it, so the terminal observation itself is not
  kept: ``infos["final_obs"]`` is ``None`` for those games (it is only needed to bootstrap
  truncated episodes, and these episodes only terminate). Rewards the learner receives in its
  new episode before its first decision come with its next step, as in [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv].
  ``autoreset_mode=AutoresetMode.NEXT_STEP`` (what RLlib's env runners expect) instead: a game
  whose episode ended reports ``terminated=True`` with the finished episode's infos in place
  (no ``final_info``), and its next step ignores its action and reports the new episode's
  start (reward 0, not terminated, its reset infos); the observation given with
  ``terminated=True`` is already that first observation, as the terminal one is not kept.
  Rewards received in the new episode before its first decision come with that decision's
  step. Games that did not end step as usual in both modes.
* **Learner seat** (``seat=``): fixed, or ``None`` to draw it per episode (per game, from the
  env's seeded generator, whenever a game restarts).
* **Outputs** (``output=``): ``"numpy"`` (default) or ``"torch"`` (tensors on ``device``, where
  the engine runs). Actions: a (N,) integer numpy array, tensor or sequence; an illegal one
  raises ``ValueError`` naming the first bad game and its legal actions, changing nothing.
* **Seeding**: ``reset(seed=s)`` seeds the engine's decks and dealers, the seat draws and the
  players' random choices: the same seed plays the same games for the same actions.
  ``reset(options={"decks": ..., "dealers": ..., "seats": ...})`` gives the first episode's
  decks (N × 52), dealers and learner seats (N each).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..agents import Player, as_batched_player
from ..util.arguments import check_int
from ..batched import BatchedPisti, BatchStep
from ..batched.engine import BYTES_PER_OBSERVATION_ENTRY, check_memory
from ..views.observation import ObservationEncoder
from ..game.rewards import REWARD_MODES
from ..rules.settings import make_settings
from .spaces import action_space, check_observation_format, observation_space

OUTPUT_MODES = ("numpy", "torch")
# The bytes a game needs at the vector env's peak on a CPU, engine included, per observation entry
# (38-41, measured by benchmarks/bench_memory.py): the engine's share (BYTES_PER_OBSERVATION_ENTRY)
# plus the batched spaces' bounds and the numpy observations, masks and infos of a step.
HOST_BYTES_PER_OBSERVATION_ENTRY = 42
RESET_OPTIONS = ("decks", "dealers", "seats")
SEED_BOUND = 2**63  # engine and generator seeds drawn below this


# Where to go with a player that has no batched form.
_NOT_BATCHED = "; use gymnasium.make (PistiEnv) for the others"


class PistiVectorEnv(gymnasium.vector.VectorEnv):
    """N single-agent Pişti games on the batched engine (see the module docstring).

    Args:
        num_envs: the number of games N.
        opponent: the other side(s)' player: ``"random"``, ``"greedy"`` (default), a checkpoint
            path, or a player object with ``act_batch``; one player chooses for every
            opponent seat of every game.
        partner: the learner's partner's player with partnerships (R4); ``None``: as ``opponent``.
        seat: the learner's seat, or ``None`` (default) to draw it per episode.
        reward: ``"diff"`` (default) or ``"win"``.
        output: ``"numpy"`` (default) or ``"torch"``.
        device: the torch device of the engine, the players and torch outputs.
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default) or ``NEXT_STEP`` (or their
            values, ``"SameStep"``, ``"NextStep"``); see the module docstring.
        observation_format: ``"dict"`` (default) or ``"flat"``: see the module docstring.
        **settings: the game settings (one deck: 2–4 players), as [`PistiEnv`][pisti_env.envs.single_agent.PistiEnv].

    A ``num_envs`` whose estimated memory exceeds what is available (the host's, and the
    engine's device's) is a ``ValueError`` at once, naming the estimate.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    AUTORESET_MODES = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)

    def __init__(
        self,
        num_envs: int = 1,
        opponent: str | Player = "greedy",
        partner: str | Player | None = None,
        seat: int | None = None,
        reward: str = "diff",
        output: str = "numpy",
        device: str | torch.device = "cpu",
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        observation_format: str = "dict",
        **settings: Any,
    ) -> None:
        num_envs = check_int(num_envs, "num_envs", low=1)
        allowed = [m.value for m in self.AUTORESET_MODES]
        try:
            autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(f"autoreset_mode must be one of {allowed}, got {autoreset_mode!r}") from None
        if autoreset_mode not in self.AUTORESET_MODES:
            raise ValueError(f"autoreset_mode must be one of {allowed}, got {autoreset_mode.value!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if output not in OUTPUT_MODES:
            raise ValueError(f"output must be one of {OUTPUT_MODES}, got {output!r}")
        self.settings = s = make_settings(**settings)
        n = s.num_players
        if seat is not None:
            seat = check_int(seat, "seat", low=0, high=n - 1, kind="seat", none=True)
        if partner is not None and not s.partnerships:
            raise ValueError("partner is only for partnerships (4 players, partnerships=True); leave it None")
        self.num_envs = int(num_envs)
        self.device = torch.device(device)
        self.output, self.observation_format = output, check_observation_format(observation_format)
        self.reward_mode = reward
        self.fixed_seat = None if seat is None else int(seat)
        self.autoreset_mode = autoreset_mode
        self.metadata = {**type(self).metadata, "autoreset_mode": autoreset_mode}
        self._restarting: torch.Tensor | None = None  # NEXT_STEP: games whose episode just ended
        # Host memory for the numpy observations, masks and spaces of N games, checked before the
        # engine allocates (which checks its own device's): see HOST_BYTES_PER_OBSERVATION_ENTRY.
        host = HOST_BYTES_PER_OBSERVATION_ENTRY - (0 if self.device.type == "cpu" else BYTES_PER_OBSERVATION_ENTRY)
        check_memory(self.num_envs, host * ObservationEncoder(s).layout.size, torch.device("cpu"), "num_envs")
        self._engine_kwargs = dict(batch_size=self.num_envs, device=self.device, reward=reward, **s.to_dict())
        self.engine = BatchedPisti(seed=0, **self._engine_kwargs)  # checks the settings (one deck)
        self.opponent = as_batched_player(opponent, "opponent", _NOT_BATCHED, seed=0, settings=s, device=str(self.device))
        self.partner = None if partner is None else as_batched_player(
            partner, "partner", _NOT_BATCHED, seed=1, settings=s, device=str(self.device)
        )
        self.num_actions = s.num_actions
        self.single_observation_space = observation_space(s, ObservationEncoder(s).layout, observation_format)
        self.single_action_space = action_space(s)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._side_of = self.engine.side_of
        self._generator = torch.Generator(device=self.device)
        self._seeder = np.random.default_rng()
        self._out: BatchStep | None = None
        self._scratch = torch.empty(0)
        self._seat = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        self._carry = torch.zeros(self.num_envs, dtype=torch.float32, device=self.device)

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start N new episodes (see the module docstring for ``seed`` and ``options``)."""
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        options = options or {}
        if not set(options) <= set(RESET_OPTIONS):
            bad = sorted(str(k) for k in options if k not in RESET_OPTIONS)
            raise ValueError(f"unknown reset option(s) {bad}; known: {list(RESET_OPTIONS)}")
        if seed is not None:
            seed = check_int(seed, "seed", low=0, none=True)
        seats = options.get("seats")
        if seats is not None:
            seats = torch.as_tensor(np.asarray(seats), device=self.device)
            n = self.settings.num_players
            if seats.shape != (self.num_envs,) or seats.dtype in (torch.bool,) or seats.dtype.is_floating_point:
                raise ValueError(f"options['seats'] must be {self.num_envs} integer seats, got {seats.dtype} {tuple(seats.shape)}")
            if bool(((seats < 0) | (seats >= n)).any()):
                raise ValueError(f"options['seats'] must be seats 0..{n - 1}")
            seats = seats.to(torch.int64)
        seeder = np.random.default_rng(seed) if seed is not None else self._seeder
        engine_seed, generator_seed = (int(x) for x in seeder.integers(0, SEED_BOUND, size=2))
        engine = BatchedPisti(seed=engine_seed, **self._engine_kwargs)
        out = engine.reset(decks=options.get("decks"), dealers=options.get("dealers"))  # raises before any change
        self._seeder, self.engine = seeder, engine
        self._generator.manual_seed(generator_seed)
        self._seat = self._draw_seats() if seats is None else seats
        self._carry = torch.zeros(self.num_envs, dtype=torch.float32, device=self.device)
        self._restarting = None
        everything = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self._scratch = torch.empty(self.num_envs, engine.observation_size, device=self.device)
        out, self._carry, _, _ = self._play_others(out, self._carry, ~everything)
        self._out = self._kept(out)
        infos = self._infos(torch.zeros_like(everything), None)
        return self._observation(infos), infos

    def _draw_seats(self) -> torch.Tensor:
        if self.fixed_seat is not None:
            return torch.full((self.num_envs,), self.fixed_seat, dtype=torch.int64, device=self.device)
        n = self.settings.num_players
        return torch.randint(n, (self.num_envs,), generator=self._generator, device=self.device)

    # ------------------------------------------------------------------ step
    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The learners' actions, then the other seats' moves until every game is at its learner's
        turn again. Returns ``(observations, rewards, terminations, truncations, infos)``."""
        if self._out is None:
            raise RuntimeError("call reset() before step()")
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(np.asarray(actions))
        # All games are at the learner's turn; raises naming the first bad game. The next seats'
        # observations go to a scratch buffer: they are rarely the learners' (see `_kept`).
        # With NEXT_STEP the games whose episode ended last step do not move: this step only
        # reports their new episode's start (already at the learner's turn, see _play_others).
        restarting = self._restarting
        out = self.engine.step(actions, self._scratch, active=None if restarting is None else ~restarting)
        seat = self._seat
        rewards = self._carry + out.rewards.gather(1, seat[:, None]).squeeze(1)
        done = out.done
        hand = self._hand_info(out, out.hand_over)
        final_seat = seat
        if bool(done.any()):
            self._seat = torch.where(done, self._draw_seats(), seat)
        carry = torch.zeros_like(rewards)
        if restarting is not None:  # their rewards so far wait for their first decision's step
            carry = torch.where(restarting, rewards, carry)
            rewards = torch.where(restarting, 0.0, rewards)
        out, carry, later_done, later_hand = self._play_others(out, carry, done, rewards)
        if later_hand is not None:
            hand = later_hand if hand is None else self._merge_hand(hand, later_hand)
        if later_done is not None:
            final_seat = torch.where(later_done[0], later_done[1], final_seat)
            done = done | later_done[0]
        self._out, self._carry = self._kept(out), carry
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._restarting = done if bool(done.any()) else None
        infos = self._infos(done, hand, final_seat)
        truncated = torch.zeros_like(done)
        return self._observation(infos), self._convert(rewards), self._convert(done), self._convert(truncated), infos

    def _play_others(
        self, out: BatchStep, carry: torch.Tensor, done: torch.Tensor, rewards: torch.Tensor | None = None
    ) -> tuple[BatchStep, torch.Tensor, tuple[torch.Tensor, torch.Tensor] | None, dict[str, Any] | None]:
        """Step the games whose seat to move is not their learner's until none is left.

        A reward goes to ``rewards`` (in place) while the game's episode has not ended in this
        step (``done``), and to ``carry`` (the next step's) after. Returns the last
        [`BatchStep`][pisti_env.batched.state.BatchStep], ``carry``, the games whose episode ended here with their learners'
        seats then, and the hand results seen."""
        ended: torch.Tensor | None = None
        ended_seat = self._seat
        hand: dict[str, Any] | None = None
        while True:
            waiting = out.seat != self._seat
            if not bool(waiting.any()):
                return out, carry, None if ended is None else (ended, ended_seat), hand
            actions = self.opponent.act_batch(out.observation, out.action_mask, self._generator)
            if self.partner is not None:
                partners = self._side_of[out.seat] == self._side_of[self._seat]
                if bool((partners & waiting).any()):
                    chosen = self.partner.act_batch(out.observation, out.action_mask, self._generator)
                    actions = torch.where(partners, chosen, actions)
            out = self.engine.step(actions, active=None if bool(waiting.all()) else waiting)
            r = out.rewards.gather(1, self._seat[:, None]).squeeze(1)
            if rewards is None:
                carry = carry + r
            else:
                rewards += torch.where(done, 0.0, r)
                carry = carry + torch.where(done, r, 0.0)
            if bool(out.hand_over.any()):
                seen = self._hand_info(out, out.hand_over)
                hand = seen if hand is None else self._merge_hand(hand, seen)
            if bool(out.done.any()):
                ended_seat = torch.where(out.done, self._seat, ended_seat)
                ended = out.done if ended is None else ended | out.done
                done = done | out.done
                self._seat = torch.where(out.done, self._draw_seats(), self._seat)

    def _kept(self, out: BatchStep) -> BatchStep:
        """``out`` with observations of its own: the engine writes the observations after the
        learners' moves (the next seats', read by their players) into one scratch buffer,
        saving an allocation per step (the largest single cost on a CPU); where no other seat
        moved after them, they are the learners' and are copied out of it."""
        if out.observation is not self._scratch:
            return out
        return dataclasses.replace(out, observation=out.observation.clone())

    # ------------------------------------------------------------------ outputs
    def _convert(self, x: torch.Tensor) -> Any:
        return x if self.output == "torch" else x.cpu().numpy()

    def _observation(self, infos: dict[str, Any] | None = None) -> Any:
        out, mask = self._out, self._convert(self._out.action_mask.to(torch.int8))
        if self.observation_format == "dict":
            return {"observation": self._convert(out.observation), "action_mask": mask}
        if infos is not None:  # "flat": the masks go in the infos handed out with the observations
            infos.update(action_mask=mask, _action_mask=np.ones(self.num_envs, dtype=np.bool_))
        return self._convert(out.observation)

    def action_masks(self) -> Any:
        """(N, actions) bool: each learner's legal actions now (sb3-contrib's convention)."""
        if self._out is None:
            raise RuntimeError("call reset() first")
        return self._convert(self._out.action_mask)

    @staticmethod
    def _hand_info(out: BatchStep, mask: torch.Tensor) -> dict[str, Any] | None:
        if not bool(mask.any()):
            return None
        return {"mask": mask, "hand_result": dict(out.hand_result), "match_scores": out.match_scores}

    @staticmethod
    def _merge_hand(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        m = new["mask"]
        keep = m[:, None]
        return {
            "mask": old["mask"] | m,
            "hand_result": {k: torch.where(keep, v, old["hand_result"][k]) for k, v in new["hand_result"].items()},
            "match_scores": torch.where(keep, new["match_scores"], old["match_scores"]),
        }

    def _infos(self, done: torch.Tensor, hand: dict[str, Any] | None, final_seat: torch.Tensor | None = None) -> dict[str, Any]:
        """Gymnasium's vector infos: arrays with their ``"_key"`` masks (see the module docstring);
        copies, so editing them changes nothing in the env."""
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            return self._infos_in_place(done, hand, final_seat)
        N = self.num_envs
        everywhere = np.ones(N, dtype=np.bool_)
        seat = self._seat
        infos: dict[str, Any] = {
            "seat": seat.cpu().numpy().copy(), "_seat": everywhere,
            "side": self._side_of[seat].cpu().numpy().copy(), "_side": everywhere,
        }
        if hand is None and not bool(done.any()):
            return infos
        done_np = done.cpu().numpy().copy()
        hand_mask = np.zeros(N, dtype=np.bool_) if hand is None else hand["mask"].cpu().numpy()
        live = hand_mask & ~done_np  # a hand ended in a game still going
        if live.any():
            infos["hand_result"] = {k: v.cpu().numpy().copy() for k, v in hand["hand_result"].items()}
            infos["_hand_result"] = live
            infos["match_scores"] = hand["match_scores"].cpu().numpy().copy()
            infos["_match_scores"] = live
        if done_np.any():
            final = {
                "seat": final_seat.cpu().numpy().copy(), "_seat": done_np,
                "side": self._side_of[final_seat].cpu().numpy().copy(), "_side": done_np,
            }
            if hand is not None:
                final["hand_result"] = {k: v.cpu().numpy().copy() for k, v in hand["hand_result"].items()}
                final["_hand_result"] = done_np
                final["match_scores"] = hand["match_scores"].cpu().numpy().copy()
                final["_match_scores"] = done_np
            infos["final_info"], infos["_final_info"] = final, done_np
            infos["final_obs"], infos["_final_obs"] = np.full(N, None, dtype=object), done_np
        return infos

    def _infos_in_place(self, done: torch.Tensor, hand: dict[str, Any] | None, final_seat: torch.Tensor | None) -> dict[str, Any]:
        """NEXT_STEP's infos: where an episode ended, its own infos (its learner's seat and side,
        the hand's result) in place of the new episode's, which the next step reports."""
        everywhere = np.ones(self.num_envs, dtype=np.bool_)
        seat = self._seat if final_seat is None else torch.where(done, final_seat, self._seat)
        infos: dict[str, Any] = {
            "seat": seat.cpu().numpy().copy(), "_seat": everywhere,
            "side": self._side_of[seat].cpu().numpy().copy(), "_side": everywhere,
        }
        if hand is not None:
            seen = hand["mask"].cpu().numpy().copy()
            infos["hand_result"] = {k: v.cpu().numpy().copy() for k, v in hand["hand_result"].items()}
            infos["_hand_result"] = seen
            infos["match_scores"] = hand["match_scores"].cpu().numpy().copy()
            infos["_match_scores"] = seen.copy()
        return infos
