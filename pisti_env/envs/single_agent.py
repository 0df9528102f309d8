"""A single-agent Gymnasium env: one learner seat against built-in players (``pisti/Pisti-v0``).

``gymnasium.make("pisti/Pisti-v0", opponent="expert", num_players=3, bluff=True)`` — the id is
registered when ``pisti_env`` is imported. The env runs the Python engine
([`Game`][pisti_env.game.Game]) directly: the other seats' players choose from their own
[`SeatView`][pisti_env.SeatView] (what that seat may know and nothing else, R30–R31) until
it is the learner's turn again.

* **Observation**: the same Dict as ``pisti_v0`` gives the learner's seat, byte for byte
  (``"observation"`` float32 vector, ``"action_mask"`` int8; all-zero mask once the episode is
  over); [`PistiEnv.action_masks`][pisti_env.envs.single_agent.PistiEnv.action_masks] returns the mask as bools for sb3-contrib's MaskablePPO.
  ``observation_format="flat"``: the float32 vector alone (its space exactly the Dict's
  ``"observation"`` Box), for wrappers that only take a Box (SuperSuit's ``normalize_obs_v0``,
  ``frame_stack_v1``, …), and every info holds the int8 mask as ``info["action_mask"]``, as
  ``pisti_v0``'s flat form gives it.
* **Reward** (``reward=``): ``"diff"`` (default): everything the learner received since its
  previous decision under ``pisti_v0``'s score-difference rewards — the change in (own side's
  public points − mean of the other sides'), counted over its own move and every other seat's
  move since (the first step also counts the moves before the learner's first decision). An
  episode's rewards add up exactly to the final score difference. ``"win"``: +1 / −1 at the end
  (0 for the sides tied for best in a drawn single hand), else 0.
* **Episode**: one match (``target`` set) or one hand (``target=None``); it ends with
  ``terminated=True`` and is never truncated.
* **Infos**: always ``"side"`` and ``"seat"`` (the learner's), and ``"action_mask"`` with
  ``observation_format="flat"``; at the step in which a hand ends
  also ``"hand_result"`` (a copy, per side, as ``pisti_v0`` gives it) and ``"match_scores"``.
* **Illegal learner actions** (``illegal_action=``): an id outside the action space (below 0,
  or ``num_actions`` and above: 52 without the bluff variant, 106 with it) is a ``ValueError`` in
  every mode, as in ``pisti_v0``, and changes nothing. For an id inside the action space that is
  not legal now: ``"refuse"`` (default): nothing happens,
  the learner gets ``illegal_penalty`` (default −1) as reward, the episode goes on from the
  same state and the info has ``"illegal_action": True`` — so playing unmasked (e.g.
  Gymnasium's own env checker) works, and an illegal action never pays: the state is unchanged,
  so it only adds the penalty (a discounted learner facing a large loss could still prefer to
  postpone it; mask your actions). ``"raise"``: a ``ValueError`` naming the legal actions,
  nothing changed. Integer-like actions (int, numpy integer, 0-d or one-element integer arrays
  and tensors) are accepted in both modes; anything else is a ``TypeError`` naming its type.
* **Seeding**: ``reset(seed=s)`` deals exactly the game ``pisti_v0``'s ``reset(seed=s)`` deals
  and reseeds the learner's seat draw and the other players from ``s``, so the same seed plays
  the same episode for the same learner actions.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import gymnasium
import numpy as np

from ..rules.actions import action_id
from ..util.arguments import check_int
from ..agents import Player, SeatView, as_player
from ..game.engine import Game
from ..views.observation import ObservationEncoder
from .render import render_text
from ..game.rewards import REWARD_MODES, side_difference, win_rewards
from ..rules.settings import Settings, make_settings
from .seeding import next_game_seed
from .spaces import action_space, check_observation_format, observation_space

ILLEGAL_ACTION_MODES = ("refuse", "raise")
RESET_OPTIONS = ("deck", "dealer", "seat")


def _check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if not any(value is a or (isinstance(a, str) and value == a) for a in allowed):
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def check_seat(seat: Any, num_players: int, what: str) -> int | None:
    if seat is None:
        return None
    return check_int(seat, what, low=0, high=num_players - 1, kind="seat", none=True)


def check_reset_options(options: dict[str, Any] | None, num_players: int) -> tuple[dict[str, Any], int | None]:
    """A single-learner env's ``reset`` options checked (`RESET_OPTIONS`): returns them
    as a dict and the learner's seat they ask for (``None``: fixed or drawn). ``TypeError`` for
    options that are not a dict, ``ValueError`` for an unknown key or a bad seat."""
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; known: {list(RESET_OPTIONS)}")
    return options, check_seat(options.get("seat"), num_players, "options['seat']")


class SeatPlayers:
    """The players of the seats around a one-learner env's learner: the ``partner`` spec plays
    the learner's side (R4), the ``opponent`` spec every other seat. Each (role, seat) is built
    once with ``build(spec, role, settings=...)`` (a spec string gives every seat its own player,
    a player object plays them all), and every seat the learner may take has its players built
    in the constructor, so a bad spec fails there, never in the middle of an episode."""

    def __init__(self, settings: Settings, opponent: Any, partner: Any, fixed_seat: int | None,
                 build: Callable[..., Player]) -> None:
        self.settings = settings
        self._specs = {"opponent": opponent, "partner": opponent if partner is None else partner}
        self._build = build
        self._built: dict[tuple[str, int], Player] = {}
        n = settings.num_players
        for learner in range(n) if fixed_seat is None else (fixed_seat,):
            self.around(learner)

    def around(self, learner: int) -> list[Player | None]:
        """Every seat's player while the learner sits at ``learner`` (None at the learner)."""
        return [None if other == learner else self.of(learner, other) for other in range(self.settings.num_players)]

    def of(self, learner: int, other: int) -> Player:
        """The player of seat ``other`` while the learner sits at ``learner``."""
        side_of = self.settings.side_of
        role = "partner" if side_of(other) == side_of(learner) else "opponent"
        player = self._built.get((role, other))
        if player is None:
            player = self._built[(role, other)] = self._build(self._specs[role], role, settings=self.settings)
        return player


