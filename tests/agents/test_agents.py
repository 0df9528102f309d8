"""The scripted players (pisti_env.agents) and the seat view they read.

* every baseline plays only legal cards, in every table variant (R3, R4, R27);
* R30–R31: a baseline reads no hidden state — given a view of a determinized copy of the game
  (everything the seat cannot know dealt again) it plays exactly the same card, for the same
  seed; pimc, which samples worlds itself, too;
* same seed, same play;
* behaviour from the seed texts' tips on hand-made deals (R6 deal order: with dealer 1,
  seat 0 gets deck items 4, 6, 8, 10 and seat 1 items 5, 7, 9, 11);
* the players inside the PettingZoo environment, and bad input;
* R29, the bluff variant (one more axis of the settings matrix above): the baselines claim,
  answer and bluff as documented, reading no face-down card they may not see.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.agents import (
    ExpertAgent,
    GreedyAgent,
    PimcAgent,
    SeatView,
    agent_names,
    make_agent,
    parse_agent_spec,
    view_for_agent,
)
from pisti_env.agents.bluffing import challenge_pays, challenge_probability, claim_true_probability
from pisti_env.agents.endgame import endgame_values
from pisti_env.agents.expert import hold_probability
from pisti_env.agents.greedy import provably_bluff
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.rules.scoring import pisti_value

from helpers import C, F, O, cases, deck_with_prefix, down, play, provable_bluff_game, rank, to_claim

SPECS = ["random", "greedy", "expert", "pimc:n=3"]
TABLES = cases(  # single hands; 4p-partners is the 4-player default (R4)
    "2p hand", "3p hand", "4p-partners hand", "4p-solo hand", "2p hand double0 last-card-off bonus3 stock-bottom",
)
BLUFF_TABLES = cases(
    "2p hand bluff", "3p hand bluff", "4p-partners hand bluff", "4p-solo hand bluff",
    "2p hand bluff jack-double last-card-off stock-bottom double0",
)


def hand_deck(table: str, seat0: str, seat1: str) -> list[str]:
    """A 2-player deck: 4 table cards (the last face up), then the first deal of seat 0 and
    seat 1 (4 cards each), dealt alternately from seat 0 (dealer 1, R6)."""
    t, a, b = table.split(), seat0.split(), seat1.split()
    return deck_with_prefix(t + [c for pair in zip(a, b) for c in pair])


# ---------------------------------------------------------------------------- legality
@pytest.mark.parametrize("settings_case", TABLES + BLUFF_TABLES)
def test_R9_R29_baselines_take_only_legal_actions_in_every_variant(settings_case):
    settings = settings_case.settings
    for spec in SPECS:
        players = [make_agent(spec, seed=seat) for seat in range(settings.num_players)]
        for game_seed in (4,) if settings.bluff else range(2):
            game = Game(settings, seed=game_seed)
            while not game.done:
                legal = game.legal_actions()
                card = players[game.turn].act(SeatView(game, game.turn))
                assert card in legal, (spec, card, legal)
                game.step(card)


@pytest.mark.parametrize("settings_case, game_seed", [
    pytest.param(*p.values, 3, id=p.id) for p in cases("6p-2decks hand")] + [
    pytest.param(*p.values, 2, id=p.id) for p in cases("6p-2decks hand bluff")])
def test_R27_R29_baselines_play_two_deck_tables(settings_case, game_seed):
    settings = settings_case.settings
    for spec in ["greedy", "expert", "pimc:n=2"]:
        players = [make_agent(spec, seed=seat) for seat in range(6)]
        game = Game(settings, seed=game_seed)
        while not game.done:
            card = players[game.turn].act(SeatView(game, game.turn))
            assert card in game.legal_actions()
            game.step(card)


@pytest.mark.parametrize("settings_case", cases("3p hand", "3p hand bluff"))
def test_R29_pimc_rollout_policies_play_legal_actions(settings_case):
    settings = settings_case.settings
    for rollout in ("random", "greedy", "expert"):
        players = [make_agent(f"pimc:n=2,rollout={rollout}", seed=seat) for seat in range(3)]
        game = Game(settings, seed=1)
        while not game.done:
            card = players[game.turn].act(SeatView(game, game.turn))
            assert card in game.legal_actions()
            game.step(card)


# ---------------------------------------------------------------------------- no hidden state
@pytest.mark.parametrize("settings_case", TABLES[:4] + BLUFF_TABLES[:4])
def test_R29_R30_R31_baselines_play_the_same_on_a_determinized_copy(settings_case):
    """A baseline reads no hidden state, face-down cards included (R29): on a copy with
    everything the seat cannot know dealt again it takes the same action, answers included."""
    settings = settings_case.settings
    rng_seed, player_seed, games = (9, 99, 2) if settings.bluff else (7, 1234, 3)
    rng = random.Random(rng_seed)
    players = {spec: make_agent(spec) for spec in SPECS}
    changed_world = answers = claims_seen = 0
    for game_seed in range(games):
        game = Game(settings, seed=game_seed)
        while not game.done:
            seat = game.turn
            copy = game.determinize(seat, rng)
            changed_world += copy.hands != game.hands
            answers += game.claimant >= 0
            claims_seen += any(a >= FACE_DOWN for a in game.legal_actions())
            for spec, player in players.items():
                player.reset(player_seed)
                real = player.act(SeatView(game, seat))
                player.reset(player_seed)
                assert player.act(SeatView(copy, seat)) == real, (spec, game.history)
            game.step(rng.choice(game.legal_actions()))
    if settings.bluff:
        assert answers > 0 and claims_seen > 0
    else:
        assert changed_world > 50  # the copies really differ from the real game


def test_R31_view_determinize_depends_only_on_what_the_seat_knows():
    """For one seed, the sample is the same whether it is drawn from the real game or from any
    determinization of it: it depends only on what the seat knows (pimc relies on it)."""
    settings = make_settings(num_players=3, target=None)
    rng = random.Random(3)
    for game_seed in range(4):
        game = Game(settings, seed=game_seed)
        for _ in range(rng.randrange(1, 30)):
            game.step(rng.choice(game.legal_actions()))
        seat = game.turn
        copy = game.determinize(seat, rng)
        assert copy.hands != game.hands  # the copy really is another arrangement
        a, b = SeatView(game, seat).determinize(99), SeatView(copy, seat).determinize(99)
        assert a.hands == b.hands and a.pile == b.pile and a.deck == b.deck and a.where == b.where
        assert a.hands[seat] == game.hands[seat]  # what the seat knows is kept
        c = SeatView(game, seat).determinize(100)
        assert [sorted(h) for h in a.hands] != [sorted(h) for h in c.hands]  # the seed matters


def test_seat_view_shows_only_public_counts():
    game = Game(make_settings(num_players=2, target=None), deck=hand_deck(
        "2H 3H 4H 5H", "5C 9D JC KC", "9S 7C 7D QS"), dealer=1)
    view = SeatView(game, 0)
    assert view.hand == sorted(pisti_env.parse_cards("5C 9D JC KC".split()))
    assert view.pile_top == pisti_env.parse_card("5H") and view.pile_size == 4 and view.pile_hidden == 3
    assert view.pile_known == [pisti_env.parse_card("5H")] and view.pile_known_points == 0
    # Unseen: 52 - own 4 - the face-up 5H.
    assert len(view.unseen) == 47 and view.unseen_rank_counts[4] == 2  # 5D, 5S (5C held, 5H shown)
    play(game, ["5C"])
    view1 = SeatView(game, 1)
    assert view1.history == [(0, pisti_env.parse_card("5C"))]
    assert view1.last_capturer == 0 and view1.captured_count == [5, 0]
    # Seat 1 never saw the three hidden table cards seat 0 took (R8): they stay unseen for it.
    assert len(view1.unseen) == 52 - 4 - 2 and SeatView(game, 0).unseen.__len__() == 52 - 3 - 2 - 3
    assert view1.legal_actions == sorted(pisti_env.parse_cards("9S 7C 7D QS".split()))
    assert SeatView(game, 0).legal_actions == []


# ---------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("spec", SPECS)
def test_same_seed_same_play(spec):
    settings = make_settings(num_players=2, target=None)

    def run(seed):
        players = [make_agent(spec, seed=seed), make_agent(spec, seed=seed + 1)]
        game = Game(settings, seed=5)
        while not game.done:
            game.step(players[game.turn].act(SeatView(game, game.turn)))
        return game.history

    assert run(1) == run(1)
    if spec != "greedy":  # greedy's ties are rare enough that two seeds may agree
        assert run(1) != run(2)


# ---------------------------------------------------------------------------- behaviour
def test_R13_greedy_expert_and_pimc_take_a_pisti():
    for player in (GreedyAgent(seed=0), ExpertAgent(seed=0), PimcAgent(seed=0, n=8)):
        game = Game(make_settings(num_players=2, target=None),
                    deck=hand_deck("2H 3H 4H 5H", "5C 9D JC KC", "9S 7C 7D QS"), dealer=1)
        play(game, ["5C", "9S"])  # seat 0 takes the table, seat 1 opens with a lone 9
        assert player.act(SeatView(game, 0)) == pisti_env.parse_card("9D"), player


def test_greedy_takes_the_most_valuable_capture_else_throws_the_cheapest():
    # Pile top 5H over 3 hidden cards; seat 0 can take it with 5C or JC: equal value, so the
    # rank match (the Jack is saved). Seat 1 then has no capture: it throws a card without points.
    game = Game(make_settings(num_players=2, target=None),
                deck=hand_deck("2H 3H 4H 5H", "5C AD JC KC", "9S 3S 2C QS"), dealer=1)
    greedy = GreedyAgent(seed=0)
    assert greedy.act(SeatView(game, 0)) == pisti_env.parse_card("5C")
    play(game, ["AD"])  # seat 0 throws AD instead: seat 1 has no 5, no Jack
    for seed in range(5):
        greedy.reset(seed)
        assert greedy.act(SeatView(game, 1)) in pisti_env.parse_cards(["9S", "3S", "QS"])  # never 2C


def test_expert_saves_a_jack_for_a_bigger_pile_where_greedy_spends_it():
    game = Game(make_settings(num_players=2, target=None),
                deck=hand_deck("2H 3H 4H 5H", "5C 4D JC KC", "9S 7C 7D QS"), dealer=1)
    play(game, ["5C", "9S"])  # seat 1 opens with a lone 9; seat 0 holds 4D JC KC
    view = SeatView(game, 0)
    assert GreedyAgent(seed=0).act(view) == pisti_env.parse_card("JC")
    for seed in range(5):
        assert ExpertAgent(seed=seed).act(view) in pisti_env.parse_cards(["4D", "KC"])


def test_expert_opens_an_empty_pile_with_a_rank_it_holds_twice_never_a_jack():
    # Seat 0 throws 2D on the 5H, seat 1 takes the pile with JS; seat 0 must open the new pile
    # holding QC QD 8S JC: the Queen (two of its rank unseen) beats the 8 (three unseen).
    game = Game(make_settings(num_players=2, target=None),
                deck=hand_deck("2H 3H 4H 5H", "2D QC QD JC", "JS 7C 7D KS"), dealer=1)
    play(game, ["2D", "JS"])
    view = SeatView(game, 0)
    assert view.pile_size == 0 and view.is_my_turn
    for seed in range(5):
        assert ExpertAgent(seed=seed).act(view) in pisti_env.parse_cards(["QC", "QD"])


def test_expert_opens_with_a_rank_nobody_can_match():
    # Seat 0 takes the table (7D on top of a hidden 7C, R8) with 7H, covers seat 1's lone KS
    # with QC, and seat 1 takes the pile with JS. Seat 0 must open a new pile with QD or 7S:
    # every other 7 is known to it (7D, 7H played, 7C captured by its own side), so 7S cannot
    # be matched (R13) while two Queens are unseen.
    game = Game(make_settings(num_players=2, target=None),
                deck=hand_deck("2H 3H 7C 7D", "7H QC QD 7S", "KS JS 4C 5C"), dealer=1)
    play(game, ["7H", "KS", "QC", "JS"])
    view = SeatView(game, 0)
    assert view.pile_size == 0 and view.unseen_rank_counts[6] == 0 and view.unseen_rank_counts[11] == 2
    for seed in range(5):
        assert ExpertAgent(seed=seed).act(view) == pisti_env.parse_card("7S")


def _engine_minimax(game: Game, side: int) -> float:
    """Final hand total of ``side`` minus the other's, both playing their best (brute force
    through the real engine)."""
    if game.done:
        result = game.last_hand_result
        return result[side]["total"] - result[1 - side]["total"]
    values = []
    for card in game.legal_actions():
        child = game.clone()
        child.step(card)
        values.append(_engine_minimax(child, side))
    return max(values) if game.turn == side else min(values)


@pytest.mark.parametrize("variant", [{}, dict(last_card_pisti=False, ten_diamonds_pisti_bonus=3, double_pisti=10)])
def test_R18_R19_R21_endgame_solver_agrees_with_brute_force_through_the_engine(variant):
    settings = make_settings(num_players=2, target=None, **variant)
    rng = random.Random(4)
    checked = 0
    for game_seed in range(40):
        game = Game(settings, seed=game_seed)
        while not game.done and not (game.stock_size == 0 and game.pile_hidden == 0 and rng.random() < 0.3):
            game.step(rng.choice(game.legal_actions()))
        if game.done:
            continue
        seat, side = game.turn, game.side_of[game.turn]
        now = game.hand_scores()
        banked = [now[k]["card_points"] + now[k]["pisti_points"] for k in range(2)]
        view = SeatView(game, seat)
        values = endgame_values(
            view.hand, game.hand_card_ids(1 - seat), view.pile_top, view.pile_size, view.pile_known_points,
            None if view.last_capturer is None else int(view.last_capturer != side),
            (view.captured_count[side], view.captured_count[1 - side]), settings,
        )
        for card in view.hand:
            child = game.clone()
            child.step(card)
            assert values[card] + banked[side] - banked[1 - side] == _engine_minimax(child, side), (game_seed, card)
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("show_stock_bottom", [False, True])
def test_R28_expert_plays_the_last_deal_perfectly_once_it_knows_the_other_hand(show_stock_bottom):
    """Whenever card counting pins down the other hand (every unseen card is in it, with the
    shown stock-bottom card of R28 counted as known), the expert's card is a best one."""
    settings = make_settings(num_players=2, target=None, show_stock_bottom=show_stock_bottom)
    rng = random.Random(5)
    expert = ExpertAgent(seed=0)
    checked = 0
    for game_seed in range(25):
        game = Game(settings, seed=game_seed)
        while not game.done:
            seat = game.turn
            view = SeatView(game, seat)
            other_unknown = len(game.hands[1 - seat]) - (view.stock_bottom_holder == 1 - seat)
            if game.stock_size == 0 and game.pile_hidden == 0 and len(view.unseen) == other_unknown \
                    and len(view.legal_actions) > 1:
                values = {}
                for card in view.legal_actions:
                    child = game.clone()
                    child.step(card)
                    values[card] = _engine_minimax(child, game.side_of[seat])
                assert values[expert.act(view)] == max(values.values()), (game_seed, values)
                checked += 1
            game.step(rng.choice(game.legal_actions()))
    assert checked >= 10


