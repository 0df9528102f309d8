"""Python games as batched-engine rows (`pisti_env.batched.from_game`, the inverse of
`pisti_env.batched.to_game`; issue 49, the search player's rollout batches).

Random Python games of every table the batched engine holds (2, 3, 4 players, partnerships,
the bluff variant R29, matches) are converted mid-hand: every seat gets the same observation,
byte for byte, and the same legal actions from the rows as from the games; ``to_game`` gives
the games back (their schema: codes, deck, counters, claim); ``from_games(to_games(state))`` is
the state again; and the rows stepped with the same actions as the games stay those games to
the end of the hand, with the same hand results (R19–R23).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import check_conservation  # noqa: E402

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.batched import BatchedPisti  # noqa: E402
from pisti_env.batched.from_game import from_game, from_games  # noqa: E402
from pisti_env.batched.state import FIELDS  # noqa: E402
from pisti_env.batched.to_game import to_games  # noqa: E402
from pisti_env.views.observation import ObservationEncoder  # noqa: E402

VARIANTS = [
    pytest.param(dict(num_players=2, target=None), id="2p-hand"),
    pytest.param(dict(num_players=2, target=51, show_stock_bottom=True), id="2p-match-stock-bottom"),
    pytest.param(dict(num_players=3, target=None, last_card_pisti=False), id="3p-hand"),
    pytest.param(dict(num_players=4, target=None, double_pisti=10), id="4p-partners"),
    pytest.param(dict(num_players=4, partnerships=False, target=None), id="4p-solo"),
    pytest.param(dict(num_players=2, target=None, bluff=True, bluff_jack_double=True), id="2p-bluff"),
]
GAMES = 12


def schema(g: Game) -> dict:
    """What both engines keep of a game (see ``to_game``'s docstring for what they do not)."""
    return {
        "where": bytes(g.where), "played_by": bytes(g.played_by), "deck_left": g.deck[g.stock_pos:],
        "stock_pos": g.stock_pos, "turn": g.turn, "dealer": g.dealer, "in_hands": g.in_hands,
        "hands": [sorted(h) for h in g.hands], "pile": (sorted(g.pile[:-1]), g.pile[-1:]),
        "pile_hidden": g.pile_hidden, "last_capturer": g.last_capturer, "counts": g.counts,
        "hands_completed": g.hands_completed, "claim": (g.claimant, g.claim_card),
    }


def games_mid_hand(settings, seed: int) -> list[Game]:
    """``GAMES`` games played at random to random points (some in a later hand of a match)."""
    rng = random.Random(seed)
    games = []
    for i in range(GAMES):
        g = Game(settings, seed=seed * 100 + i)
        for _ in range(rng.randrange(0, 70)):
            g.step(rng.choice(g.legal_actions()))
            if g.done:
                g = Game(settings, seed=seed * 100 + i + 50)
        games.append(g)
    return games


@pytest.mark.parametrize("kw", VARIANTS)
def test_rows_observe_round_trip_and_step_as_the_python_games(kw):
    settings = make_settings(**kw)
    games = games_mid_hand(settings, 3)
    state = from_games(games)
    engine = BatchedPisti(GAMES, seed=5, **kw)
    encoder = ObservationEncoder(settings)
    mask = engine.action_mask(state).numpy()
    for s in range(settings.num_players):
        seen = engine.observe(state, torch.full((GAMES,), s)).numpy()
        for b, g in enumerate(games):
            assert encoder.encode(g, s).tobytes() == seen[b].tobytes(), (b, s)
    for b, g in enumerate(games):
        assert g.legal_actions() == np.flatnonzero(mask[b]).tolist(), b
    # The round trips: rows to games and back.
    for b, back in enumerate(to_games(state, range(GAMES), settings)):
        check_conservation(back)
        assert schema(back) == schema(games[b]), b
    again = from_games(to_games(state, range(GAMES), settings))
    for name in FIELDS:
        x, y = getattr(again, name), getattr(state, name)
        if name == "top":  # meaningless with an empty pile
            x, y = x * (state.pile_size > 0), y * (state.pile_size > 0)
        assert torch.equal(x, y), name
    # Stepped together to the end of each game's hand: the same games, the same results.
    rng = random.Random(9)
    start = [g.hands_completed for g in games]
    finished = [False] * GAMES
    while not all(finished):
        actions = [rng.choice(g.legal_actions()) if not f else 0 for g, f in zip(games, finished)]
        active = torch.tensor([not f for f in finished])
        state, out = engine.step_state(state, torch.tensor(actions), active=active)
        for b, g in enumerate(games):
            if finished[b]:
                continue
            g.step(actions[b])
            if g.hands_completed > start[b]:
                finished[b] = True
                assert bool(out.hand_over[b]), b
                result = g.hand_results[start[b]]
                for key in out.hand_result:
                    assert [r[key] for r in result] == out.hand_result[key][b].tolist(), (b, key)
            else:
                assert not bool(out.hand_over[b]), b
                back = to_games(state, [b], settings)[0]
                assert schema(back) == schema(g), b


def test_one_game_and_bad_input():
    g = Game(make_settings(num_players=2, target=None), seed=1)
    state = from_game(g)
    assert state.code.shape == (1, 52) and int(state.turn[0]) == g.turn
    with pytest.raises(ValueError, match="at least one game"):
        from_games([])
    with pytest.raises(TypeError, match="game 1 must be a pisti_env.Game"):
        from_games([g, "g"])
    with pytest.raises(ValueError, match="game 1 plays"):
        from_games([g, Game(make_settings(num_players=3, target=None), seed=1)])
    with pytest.raises(ValueError, match="one deck"):
        from_game(Game(make_settings(num_players=5, target=None), seed=1))
