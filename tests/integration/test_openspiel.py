"""Pişti as an OpenSpiel game (pisti_env/agents/openspiel.py) and OpenSpiel's IS-MCTS as
the ``ismcts`` player. Needs the ``openspiel`` extra (``pip install -e ".[openspiel]"``).

Checks: ``pyspiel.load_game`` for 2–4 players and the variants, OpenSpiel's own random
simulation test, the deal's chance probabilities (R5–R7), returns equal to the engine's score
differences for the same deal, no leak through the information state (R30, R31), bad
parameters refused, and the ``ismcts`` player: legal through the harness, blind to what its
seat cannot see."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest

pyspiel = pytest.importorskip("pyspiel")

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.rules.actions import FACE_DOWN  # noqa: E402
from pisti_env.agents import make_player  # noqa: E402
from pisti_env.views.view import SeatView  # noqa: E402
from pisti_env.rules.cards import IS_JACK  # noqa: E402
from pisti_env.agents import openspiel as os_pisti  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402
from training.harness.evaluate import evaluate  # noqa: E402

from helpers import example_module  # noqa: E402

NAME = os_pisti.SHORT_NAME
GAMES = {
    "2p": {"players": 2},
    "3p": {"players": 3},
    "4p-partners": {"players": 4},
    "4p-solo": {"players": 4, "partnerships": "false"},
    "2p-bluff": {"players": 2, "bluff": True, "bluff_jack_double": True},
    "3p-bluff": {"players": 3, "bluff": True},
    "4p-bluff": {"players": 4, "bluff": True},
    "2p-variants": {"players": 2, "double_pisti": 10, "last_card_pisti": False, "ten_diamonds_pisti_bonus": 3,
                    "show_stock_bottom": True},
    "3p-cut": {"players": 3, "show_stock_bottom": True, "double_pisti": 0},
}


def play_random(game, rng: random.Random, stop: int | None = None):
    """A state of ``game`` after the deal and ``stop`` random moves (to the end by default),
    with the chance outcomes and moves taken."""
    state = game.new_initial_state()
    chance, moves = [], []
    while not state.is_terminal() and (stop is None or len(moves) < stop):
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            action = rng.choices(outcomes, probs)[0]
            chance.append(action)
        else:
            action = rng.choice(state.legal_actions())
            moves.append(action)
        state.apply_action(action)
    return state, chance, moves


@pytest.mark.parametrize("case", list(GAMES))
def test_load_game_and_openspiel_random_sim_test(case):
    params = GAMES[case]
    game = pyspiel.load_game(NAME, params)
    settings = game.settings
    assert game.num_players() == params["players"]
    assert game.num_distinct_actions() == settings.num_actions
    assert settings.bluff == params.get("bluff", False)
    assert settings.partnerships == (params["players"] == 4 and params.get("partnerships") != "false")
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)
    # also through the string form of load_game
    assert pyspiel.load_game(f"{NAME}(players={params['players']})").num_players() == params["players"]


def test_the_deal_is_chance_nodes_a_uniform_valid_deck_R5_R6_R7():
    game = pyspiel.load_game(NAME)
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]  # the dealer (R5)
    state.apply_action(1)
    first = dict(state.chance_outcomes())
    assert len(first) == 52 and math.isclose(sum(first.values()), 1.0)
    jacks = [c for c in range(52) if IS_JACK[c]]
    # A uniform deck conditioned on a valid deal (R7): exact counts of valid decks.
    valid = math.factorial(52) - math.factorial(48) * math.factorial(4)
    per_jack = (math.factorial(51) - math.factorial(48) * math.factorial(3)) / valid
    assert first[jacks[0]] == pytest.approx(per_jack, rel=1e-12)
    assert first[0] == pytest.approx(math.factorial(51) / valid, rel=1e-12)
    for jack in jacks[:3]:
        state.apply_action(jack)
    fourth = dict(state.chance_outcomes())
    assert not any(IS_JACK[c] for c in fourth) and len(fourth) == 48  # no void deal
    assert math.isclose(sum(fourth.values()), 1.0)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert state.game is not None and state.game.dealer == 1
    assert state.current_player() == 0  # the seat after the dealer plays first (R5)


@pytest.mark.parametrize("case", ["2p", "3p", "4p-partners", "4p-solo", "2p-bluff", "3p-bluff", "2p-variants"])
def test_returns_are_the_engines_score_differences_for_the_same_deal(case):
    game = pyspiel.load_game(NAME, GAMES[case])
    rng = random.Random(7)
    for _ in range(3):
        state, chance, moves = play_random(game, rng)
        engine = Game(game.settings, deck=chance[1:], dealer=chance[0])
        rewards = [0.0] * game.num_players()
        replay = game.new_initial_state()
        for action in chance:
            replay.apply_action(action)
        for action in moves:
            engine.step(action)
            replay.apply_action(action)
            rewards = [r + x for r, x in zip(rewards, replay.rewards())]
        assert engine.done and state.is_terminal()
        totals = [r["total"] for r in engine.hand_results[-1]]
        expected = [side_difference(totals, engine.side_of[s]) for s in range(engine.num_players)]
        assert state.returns() == pytest.approx(expected, abs=1e-9)
        assert rewards == pytest.approx(expected, abs=1e-9)  # the rewards add up to the returns
        assert sum(state.returns()) == pytest.approx(0.0, abs=1e-9)  # zero-sum for every n


def _views(state, seat: int) -> tuple:
    return (
        state.information_state_tensor(seat),
        state.observation_tensor(seat),
        state.information_state_string(seat),
        state.observation_string(seat),
        state.legal_actions(seat),
        state.rewards()[seat],
        state.returns()[seat],
    )


@pytest.mark.parametrize("case", ["2p", "3p", "4p-partners", "2p-bluff", "4p-bluff"])
def test_information_state_leaks_nothing_R30_R31(case):
    """Two states that differ only in cards a seat cannot know (R31: dealt again, the same
    moves replayed) give that seat identical tensors, strings, legal actions and rewards."""
    game = pyspiel.load_game(NAME, GAMES[case])
    rng = random.Random(11)
    others_saw = 0
    for trial in range(12):
        stop = rng.randrange(1, game.max_game_length() // 2)
        state, chance, moves = play_random(game, rng, stop)
        if state.is_terminal():
            continue
        seat = rng.randrange(game.num_players())
        unknown = state.game.unknown_cards(seat)
        shuffled = unknown[:]
        rng.shuffle(shuffled)
        swap = dict(zip(unknown, shuffled))
        other = game.new_initial_state()
        other.apply_action(chance[0])
        for card in chance[1:]:
            other.apply_action(swap.get(card, card))
        for action in moves:  # a face-down card the seat never saw is dealt again too (R29)
            if action >= FACE_DOWN and action < 2 * FACE_DOWN and action - FACE_DOWN in swap:
                action = FACE_DOWN + swap[action - FACE_DOWN]
            other.apply_action(action)
        assert _views(other, seat) == _views(state, seat), f"seat {seat} sees a difference it cannot know"
        others_saw += any(_views(other, s)[2] != _views(state, s)[2] for s in range(game.num_players()))
    assert others_saw > 0, "the swaps never changed another seat's view: the test would be vacuous"


def test_resampled_states_keep_the_seats_information_state():
    game = pyspiel.load_game(NAME, GAMES["3p-bluff"])
    state, _, _ = play_random(game, random.Random(3), stop=10)
    seat = state.current_player()
    for seed in range(5):
        world = state.resample_from_infostate(seat, rng=seed)
        assert _views(world, seat)[:5] == _views(state, seat)[:5]
        assert world.legal_actions() == state.legal_actions()
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[0])
    assert str(clone) != str(state)  # a clone is independent


@pytest.mark.parametrize(
    "params, words",
    [
        ({"players": 5}, "players"),
        ({"players": 1}, "players"),
        ({"target": 151}, "single hands"),
        ({"partnerships": "yes", "players": 4}, "partnerships"),
        ({"players": 3, "partnerships": "true"}, "partnerships"),
        ({"double_pisti": 7}, "double_pisti"),
        ({"bluff_jack_double": True}, "bluff"),
    ],
)
def test_bad_parameters_are_refused_naming_them(params, words):
    with pytest.raises((ValueError, pyspiel.SpielError), match=words):
        pyspiel.load_game(NAME, params)


class LegalityReferee:
    """A player between the harness and ``ismcts``: every action must be legal for the view."""

    def __init__(self, inner, log: list) -> None:
        self.inner, self.log, self.name = inner, log, inner.name

    def reset(self, seed=None) -> None:
        self.inner.reset(seed)

    def act(self, view):
        action = self.inner.act(view)
        self.log.append(action in view.legal_actions)
        return action


def test_ismcts_spec_plays_through_the_harness_against_greedy_legally():
    settings = make_settings(num_players=2, target=None)
    log: list[bool] = []

    def loader(spec: str):
        player = make_player(spec, settings=settings)
        return LegalityReferee(player, log) if spec.startswith("ismcts") else player

    report = evaluate(["ismcts:n=8", "greedy"], deals=2, matches=0, seed=0, bootstrap=0, loader=loader)
    pair = report["tables"][0]["pairs"][0]["score_diff"]
    assert math.isfinite(pair["mean"])
    assert len(log) >= 2 * 2 * 20 and all(log)  # 2 deals x 2 seatings x ~24 decisions


@pytest.mark.parametrize("settings", [dict(num_players=3, target=51), dict(num_players=4, bluff=True, target=None)])
def test_ismcts_plays_3_and_4_players_matches_and_bluff_legally(settings):
    game = Game(make_settings(**settings), seed=5)
    players = [make_player("ismcts:n=4,uct_c=5", seed=s) for s in range(game.num_players)]
    steps = 0
    while not game.done and steps < 120:
        view = SeatView(game, game.turn)
        action = players[game.turn].act(view)
        assert action in view.legal_actions
        game.step(action)
        steps += 1


def test_ismcts_sees_only_its_seat(seed=4):
    """The same seat in two games that differ only in cards it cannot know (R31) makes the
    same choice with the same seed: the search reads nothing hidden."""
    settings = make_settings(num_players=2, target=None)
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    while all(IS_JACK[c] for c in deck[:4]):
        rng.shuffle(deck)
    game = Game(settings, deck=deck, dealer=1)
    for _ in range(9):
        game.step(rng.choice(game.legal_actions()))
    seat = game.turn
    unknown = game.unknown_cards(seat)
    shuffled = unknown[:]
    rng.shuffle(shuffled)
    swap = dict(zip(unknown, shuffled))
    other = Game(settings, deck=[swap.get(c, c) for c in deck], dealer=1)
    for _, card in game.history:
        other.step(card)
    assert other.hands[1 - seat] != game.hands[1 - seat]
    choices = [make_player("ismcts:n=30", seed=9, settings=settings).act(SeatView(g, seat)) for g in (game, other)]
    assert choices[0] == choices[1]


def test_ismcts_options_are_checked():
    with pytest.raises(ValueError, match="'n'"):
        make_player("ismcts:n=0")
    with pytest.raises(ValueError, match="final_policy"):
        make_player("ismcts:final_policy=best")
    with pytest.raises(ValueError, match="allowed"):
        make_player("ismcts:depth=3")
    with pytest.raises(ValueError, match="players"):
        make_player("ismcts", settings=make_settings(num_players=5, decks=2))


def test_import_pisti_env_does_not_import_open_spiel():
    code = "import sys, pisti_env, pisti_env.agents; make = pisti_env.agents.make_player; " \
           "print('pyspiel' in sys.modules or 'open_spiel' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_recipe_runs_to_the_end(capsys):
    recipe = example_module("openspiel_ismcts")
    game = recipe.load(3, bluff=True)
    recipe.check(game, sims=2)
    returns = recipe.play_hand(game, n=4, seed=1)  # OpenSpiel's bot through the state's resampler
    assert len(returns) == 3 and sum(returns) == pytest.approx(0.0, abs=1e-9)
    recipe.main(["--n", "4", "--deals", "1"])
    out = capsys.readouterr().out
    assert "random_sim_test passed" in out and "vs greedy" in out and "vs random" in out


def test_ismcts_without_open_spiel_names_the_extra():
    code = ("import sys; sys.modules['pyspiel'] = None; sys.modules['open_spiel'] = None\n"
            "from pisti_env.agents import make_player\n"
            "try:\n    make_player('ismcts')\nexcept ImportError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install -e ".[openspiel]"' in out.stdout