def test_hold_probability_is_the_hypergeometric_chance():
    assert hold_probability(0, 40, 4) == 0.0
    assert hold_probability(3, 40, 0) == 0.0
    assert hold_probability(2, 5, 4) == 1.0  # only 3 other cards: the rank cannot be avoided
    # 1 card of the rank among 10, a hand of 3: 3/10.
    assert hold_probability(1, 10, 3) == pytest.approx(0.3)
    # 2 among 10, hand of 2: 1 - (8/10)(7/9).
    assert hold_probability(2, 10, 2) == pytest.approx(1 - 56 / 90)


def test_R13_R14_R16_R17_pisti_value():
    s = make_settings()
    c = pisti_env.parse_card
    assert pisti_value(c("9D"), c("9S"), 1, s, False) == 10
    assert pisti_value(c("9D"), c("9S"), 2, s, False) == 0
    assert pisti_value(c("JD"), c("9S"), 1, s, False) == 0
    assert pisti_value(c("JD"), c("JS"), 1, s, False) == 20
    assert pisti_value(c("JD"), c("JS"), 1, make_settings(double_pisti=10), False) == 10
    assert pisti_value(c("9D"), c("9S"), 1, make_settings(last_card_pisti=False), True) == 0
    assert pisti_value(c("10D"), c("10S"), 1, make_settings(ten_diamonds_pisti_bonus=3), False) == 13


