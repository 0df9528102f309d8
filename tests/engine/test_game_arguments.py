"""`Game`'s public methods check their arguments as the envs do (issue 48,
`pisti_env.util.arguments.check_int`): a seat outside `0..num_players - 1` is a `ValueError`
naming the seat and the range, never wrapped (`hand_card_ids(-1)` read another seat's hand)
nor an `IndexError`; a seat that is not an int, or a `determinize` generator that is neither
a `random.Random`, an int seed nor `None`, is a `TypeError` naming the argument."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pisti_env import Game, make_settings

SEAT_METHODS = ["hand_card_ids", "unknown_cards", "determinize"]


@pytest.fixture
def game() -> Game:
    return Game(make_settings(num_players=2), seed=1)


@pytest.mark.parametrize("method", SEAT_METHODS)
@pytest.mark.parametrize("seat", [-1, 2, 5, -3])
def test_a_seat_out_of_range_is_a_value_error_naming_the_range(game, method, seat):
    with pytest.raises(ValueError, match=rf"seat must be a seat 0\.\.1, got {seat}"):
        getattr(game, method)(seat)


@pytest.mark.parametrize("method", SEAT_METHODS)
@pytest.mark.parametrize("seat", [True, 0.0, "0", None])
def test_a_seat_that_is_not_an_int_is_a_type_error(game, method, seat):
    with pytest.raises(TypeError, match=r"seat must be an int seat 0\.\.1"):
        getattr(game, method)(seat)


def test_seats_as_numpy_ints_are_accepted(game):
    assert game.hand_card_ids(np.int64(1)) == game.hand_card_ids(1)
    assert game.unknown_cards(np.int32(0)) == game.unknown_cards(0)


@pytest.mark.parametrize("rng", ["x", 1.5, b"seed", [1]])
def test_determinize_refuses_a_generator_that_is_not_one(game, rng):
    with pytest.raises(TypeError, match=r"rng must be an int seed or a random.Random or None"):
        game.determinize(0, rng=rng)


def test_determinize_takes_a_generator_an_int_or_none(game):
    a = game.determinize(0, rng=5)
    assert a.hands[0] == game.hands[0]
    assert game.determinize(0, rng=random.Random(5)).hands[1] == a.hands[1]
    assert game.determinize(0, rng=np.int64(5)).hands[1] == a.hands[1]
    game.determinize(1, rng=None)


def test_a_counter_row_never_wraps(game):
    with pytest.raises(ValueError, match=r"row must be a counter row 0\.\.\d+, got -1"):
        game.counter(-1)
