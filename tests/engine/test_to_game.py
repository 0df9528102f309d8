"""The batched engine's state as a Python ``Game`` (`pisti_env.batched.to_game`, issue 13).

On random games of every table (2, 3, 4 players, partnerships or not), the bluff variant (R29)
and match play: at every step, the game converted from each row gives every seat the same
observation, byte for byte, and the same legal actions as the batched engine; its cards are
where the codes say (``helpers.check_conservation``); and a converted game stepped with the
same actions as the batched engine stays the game the engine's row converts to (across hand
ends, with the next deck scripted as in ``test_batched.py``), with the same hand results.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import check_conservation  # noqa: E402
from helpers import ScriptedShuffle  # noqa: E402

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.batched import BatchedPisti  # noqa: E402
from pisti_env.batched.to_game import to_game, to_games  # noqa: E402
from pisti_env.views.observation import ObservationEncoder  # noqa: E402

VARIANTS = [
    pytest.param(dict(num_players=2, target=None, show_stock_bottom=True), id="2p-hand-stock-bottom"),
    pytest.param(dict(num_players=3, target=None, last_card_pisti=False), id="3p-hand"),
    pytest.param(dict(num_players=4, target=None, double_pisti=10, ten_diamonds_pisti_bonus=3), id="4p-partners"),
    pytest.param(dict(num_players=4, partnerships=False, target=None), id="4p-solo"),
    pytest.param(dict(num_players=2, target=51), id="2p-match-51"),
    pytest.param(dict(num_players=4, target=61, bluff=True), id="4p-partners-bluff-match"),
    pytest.param(dict(num_players=2, target=None, bluff=True, bluff_jack_double=True, show_stock_bottom=True),
                 id="2p-bluff-stock-bottom"),
    pytest.param(dict(num_players=3, target=None, bluff=True), id="3p-bluff"),
]
BATCH = 16


def comparable(g: Game) -> dict:
    """What a converted game and a stepped one must agree on: the whole state but the orders
    the batched engine does not keep (hands, the pile under its top card, the history), the
    claims record, the earlier hands' breakdowns and the generator."""
    state = {k: v for k, v in vars(g).items() if k not in ("rng", "claims", "hand_results", "hands", "pile", "history")}
    state["hands"] = [sorted(h) for h in g.hands]
    state["pile"] = (sorted(g.pile[:-1]), g.pile[-1:])
    state["history"] = sorted(g.history)
    state["hands_finished"] = len(g.hand_results)
    return state


def random_actions(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)


@pytest.mark.parametrize("kw", VARIANTS)
def test_converted_game_observes_steps_and_scores_as_the_batched_engine(kw):
    settings = make_settings(**kw)
    engine = BatchedPisti(BATCH, seed=7, **kw)
    encoder = ObservationEncoder(settings)
    n = settings.num_players
    out = engine.reset()
    generator = torch.Generator().manual_seed(7)
    rows = list(range(BATCH))
    mirrors = to_games(engine.state, rows, settings)
    episodes = hands = claims = 0
    while episodes < 2 * BATCH:
        state = engine.state
        games = to_games(state, torch.arange(BATCH), settings)
        observations = [engine.observe(state, torch.full((BATCH,), s)).numpy() for s in range(n)]
        mask = out.action_mask.numpy()
        for b, g in enumerate(games):
            check_conservation(g)
            assert g.legal_actions() == np.flatnonzero(mask[b]).tolist(), b
            for s in range(n):
                assert encoder.encode(g, s).tobytes() == observations[s][b].tobytes(), (b, s)
            assert comparable(mirrors[b]) == comparable(g), b
        claims += int((state.claimant >= 0).sum())
        actions = random_actions(out.action_mask, generator)
        out = engine.step(actions)
        for b, mirror in enumerate(mirrors):
            if bool(out.hand_over[b]) and not bool(out.done[b]):
                mirror.rng = ScriptedShuffle(engine.state.deck[b].tolist())  # the engine's next deck
            mirror.step(int(actions[b]))
            if bool(out.hand_over[b]):
                hands += 1
                result = mirror.last_hand_result
                for key in out.hand_result:
                    assert [r[key] for r in result] == out.hand_result[key][b].tolist(), (b, key)
            assert mirror.done == bool(out.done[b]), b
            if mirror.done:
                episodes += 1
                assert mirror.match_scores == out.match_scores[b].tolist()
                assert (-1 if mirror.winner is None else mirror.winner) == int(out.winner[b])
                mirrors[b] = to_game(engine.state, b, settings)
    assert hands >= episodes
    assert (claims > 0) == settings.bluff


def test_converted_game_has_exactly_the_attributes_of_a_game():
    """A new attribute of ``Game`` must be taught to the converter (it would be missing)."""
    engine = BatchedPisti(2, seed=1, num_players=2, bluff=True)
    engine.reset()
    converted = to_game(engine.state, 1, engine.settings)
    assert set(vars(converted)) == set(vars(Game(engine.settings, seed=1)))
    # A converted game plays to the end of its match like any other, later hands from its seed.
    rng = random.Random(0)
    while not converted.done:
        converted.step(rng.choice(converted.legal_actions()))
    assert len(converted.hand_results) == converted.hands_completed


def test_bad_conversions_are_clear_errors():
    engine = BatchedPisti(3, seed=1, num_players=3)
    engine.reset()
    with pytest.raises(TypeError, match="settings must be a pisti_env.Settings"):
        to_games(engine.state, [0], {"num_players": 3})
    with pytest.raises(ValueError, match="do not fit this batched state"):
        to_games(engine.state, [0], make_settings(num_players=2))
    with pytest.raises(ValueError, match="do not fit this batched state"):
        to_games(engine.state, [0], make_settings(num_players=3, bluff=True))
    with pytest.raises(ValueError, match=r"game indices 0\.\.2"):
        to_games(engine.state, [3], engine.settings)
    broken = engine.state.replace(pile_size=engine.state.pile_size + 1)
    with pytest.raises(ValueError, match="row 0 is not a consistent game"):
        to_game(broken, 0, engine.settings)
