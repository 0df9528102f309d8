"""Shared helpers of the test suite: the settings matrix, decks built from plays, play drivers,
rule facts written out independently of the engine, state checks and hand-built R29 situations.

Test modules import from here (``from helpers import ...``; pytest puts ``tests/`` on
``sys.path``), never from one another; ``conftest.py`` turns the matrix into the
``settings_case`` fixture.

Decks (RULES.md R6 deal order):

* ``deck_with_prefix(prefix_codes, decks=1) -> list[str]``: the given cards first, in order,
  then every remaining card in id order (R2), as text codes.
* ``deck_from_plays(table, plays, decks=1) -> list[str]``: with 2, 3 or 4 players and one
  deck, R6 deals the cards after the table round-robin from the first player, four rounds per
  deal, and play also goes round-robin from the first player (R3, R18). So if every player
  plays its cards of a deal in the order they were dealt, the i-th card played is deck item
  ``4 + i``. A deck is therefore ``table + plays`` (missing cards appended in id order).
* ``deck_with_suffix(prefix, suffix, decks=1) -> list[str]``: ``prefix``, then the remaining
  cards in id order, then ``suffix`` (the deck's last cards, i.e. the last deal).

Play: ``play(g, codes, seats=None)``, ``play_random(g, rng)``, ``finish_hand_random(g, rng)``,
``finish_hand_in_order(g)``, ``play_env_episode(e, rng)``.

Networks: ``network_player(settings, seed, name, device="cpu")``, a checkpoint player of seeded
weights whose choices are far from ties (torch imported only when called).
"""

from __future__ import annotations

import copy
import importlib
import random
import sys
import types
from collections import Counter
from dataclasses import dataclass, field
from dataclasses import fields as dataclasses_fields
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import gymnasium

import numpy as np
import pytest

from pisti_env import Game, card_to_text, make_settings, new_game, parse_card
from pisti_env.rules import locations as loc
from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.game.rewards import side_difference

ALL_CODES = [card_to_text(c) for c in range(52)]
C = parse_card


# =========================================================================== settings matrix
# The tables (players × partnerships × decks, R4, R27) and the variant words a case adds to
# them (scoring variants, match length, the shown stock bottom R28, the bluff variant R29).
TABLES: dict[str, dict[str, Any]] = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4, partnerships=True),
    "4p-solo": dict(num_players=4, partnerships=False),
    "5p-2decks": dict(num_players=5, decks=2),
    "6p-2decks": dict(num_players=6, decks=2),
}
VARIANTS: dict[str, dict[str, Any]] = {
    "hand": dict(target=None),  # a single hand (R24)
    "151": dict(target=151),
    "101": dict(target=101),
    "51": dict(target=51),
    "margin2": dict(win_margin=2),  # R26
    "margin5": dict(win_margin=5),
    "double10": dict(double_pisti=10),  # R14
    "double0": dict(double_pisti=0),
    "last-card-off": dict(last_card_pisti=False),  # R16
    "bonus3": dict(ten_diamonds_pisti_bonus=3),  # R17
    "stock-bottom": dict(show_stock_bottom=True),  # R28
    "bluff": dict(bluff=True),  # R29
    "jack-double": dict(bluff_jack_double=True),  # R29
}


@dataclass(frozen=True)
class Case:
    """One named combination of settings: a table and variant words, e.g. ``"4p-solo 51 bluff"``
    (id ``"4p-solo-51-bluff"``). ``kwargs`` go to ``make_settings`` and ``pisti_env.env``."""

    id: str
    kwargs: dict[str, Any] = field(hash=False)

    @property
    def settings(self):
        return make_settings(**self.kwargs)

    @property
    def bluff(self) -> bool:
        return bool(self.kwargs.get("bluff", False))

    @property
    def num_players(self) -> int:
        return self.kwargs["num_players"]

    @property
    def decks(self) -> int:
        return self.kwargs.get("decks", 1)


