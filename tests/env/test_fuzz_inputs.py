"""Property-based fuzzing of the library's inputs (issue 16.6): random bad actions, seeds,
dealers, decks and settings thrown at the engine ([`Game`][pisti_env.game.Game]), the AEC env and the batched
engine. Each must be refused with a ``ValueError``/``TypeError`` whose message names the
argument, and the object must be byte-identical afterwards (its pickle, before and after).

Derandomized (the same examples on every run and machine) and small enough for the default run.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.rules.cards import NUM_CARD_IDS, card_to_text

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Values that are not integers by the library's rule (pisti_env.util.arguments): a TypeError.
NOT_INTEGERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 60), max_size=3),
    st.tuples(st.integers(0, 60)),
    st.sets(st.integers(0, 60), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just(np.bool_(True)),
    st.builds(np.float64, st.floats(-100, 100)),
    st.just(object()),
)


def _game_mid_hand(seed: int, moves: int, **kw) -> Game:
    g = Game(make_settings(**kw), seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if g.done:
            break
        g.step(rng.choice(g.legal_actions()))
    return g


def _refused(call, names: tuple[str, ...]) -> None:
    with pytest.raises((ValueError, TypeError)) as error:
        call()
    message = str(error.value)
    assert any(name in message for name in names), message


# ------------------------------------------------------------------ the engine: Game


@FUZZ
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 20), bluff=st.booleans(),
       action=st.one_of(NOT_INTEGERS, st.integers(-10**9, 10**9), st.builds(np.int64, st.integers(-300, 300))))
def test_game_step_refuses_bad_actions_and_changes_nothing(seed, moves, bluff, action):
    g = _game_mid_hand(seed, moves, bluff=bluff)
    if g.done or (not isinstance(action, bool) and isinstance(action, (int, np.integer)) and int(action) in g.legal_actions()):
        return  # a legal move is not bad input
    before = pickle.dumps(g)
    _refused(lambda: g.step(action), ("action",))
    assert pickle.dumps(g) == before


@FUZZ
@given(seed=NOT_INTEGERS)
def test_game_refuses_non_integer_seeds(seed):
    if seed is None:
        return  # None: drawn from OS entropy, allowed
    _refused(lambda: Game(seed=seed), ("seed",))


@FUZZ
@given(players=st.sampled_from([2, 3, 4]), dealer=st.one_of(NOT_INTEGERS, st.integers(-50, 50)))
def test_game_refuses_bad_dealers(players, dealer):
    if dealer is None or (isinstance(dealer, int) and not isinstance(dealer, bool) and 0 <= dealer < players):
        return
    _refused(lambda: Game(make_settings(num_players=players), seed=0, dealer=dealer), ("dealer",))


def _bad_decks() -> st.SearchStrategy:
    full = [card_to_text(c) for c in range(NUM_CARD_IDS)]
    return st.one_of(
        st.permutations(full).map(set),  # no order
        st.permutations(full).map(lambda d: dict.fromkeys(d)),  # a mapping
        st.permutations(full).map(" ".join),  # one string
        st.lists(st.integers(0, 51), max_size=60).filter(lambda d: sorted(d) != list(range(NUM_CARD_IDS))),
        st.permutations(full).flatmap(lambda d: st.integers(0, 51).map(lambda i: d[:i] + [3.5] + d[i + 1:])),
        st.permutations(full).flatmap(lambda d: st.integers(0, 51).map(lambda i: d[:i] + ["ZZ"] + d[i + 1:])),
        st.permutations(full).flatmap(lambda d: st.integers(0, 51).map(lambda i: d[:i] + [d[(i + 1) % 52]] + d[i + 1:])),
        st.integers(),
        st.none().map(lambda _: iter(full)),  # an iterator: no length, single pass
    )


@FUZZ
@given(deck=_bad_decks())
def test_game_and_env_refuse_bad_decks_and_change_nothing(deck):
    _refused(lambda: Game(seed=0, deck=deck), ("deck",))
    e = pisti_env.env(illegal_action="raise")
    e.reset(seed=4)
    e.step(e.unwrapped.game.legal_actions()[0])
    before = pickle.dumps(e.unwrapped.__dict__)
    _refused(lambda: e.reset(seed=5, options={"deck": deck}), ("deck",))
    assert pickle.dumps(e.unwrapped.__dict__) == before


@FUZZ
@given(name=st.sampled_from(["num_players", "decks", "double_pisti", "ten_diamonds_pisti_bonus", "target",
                             "partnerships", "bluff", "show_stock_bottom", "last_card_pisti", "colour"]),
       value=st.one_of(NOT_INTEGERS, st.integers(-10, 300)))
def test_bad_settings_name_the_setting(name, value):
    try:
        make_settings(**{name: value})
    except (ValueError, TypeError) as error:
        assert name in str(error), str(error)


# ------------------------------------------------------------------ the AEC env


@FUZZ
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 20),
       action=st.one_of(NOT_INTEGERS, st.integers(-10**6, 10**6)),
       reset_seed=NOT_INTEGERS, dealer=st.one_of(NOT_INTEGERS, st.integers(-9, 9)))
def test_env_refuses_bad_input_and_changes_nothing(seed, moves, action, reset_seed, dealer):
    e = pisti_env.env(illegal_action="raise")
    e.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if not e.agents or e.terminations[e.agent_selection]:
            break
        e.step(rng.choice(e.unwrapped.game.legal_actions()))
    if not e.agents or e.terminations[e.agent_selection]:
        return
    before = pickle.dumps(e.unwrapped.__dict__)
    if not (isinstance(action, int) and not isinstance(action, bool) and action in e.unwrapped.game.legal_actions()):
        _refused(lambda: e.step(action), ("action",))
        assert pickle.dumps(e.unwrapped.__dict__) == before
    if reset_seed is not None:
        _refused(lambda: e.reset(seed=reset_seed), ("seed",))
        assert pickle.dumps(e.unwrapped.__dict__) == before
    if dealer is not None and not (isinstance(dealer, int) and not isinstance(dealer, bool) and 0 <= dealer < 2):
        _refused(lambda: e.reset(seed=1, options={"dealer": dealer}), ("dealer",))
        assert pickle.dumps(e.unwrapped.__dict__) == before


# ------------------------------------------------------------------ the batched engine


@pytest.fixture(scope="module")
def engine():
    from pisti_env.batched import BatchedPisti

    e = BatchedPisti(4, seed=3, num_players=2)
    e.reset()
    e.step(e.action_mask(e.state).to(torch.uint8).argmax(1))
    return e


def _bad_batch_actions() -> st.SearchStrategy:
    return st.one_of(
        st.lists(st.integers(-200, 200), min_size=4, max_size=4),  # mostly illegal or out of range
        st.lists(st.integers(0, 51), min_size=0, max_size=7).filter(lambda a: len(a) != 4),  # wrong length
        st.lists(st.floats(0, 51), min_size=4, max_size=4).map(lambda a: torch.tensor(a)),  # float tensor
        st.lists(st.booleans(), min_size=4, max_size=4).map(lambda a: torch.tensor(a)),  # bool tensor
        st.lists(st.text(max_size=2), min_size=4, max_size=4),  # strings
        st.lists(st.lists(st.integers(0, 51), max_size=3), min_size=4, max_size=4),  # ragged
        st.none(),
    )


@FUZZ
@given(actions=_bad_batch_actions())
def test_batched_step_refuses_bad_actions_and_changes_nothing(engine, actions):
    mask = engine.action_mask(engine.state)
    if isinstance(actions, list) and len(actions) == 4 and all(isinstance(a, int) for a in actions):
        if all(0 <= a < 52 and bool(mask[b, a]) for b, a in enumerate(actions)):
            return  # every action legal: not bad input
    before = pickle.dumps(engine.state)
    _refused(lambda: engine.step(actions), ("action",))
    assert pickle.dumps(engine.state) == before


@FUZZ
@given(decks=st.one_of(_bad_decks().map(lambda d: [d] * 4), _bad_decks()),
       dealers=st.one_of(st.none(), st.lists(st.one_of(NOT_INTEGERS, st.integers(-3, 5)), max_size=5),
                         st.sets(st.integers(0, 1), max_size=4)))
def test_batched_reset_refuses_bad_decks_and_dealers_and_changes_nothing(engine, decks, dealers):
    before = pickle.dumps(engine.state)
    _refused(lambda: engine.reset(decks=decks), ("deck",))
    assert pickle.dumps(engine.state) == before
    if dealers is not None and not (isinstance(dealers, list) and len(dealers) == 4 and all(
            isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2 for d in dealers)):
        _refused(lambda: engine.reset(dealers=dealers), ("dealer",))
        assert pickle.dumps(engine.state) == before


@FUZZ
@given(batch_size=st.one_of(NOT_INTEGERS, st.integers(-5, 0)), seed=st.one_of(NOT_INTEGERS, st.integers(-99, -1)))
def test_batched_constructor_refuses_bad_sizes_and_seeds(batch_size, seed):
    from pisti_env.batched import BatchedPisti

    _refused(lambda: BatchedPisti(batch_size), ("batch_size",))
    _refused(lambda: BatchedPisti(2, seed=seed), ("seed",))