# ---------------------------------------------------------------------------- inside the env
@pytest.mark.parametrize("settings_case, seed, specs, decisions_expected", [
    pytest.param(*cases("4p-partners hand")[0].values, 11, SPECS, 48, id="4p-partners-hand"),
    pytest.param(*cases("2p hand bluff")[0].values, 3, ["expert", "pimc:n=2"], None, id="2p-hand-bluff"),
])
def test_R29_players_play_inside_the_aec_env_and_views_match_observations(settings_case, seed, specs, decisions_expected):
    env = pisti_env.env(**settings_case.kwargs)
    env.reset(seed=seed)
    players = {a: make_agent(spec, seed=i) for i, (a, spec) in enumerate(zip(env.agents, specs))}
    decisions = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        view = view_for_agent(env, agent)
        mine = view.observation()
        np.testing.assert_array_equal(mine["observation"], obs["observation"])
        np.testing.assert_array_equal(mine["action_mask"], obs["action_mask"])
        env.step(players[agent].act(view))
        decisions += 1
    assert env.unwrapped.game.done
    if decisions_expected is not None:
        assert decisions == decisions_expected


# ---------------------------------------------------------------------------- bad input
def test_make_agent_names_and_specs():
    assert agent_names() == ["random", "greedy", "expert", "pimc", "search", "ismcts", "bluffer", "challenger"]
    assert parse_agent_spec("pimc:n=32,rollout=random") == ("pimc", {"n": 32, "rollout": "random"})
    assert make_agent("PIMC:n=5").n == 5