def case(spec: str) -> Case:
    """``"2p hand bluff"`` -> the 2-player single-hand bluff case (id ``"2p-hand-bluff"``)."""
    table, *words = spec.split()
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; known: {sorted(TABLES)}")
    kwargs = dict(TABLES[table])
    for w in words:
        if w not in VARIANTS:
            raise ValueError(f"unknown variant word {w!r}; known: {sorted(VARIANTS)}")
        kwargs.update(VARIANTS[w])
    return Case("-".join([table, *words]), kwargs)


def cases(*specs: str, marks: Sequence[Any] = ()) -> list:
    """``pytest.param``s of the named cases (ids from the case), for ``parametrize``."""
    return [pytest.param(c, id=c.id, marks=marks) for c in map(case, specs)]


def matrix(
    tables: Iterable[str] = TABLES,
    variants: Iterable[str] = ("",),
    bluff: Iterable[bool] = (False, True),
    where: Callable[[Case], bool] = lambda c: True,
) -> list:
    """The product tables × variant words (a string of words each, "" for none) × bluff off/on,
    filtered by ``where``, as ``pytest.param``s."""
    specs = [" ".join(filter(None, (t, v, "bluff" if b else ""))) for t in tables for v in variants for b in bluff]
    return [p for p in cases(*specs) if where(p.values[0])]


# The default matrix of the ``settings_case`` fixture: every table, single hands, with and
# without the shown stock bottom (R28), without bluffs and, on the one-deck tables, with them
# (a test that replays face-down cards maps each physical card to its id; the two-deck tables
# with bluffs are cases of the invariant, determinize and agent tests).
DEFAULT_MATRIX = matrix(variants=("hand", "hand stock-bottom"), where=lambda c: not (c.bluff and c.decks == 2))


# =========================================================================== rule facts, written out
JACK = 10  # rank of the Jacks (ranks 0..12: A 2 .. 10 J Q K)
TEN_DIAMONDS = 22
TWO_CLUBS = 1


def rank(card: int) -> int:
    return card % 13


def card_points(card: int) -> int:
    """R20, written out independently of the engine's table."""
    c = card % 52
    if c == TEN_DIAMONDS:
        return 3
    if c == TWO_CLUBS:
        return 2
    return 1 if rank(c) in (0, JACK) else 0


# =========================================================================== decks
def codes(text: str) -> list[str]:
    """``"7C 7D JS"`` -> ``["7C", "7D", "JS"]``."""
    return text.split()


def deck_with_prefix(prefix_codes: Iterable[int | str], decks: int = 1) -> list[str]:
    """The given cards first (in order), then every remaining card in id order (text codes).

    With ``decks=2`` each id is present twice; the prefix may name an id at most twice.
    """
    prefix = [card_to_text(parse_card(c)) for c in prefix_codes]
    left = {c: decks for c in ALL_CODES}
    for c in prefix:
        if left[c] == 0:
            raise ValueError(f"card {c} named more than {decks} time(s) in the prefix")
        left[c] -= 1
    rest = [c for c in ALL_CODES for _ in range(left[c])]
    return prefix + rest


def deck_with_suffix(
    prefix: Iterable[int | str], suffix: Iterable[int | str], decks: int = 1
) -> list[str]:
    """``prefix`` first, then every remaining card in id order, then ``suffix`` last."""
    prefix = [card_to_text(parse_card(c)) for c in prefix]
    suffix = [card_to_text(parse_card(c)) for c in suffix]
    full = deck_with_prefix(prefix + suffix, decks=decks)
    rest = full[len(prefix) + len(suffix):]
    return prefix + rest + suffix


def deck_from_plays(table: Sequence[int | str], plays: Sequence[int | str], decks: int = 1) -> list[str]:
    """``table`` (4 cards, item 3 face up) then ``plays`` then the remaining cards in id order.

    For 2–4 players with one deck, playing the deck in order (``finish_hand_in_order``) plays
    exactly ``plays`` first (see the module docstring).
    """
    if len(table) != 4:
        raise ValueError("the table gets exactly 4 cards (R6)")
    return deck_with_prefix(list(table) + list(plays), decks=decks)


