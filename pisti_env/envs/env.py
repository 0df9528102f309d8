"""The PettingZoo AEC environment ``pisti_v0``.

Agents ``player_0 … player_{n-1}`` are the seats in playing order (R3). An action is a card id
(R2). Observations are ``{"observation": float32 vector, "action_mask": int8[52]}`` built by
`pisti_env.views.observation`; the mask is all zeros for a seat that is not to move.

``observation_format="flat"`` is the form for wrappers that only take a Box (SuperSuit's
``flatten_v0``, ``dtype_v0``, ``normalize_obs_v0``, ``frame_stack_v1``, …): the observation is
the float32 vector alone, its space exactly the Dict's ``"observation"`` Box, and every agent's
info holds its mask, ``infos[agent]["action_mask"]`` (the same int8 array the Dict would hold),
as PettingZoo documents for envs whose observation is not a Dict and as its ``api_test`` and
``TerminateIllegalWrapper`` read it. The mask goes in the info, not onto the vector: SuperSuit's
observation wrappers rewrite the vector (``normalize_obs_v0`` would rescale mask entries,
``frame_stack_v1`` would stack stale masks with it, and its AEC wrappers hand out an agent's
last transformed observation, taken when it was last to move), while infos pass through every
one of them untouched.

With ``bluff=True`` (R29) the action space is ``Discrete(106)`` and the mask has 106 entries:
0–51 play a card face up, 52 + card id play it face down claiming a pişti (only on a lone table
card), 104 believe and 105 challenge (only for the seat answering a claim). The answer is a
turn of its own: ``agent_selection`` moves to the seat that played the lone card, then play
goes on with the seat after the claimant.

Rewards (``reward=``):

* ``"diff"`` (default): at every step each agent receives the change in
  (own side's public points − mean of the other sides' public points), where public points are
  the match total plus what everyone can count so far this hand (R30): face-up scoring cards
  when captured, piştis and bluff points (R29) when made, hidden cards (never-shown table cards,
  believed face-down cards) and the majority at the hand's end. Over an
  episode the rewards add up to the final score difference.
* ``"win"``: +1 for the winning side and −1 for the others at the end; in a single hand, sides
  tied for the best total get 0.

An episode is one match (``target`` set) or one hand (``target=None``).

Actions: any integer-like value is accepted, the same way in every mode: an ``int``, a NumPy
integer, a 0-d or one-element integer array, or a one-element integer tensor (duck-typed:
anything with ``item()`` and ``numel()``/``size``, so torch is never imported). Anything else
(``bool``, ``float``, ``str``, ``None`` on a live agent's turn, an array of several elements)
is a ``TypeError`` naming the type (and an array's shape and dtype); an id outside the action
space is a ``ValueError``. Both change nothing. See `pisti_env.rules.actions.action_id`.

Illegal actions (``illegal_action=``), following PettingZoo's classic games, whose ``env()``
wraps the game in ``TerminateIllegalWrapper``:

* ``"penalty"`` (the default of [`env`][pisti_env.env]): an in-range action that is not legal now ends
  the episode for everyone (all agents terminated), warns, sets ``info["illegal_move"] = True``
  for the offender, and gives the offender's *side* (its partner too) a penalty that never
  makes the illegal move pay (`illegal_action_penalty`). With ``reward="diff"``
  the other sides share the opposite amount (each gets ``-penalty / (sides - 1)``), so the
  per-side rewards of that step still sum to 0 like every other step. With ``reward="win"``
  the offender's side gets −1 (the worst outcome of a game); with two sides the other side
  gets +1 (it wins by forfeit), with three or more the others get 0 (none of them has won:
  they count as tied for the best, as in a drawn single hand).
* ``"raise"`` (the default of [`raw_env`][pisti_env.raw_env], for debugging): ``ValueError`` naming the
  action and the legal ones; nothing changes.
"""

from __future__ import annotations

