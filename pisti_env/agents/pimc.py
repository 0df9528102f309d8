"""``pimc``: perfect-information Monte Carlo search.

For each of ``n`` determinizations (the hidden cards dealt again at random, consistent with
what the seat knows: [`SeatView.determinize`][pisti_env.SeatView.determinize]), every legal card is played and the hand is
rolled out to its end with a fast rollout policy; the card with the best mean score difference
(own side's hand total minus the mean of the other sides') is played. All cards are rolled out
in the same worlds with the same rollout seeds (common random numbers), so their comparison is
not drowned by deal luck.

Bluff variant (R29). The built-in rollout policies never play face down and always believe.
The search itself weighs both answers explicitly, since a determinized world cannot tell how
the real answerer will behave:

* a face-down play is rolled out once believed and once challenged in every world, the two
  mixed by the chance of a challenge (`challenge_probability`);
* answering a claim, half the worlds hold a true claim and half a bluff ([`Game.determinize`][pisti_env.game.Game.determinize]
  with ``claim=``), mixed by the chance that the claim is true
  (`claim_true_probability`): a uniform deal of the face-down
  card would ignore that a claimant holding the rank always claims.
"""

from __future__ import annotations


from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import NUM_CARD_IDS
from ..game.engine import Game
from ..rules.scoring import POINTS
from .base import Agent, Player
from .bluffing import challenge_probability, claim_true_probability
from .greedy import greedy_card
from ..views.view import SeatView


class WorldView(SeatView):
    """A seat's view of a world the search dealt itself ([`SeatView.determinize`][pisti_env.SeatView.determinize]), which
    also hands out that whole world (`world`): nothing real is hidden in a sample, so the
    rollout players may read all of it. `play_out_hand` builds these; a plain
    [`SeatView`][pisti_env.SeatView] of a real game never hands out the game (R31)."""

    @property
    def world(self) -> Game:
        """The determinized game behind this view, every card in it."""
        return self._game


def _world(view: SeatView) -> Game:
    """The world behind a rollout player's view; ``TypeError`` for the view of a real game."""
    if not isinstance(view, WorldView):
        raise TypeError(f"rollout players play only in pimc's own worlds (a WorldView), got {type(view).__name__}")
    return view.world


def _face_up(game: Game) -> list[int]:
    """The legal face-up cards: rollouts never bluff (R29)."""
    legal = game.legal_actions()
    return legal if legal[-1] < FACE_DOWN else [a for a in legal if a < FACE_DOWN]


class RandomRollout(Agent):
    """Rollout player: a uniformly random legal card, face up; believes every claim (R29)."""

    name = "random-rollout"

    def act(self, view: SeatView) -> int:
        game = _world(view)
        if game.claimant >= 0:
            return BELIEVE
        legal = _face_up(game)
        return legal[self.rng.randrange(len(legal))]


class GreedyRollout(Agent):
    """Rollout player: `greedy_card`, counting every pile card
    of the determinized world (where nothing is hidden any more); never plays face down and
    believes every claim (R29)."""

    name = "greedy-rollout"

    def act(self, view: SeatView) -> int:
        game = _world(view)
        if game.claimant >= 0:
            return BELIEVE
        pile = game.pile
        return greedy_card(
            _face_up(game),
            pile[-1] % NUM_CARD_IDS if pile else None,
            len(pile),
            sum(POINTS[p] for p in pile),
            game.settings,
            game.in_hands == 1 and game.stock_size == 0,
            self.rng,
        )


def _expert_rollout() -> Player:
    from .registry import make_player  # the registry imports this module

    return make_player("expert")


# Rollout players by name: ``expert`` (slower, stronger) is the registry's own player, playing
# through each seat's view of the world.
ROLLOUT_PLAYERS = {"random": RandomRollout, "greedy": GreedyRollout, "expert": _expert_rollout}


def play_out_hand(game: Game, player: Player, seed: int, hand_index: int | None = None) -> list[dict[str, int]]:
    """Play ``game`` (in place) with ``player`` for every seat, reseeded with ``seed``, until
    hand number ``hand_index`` (0-based; default: the hand in progress) has ended; returns that
    hand's per-side result (see [`Game.hand_scores`][pisti_env.game.Game.hand_scores]). ``game`` must be a world the caller
    dealt itself (a determinization or a copy of one): every seat's view of it is a
    `WorldView`."""
    start = game.hands_completed if hand_index is None else hand_index
    player.reset(seed)
    while not game.done and game.hands_completed == start:
        game.step(player.act(WorldView(game, game.turn)))
    return game.hand_results[start]