# =========================================================================== play drivers
def play(g, cards: Iterable[int | str], seats: Sequence[int] | None = None) -> None:
    """Play each card (text code or id); if ``seats`` is given, assert the seat to move first."""
    cards = list(cards)
    for i, c in enumerate(cards):
        if seats is not None:
            assert g.turn == seats[i], f"play {i} ({c}): expected seat {seats[i]} to move, got {g.turn}"
        cid = parse_card(c)
        assert cid in g.legal_actions(), f"play {i} ({c}) is not legal for seat {g.turn}: {g.legal_actions()}"
        g.step(cid)


def play_random(g, rng: random.Random) -> int:
    """One random legal move; returns the action taken."""
    card = rng.choice(g.legal_actions())
    g.step(card)
    return card


def finish_hand_random(g, rng: random.Random) -> None:
    """Random legal play until the current hand ends (or the game is over)."""
    start = g.hands_completed
    while not g.done and g.hands_completed == start:
        play_random(g, rng)


def finish_hand_in_order(g) -> None:
    """Play the stock in deck order until the hand ends: the seat to move plays the card it
    received earliest among those it still holds (for a deck built by ``deck_from_plays``)."""
    start = g.hands_completed
    while not g.done and g.hands_completed == start:
        hand = g.hands[g.turn]
        first = min(hand, key=g.deck.index)
        g.step(first % 52)


def legal_from_mask(obs) -> list[int]:
    """The actions an env observation's mask offers."""
    return np.flatnonzero(obs["action_mask"]).tolist()


def live_turns(e, totals: dict[str, float]):
    """The canonical AEC loop (``agent_iter``/``last``): adds every reward ``last()`` returns to
    ``totals``, steps ``None`` for a finished agent, and yields ``(agent, obs)`` for every live
    turn; the caller then steps that agent."""
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        yield agent, obs


def play_env_episode(e, rng: random.Random, on_step=None) -> dict[str, float]:
    """Standard AEC loop with a random legal policy. Returns the per-agent sum of the rewards
    returned by ``last()`` (final ``last()`` calls included). ``on_step(agent, action)`` runs
    after every live step."""
    totals = {a: 0.0 for a in e.possible_agents}
    for agent, obs in live_turns(e, totals):
        action = rng.choice(legal_from_mask(obs))
        e.step(action)
        if on_step is not None:
            on_step(agent, action)
    return totals


def final_diff(game: Game, side: int) -> float:
    """A side's final score minus the mean of the other sides' (what ``diff`` rewards add to)."""
    ms = game.match_scores
    others = [x for i, x in enumerate(ms) if i != side]
    return ms[side] - sum(others) / len(others)


def snapshot(g: Game) -> dict:
    """A deep copy of the whole state (a random generator by its state), to compare states."""
    return {k: (v.getstate() if isinstance(v, random.Random) else copy.deepcopy(v)) for k, v in vars(g).items()}


