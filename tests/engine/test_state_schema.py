"""``Game``'s state schema: one per-side counter table, derived figures computed, copies by
construction (issue 11).

* ``Game.counts`` holds exactly the rows of [`pisti_env.rules.counters.Counter`][pisti_env.rules.counters.Counter] (the bluff rows
  only with the variant, R29), the same rows as the batched engine; the old attribute names
  (``captured_count``, ``match_scores``, ...) read the live rows.
* ``public_total`` (R30) is computed, never stored: the match totals plus this hand's public
  points while a hand is in play, the match totals once the game is over.
* ``clone()`` and ``determinize()`` share no mutable object with the original, and playing on
  the copy never changes the original, however far the game has gone (hands of a match, a
  pending claim, the end).
"""

from __future__ import annotations

import copy
import random
from typing import Any, Iterator

import pytest

from pisti_env import Game, Settings, make_settings
from pisti_env.rules.counters import BLUFF_RESULT_ROWS, Counter, num_counters

VARIANTS = {
    "2p": {},
    "2p-hand": {"target": None},
    "3p": {"num_players": 3, "target": 51},
    "4p-partners": {"num_players": 4},
    "6p-2decks": {"num_players": 6, "decks": 2, "target": None},
    "variants": {
        "double_pisti": 10, "last_card_pisti": False, "ten_diamonds_pisti_bonus": 3, "show_stock_bottom": True,
    },
    "bluff": {"bluff": True},
    "bluff-4p-jack-double": {"bluff": True, "bluff_jack_double": True, "num_players": 4, "show_stock_bottom": True},
}
ATTRIBUTE_ROWS = {
    "captured_count": Counter.CAPTURED,
    "card_points": Counter.CARD_POINTS,
    "public_points": Counter.PUBLIC_POINTS,
    "pisti_count": Counter.PISTIS,
    "double_pisti_count": Counter.DOUBLE_PISTIS,
    "pisti_points": Counter.PISTI_POINTS,
    "match_scores": Counter.MATCH_SCORES,
    **BLUFF_RESULT_ROWS,
}
# Values a copy may share with the original: immutable all the way down.
IMMUTABLE_SCALARS = (int, float, str, bytes, bool, type(None), Settings)


def states(kw: dict[str, Any], games: int = 3, seed: int = 0) -> Iterator[Game]:
    """Every state of a few random games of one variant (the same object, stepped: use each
    state before asking for the next)."""
    rng = random.Random(seed)
    settings = make_settings(**kw)
    for i in range(games):
        g = Game(settings, seed=seed * 1000 + i)
        yield g
        while not g.done:
            g.step(rng.choice(g.legal_actions()))
            yield g


def mutable_objects(value: Any, path: str, found: dict[int, str]) -> dict[int, str]:
    """Every mutable object reachable from ``value``, by ``id``, with a path to it."""
    if isinstance(value, IMMUTABLE_SCALARS):
        return found
    if isinstance(value, (tuple, frozenset)):  # immutable itself, but may hold mutable objects
        for i, item in enumerate(value):
            mutable_objects(item, f"{path}[{i}]", found)
        return found
    if id(value) in found:
        return found
    found[id(value)] = path
    if isinstance(value, dict):
        for key, item in value.items():
            mutable_objects(item, f"{path}[{key!r}]", found)
    elif isinstance(value, (list, set)):
        for i, item in enumerate(value):
            mutable_objects(item, f"{path}[{i}]", found)
    elif isinstance(value, (bytearray, random.Random)):
        pass  # no references inside
    else:
        for name, item in vars(value).items():
            mutable_objects(item, f"{path}.{name}", found)
    return found


def assert_nothing_shared(a: Game, b: Game) -> None:
    ours, theirs = mutable_objects(a, "game", {}), mutable_objects(b, "copy", {})
    shared = sorted(ours[i] for i in set(ours) & set(theirs))
    assert not shared, f"shared mutable objects: {shared}"