@pytest.mark.parametrize("spec, error, match", [
    ("smart", ValueError, "registered players are"),
    ("greedy:depth=2", ValueError, "unknown option.*allowed"),
    ("pimc:n", ValueError, "key=value"),
    ("pimc:n=0", ValueError, "n' must be an int >= 1"),
    ("pimc:n=2.5", TypeError, "must be an int"),
    ("pimc:rollout=smart", ValueError, "rollout"),
    ("expert:jack_keep=lots", TypeError, "must be a number"),
    (3, TypeError, "player spec must be a string"),
])
def test_make_agent_bad_specs(spec, error, match):
    with pytest.raises(error, match=match):
        make_agent(spec)


def test_seat_view_and_act_reject_bad_input():
    game = Game(make_settings(num_players=2, target=None), seed=0)
    with pytest.raises(ValueError, match="seat must be 0..1"):
        SeatView(game, 2)
    with pytest.raises(TypeError, match="seat must be an int"):
        SeatView(game, "0")
    with pytest.raises(TypeError, match="must be a pisti_env.Game"):
        SeatView("game", 0)
    player = GreedyAgent(seed=0)
    with pytest.raises(TypeError, match="expects a pisti_env.agents.SeatView"):
        player.act({"observation": None, "action_mask": None})
    with pytest.raises(ValueError, match="no legal action"):
        player.act(SeatView(game, 1 - game.turn))
    env = pisti_env.env()
    with pytest.raises(ValueError, match="call env.reset"):
        view_for_agent(env, "player_0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent"):
        view_for_agent(env, "player_9")