# =========================================================================== state checks
def check_conservation(g: Game, dealt_order_known: bool = True) -> None:
    """Every physical card is in exactly one place and its location code agrees (R30
    bookkeeping), the bluff variant's face-down cards (R29) included.

    ``dealt_order_known=False`` for a determinized copy, which keeps the cards already dealt
    in id order (their deal order is not knowable): its last deck item is the shown stock
    bottom (R28) only while that card is still in the stock."""
    s = g.settings
    n_cards = s.num_cards
    where = g.where
    assert len(where) == n_cards
    assert sorted(g.deck) == list(range(n_cards)), "the deck is a permutation of the physical cards"
    place: dict[int, str] = {}

    def put(p: int, what: str) -> None:
        assert p not in place, f"card {p} is both in {place[p]} and in {what}"
        place[p] = what

    for seat, hand in enumerate(g.hands):
        for p in hand:
            put(p, f"hand {seat}")
            assert where[p] in (loc.HAND + seat, loc.HAND_SHOWN + seat), (p, seat, where[p])
    for p in g.pile:
        put(p, "pile")
        assert where[p] in (loc.PILE_UP, loc.PILE_JACK, loc.PILE_HIDDEN), (p, where[p])
    assert 0 <= g.stock_pos <= len(g.deck)
    for p in g.deck[g.stock_pos :]:
        put(p, "stock")
        assert where[p] in (loc.STOCK, loc.STOCK_SHOWN), (p, where[p])
    if g.claimant >= 0:  # R29: the face-down card of a claim waiting for its answer
        put(g.claim_card, "claim")
        expected = loc.PILE_DOWN_SHOWN if g.claim_card == g.stock_bottom else loc.PILE_DOWN + g.claimant
        assert where[g.claim_card] == expected and g.played_by[g.claim_card] == loc.NOBODY
        assert len(g.pile) == 1
    # Everything else has been captured (or swept) by some side.
    count = [0] * g.num_sides
    points = [0] * g.num_sides
    shown_points = [0] * g.num_sides
    hidden_captured = 0
    for p in range(n_cards):
        if p in place:
            continue
        code = where[p]
        if loc.CAPT_SHOWN <= code < loc.CAPT_SHOWN + g.num_sides:
            side = code - loc.CAPT_SHOWN
            shown_points[side] += card_points(p)
        elif loc.CAPT_HIDDEN <= code < loc.CAPT_HIDDEN + g.num_sides:
            side = code - loc.CAPT_HIDDEN
            hidden_captured += 1
        elif loc.CAPT_DOWN <= code < loc.CAPT_DOWN + g.num_players:  # R29: a believed card
            side = g.side_of[code - loc.CAPT_DOWN]
            assert g.played_by[p] == loc.NOBODY, "a believed card was never shown"
        else:
            raise AssertionError(f"card {p} is nowhere (location code {code})")
        count[side] += 1
        points[side] += card_points(p)
    assert count == list(g.captured_count)
    assert points == list(g.card_points)
    assert sum(count) + len(place) == n_cards
    # Cards already dealt are exactly deck[:stock_pos]; the stock is the rest.
    assert {p for p in place if place[p] != "stock"} | {p for p in range(n_cards) if p not in place} == set(
        g.deck[: g.stock_pos]
    )
    # R6/R7/R8: never-turned table cards and deal Jacks lie under every face-up card.
    locs = [where[p] for p in g.pile]
    if loc.PILE_UP in locs:
        first_up = locs.index(loc.PILE_UP)
        assert all(c == loc.PILE_UP for c in locs[first_up:]), locs
    if g.pile:
        assert locs[-1] == loc.PILE_UP, "the top of the pile is face up"
    assert g.pile_hidden == locs.count(loc.PILE_HIDDEN)  # the engine's public count (R8)
    assert locs.count(loc.PILE_HIDDEN) + hidden_captured <= 3
    assert all(rank(p) == JACK for p in g.pile if where[p] == loc.PILE_JACK)
    # R28: the shown stock bottom.
    shown_codes = [p for p in range(n_cards) if where[p] == loc.STOCK_SHOWN or loc.HAND_SHOWN <= where[p] < loc.HAND_SHOWN + loc.MAX_SEATS]
    if s.show_stock_bottom:
        if dealt_order_known or g.stock_pos < len(g.deck):
            assert g.stock_bottom == g.deck[-1]
        assert rank(g.stock_bottom) != JACK, "R28: the shown stock bottom is never a Jack"
        assert set(shown_codes) <= {g.stock_bottom}
        if g.stock_bottom in place and place[g.stock_bottom] == "stock":
            assert where[g.stock_bottom] == loc.STOCK_SHOWN
    else:
        assert g.stock_bottom is None
        assert shown_codes == []
    # played_by: exactly the cards in this hand's history, by the seat that played them.
    played = sorted((g.played_by[p] - loc.PLAYED_BY, p % 52) for p in range(n_cards) if g.played_by[p] != loc.NOBODY)
    assert played == sorted(g.history)
    for p in range(n_cards):
        if g.played_by[p] != loc.NOBODY:
            assert where[p] == loc.PILE_UP or loc.CAPT_SHOWN <= where[p] < loc.CAPT_SHOWN + g.num_sides
    # R30 bookkeeping: public points this hand = face-up card points + pişti and bluff points.
    if not g.done:
        assert list(g.public_points) == [
            shown_points[i] + g.pisti_points[i] + g.bluff_points[i] for i in range(g.num_sides)
        ]
        assert list(g.public_total) == [g.match_scores[i] + g.public_points[i] for i in range(g.num_sides)]


