"""Pişti as an OpenSpiel game: ``import pisti_env.agents.openspiel`` registers
``python_pisti``, and then ``pyspiel.load_game("python_pisti", {"players": 3})`` works.

Needs the ``openspiel`` extra (``pip install -e ".[openspiel]"``); ``pisti_env`` itself never
imports this module. The engine is our own [`Game`][pisti_env.game.Game]: an OpenSpiel state
holds one, so OpenSpiel's algorithms play exactly our rules.

The game (one hand, ``target=None`` in our settings):

* **Chance nodes: the deal.** The first chance node draws the dealer (R5), uniform over the
  seats; the next ``52`` draw the deck card by card, item 0 first (R6), each uniform over the
  cards not drawn yet, except that a fourth table card that would make the deal void (four
  Jacks on the table, R7) never comes: the probabilities are those of a uniform deck
  conditioned on a valid deal, which is the distribution of the engine's own redeal. Once the
  deck is complete the engine deals it (R6–R8, with the R28 cut under ``show_stock_bottom``).
  A match would need the later hands' deals as chance nodes inside the engine's hand end, so
  only single hands are offered: ``target`` must stay ``0``.
* **Players and variants** are game parameters: ``players`` (2, 3 or 4), ``partnerships``
  (``"auto"``: with 4 players, R4; ``"true"``, ``"false"``), ``double_pisti``,
  ``last_card_pisti``, ``ten_diamonds_pisti_bonus``, ``show_stock_bottom``, ``bluff`` and
  ``bluff_jack_double`` (RULES.md's settings table, checked by
  [`make_settings`][pisti_env.rules.make_settings]). The bluff variant (R29) is sequential: a face-down
  play is an action of the claimant and the answer one of the seat that played the lone card.
* **Returns and rewards**: a seat's return is its side's public total minus the mean of the
  other sides' (`side_difference`, R30), the ``"diff"`` rewards of
  ``pisti_v0``; at the end it is the hand's score difference. Every seat's returns add up to 0
  (with 2 sides ``own − other``, with 3 or 4 sides ``own − mean of the others``), so the game
  is zero-sum for every number of players. ``rewards()`` is the change of the last move.
* **Observations**: the information-state and observation tensors are THE observation vector
  of [`ObservationEncoder`][pisti_env.views.observation.ObservationEncoder] for the seat (``pisti_v0``'s): it is
  built from the location codes a seat may read (R30, R31) and nothing else, so it leaks
  nothing. It holds everything the seat knows now (where each card it can see went and who
  played it, the counters, the last capturer, a pending claim) but not the order of past plays,
  which no rule reads; the information-state string adds that public record (every card shown,
  in order, and every claim with its answer), which makes the string perfect recall. During
  the deal the tensor is zeros (nobody holds a card yet).

`state_from_game` wraps a dealt game (e.g. a search player's determinization) as a state
and `PistiState.resample_from_infostate` deals the hidden cards again for a seat
([`Game.determinize`][pisti_env.game.Game.determinize]): together they let OpenSpiel's IS-MCTS search from a seat's view
(`IsmctsAgent`).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pyspiel

from ..rules.actions import action_to_text
from ..views.view import encoder_for
from ..rules.cards import IS_JACK, NUM_CARD_IDS, TABLE_SIZE, card_to_text
from ..game.engine import Game
from ..rules.locations import MAX_SEATS
from ..game.rewards import side_difference
from ..rules.settings import Settings, make_settings
from ..rules.scoring import (
    BLUFF_STAKE,
    CHALLENGE_FACTOR,
    JACK_STAKE_FACTOR,
    MAJORITY_POINTS,
    PISTI_POINTS,
    POINTS,
)

SHORT_NAME = "python_pisti"
# The most players one deck deals to (R3, R27: more need two decks, not offered here).
MAX_PLAYERS = 4
MIN_PLAYERS = 2
# The settings offered as game parameters, with our defaults (RULES.md's table).
_DEFAULTS = Settings()
VARIANT_PARAMETERS = (
    "double_pisti", "last_card_pisti", "ten_diamonds_pisti_bonus", "show_stock_bottom", "bluff", "bluff_jack_double",
)
PARTNERSHIP_CHOICES = ("auto", "true", "false")
PARAMETERS: dict[str, Any] = {
    "players": _DEFAULTS.num_players,
    "partnerships": "auto",
    **{name: getattr(_DEFAULTS, name) for name in VARIANT_PARAMETERS},
    "target": 0,
}

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Pisti (pisti_env, one hand)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def settings_from_params(params: dict[str, Any]) -> Settings:
    """Our [`Settings`][pisti_env.rules.Settings] (a single hand) for OpenSpiel game parameters.

    Raises ``ValueError`` for an unknown parameter, a number of players other than 2–4, a
    ``partnerships`` value other than ``"auto"``/``"true"``/``"false"``, a ``target`` other
    than 0 (single hand), and whatever [`make_settings`][pisti_env.rules.make_settings] raises.
    """
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for {SHORT_NAME}; allowed: {list(PARAMETERS)}")
    values = {**PARAMETERS, **params}
    players = values["players"]
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(
            f"{SHORT_NAME} parameter 'players' must be {MIN_PLAYERS}..{MAX_PLAYERS} (one deck), got {players!r}"
        )
    if values["target"] != 0:
        raise ValueError(
            f"{SHORT_NAME} plays single hands only: parameter 'target' must be 0, got {values['target']!r} "
            "(a match's later deals would have to be chance nodes inside the engine's hand end)"
        )
    partnerships = str(values["partnerships"]).lower()
    if partnerships not in PARTNERSHIP_CHOICES:
        raise ValueError(
            f"{SHORT_NAME} parameter 'partnerships' must be one of {list(PARTNERSHIP_CHOICES)}, "
            f"got {values['partnerships']!r}"
        )
    return make_settings(
        num_players=players,
        partnerships=None if partnerships == "auto" else partnerships == "true",
        target=None,
        **{name: values[name] for name in VARIANT_PARAMETERS},
    )


def params_from_settings(settings: Settings) -> dict[str, Any]:
    """The OpenSpiel game parameters of ``settings``' rules for one hand (its ``target`` and
    ``win_margin`` are not game parameters: the OpenSpiel game is one hand).

    Raises ``ValueError`` for settings with more players than one deck deals."""
    if settings.num_players > MAX_PLAYERS:
        raise ValueError(
            f"{SHORT_NAME} offers {MIN_PLAYERS}..{MAX_PLAYERS} players (one deck), got {settings.num_players}"
        )
    return {
        "players": settings.num_players,
        "partnerships": "true" if settings.partnerships else "false",
        **{name: getattr(settings, name) for name in VARIANT_PARAMETERS},
    }


def max_hand_points(settings: Settings) -> float:
    """A bound on one side's points in a hand, hence on a seat's score difference: every card
    point (R20), the majority (R21), and for every card played the largest pişti (R13–R17) or
    challenged claim (R29) a play can score."""
    pisti = max(PISTI_POINTS, settings.double_pisti) + settings.ten_diamonds_pisti_bonus
    if settings.bluff:
        stake = BLUFF_STAKE * (JACK_STAKE_FACTOR if settings.bluff_jack_double else 1)
        pisti = max(pisti, CHALLENGE_FACTOR * stake)
    played = settings.num_cards - TABLE_SIZE
    return float(sum(POINTS[: settings.num_cards]) + MAJORITY_POINTS + pisti * played)


class PistiGame(pyspiel.Game):
    """The OpenSpiel game ``python_pisti`` for the parameters ``params`` (see the module
    docstring); `settings` holds our settings for them."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.settings = settings = settings_from_params(params)
        bound = max_hand_points(settings)
        plays = settings.num_cards - TABLE_SIZE
        info = pyspiel.GameInfo(
            num_distinct_actions=settings.num_actions,
            max_chance_outcomes=settings.num_cards,
            num_players=settings.num_players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            # every card played, plus an answer to each face-down play (R29)
            max_game_length=plays * (2 if settings.bluff else 1),
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> "PistiState":
        """The state before the deal: the first chance node draws the dealer."""
        return PistiState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> "PistiObserver":
        """An observer of one seat's view: the observation vector (R30, R31); with
        ``perfect_recall`` its string also holds the public record of the hand."""
        return PistiObserver(self.settings, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


def _void_free_probabilities(drawn: list[int], remaining: list[int]) -> list[tuple[int, float]]:
    """Chance outcomes of the next deck card: uniform over ``remaining`` (card id -> copies
    left), conditioned on the deal not being void (R7: four Jacks as the four table cards).

    With ``m`` cards drawn, a prefix has ``V = (N - m)!`` valid completions, less
    ``P(J', T - m) (N - T)!`` of them when the prefix is ``m`` Jacks (``N`` cards, ``T`` table
    cards, ``J'`` Jacks left, ``P`` the ordered choices); a card's probability is
    ``copies * V(prefix + card) / V(prefix)``."""
    total = sum(remaining)
    m = len(drawn)
    all_jacks = m < TABLE_SIZE and all(IS_JACK[c] for c in drawn)
    if not all_jacks:
        return [(c, k / total) for c, k in enumerate(remaining) if k]
    n = total + m  # cards in the deck
    jacks_left = sum(k for c, k in enumerate(remaining) if IS_JACK[c])

    def valid(prefix_len: int, prefix_all_jacks: bool) -> int:
        # completions of a prefix, less those filling the rest of the table with Jacks:
        # an ordered choice of the remaining Jacks for the table slots, any order for the rest
        count = math.factorial(n - prefix_len)
        if prefix_all_jacks:
            count -= math.perm(jacks_left - (prefix_len - m), TABLE_SIZE - prefix_len) * math.factorial(n - TABLE_SIZE)
        return count

    base = valid(m, True)
    outcomes = []
    for c, k in enumerate(remaining):
        if k:
            p = k * valid(m + 1, IS_JACK[c]) / base
            if p > 0.0:
                outcomes.append((c, p))
    return outcomes


class _Core:
    """Everything a `PistiState` holds. OpenSpiel's ``clone()`` of a Python state
    deep-copies each attribute; this one copies itself with [`Game.clone`][pisti_env.game.Game.clone], much faster
    than a generic deep copy of the engine."""

    __slots__ = ("settings", "dealer", "deck", "remaining", "game", "before")

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dealer: int | None = None  # the first chance outcome (R5)
        self.deck: list[int] = []  # the card outcomes so far, item 0 dealt first (R6)
        self.remaining = [settings.decks] * NUM_CARD_IDS  # copies of each card id not drawn yet
        self.game: Game | None = None  # the engine, once the deck is complete
        self.before = [0.0] * settings.num_players  # returns before the last move

    def __deepcopy__(self, memo: dict) -> "_Core":
        other = _Core.__new__(_Core)
        other.settings = self.settings  # immutable
        other.dealer = self.dealer
        other.deck = self.deck.copy()
        other.remaining = self.remaining.copy()
        other.game = None if self.game is None else self.game.clone()
        other.before = self.before.copy()
        return other


class PistiState(pyspiel.State):
    """One OpenSpiel state: the deal collected as chance outcomes, then our [`Game`][pisti_env.game.Game].

    `game` is ``None`` until the deck is complete; afterwards it is the engine's game,
    which every move steps."""

    def __init__(self, game: PistiGame) -> None:
        super().__init__(game)
        self._core = _Core(game.settings)

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def dealer(self) -> int | None:
        """The dealer seat (R5), once drawn."""
        return self._core.dealer

    @property
    def deck(self) -> list[int]:
        """The deck's card ids drawn so far, item 0 dealt first (R6)."""
        return self._core.deck

    @property
    def game(self) -> Game | None:
        """The engine's game, ``None`` during the deal."""
        return self._core.game

    # ---------------------------------------------------------------- OpenSpiel's API
    def current_player(self) -> int:
        """The seat to move, ``CHANCE`` during the deal, ``TERMINAL`` at the end."""
        game = self.game
        if game is None:
            return pyspiel.PlayerId.CHANCE
        if game.done:
            return pyspiel.PlayerId.TERMINAL
        return game.turn

    def _legal_actions(self, player: int) -> list[int]:
        game = self.game
        if game is None or game.done or player != game.turn:
            return []
        return game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer (uniform over the seats, R5), then the next deck card (R6, R7)."""
        if self.game is not None:
            raise ValueError("the deal is over: no chance outcomes")
        n = self.settings.num_players
        if self.dealer is None:
            return [(seat, 1.0 / n) for seat in range(n)]
        return _void_free_probabilities(self.deck, self._core.remaining)

    def _apply_action(self, action: int) -> None:
        if self.game is None:
            self._deal(int(action))
            return
        self._core.before = self.returns()
        self.game.step(int(action))

    def _deal(self, outcome: int) -> None:
        core = self._core
        if core.dealer is None:
            if not 0 <= outcome < self.settings.num_players:
                raise ValueError(f"dealer outcome must be a seat 0..{self.settings.num_players - 1}, got {outcome}")
            core.dealer = outcome
            return
        if not 0 <= outcome < NUM_CARD_IDS or not core.remaining[outcome]:
            raise ValueError(f"deal outcome {outcome} is not a card left in the deck")
        core.deck.append(outcome)
        core.remaining[outcome] -= 1
        if len(core.deck) == core.settings.num_cards:
            core.game = Game(core.settings, seed=0, deck=core.deck, dealer=core.dealer)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.dealer is None:
                return f"dealer {action}"
            return f"deal {card_to_text(action)}"
        return action_to_text(action)

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.done

    def returns(self) -> list[float]:
        """Each seat's side's public total minus the mean of the other sides' (R30); the
        hand's score difference at the end."""
        game = self.game
        if game is None:
            return [0.0] * self.settings.num_players
        public = game.public_total
        return [float(side_difference(public, side)) for side in game.side_of]

    def rewards(self) -> list[float]:
        """The change of `returns` made by the last move (0 during the deal)."""
        if self.game is None:
            return [0.0] * self.settings.num_players
        return [now - before for now, before in zip(self.returns(), self._core.before)]

    def __str__(self) -> str:
        game = self.game
        if game is None:
            return f"dealing: dealer {self.dealer}, {len(self.deck)} card(s) drawn"
        hands = " / ".join(" ".join(card_to_text(c) for c in game.hand_card_ids(s)) for s in range(game.num_players))
        pile = " ".join(card_to_text(p % NUM_CARD_IDS) for p in game.pile)
        return f"dealer {game.dealer} turn {game.turn} | hands {hands} | pile {pile} | stock {game.stock_size}"

    # ---------------------------------------------------------------- worlds
    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None, *,
                                rng: random.Random | int | None = None) -> "PistiState":
        """A state ``player_id`` cannot tell from this one: the cards it cannot know dealt again
        uniformly ([`Game.determinize`][pisti_env.game.Game.determinize], R31); everything it knows is kept, so the seat's
        information state is the same. ``rng`` (a ``random.Random`` or seed) draws the deal;
        otherwise ``probability_sampler`` (OpenSpiel's, a callable giving floats in [0, 1)) seeds
        it. During the deal nothing is known yet: a copy of this state."""
        if self.game is None:
            return self.clone()
        if rng is None:
            rng = random.Random(int(probability_sampler() * 2**53) if probability_sampler is not None else None)
        world = self.game.determinize(player_id, rng)
        return state_from_game(self.get_game(), world)


def state_from_game(game: PistiGame, world: Game) -> PistiState:
    """``world`` (a dealt single-hand game with ``game``'s settings, e.g. a determinization,
    used as it is) as a state of ``game``: the deal's chance nodes are skipped, so its history
    holds no deal; `PistiState.returns` and the observations read ``world``.

    Raises ``ValueError`` when ``world``'s settings are not ``game``'s."""
    if world.settings != game.settings:
        raise ValueError(f"the world's settings {world.settings} are not the game's {game.settings}")
    state = PistiState(game)
    core = state._core
    core.dealer = world.dealer
    core.deck = [p % NUM_CARD_IDS for p in world.deck]
    core.remaining = [0] * NUM_CARD_IDS
    core.game = world
    core.before = state.returns()
    return state


_CARD_TEXT = tuple(card_to_text(c) for c in range(NUM_CARD_IDS))
_SHOWN_TEXT = {(seat, c): f"{seat}:{_CARD_TEXT[c]}" for seat in range(MAX_PLAYERS) for c in range(NUM_CARD_IDS)}


class PistiObserver:
    """OpenSpiel's observer of one seat (the ``PyObserver`` interface): ``tensor`` is the
    seat's observation vector ([`ObservationEncoder`][pisti_env.views.observation.ObservationEncoder], R30–R31),
    ``dict`` its named blocks. Only the seat's own view is offered (``private_info`` of a
    single player, public information included): a public-only split of our vector does not
    exist. With ``perfect_recall`` the string adds the public record of the hand."""

    def __init__(self, settings: Settings, iig_obs_type: pyspiel.IIGObservationType, params: Any) -> None:
        if params:
            raise ValueError(f"{SHORT_NAME} observers take no parameters, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{SHORT_NAME} offers only a seat's own view (private_info=SINGLE_PLAYER, public_info=True), "
                f"got private_info={iig_obs_type.private_info}, public_info={iig_obs_type.public_info}"
            )
        self.encoder = encoder_for(settings)
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        layout = self.encoder.layout
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = {field.name: self.tensor[field.slice] for field in layout.fields}

    def set_from(self, state: PistiState, player: int) -> None:
        """``tensor`` := the observation of seat ``player`` (zeros during the deal)."""
        if state.game is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self.encoder.encode(state.game, player)

    def string_from(self, state: PistiState, player: int) -> str:
        """The seat's view as text: seat, dealer, own hand and the observation vector's nonzero
        entries (their indices, then their values); with ``perfect_recall`` also every card
        shown this hand in order (``seat:card``) and every claim (claimant, answerer, lone card,
        answer, the card when shown, R29). IS-MCTS keys its tree by this string, so it is built
        with few Python-level steps."""
        game = state.game
        if game is None:
            return f"p{player} dealing dealer={state.dealer} drawn={len(state.deck)}"
        obs = self.encoder.encode(game, player)
        nonzero = np.flatnonzero(obs)
        parts = [
            f"p{player} dealer={game.dealer} turn={game.turn}",
            "hand=" + " ".join(map(_CARD_TEXT.__getitem__, game.hand_card_ids(player))),
            "obs=" + ",".join(map(str, nonzero.tolist())) + "=" + ",".join(map(str, obs[nonzero].tolist())),
        ]
        if self.perfect_recall:
            parts.append("shown=" + " ".join(map(_SHOWN_TEXT.__getitem__, game.history)))
            if game.settings.bluff:
                parts.append("claims=" + " ".join(
                    f"{c}>{a}:{card_to_text(lone)}:{action_to_text(ans)}:{card_to_text(shown) if shown >= 0 else '?'}"
                    for c, a, lone, ans, shown in game.claims))
        return " | ".join(parts)


assert MAX_PLAYERS <= MAX_SEATS
pyspiel.register_game(_GAME_TYPE, PistiGame)