class PistiEnv(gymnasium.Env):
    """Pişti for one learner seat; every other seat is played by a built-in player.

    Args:
        opponent: who plays the other side(s): a player spec for
            [`make_player`][pisti_env.agents.make_player] (``"random"``, ``"greedy"`` (default),
            ``"expert"``, ``"pimc:n=32"``, a checkpoint path) or a [`Player`][pisti_env.agents.base.Player]
            object. A spec builds one player per seat; an object plays every opponent seat.
        partner: who plays the learner's partner with partnerships (4 players, R4): a spec or a
            player object as ``opponent``; ``None`` (default) means the same as ``opponent``.
            Refused without partnerships.
        seat: the learner's seat, or ``None`` (default) to draw it for every episode.
        reward: ``"diff"`` (default) or ``"win"``; see the module docstring.
        illegal_action: ``"refuse"`` (default) or ``"raise"``; see the module docstring.
        illegal_penalty: the reward of a refused illegal action (a negative number, default −1).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text), ``"human"`` (prints
            the table after every reset and step) or ``"rgb_array"`` (``render()`` returns a
            480×640×3 ``uint8`` picture of the table for Gymnasium's ``RecordVideo``, drawn with
            Pillow: no extra needed). Every mode shows all cards (a spectator's view).
        observation_format: ``"dict"`` (default): ``{"observation": float32 vector,
            "action_mask": int8}``; ``"flat"``: the vector alone, the mask in
            ``info["action_mask"]`` (see the module docstring).
        **settings: the game settings (see [`make_settings`][pisti_env.rules.make_settings]).

    Raises ``ValueError``/``TypeError`` naming the bad argument and what is allowed.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        opponent: str | Player = "greedy",
        partner: str | Player | None = None,
        seat: int | None = None,
        reward: str = "diff",
        illegal_action: str = "refuse",
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
        observation_format: str = "dict",
        **settings: Any,
    ) -> None:
        _check_choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        self.observation_format = check_observation_format(observation_format)
        _check_choice("reward", reward, REWARD_MODES)
        _check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if isinstance(illegal_penalty, bool) or not isinstance(illegal_penalty, (int, float, np.integer, np.floating)):
            raise TypeError(f"illegal_penalty must be a number, got {type(illegal_penalty).__name__}")
        if not float(illegal_penalty) < 0:
            raise ValueError(f"illegal_penalty must be negative (an illegal action must never pay), got {illegal_penalty}")
        self.settings = make_settings(**settings)
        n = self.settings.num_players
        self.fixed_seat = check_seat(seat, n, "seat")
        if partner is not None and not self.settings.partnerships:
            raise ValueError("partner is only for partnerships (4 players, partnerships=True); leave it None")
        self.render_mode = render_mode
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.encoder = ObservationEncoder(self.settings)
        self.observation_space = observation_space(self.settings, self.encoder.layout, observation_format)
        self.action_space = action_space(self.settings)
        self.num_actions = self.settings.num_actions
        self._others = SeatPlayers(self.settings, opponent, partner, self.fixed_seat, as_player)
        self._seeder: random.Random | None = None
        self.game: Game | None = None
        self.seat = -1
        self._value = 0.0

    # ------------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode. ``options`` may hold ``"deck"`` (52·decks card ids or text codes,
        item 0 dealt first, R6), ``"dealer"`` and ``"seat"`` (the learner's seat this episode).
        A bad seed or option raises and leaves the env as it was."""
        options, seat = check_reset_options(options, self.settings.num_players)
        n = self.settings.num_players
        seeder, game_seed = next_game_seed(seed, self._seeder)  # the game pisti_v0 deals for this seed
        game = Game(self.settings, seed=game_seed, deck=options.get("deck"), dealer=options.get("dealer"))
        if seat is None:
            seat = self.fixed_seat
        if seat is not None:
            self._others.around(seat)  # a seat that was never drawn may need its players built
        super().reset(seed=seed)  # self.np_random: the seat draw and the players' seeds
        drawn = int(self.np_random.integers(n))
        player_seeds = self.np_random.integers(0, 2**63, size=n)
        self._seeder = seeder
        self.game = game
        self.seat = drawn if seat is None else seat
        for other in range(n):
            if other != self.seat:
                self._others.of(self.seat, other).reset(int(player_seeds[other]))
        self._value = self._side_value()
        self._play_others()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    # ------------------------------------------------------------------ step
    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The learner's move, then the other seats' until the learner is to move again or the
        episode is over. Returns ``(observation, reward, terminated, truncated=False, info)``."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if game.done:
            raise RuntimeError("the episode is over: call reset() to play again")
        action = action_id(action, self.num_actions)
        # An id outside the action space is a ValueError in every mode (as pisti_v0): "refuse"
        # is for in-space moves that are illegal now; game.step names the range and the legal moves.
        if self.illegal_action == "refuse" and 0 <= action < self.num_actions and action not in game.legal_actions():
            info = self._info()
            info["illegal_action"] = True
            return self._observation(), self.illegal_penalty, False, False, info
        hands_before = game.hands_completed
        game.step(action)  # raises ValueError naming the legal actions, before changing anything
        self._play_others()
        info = self._info()
        if game.hands_completed != hands_before:
            info["hand_result"] = game.last_hand_result  # a copy
            info["match_scores"] = list(game.match_scores)
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._reward(), game.done, False, info

    def _play_others(self) -> None:
        """Let the other seats move, each from its own view, until the learner's turn or the end."""
        game, seat = self.game, self.seat
        while not game.done and game.turn != seat:
            other = game.turn
            game.step(self._others.of(seat, other).act(SeatView(game, other)))

    # ------------------------------------------------------------------ rewards
    def _side_value(self) -> float:
        """Own side's public total − mean of the other sides' (R30): what ``"diff"`` rewards change."""
        return side_difference(self.game.public_total, self.settings.side_of(self.seat))

    def _reward(self) -> float:
        game = self.game
        if self.reward_mode == "diff":
            value = self._side_value()
            reward, self._value = value - self._value, value
            return float(reward)
        if not game.done:
            return 0.0
        return win_rewards(game)[self.settings.side_of(self.seat)]

    # ------------------------------------------------------------------ observation
    def _observation(self) -> dict[str, np.ndarray] | np.ndarray:
        if self.observation_format == "flat":
            return self.encoder.encode(self.game, self.seat)
        return {"observation": self.encoder.encode(self.game, self.seat), "action_mask": self.action_masks().astype(np.int8)}

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now as a bool array (all False once the episode is over):
        what sb3-contrib's ``MaskablePPO`` asks for."""
        mask = np.zeros(self.num_actions, dtype=np.bool_)
        if self.game is not None and not self.game.done:
            mask[self.game.legal_actions()] = True
        return mask

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"side": self.settings.side_of(self.seat), "seat": self.seat}
        if self.observation_format == "flat":
            info["action_mask"] = self.action_masks().astype(np.int8)  # the mask the Dict would hold
        return info

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        """The table (a spectator's view: every hand): ``"ansi"`` returns it as text, ``"human"``
        prints it, ``"rgb_array"`` returns its picture (`pisti_env.drawing.open_frame`)."""
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
        if self.render_mode == "rgb_array":
            if self.game is None:
                raise RuntimeError("call reset() before render()")
            from ..drawing import open_frame  # Pillow, only when a picture is asked for (issue 50)

            return open_frame(self.game, self._names(), bottom=self.seat)  # the learner at the bottom
        text = self._table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _table_text(self) -> str:
        if self.game is None:
            return "pisti/Pisti-v0: call reset() first"
        return render_text(self.game, self._names())

    def _names(self) -> list[str]:
        return [f"player_{i}" + (" (learner)" if i == self.seat else "") for i in range(self.settings.num_players)]