class PimcAgent(Agent):
    """Perfect-information Monte Carlo search over ``n`` determinizations.

    Args:
        seed: seeds the sampling of worlds and rollouts (see [`Agent`][pisti_env.agents.base.Agent]).
        n: determinizations per decision (>= 1; default 64: the value differences between cards
            are small against the spread of a hand's outcome, so few worlds give noisy choices).
        rollout: the rollout player for every seat, ``"greedy"`` (default), ``"random"`` or
            ``"expert"`` (slower; see `ROLLOUT_PLAYERS`), or any [`Player`][pisti_env.agents.base.Player]; it is
            reseeded for each rollout and reads the seats' views of the determinized world.
        bluff_rate, challenge_rate: bluff variant (R29): the assumed rates of bluffing and of
            challenging, 0..1, as for ``expert`` (see `bluffing`).
    """

    name = "pimc"

    def __init__(
        self,
        seed: int | None = None,
        n: int = 64,
        rollout: str | Player = "greedy",
        bluff_rate: float = 0.2,
        challenge_rate: float = 0.1,
    ) -> None:
        super().__init__(seed)
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"pimc option 'n' must be an int >= 1, got {type(n).__name__} {n!r}")
        if n < 1:
            raise ValueError(f"pimc option 'n' must be an int >= 1, got {n}")
        if isinstance(rollout, str):
            if rollout not in ROLLOUT_PLAYERS:
                raise ValueError(f"pimc option 'rollout' must be one of {list(ROLLOUT_PLAYERS)}, got {rollout!r}")
            self.rollout_name = rollout
            rollout = ROLLOUT_PLAYERS[rollout]()
        elif isinstance(rollout, Player):
            self.rollout_name = getattr(rollout, "name", type(rollout).__name__)
        else:
            raise TypeError(f"pimc option 'rollout' must be a name {list(ROLLOUT_PLAYERS)} or a player (act, reset)")
        for key, value in (("bluff_rate", bluff_rate), ("challenge_rate", challenge_rate)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"pimc option {key!r} must be a number 0..1, got {type(value).__name__} {value!r}")
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"pimc option {key!r} must be a probability 0..1, got {value!r}")
        self.n = n
        self.rollout = rollout
        self.bluff_rate = float(bluff_rate)
        self.challenge_rate = float(challenge_rate)

    def choose(self, view: SeatView, legal: list[int]) -> int:
        if legal[0] >= BELIEVE:
            return self._answer(view, legal)
        # R29: a face-down play is valued as believed or challenged, by the chance of each.
        p_challenge = {a: challenge_probability(view, a - FACE_DOWN, self.bluff_rate, self.challenge_rate)
                       for a in legal if a >= FACE_DOWN}
        totals = [0.0] * len(legal)
        rng = self.rng
        for _ in range(self.n):
            world = view.determinize(rng)
            rollout_seed = rng.getrandbits(64)
            for i, action in enumerate(legal):
                if action < FACE_DOWN:
                    reuse = i == len(legal) - 1
                    totals[i] += self._rollout(view, world, (action,), rollout_seed, reuse)
                else:
                    p = p_challenge[action]
                    believed = self._rollout(view, world, (action, BELIEVE), rollout_seed, False)
                    challenged = self._rollout(view, world, (action, CHALLENGE), rollout_seed, False)
                    totals[i] += (1.0 - p) * believed + p * challenged
        return self._best(legal, totals)

    def _answer(self, view: SeatView, legal: list[int]) -> int:
        """R29: believe or challenge, in worlds split between a true claim and a bluff (unless
        the seat can tell which) and weighted by the chance that the claim is true."""
        rng = self.rng
        q = claim_true_probability(view, self.bluff_rate)
        if view.claim_card is not None:
            kinds: list[bool | None] = [None]  # the seat sees the card (R28): plain worlds
            weights = [1.0]
        else:
            kinds = [kind for kind, weight in ((True, q), (False, 1.0 - q)) if weight > 0.0]
            weights = [q if kind else 1.0 - q for kind in kinds]
        sums = [[0.0] * len(legal) for _ in kinds]
        counts = [0] * len(kinds)
        for i in range(self.n):
            k = i % len(kinds)
            world = view.determinize(rng, claim=kinds[k])
            rollout_seed = rng.getrandbits(64)
            counts[k] += 1
            for j, action in enumerate(legal):
                sums[k][j] += self._rollout(view, world, (action,), rollout_seed, j == len(legal) - 1)
        totals = [0.0] * len(legal)
        for k, weight in enumerate(weights):
            if counts[k]:
                for j in range(len(legal)):
                    totals[j] += weight * sums[k][j] / counts[k]
        return self._best(legal, totals)

    def _rollout(self, view: SeatView, world: Game, actions: tuple[int, ...], seed: int, reuse: bool) -> float:
        """Play ``actions`` in (a copy of) ``world``, roll the hand out and return the seat's
        side's total minus the mean of the others'."""
        game = world if reuse else world.clone()
        for action in actions:
            game.step(action)
        result = play_out_hand(game, self.rollout, seed, view.hands_completed)
        own = result[view.side]["total"]
        return own - (sum(r["total"] for r in result) - own) / (view.num_sides - 1)

    def _best(self, legal: list[int], totals: list[float]) -> int:
        best = max(totals)
        choices = [c for c, t in zip(legal, totals) if t == best]
        return choices[0] if len(choices) == 1 else choices[self.rng.randrange(len(choices))]

    def __repr__(self) -> str:
        return (f"PimcAgent(n={self.n}, rollout={self.rollout_name!r}, bluff_rate={self.bluff_rate}, "
                f"challenge_rate={self.challenge_rate})")
