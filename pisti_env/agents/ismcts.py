"""``ismcts``: OpenSpiel's information-set Monte Carlo tree search playing one seat.

Needs the ``openspiel`` extra (``pip install -e ".[openspiel]"``); OpenSpiel is imported when a
player is built, never by ``import pisti_env``.

Method. OpenSpiel's ``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``) searches the game
``python_pisti`` (`pisti_env.agents.openspiel`) from a state and draws, before each
simulation, a state its seat cannot tell from that one. The seat's real game is never handed
over. From the seat's [`SeatView`][pisti_env.SeatView] the player takes one
determinization ([`SeatView.determinize`][pisti_env.SeatView.determinize]: everything the seat cannot know, R31, dealt
again at random) as the root state, and gives the bot a resampler that deals the hidden cards
of the root again for every simulation (`PistiState.resample_from_infostate`). A
determinization depends only on what the seat knows and on the player's own generator, so the
search reads nothing the seat could not see. The tree's nodes are keyed by the seats'
information-state strings (the observation vector and the public record of the hand).

The search values the hand in progress: the root world plays this hand to its end, and a
seat's return is its side's hand total minus the mean of the other sides' (the match totals
are set aside, so in a match the player maximises each hand's score difference). Leaves are
valued by random rollouts. In the bluff variant (R29) the hidden face-down card of a pending
claim is dealt uniformly, like every other hidden card.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..rules.counters import Counter
from ..rules.settings import Settings
from ..rules.scoring import PISTI_POINTS
from .base import Agent
from ..views.view import SeatView

_INSTALL_HINT = 'the ismcts player needs OpenSpiel: pip install -e ".[openspiel]" (open_spiel)'
FINAL_POLICIES = ("max_visit_count", "max_value", "normalized_visit_count")
# The default exploration constant: one pişti's points (R13), the swing of a typical decision
# on the returns' scale (score differences in points).
UCT_C = float(PISTI_POINTS)


class IsmctsAgent(Agent):
    """OpenSpiel's IS-MCTS from the seat's view (see the module docstring).

    Args:
        seed: seeds the player's generator: the determinizations, the bot's tree and rollouts.
        settings: the game; ``None``: read from the first view. 2–4 players (one deck).
        n: simulations per decision (>= 1), each from a fresh determinization; more is stronger
            and slower, linearly.
        uct_c: the UCT exploration constant (> 0). Returns are score differences in points
            (a hand's typically lie within ±30), so it is on that scale: larger explores more.
            Default: one pişti's points (R13).
        rollouts: random rollouts averaged to value a new leaf (>= 1).
        final_policy: how the root's children become the move: ``"max_visit_count"`` (the
            most visited, default), ``"max_value"`` (the best mean return) or
            ``"normalized_visit_count"`` (drawn in proportion to visits).

    Raises ``ImportError`` naming the extra when OpenSpiel is missing, ``TypeError`` or
    ``ValueError`` for a bad option.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        settings: Settings | None = None,
        n: int = 100,
        uct_c: float = UCT_C,
        rollouts: int = 1,
        final_policy: str = "max_visit_count",
    ) -> None:
        super().__init__(seed)
        try:
            import pyspiel  # noqa: F401
            from open_spiel.python.algorithms import ismcts, mcts
        except ImportError as error:
            raise ImportError(_INSTALL_HINT) from error
        from . import openspiel as os_pisti

        for key, value in (("n", n), ("rollouts", rollouts)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"ismcts option {key!r} must be an int >= 1, got {type(value).__name__} {value!r}")
            if value < 1:
                raise ValueError(f"ismcts option {key!r} must be an int >= 1, got {value}")
        if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)):
            raise TypeError(f"ismcts option 'uct_c' must be a number > 0, got {type(uct_c).__name__} {uct_c!r}")
        if not uct_c > 0:
            raise ValueError(f"ismcts option 'uct_c' must be > 0, got {uct_c}")
        if final_policy not in FINAL_POLICIES:
            raise ValueError(f"ismcts option 'final_policy' must be one of {list(FINAL_POLICIES)}, got {final_policy!r}")
        if settings is not None and not isinstance(settings, Settings):
            raise TypeError(f"settings must be a pisti_env.Settings or None, got {type(settings).__name__}")
        self._ismcts, self._mcts, self._os = ismcts, mcts, os_pisti
        self.n = n
        self.uct_c = float(uct_c)
        self.rollouts = rollouts
        self.final_policy = final_policy
        self._games: dict[Settings, Any] = {}
        if settings is not None:
            self._game_for(settings)  # refuse unsupported settings now

    def _game_for(self, settings: Settings) -> Any:
        """The OpenSpiel game of one hand under ``settings`` (cached)."""
        hand = dataclasses.replace(settings, target=None, win_margin=0)
        game = self._games.get(hand)
        if game is None:
            import pyspiel

            game = self._games[hand] = pyspiel.load_game(self._os.SHORT_NAME, self._os.params_from_settings(settings))
        return game

    def choose(self, view: SeatView, legal: list[int]) -> int:
        game = self._game_for(view.settings)
        rng = self.rng
        world = view.determinize(rng)  # the root: a world the seat cannot tell from the real one
        world.settings = game.settings  # this hand alone, ...
        world.counts[Counter.MATCH_SCORES] = [0] * world.num_sides  # ... valued by its own scores
        root = self._os.state_from_game(game, world)
        bot = self._ismcts.ISMCTSBot(
            game,
            self._mcts.RandomRolloutEvaluator(self.rollouts, np.random.RandomState(rng.getrandbits(32))),
            self.uct_c,
            self.n,
            random_state=np.random.RandomState(rng.getrandbits(32)),
            final_policy_type=self._ismcts.ISMCTSFinalPolicyType[self.final_policy.upper()],
        )
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng=rng))
        action = int(bot.step(root))
        if action not in legal:  # cannot happen: the root's legal actions are the seat's
            raise RuntimeError(f"ismcts chose {action}, not one of the legal actions {legal}")
        return action

    def __repr__(self) -> str:
        return (f"IsmctsAgent(n={self.n}, uct_c={self.uct_c}, rollouts={self.rollouts}, "
                f"final_policy={self.final_policy!r})")