def check_bluff_conservation(g: Game, shadow=None, dealt_order_known: bool = True) -> None:
    """The card bookkeeping of `check_conservation` (face-down cards included), believed
    cards per seat against the claims record, and the counters against an independent tally
    (``test_invariants.BluffShadow``), if given."""
    check_conservation(g, dealt_order_known)
    # Believed cards per seat: the believed claims of the record whose card nobody saw.
    believed = Counter(c for c, _, _, answer, shown in g.claims if answer == BELIEVE and shown < 0)
    down_per_seat = [sum(code == loc.CAPT_DOWN + seat for code in g.where) for seat in range(g.num_players)]
    assert down_per_seat == [believed[seat] for seat in range(g.num_players)]
    if shadow is not None and not g.done:
        assert g.captured_count == shadow.cards and g.card_points == shadow.points
        assert g.pisti_count == shadow.pisti and g.double_pisti_count == shadow.double
        assert g.pisti_points == shadow.pisti_points and g.bluff_points == shadow.bluff_points
        assert g.last_capturer == shadow.last
        assert [p for p, _ in shadow.pile] == g.pile
        for name, values in shadow.counts.items():
            assert getattr(g, name) == values, name


def check_hand_end_sums(g: Game) -> None:
    """At a hand end: every card counted, R23's 16/13 (29/26 with two decks) and R22's totals."""
    result = g.last_hand_result
    cards = [r["cards"] for r in result]
    tied = cards.count(max(cards)) > 1
    assert sum(cards) == g.settings.num_cards
    assert sum(r["card_points"] + r["majority"] for r in result) == 13 * g.settings.decks + (0 if tied else 3)
    for r in result:
        assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"] + r.get("bluff_points", 0)
    assert list(g.match_scores) == [sum(h[i]["total"] for h in g.hand_results) for i in range(g.num_sides)]


# =========================================================================== what a seat may know
def rules_unknown(g: Game, seat: int, face_down: Iterable[tuple[int, int]] = ()) -> set[int]:
    """What ``seat`` cannot know, computed from the rules and the plays (not from ``g.where``):
    other seats' hands and the stock (R31) except the shown stock bottom (R28), the table
    cards never turned up (R8) unless the seat's own side captured them, and (R29) the
    face-down cards other seats played that were never shown: ``face_down`` lists this hand's
    face-down plays as (seat, card). (The first capture comes before any claim, as a claim
    needs a lone card, so R8's taker is found as without the variant.)"""
    side = g.side_of[seat]
    unknown: set[int] = set()
    for other, hand in enumerate(g.hands):
        if other != seat:
            unknown.update(hand)
    unknown.update(g.deck[g.stock_pos :])
    sb = g.deck[-1] if g.settings.show_stock_bottom else None
    unknown.discard(sb)  # R28: shown to everyone at the deal, wherever it is now
    # R6.1/R7: item 3 is turned up; while the top is a Jack it goes under and the next turns up.
    table = list(g.deck[:4])
    pile = list(table)
    turned = {pile[-1]}
    while rank(pile[-1]) == JACK:
        pile.insert(0, pile.pop())
        turned.add(pile[-1])
    hidden = [c for c in table if c not in turned]
    # R8: the never-turned cards go to the side of the first capture of this hand (R10, R11).
    top, size, taker = pile[-1] % 52, len(pile), None
    for s, c in g.history:
        if size and (rank(c) == rank(top) or rank(c) == JACK):
            taker = g.side_of[s]
            break
        size, top = size + 1, c
    if taker != side:
        unknown.update(hidden)
    shown = {c for _, c in g.history}
    unknown.update(card for claimant, card in face_down if claimant != seat and card not in shown and card != sb)
    return unknown


# =========================================================================== hand-built R29 situations
F, O = 1, 0  # 2 players, dealer 0: seat 1 plays first (R5)
TABLE = codes("2H 5S KD 7C")  # three face-down cards under a face-up 7♣ (R6)


def bluff_game(plays: str, table=TABLE, num_players: int = 2, **settings) -> Game:
    """A bluff game (R29) with the given table and plays, dealer 0, a single hand by default."""
    settings.setdefault("target", None)
    settings.setdefault("bluff", True)
    return new_game(deck=deck_from_plays(table, codes(plays)), dealer=0, num_players=num_players, **settings)