import random
import warnings
from functools import lru_cache
from operator import sub
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ..rules.actions import action_id
from ..rules.cards import NUM_CARD_IDS, TABLE_SIZE
from ..game.engine import Game
from ..views.observation import ObservationEncoder
from .order_enforcing import FastOrderEnforcingWrapper
from .render import render_text
from ..game.rewards import REWARD_MODES, side_difference, win_rewards
from ..rules.settings import Settings, make_settings
from .seeding import next_game_seed
from .spaces import action_space, check_observation_format, observation_space
from ..rules.scoring import CHALLENGE_FACTOR, MAJORITY_POINTS, POINTS, bluff_stake, pisti_value

ILLEGAL_ACTION_MODES = ("raise", "penalty")
RESET_OPTIONS = ("deck", "dealer")
WIN_PENALTY = -1.0  # reward="win": the offender's side loses (the worst a game can give it)


def env(*, illegal_action: str = "penalty", **kwargs: Any) -> AECEnv:
    """``pisti_v0`` as PettingZoo's classic ``env()`` gives its games: an illegal action ends
    the episode with a penalty (``illegal_action="penalty"``, the default here; ``"raise"``
    for debugging), behind ``OrderEnforcingWrapper``.

    The penalty lives in the raw environment (it needs the game to size the penalty, see
    `illegal_action_penalty`), as do the bounds checks, so the only wrapper is
    ``OrderEnforcingWrapper``, as the subclass
    `FastOrderEnforcingWrapper` (the same checks, errors and
    warnings; ``last``, ``step`` and ``agent_iter`` read the raw env directly). See
    [`raw_env`][pisti_env.raw_env] for the arguments.
    """
    return FastOrderEnforcingWrapper(raw_env(illegal_action=illegal_action, **kwargs))


def _scoring_plays_bound(plays: int) -> int:
    """At most how many of ``plays`` card plays can score a pişti or a claim (R13, R14, R29).

    Each such play is made on a pile of exactly one card, and leaves the pile empty (it
    captured) or with two or more cards (a caught bluff stays on the table). So the next play
    never finds a lone card: no two scoring plays are consecutive, at most ``ceil(plays/2)``.
    """
    return (plays + 1) // 2


@lru_cache(maxsize=64)
def max_scoring_play_points(settings: Settings) -> int:
    """The most points one play can hand out through a pişti (R13, R14, R17) or a claim and
    its answer (R29), whichever card is played on whichever lone card."""
    best = max(
        pisti_value(card, lone, 1, settings, last_card=False)
        for card in range(NUM_CARD_IDS) for lone in range(NUM_CARD_IDS)
    )
    if settings.bluff:
        best = max(best, CHALLENGE_FACTOR * max(bluff_stake(lone, settings) for lone in range(NUM_CARD_IDS)))
    return best


def hand_points_bound(settings: Settings, plays: int, pending_claim: bool) -> int:
    """An upper bound on the points all sides together can still add to their public totals
    (R30) in a hand with ``plays`` card plays left (and a claim waiting for its answer):
    every card point of the deck(s) (R20), the majority (R21), and the largest pişti or claim
    stakes (R13–R17, R29) on every play that can score (`_scoring_plays_bound`; the
    answer to a pending claim can score once more)."""
    card_points = sum(POINTS[: settings.num_cards])
    events = _scoring_plays_bound(plays) + (1 if pending_claim else 0)
    return card_points + MAJORITY_POINTS + events * max_scoring_play_points(settings)