# ---------------------------------------------------------------------------- R29: claims, answers, bluffs
def test_R29_random_takes_every_kind_of_action():
    settings = make_settings(target=None, bluff=True)
    player = make_agent("random", seed=0)
    kinds = Counter()
    for seed in range(5):
        g = Game(settings, seed=seed)
        while not g.done:
            a = player.act(SeatView(g, g.turn))
            kinds["up" if a < FACE_DOWN else "down" if a < BELIEVE else a] += 1
            g.step(a)
    assert kinds["down"] > 0 and kinds[BELIEVE] > 0 and kinds[CHALLENGE] > 0


def test_R29_greedy_never_bluffs_believes_and_challenges_only_a_provable_bluff():
    settings = make_settings(target=None, bluff=True)
    greedy = make_agent("greedy", seed=0)
    rnd = make_agent("random", seed=1)
    answered = Counter()
    for seed in range(10):
        g = Game(settings, seed=seed)
        while not g.done:
            view = SeatView(g, g.turn)
            if g.turn == 0:
                a = greedy.act(view)
                assert not FACE_DOWN <= a < BELIEVE, "greedy never plays face down"
                if a >= BELIEVE:
                    assert (a == CHALLENGE) == provably_bluff(view)
                    answered[a] += 1
            else:
                a = rnd.act(view)
            g.step(a)
    assert answered[BELIEVE] > 0
    # A provable bluff: the answerer holds the other three nines.
    g = provable_bluff_game()
    g.step(down("3C"))
    assert greedy.act(SeatView(g, O)) == CHALLENGE
    assert make_agent("expert").act(SeatView(g, O)) == CHALLENGE
    assert make_agent("pimc:n=4", seed=0).act(SeatView(g, O)) == CHALLENGE