def snapshot(g: Game) -> dict[str, Any]:
    """A deep copy of the whole state (the random generator by its state)."""
    return {k: (v.getstate() if isinstance(v, random.Random) else copy.deepcopy(v)) for k, v in vars(g).items()}


# --------------------------------------------------------------------------- the counter table


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_counter_table_has_exactly_the_counter_rows(kw):
    settings = make_settings(**kw)
    rows = num_counters(settings.bluff)
    assert rows == (len(Counter) if settings.bluff else Counter.MATCH_SCORES + 1)
    for g in states(kw, games=1):
        assert len(g.counts) == rows
        assert all(len(row) == settings.num_sides for row in g.counts)
        for name, row in ATTRIBUTE_ROWS.items():
            if row < rows:
                assert getattr(g, name) is g.counts[row], name  # the live row, not a copy
            else:  # R29: a bluff counter of a game without the variant reads as zeros
                assert getattr(g, name) == [0] * settings.num_sides, name


def test_counter_attributes_are_read_only():
    g = Game(make_settings(bluff=True), seed=1)
    for name in (*ATTRIBUTE_ROWS, "public_total"):
        with pytest.raises(AttributeError):
            setattr(g, name, [0, 0])
    assert not set(ATTRIBUTE_ROWS) & set(vars(g)), "counters must live in the table only"


def test_match_scores_row_carries_over_the_hands_of_a_match():
    g = Game(make_settings(target=151), seed=5)
    rng = random.Random(5)
    while g.hands_completed < 2:
        g.step(rng.choice(g.legal_actions()))
    totals = [sum(hand[side]["total"] for hand in g.hand_results) for side in range(g.num_sides)]
    assert g.match_scores == totals
    assert all(g.counts[row] == [0, 0] for row in range(len(g.counts)) if row != Counter.MATCH_SCORES)


# --------------------------------------------------------------------------- public_total (R30)


@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_R30_public_total_is_match_plus_public_points_then_the_match_totals(kw):
    ended = 0
    for g in states(kw, games=4, seed=7):
        assert "public_total" not in vars(g), "public_total is computed, never stored"
        if g.done:  # the last hand's points are in the match totals already
            assert g.public_total == g.match_scores
            assert g.public_points == [r["total"] for r in g.last_hand_result]
            assert g.match_scores == [sum(h[side]["total"] for h in g.hand_results) for side in range(g.num_sides)]
            ended += 1
        else:
            assert g.public_total == [m + p for m, p in zip(g.match_scores, g.public_points)]
    assert ended == 4


# --------------------------------------------------------------------------- clone and determinize


@pytest.mark.parametrize("how", ["clone", "determinize"])
@pytest.mark.parametrize("kw", VARIANTS.values(), ids=VARIANTS.keys())
def test_copies_share_no_mutable_object_and_leave_the_original_alone(kw, how):
    """At random states (a match's later hands, pending claims, the end for ``clone``): the copy
    shares nothing mutable, and playing it to the end leaves the original as it was."""
    rng = random.Random(3)
    checked = 0
    for g in states(kw, games=2, seed=3):
        if rng.random() > 0.15 and not (g.done and how == "clone"):
            continue
        if how == "clone":
            c = g.clone()
            assert snapshot(c) == snapshot(g)
        else:
            c = g.determinize(rng.randrange(g.num_players), rng.getrandbits(32))
        assert_nothing_shared(g, c)
        before = snapshot(g)
        play = random.Random(checked)
        while not c.done:
            c.step(play.choice(c.legal_actions()))
        assert snapshot(g) == before, f"playing the {how} copy changed the original"
        checked += 1
    assert checked >= 4


def test_clone_copies_a_state_attribute_added_later_or_refuses_it():
    """Copies are made by construction: a new list is copied, not shared; a type the copy does
    not know raises instead of being shared silently."""
    g = Game(make_settings(), seed=2)
    g.extra_counter = [[0, 1], {"a": [2]}]
    c = g.clone()
    assert c.extra_counter == g.extra_counter
    assert_nothing_shared(g, c)
    g.extra_object = object()
    with pytest.raises(TypeError, match="cannot copy"):
        g.clone()