def illegal_action_penalty(game: Game, side: int) -> float:
    """The ``reward="diff"`` penalty of side ``side`` for an illegal action in ``game``.

    With diff rewards a side has collected ``D = own public total − mean of the other sides'``
    (R30) so far, and ``D + penalty`` is what it ends the episode with. The penalty is
    ``W − D`` for a ``W`` that no continuation can go below, so stopping here is never better
    than playing on. Let ``k`` be the number of sides, ``T`` the public totals now, ``R`` =
    `hand_points_bound` for the rest of this hand and ``H`` the same for a whole hand.
    Public totals never decrease, so the offender's final total is at least ``T[side]``.

    * The episode ends with this hand (always with ``target=None``): the other sides gain at
      most ``R`` together, so their mean at most ``R/(k−1)``: ``W1 = D − R/(k−1)``.
    * A match ends after a later hand (R25, R26). At the end of the hand before it, the match
      went on, so either every side was below the target (each other side ≤ ``target − 1``),
      or, with two sides, the two were tied or the leader was less than ``win_margin`` clear
      (the other side at most ``win_margin − 1`` ahead); the last hand adds at most ``H``
      to the others: ``W2 = −(max(target − 1 − T[side], win_margin − 1, 0) + H/(k−1))``
      (``win_margin`` counts only with two sides).

    ``W = min(W1, W2)`` (``W1`` alone in a single hand) is a lower bound on every continuation
    with two sides (partnerships included) and in every single hand. With three or more sides
    in a match no finite bound exists: two other sides can tie for the lead above the target
    hand after hand (R25) while the offender scores nothing; there ``W`` covers every
    continuation in which the match does not go on past a hand end at which a side had
    reached the target.
    """
    settings = game.settings
    k = settings.num_sides
    public = game.public_total
    own = public[side]
    diff_now = side_difference(public, side)
    plays_left = game.in_hands + game.stock_size
    rest_of_hand = hand_points_bound(settings, plays_left, game.pending_claim is not None)
    worst = diff_now - rest_of_hand / (k - 1)
    if settings.target is not None:
        whole_hand = hand_points_bound(settings, settings.num_cards - TABLE_SIZE, False)
        slack = settings.win_margin - 1 if k == 2 else 0
        worst = min(worst, -(max(settings.target - 1 - own, slack, 0) + whole_hand / (k - 1)))
    return float(worst - diff_now)


def _reset_first(method: str) -> RuntimeError:
    """The error of ``method`` called before the first ``reset()``."""
    return RuntimeError(f"pisti_v0: call reset() before {method}()")


