"""The PettingZoo AEC environment ``pisti_v0``.

Agents ``player_0 … player_{n-1}`` are the seats in playing order (R3). An action is a card id
(R2). Observations are ``{"observation": float32 vector, "action_mask": int8[52]}`` built by
:mod:`pisti_env.observation`; the mask is all zeros for a seat that is not to move.

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
"""

from __future__ import annotations

import random
import warnings
from operator import sub
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .game import Game
from .observation import ObservationEncoder
from .render import render_text
from .rules import make_settings

REWARD_MODES = ("diff", "win")
ILLEGAL_ACTION_MODES = ("raise", "penalty")
RESET_OPTIONS = ("deck", "dealer")
ILLEGAL_ACTION_PENALTY = -1.0


def env(**kwargs: Any) -> AECEnv:
    """``pisti_v0`` wrapped as PettingZoo classic environments are (order enforcement).

    Bounds and legality checks live in the raw environment itself, so the only wrapper is
    ``OrderEnforcingWrapper``; see :class:`raw_env` for the arguments.
    """
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):
    """Pişti as a PettingZoo AEC environment.

    Args:
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints it).
        reward: ``"diff"`` (default) or ``"win"``; see the module docstring.
        illegal_action: ``"raise"`` (default): an illegal card raises ``ValueError`` and changes
            nothing; ``"penalty"``: it ends the episode, the offender gets −1 and the others 0,
            as PettingZoo's ``TerminateIllegalWrapper`` does.
        **settings: the game settings of RULES.md's table (``num_players``, ``partnerships``,
            ``target``, ``win_margin``, ``double_pisti``, ``last_card_pisti``,
            ``ten_diamonds_pisti_bonus``, ``decks``, ``show_stock_bottom``, ``bluff``,
            ``bluff_jack_double``).
    """

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "pisti_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        reward: str = "diff",
        illegal_action: str = "raise",
        **settings: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        self.render_mode = render_mode
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.settings = make_settings(**settings)
        self.encoder = ObservationEncoder(self.settings)
        n = self.settings.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        layout = self.encoder.layout
        self.num_actions = num_actions = self.settings.num_actions  # 52, or 106 with bluff (R29)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, layout.high, shape=(layout.size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
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
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            # PettingZoo's api_test passes arbitrary options, so unknown keys warn, not raise.
            warnings.warn(f"ignoring unknown reset option(s) {unknown}; known: {list(RESET_OPTIONS)}", stacklevel=2)
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
                raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
            seeder = random.Random(int(seed))
            seeder.getrandbits(63)  # so the next unseeded reset does not replay this seed
            game_seed = int(seed)
        else:
            # Draw from a copy: a reset that fails must not move the generator on.
            seeder = random.Random()
            if self._seeder is not None:
                seeder.setstate(self._seeder.getstate())
            game_seed = seeder.getrandbits(63)
        # Build the game first: a bad deck or dealer raises here and leaves the env untouched.
        game = Game(self.settings, seed=game_seed, deck=options.get("deck"), dealer=options.get("dealer"))
        self._seeder = seeder
        self.game = game
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._episode_over = False
        self._public = game.public_total
        self.agent_selection = self.possible_agents[game.turn]
        self._skip_agent_selection = None

    # ------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        game = self.game
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if seat == game.turn and not self._episode_over:
            mask[game.legal_actions()] = 1
        return {"observation": self.encoder.encode(game, seat), "action_mask": mask}

    # ------------------------------------------------------------------ step
    def step(self, action: int | None) -> None:
        if not self.agents:
            raise ValueError("the episode is over and every agent has left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        if self.illegal_action == "penalty" and not self._is_legal(action):
            self._end_with_penalty(agent)
            return
        hands_before = game.hands_completed
        game.step(action)  # raises on a bad action before changing anything
        if self.infos[agent]:
            self.infos[agent] = {}  # an agent's info lasts until its next move, like its rewards
        self._cumulative_rewards[agent] = 0.0
        self._set_rewards()
        self._accumulate_rewards()
        if game.hands_completed != hands_before:
            info = {"hand_result": game.last_hand_result, "match_scores": list(game.match_scores)}
            self.infos = {a: dict(info, side=self.settings.side_of(self.agent_name_mapping[a])) for a in self.agents}
        if game.done:
            self.terminations = {a: True for a in self.agents}
            self._episode_over = True
        else:
            self.agent_selection = self.possible_agents[game.turn]
        if self.render_mode == "human":
            self.render()

    def _set_rewards(self) -> None:
        game = self.game
        side_of = self.settings.side_of
        if self.reward_mode == "diff":
            public = game.public_total  # a fresh list
            delta = list(map(sub, public, self._public))
            if not any(delta):
                if any(self.rewards.values()):
                    self.rewards = {a: 0.0 for a in self.agents}
                return
            self._public = public
            total, others = sum(delta), len(delta) - 1
            per_side = [d - (total - d) / others for d in delta]
        else:  # "win"
            if not game.done:
                return  # rewards stay all zero until the end
            per_side = [-1.0] * self.settings.num_sides
            if game.winner is not None:
                per_side[game.winner] = 1.0
            else:  # a drawn single hand: the sides tied for the best total get 0
                best = max(game.match_scores)
                per_side = [0.0 if s == best else -1.0 for s in game.match_scores]
        self.rewards = {a: float(per_side[side_of(self.agent_name_mapping[a])]) for a in self.agents}

    def _is_legal(self, action: Any) -> bool:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            what = "an int action id" if self.settings.bluff else "an int card id"
            raise TypeError(f"an action must be {what} 0..{self.num_actions - 1}, got {type(action).__name__} {action!r}")
        return int(action) in self.game.legal_actions()

    def _end_with_penalty(self, agent: str) -> None:
        """``illegal_action="penalty"``: what ``TerminateIllegalWrapper`` does on an illegal move."""
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        self.rewards[agent] = ILLEGAL_ACTION_PENALTY
        self._accumulate_rewards()
        self.terminations = {a: True for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.infos[agent]["illegal_move"] = True
        self._episode_over = True

    # ------------------------------------------------------------------ render
    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render without specifying a render_mode.")
            return None
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