def down(card: str) -> int:
    """The action playing ``card`` face down, claiming a pişti (R29)."""
    return FACE_DOWN + C(card)


def to_claim(plays: str, **settings) -> Game:
    """2 players: F takes the table with 7♦, O plays the lone card; F to move (may claim)."""
    g = bluff_game(plays, **settings)
    play(g, codes(plays)[:2], seats=[F, O])
    assert len(g.pile) == 1 and g.turn == F
    return g


def provable_bluff_game() -> Game:
    """F (seat 1) took the table, O (seat 0) played the lone 9♣, F is to move holding 3♣; O holds
    the other three nines, so a claim on 9♣ is surely a bluff (R29)."""
    g = new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")),
                 dealer=0, target=None, bluff=True)
    play(g, ["7D", "9C"])
    return g


# ---------------------------------------------------------------------------------------------
# Recipes (examples/): imported by name, and watched from between the library and the env.

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example_module(name: str) -> types.ModuleType:
    """``examples/<name>.py`` imported under its own name, as ``python examples/<name>.py``
    would import it (``examples/`` on ``sys.path``: a recipe may import its siblings; in
    ``sys.modules``: dataclasses look their module up by name). Cached like any import."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)


class MaskReferee(gymnasium.Wrapper):
    """Between a library and a single-learner Gymnasium env: counts the actions the mask it
    showed did not allow, and for each finished episode records ``(return the library saw,
    the learner side's final score difference)``. ``game_of(env)`` finds the engine's
    [`Game`][pisti_env.game.Game] under the wrapped env."""

    def __init__(self, env: gymnasium.Env, game_of: Callable[[gymnasium.Env], Game]) -> None:
        super().__init__(env)
        self.game_of = game_of
        self.illegal, self.episodes, self.seats = 0, [], set()
        self._return, self._mask = 0.0, None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._return, self._mask = 0.0, obs["action_mask"].copy()
        return obs, info

    def step(self, action):
        self.illegal += not self._mask[int(action)]
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        self._mask = obs["action_mask"].copy()
        if terminated or truncated:
            scores = self.game_of(self.env).match_scores
            self.episodes.append((self._return, side_difference(scores, info["side"])))
            self.seats.add(info["seat"])
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


# Networks: a checkpoint player without a checkpoint file (torch imported only here).


def network_player(settings, seed: int, name: str, device: str = "cpu"):
    """A deterministic checkpoint player of seeded random weights on ``device``; the heads are
    scaled up so that its choices are far from ties (as a trained policy's), not near-uniform."""
    import torch  # only the tests with a network import torch through here

    from pisti_env.policies.network import policy_network
    from pisti_env.policies.player import CheckpointPlayer

    torch.manual_seed(seed)
    net = policy_network(settings, (16,))
    with torch.no_grad():
        net.card_head.weight.mul_(300.0)
        net.feature_head.weight.mul_(300.0)
    return CheckpointPlayer(net.to(device), {"name": name, "settings": settings.to_dict()}, deterministic=True)


def train_config(**values: Any):
    """A [`TrainConfig`][training.trainer.config.TrainConfig] from one flat set of keywords: the game
    settings (``target``, ``bluff``, ``num_players``...) among the config's own fields, the
    shorthand of the trainer tests (the config itself takes the game as one ``Settings``)."""
    from pisti_env.rules.settings import Settings
    from training.trainer.config import TrainConfig

    game = {f.name for f in dataclasses_fields(Settings)}
    settings = {k: values.pop(k) for k in list(values) if k in game}
    return TrainConfig(settings=Settings(**settings), **values)


def recorded_random_game(seed: int, **settings: Any) -> list[dict]:
    """The replay records (`pisti_env.tools.replay.GameRecorder`) of a whole game of random
    legal moves, face-down claims preferred half the time where allowed (R29)."""
    from pisti_env.tools.replay import GameRecorder

    game_settings = make_settings(**settings)
    records: list[dict] = []
    recorder = GameRecorder(game_settings, ["random"] * game_settings.num_players, records.append, seed=seed,
                            meta={"test": seed})
    rng = random.Random(seed)
    while not recorder.game.done:
        legal = recorder.game.legal_actions()
        downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
        recorder.step(rng.choice(downs) if downs and rng.random() < 0.5 else rng.choice(legal))
    return records


def tiny_config(tmp_path: Path, **overrides: Any):
    """The trainer tests' smallest run: 16 games, 8-step rollouts, 6 updates, a tiny network,
    one thread, no evaluations or checkpoints unless asked, written to ``tmp_path / "run"``."""
    values = dict(
        num_envs=16, rollout_steps=8, total_steps=16 * 8 * 6, target=51, hidden_sizes=(32,),
        snapshot_every=2, eval_every=0, checkpoint_every=0, torch_threads=1, out_dir=str(tmp_path / "run"),
    )
    values.update(overrides)
    return train_config(**values)


# =========================================================================== engines side by side
class ScriptedShuffle(random.Random):
    """Stands in for a Game's generator: the next hand of a match is dealt from the deck the
    batched engine drew (the two engines draw their decks differently; the rules are what is
    compared)."""

    def __init__(self, deck: list[int]) -> None:
        super().__init__(0)
        self.deck = deck

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        x[:] = self.deck


# =========================================================================== deterministic players, decks
class Lowest:
    """Test-only player: the lowest legal action id, in both forms (mirrored exactly)."""

    name = "lowest"

    def reset(self, seed=None):
        pass

    def act(self, view):
        return min(view.legal_actions)

    def act_batch(self, observation, mask, generator):
        import torch

        return mask.to(torch.uint8).argmax(1)


class Highest(Lowest):
    """Test-only player: the highest legal action id."""

    name = "highest"

    def act(self, view):
        return max(view.legal_actions)

    def act_batch(self, observation, mask, generator):
        import torch

        ids = torch.arange(mask.shape[1], device=mask.device)
        return torch.where(mask, ids, -1).argmax(1)


def random_decks(count: int, rng: random.Random) -> list[list[int]]:
    """``count`` shuffled single decks, none with a void deal (R7)."""
    from pisti_env.rules.cards import JACK, NUM_CARD_IDS, RANK, TABLE_SIZE

    decks = []
    while len(decks) < count:
        deck = list(range(NUM_CARD_IDS))
        rng.shuffle(deck)
        if not all(RANK[c] == JACK for c in deck[:TABLE_SIZE]):  # R7: no void deal
            decks.append(deck)
    return decks


TINY_BATCH = 8 * 4  # decisions per update of tiny_train_flags' runs


def tiny_train_flags(out: Path, *extra: str, steps: int = 4 * TINY_BATCH, checkpoint_every: int = 1) -> list[str]:
    """``pisti-train``'s command line for a tiny quiet run into ``out`` (8 games x 4 steps per
    update, hidden layers of 8, single hands, no evaluation, fp32, one thread), then ``extra``."""
    return ["--steps", str(steps), "--envs", "8", "--rollout", "4", "--hidden-sizes", "8", "--value-hidden-sizes", "8",
            "--target", "0", "--eval-every", "0", "--checkpoint-every", str(checkpoint_every), "--precision", "fp32",
            "--threads", "1", "--out", str(out), "--quiet", *extra]


def logged_updates(out: Path) -> list[int]:
    """The update column of a run's ``metrics.csv``."""
    import csv

    with open(Path(out) / "metrics.csv", encoding="utf-8") as f:
        return [int(row["update"]) for row in csv.DictReader(f)]


def preloaded_forkserver(preload: list[str]):
    """A ``forkserver`` multiprocessing context whose server has imported ``preload`` (imported
    here too, before any timing): a child then starts in a fraction of a second instead of
    importing torch on its own."""
    import importlib
    import multiprocessing

    for name in preload:
        importlib.import_module(name)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload)
    return context


def interruptible() -> None:
    """``preexec_fn`` of a child process that a test Ctrl-Cs (sends SIGINT): SIGINT back to
    its default, as a command typed at a terminal has it. A test run started in the
    background by a non-interactive shell (``python -m pytest ... &``, a CI script's job)
    ignores SIGINT, every child inherits that, and Python then installs no KeyboardInterrupt
    handler: the child would sleep through the test's Ctrl-C."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