class raw_env(AECEnv):
    """Pişti as a PettingZoo AEC environment.

    Args:
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text), ``"human"`` (prints it
            after every step) or ``"rgb_array"`` (``render()`` returns a 480×640×3 ``uint8``
            picture of the table, `pisti_env.drawing.open_frame`, drawn with Pillow: no
            extra needed). Every mode is a spectator's view: all cards open, for watching,
            never for a player.
        reward: ``"diff"`` (default) or ``"win"``; see the module docstring.
        illegal_action: ``"raise"`` (the default of the bare ``raw_env``, as PettingZoo's
            classic ``raw_env`` s do): an illegal action raises ``ValueError`` and changes
            nothing; ``"penalty"`` (the default of [`env`][pisti_env.env]): it ends the episode with a
            warning and a penalty for the offender's side, see the module docstring and
            `illegal_action_penalty`.
        observation_format: ``"dict"`` (default): ``observe()`` gives
            ``{"observation": float32 vector, "action_mask": int8}``, PettingZoo's classic
            convention; ``"flat"``: the float32 vector alone (its space is the Dict's
            ``"observation"`` Box), and the mask is in ``infos[agent]["action_mask"]`` for every
            agent (all zeros unless it is to move), for wrappers that only take a Box, such as
            SuperSuit's; see the module docstring. Any other value is a ``ValueError``.
        **settings: the game settings of RULES.md's table (``num_players``, ``partnerships``,
            ``target``, ``win_margin``, ``double_pisti``, ``last_card_pisti``,
            ``ten_diamonds_pisti_bonus``, ``decks``, ``show_stock_bottom``, ``bluff``,
            ``bluff_jack_double``).
    """

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "pisti_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        reward: str = "diff",
        illegal_action: str = "raise",
        observation_format: str = "dict",
        **settings: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        self.observation_format = check_observation_format(observation_format)
        self._flat = observation_format == "flat"
        self.render_mode = render_mode
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.settings = make_settings(**settings)
        self.encoder = ObservationEncoder(self.settings)
        n = self.settings.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        layout = self.encoder.layout
        self.num_actions = self.settings.num_actions  # 52, or 106 with bluff (R29)
        self.observation_spaces = {
            a: observation_space(self.settings, layout, observation_format) for a in self.possible_agents
        }
        self.action_spaces = {a: action_space(self.settings) for a in self.possible_agents}
        self._seeder: random.Random | None = None
        self.game: Game | None = None

    # PettingZoo asks for these as methods.
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new episode. ``options`` may hold ``"deck"`` (52·decks card ids or text
        codes, item 0 dealt first, R6) and ``"dealer"`` (a seat). Same seed, same game; without
        a seed the game is drawn from the generator of the last seed given (or OS entropy)."""
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS))) if options else None
        if unknown:
            # PettingZoo's api_test passes arbitrary options, so unknown keys warn, not raise.
            warnings.warn(f"ignoring unknown reset option(s) {unknown}; known: {list(RESET_OPTIONS)}", stacklevel=2)
        seeder, game_seed = next_game_seed(seed, self._seeder)  # moves nothing until the reset succeeds
        # Build the game first: a bad deck or dealer raises here and leaves the env untouched.
        game = Game(self.settings, seed=game_seed, deck=options.get("deck"), dealer=options.get("dealer"))
        self._seeder = seeder
        self.game = game
        self.agents = agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._episode_over = False
        self._public = game.public_total
        self._rewards_nonzero = False
        self.agent_selection = self.possible_agents[game.turn]
        self._skip_agent_selection = None
        if self._flat:
            self._put_masks()

    # ------------------------------------------------------------------ observe
    # observe(), last() and step() are the hot path of every AEC loop (issue 17): they read the
    # game directly and build nothing they do not hand out. What they hand out is new each call
    # (observation and mask arrays) or replaced rather than edited (the rewards and infos dicts),
    # so nothing a caller holds changes under it later.
    def observe(self, agent: str) -> dict[str, np.ndarray] | np.ndarray:
        """``agent``'s observation now: ``{"observation": float32 vector, "action_mask": int8}``
        (the mask is all zeros unless ``agent`` is to move), both new arrays; with
        ``observation_format="flat"`` the new vector alone (the mask is in ``infos[agent]``)."""
        game = self.game
        if game is None:
            raise _reset_first("observe")
        seat = self.agent_name_mapping.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}")
        if self._flat:
            return self.encoder.encode(game, seat)
        return {"observation": self.encoder.encode(game, seat), "action_mask": self._mask(seat)}

    def _mask(self, seat: int) -> np.ndarray:
        """``seat``'s legal actions now as a new int8 0/1 array (all zeros unless it is to move)."""
        game = self.game
        mask = bytearray(self.num_actions)
        if seat == game.turn and not self._episode_over:
            for a in game.legal_actions():
                mask[a] = 1
        return np.frombuffer(mask, np.int8)

    def _put_masks(self) -> None:
        """``observation_format="flat"``: every agent's info with its mask now, as new dicts (an
        info a caller holds never changes under it), the other keys kept."""
        seat_of = self.agent_name_mapping
        self.infos = {a: {**info, "action_mask": self._mask(seat_of[a])} for a, info in self.infos.items()}

    # ------------------------------------------------------------------ step
    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``; a ``RuntimeError`` before the first ``reset()``."""
        if self.game is None:
            raise _reset_first("last")
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: int | None) -> None:
        game = self.game
        if game is None:
            raise _reset_first("step")
        if not self.agents:
            raise ValueError("the episode is over and every agent has left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action.__class__ is not int:
            action = action_id(action, self.num_actions)
        hands_before = game.hands_completed
        try:
            game.step(action)  # raises on a bad action before changing anything
        except ValueError:
            # The game is live (its agents are), so an in-range id it refuses is illegal now.
            if self.illegal_action == "penalty" and 0 <= action < self.num_actions:
                self._end_with_penalty(agent, action)
                return
            raise
        if self.infos[agent]:
            self.infos[agent] = {}  # an agent's info lasts until its next move, like its rewards
        self._cumulative_rewards[agent] = 0.0
        if self._set_rewards():
            self._accumulate_rewards()  # all-zero rewards would add nothing
        if game.hands_completed != hands_before:
            # Every agent its own copies: an agent editing its info changes neither the game nor another's.
            self.infos = {
                a: {"hand_result": game.last_hand_result, "match_scores": list(game.match_scores),
                    "side": self.settings.side_of(self.agent_name_mapping[a])}
                for a in self.agents
            }
        if game.done:
            self.terminations = {a: True for a in self.agents}
            self._episode_over = True
        else:
            self.agent_selection = self.possible_agents[game.turn]
        if self._flat:
            self._put_masks()  # the mover's now all zeros, the next seat's its legal actions
        if self.render_mode == "human":
            self.render()

    def _set_rewards(self) -> bool:
        """Set this step's ``rewards`` (a new dict whenever they change). Returns whether it set
        new values, which ``step`` then accumulates; ``False`` means every reward is 0."""
        game = self.game
        if self.reward_mode == "diff":
            public = game.public_total  # a fresh list
            if public == self._public:  # nobody scored (most plays)
                if self._rewards_nonzero:
                    self.rewards = dict.fromkeys(self.agents, 0.0)
                    self._rewards_nonzero = False
                return False
            delta = list(map(sub, public, self._public))
            self._public = public
            total, others = sum(delta), len(delta) - 1
            per_side = [d - (total - d) / others for d in delta]
        else:  # "win"
            if not game.done:
                return False  # rewards stay all zero until the end
            per_side = win_rewards(game)
        side_of, seat_of = self.settings.side_of, self.agent_name_mapping
        self.rewards = {a: float(per_side[side_of(seat_of[a])]) for a in self.agents}
        self._rewards_nonzero = True
        return True

    def _end_with_penalty(self, agent: str, action: int) -> None:
        """``illegal_action="penalty"``: end the episode as ``TerminateIllegalWrapper`` does,
        with the penalty of the module docstring for the offender's side."""
        settings = self.settings
        side_of, seat_of = settings.side_of, self.agent_name_mapping
        offender = side_of(seat_of[agent])
        k = settings.num_sides
        if self.reward_mode == "diff":
            penalty = illegal_action_penalty(self.game, offender)
            others = -penalty / (k - 1)
        else:
            penalty, others = WIN_PENALTY, (-WIN_PENALTY if k == 2 else 0.0)
        warnings.warn(
            f"illegal action {action} by {agent} (legal: {self.game.legal_actions()}): the episode "
            f"ends and {agent}'s side gets {penalty:g} (illegal_action='penalty'; use "
            f"illegal_action='raise' to get an error instead)",
            stacklevel=3,
        )
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: (penalty if side_of(seat_of[a]) == offender else others) for a in self.agents}
        self._accumulate_rewards()
        self.terminations = {a: True for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.infos[agent]["illegal_move"] = True
        self._episode_over = True
        if self._flat:
            self._put_masks()  # all zeros: the episode is over

    # ------------------------------------------------------------------ render
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
        if self.render_mode == "rgb_array":
            if self.game is None:
                raise _reset_first("render")
            from ..drawing import open_frame  # Pillow, only when a picture is asked for (issue 50)

            return open_frame(self.game, self.possible_agents)
        if self.game is None:
            text = "pisti_v0: call reset() first"
        else:
            text = render_text(self.game, self.possible_agents)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