def test_R29_expert_claims_a_pisti_face_down_when_it_holds_the_rank():
    g = to_claim("7D 9C 9D 4H")
    assert make_agent("expert", seed=0).act(SeatView(g, F)) == down("9D")


def test_R29_expert_bluffs_only_when_the_risk_is_low():
    """Every bluff the expert makes is one a card-counting answerer would likely believe: never
    when all other cards of the rank are public (a sure challenge), and only at a low estimated
    chance of a challenge; and it does bluff sometimes."""
    settings = make_settings(num_players=4, target=None, bluff=True)
    bluffs = 0
    for seed in range(80):
        players = [make_agent("expert", seed=10 * seed + i) for i in range(4)]
        g = Game(settings, seed=seed)
        while not g.done:
            view = SeatView(g, g.turn)
            a = players[g.turn].act(view)
            if FACE_DOWN <= a < BELIEVE and rank(a - FACE_DOWN) != rank(view.pile_top):
                bluffs += 1
                assert view.public_rank_counts[rank(view.pile_top)] < 4
                # (Without cards at stake a bluff pays below 1/3; the cards it takes or saves add a little.)
                assert challenge_probability(view, a - FACE_DOWN, 0.2, 0.1) < 0.5
            g.step(a)
    assert bluffs > 0


def test_R29_expert_and_pimc_believe_a_likely_true_claim():
    """Early in the hand, with every other card of the rank unseen and a claimant that seldom
    bluffs, the claim is likely true: a challenge would only double its points."""
    g = to_claim("7D 9C 9D 4H")
    g.step(down("9D"))
    view = SeatView(g, O)
    q = claim_true_probability(view, 0.05)
    assert 0.75 < q < 1
    assert make_agent("expert:bluff_rate=0.05").act(view) == BELIEVE
    assert not challenge_pays(0.9, 10, 0.0) and challenge_pays(0.5, 10, 0.0)


def test_R29_challenge_probability_of_a_provable_bluff_is_one():
    # F holds 3♣; O holds the other three nines: a bluff on 9♣ is surely challenged... if O can
    # count it. F sees only that no nine is left but in O's hand: O surely knows.
    g = provable_bluff_game()
    view = SeatView(g, F)
    p = challenge_probability(view, C("3C"), 0.2, 0.1)
    assert 0.0 < p <= 1.0
    assert challenge_probability(view, C("3C"), 0.2, 1.0) == pytest.approx(1.0)


def test_R29_seat_view_shows_the_claim_and_only_own_face_down_cards():
    g = to_claim("7D 9C 9D 4H")
    view = SeatView(g, F)
    assert view.may_claim and view.lone_card_seat == O and view.pending_claim is None
    g.step(down("9D"))
    claimant, answerer = SeatView(g, F), SeatView(g, O)
    assert answerer.pending_claim == (F, C("9C")) and answerer.legal_actions == [BELIEVE, CHALLENGE]
    assert claimant.claim_card == C("9D") and answerer.claim_card is None
    assert C("9D") in answerer.unseen and C("9D") not in claimant.unseen
    assert not answerer.may_claim
    g.step(BELIEVE)
    assert SeatView(g, O).claims == [(F, O, C("9C"), BELIEVE, -1)]
    assert SeatView(g, O).bluff_points == [0, 10]
    assert SeatView(g, O).bluff_counts["bluff_believed"] == [0, 1]
    assert C("9D") in SeatView(g, O).unseen and C("9D") not in SeatView(g, F).unseen
    assert SeatView(g, O).history == [(F, C("7D")), (O, C("9C"))]
    obs = SeatView(g, O).observation()
    assert obs["action_mask"].shape == (106,)
