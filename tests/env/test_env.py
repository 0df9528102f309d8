"""Tests of the PettingZoo AEC environment ``pisti_v0`` (pisti_env/envs/env.py).

PettingZoo's own conformance tests (api_test, seed_test, render_test) run for the main
configurations; the rest checks the environment's contract: spaces, agent order (R3, R5),
action masks (R9), seeding and reset options (R5, R6), the two reward modes, hand-end infos,
the illegal-action penalty and rendering.

``max_cycles_test`` does not apply: ``pisti_v0`` has no ``max_cycles`` argument (an episode is
one hand or one match and always ends by the rules).
"""

from __future__ import annotations

import random
from functools import partial

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test

import pisti_env
from pisti_env import Game, ObservationLayout, card_to_text, make_settings, parse_card
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.envs.env import illegal_action_penalty

from helpers import (
    C,
    cases,
    codes,
    deck_from_plays,
    deck_with_prefix,
    down,
    legal_from_mask,
    live_turns,
    play_env_episode,
    snapshot,
)

# --------------------------------------------------------------------------- helpers

ALL_TEXT = [card_to_text(c) for c in range(52)]
SUIT_SYMBOLS = "♣♦♥♠"

# Cases for the PettingZoo conformance tests: 2, 3, 4 (partnerships, the default) and 4 without
# partnerships; single hands (target=None) and the default match target 151; with bluffs (R29)
# some of them and other variants, over more cycles (a claim and its answer take two).
PLAIN_API_CASES = cases(
    "2p hand", "2p 151", "3p hand", "3p 151", "4p-partners hand", "4p-partners 151", "4p-solo hand", "4p-solo 151",
)
BLUFF_API_CASES = cases(
    "2p hand bluff", "2p 151 jack-double bluff", "3p hand last-card-off bluff", "4p-partners hand bluff",
    "4p-solo 51 stock-bottom bluff",
)


def cycles(case) -> int:
    return 300 if case.bluff else 200


def side_of(settings, seat: int) -> int:
    return seat % 2 if settings.partnerships else seat


def seat_of(agent: str) -> int:
    return int(agent.split("_")[1])


# --------------------------------------------------------------------------- PettingZoo tests


# api_test's generic advice for Dict observations (as for PettingZoo's own classic envs) and
# its arbitrary reset option {"options": ...}, which pisti_v0 ignores with a warning.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@pytest.mark.parametrize("settings_case", PLAIN_API_CASES + BLUFF_API_CASES)
def test_R29_pettingzoo_api_test(settings_case):
    api_test(pisti_env.env(**settings_case.kwargs), num_cycles=cycles(settings_case))


@pytest.mark.parametrize("settings_case", PLAIN_API_CASES + BLUFF_API_CASES[:3])
def test_R29_pettingzoo_seed_test(settings_case):
    seed_test(partial(pisti_env.env, **settings_case.kwargs), num_cycles=cycles(settings_case))


@pytest.mark.parametrize("settings_case", PLAIN_API_CASES[::2] + BLUFF_API_CASES[:1])
def test_R29_pettingzoo_render_test(settings_case):
    """PettingZoo's ``render_test`` goes through every render mode, ``rgb_array`` included
    (drawn with Pillow on the base install, issue 50)."""
    render_test(partial(pisti_env.env, **settings_case.kwargs))


def test_pettingzoo_module_style_import():
    from pisti_env.envs import pisti_v0

    e = pisti_v0.env(target=None)
    e.reset(seed=0)
    assert e.metadata["name"] == "pisti_v0"


# --------------------------------------------------------------------------- metadata, agents, spaces


def test_metadata():
    e = pisti_env.env()
    assert e.metadata["name"] == "pisti_v0"
    assert set(e.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    assert isinstance(e.unwrapped, pisti_env.raw_env)


@pytest.mark.parametrize("settings_case", cases(
    "2p", "3p", "4p-partners", "4p-solo", "2p bluff", "3p bluff", "4p-partners bluff", "4p-solo bluff"))
def test_R29_agents_and_spaces(settings_case):
    """The spaces; with bluffs (R29) actions and masks are 106 wide (52 face up, 52 face down,
    believe, challenge), without 52."""
    config = settings_case.kwargs
    n = settings_case.num_players
    width = 106 if settings_case.bluff else 52
    e = pisti_env.env(**config)
    names = [f"player_{i}" for i in range(n)]
    assert e.possible_agents == names
    e.reset(seed=1)
    assert e.agents == names
    size = ObservationLayout(make_settings(**config)).size
    for a in names:
        space = e.observation_space(a)
        assert isinstance(space, spaces.Dict)
        assert set(space.spaces) == {"observation", "action_mask"}
        obs_box = space["observation"]
        assert isinstance(obs_box, spaces.Box)
        assert obs_box.dtype == np.float32
        assert obs_box.shape == (size,)
        mask_box = space["action_mask"]
        assert isinstance(mask_box, spaces.Box)
        assert mask_box.dtype == np.int8 and mask_box.shape == (width,)
        assert np.all(mask_box.low == 0) and np.all(mask_box.high == 1)
        act = e.action_space(a)
        assert isinstance(act, spaces.Discrete) and act.n == width
        assert act == spaces.Discrete(width)
        obs = e.observe(a)
        assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (size,)
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (width,)
        assert space.contains(obs)
    plain = pisti_env.env(**{k: v for k, v in config.items() if k != "bluff"})
    assert plain.action_space("player_0") == spaces.Discrete(52)  # bluff=False: unchanged


def test_unwrapped_game_is_a_game():
    e = pisti_env.env()
    e.reset(seed=0)
    assert isinstance(e.unwrapped.game, Game)
    assert e.unwrapped.game.settings == make_settings()


@pytest.mark.parametrize(
    "config",
    [dict(num_players=2, target=51), dict(num_players=3, target=51), dict(num_players=4, target=51),
     dict(num_players=4, partnerships=False, target=51)],
)
def test_R3_R5_agents_play_in_seat_order_and_observations_stay_in_space(config):
    """Within a hand seat s+1 plays after seat s (R3); after the dealer's last card of a hand
    the next dealer is the seat after the old one and the seat after the new dealer starts (R5)."""
    e = pisti_env.env(**config)
    e.reset(seed=3)
    game = e.unwrapped.game
    n = config["num_players"]
    rng = random.Random(3)
    assert e.agent_selection == f"player_{(game.dealer + 1) % n}"
    hand_ends = 0
    while not game.done:
        agent = e.agent_selection
        for a in e.agents:
            assert e.observation_space(a).contains(e.observe(a))
        dealer, hands_before = game.dealer, game.hands_completed
        e.step(rng.choice(legal_from_mask(e.observe(agent))))
        if game.done:
            break
        nxt = seat_of(e.agent_selection)
        if game.hands_completed != hands_before:
            hand_ends += 1
            assert seat_of(agent) == dealer  # the dealer plays the last card of a hand
            assert game.dealer == (dealer + 1) % n
            assert nxt == (dealer + 2) % n
        else:
            assert nxt == (seat_of(agent) + 1) % n
    assert hand_ends >= 1


# --------------------------------------------------------------------------- action mask


@pytest.mark.parametrize(
    "config", [dict(num_players=2), dict(num_players=3), dict(num_players=4, target=None)]
)
def test_R9_action_mask_is_exactly_the_hand_of_the_seat_to_move(config):
    e = pisti_env.env(**config)
    e.reset(seed=11)
    game = e.unwrapped.game
    rng = random.Random(11)
    steps = 0
    while not game.done and steps < 400:
        mover = e.agent_selection
        for a in e.agents:
            mask = e.observe(a)["action_mask"]
            assert mask.dtype == np.int8
            assert set(np.unique(mask)) <= {0, 1}
            if a == mover:
                hand_ids = sorted({p % 52 for p in game.hands[seat_of(a)]})
                assert np.flatnonzero(mask).tolist() == hand_ids
                assert hand_ids == game.legal_actions()
                assert len(hand_ids) >= 1
            else:
                assert not mask.any(), f"{a} is not to move but has a non-zero mask"
        e.step(rng.choice(legal_from_mask(e.observe(mover))))
        steps += 1


def test_action_mask_all_zero_once_terminated():
    e = pisti_env.env(target=None)
    e.reset(seed=5)
    rng = random.Random(5)
    seen_terminal = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term:
            seen_terminal += 1
            for a in e.agents:
                assert not e.observe(a)["action_mask"].any()
            e.step(None)
        else:
            e.step(rng.choice(legal_from_mask(obs)))
    assert seen_terminal == 2
    assert e.agents == []


# --------------------------------------------------------------------------- seeding and reset options


def _trace(e, seed, policy_seed, reset_seed=True):
    """Observations, masks, rewards and actions of a whole episode under a seeded policy."""
    if reset_seed:
        e.reset(seed=seed)
    trace = [tuple(e.unwrapped.game.deck), e.unwrapped.game.dealer]
    rng = random.Random(policy_seed)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        action = None if term or trunc else rng.choice(legal_from_mask(obs))
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, action))
        e.step(action)
    return trace


@pytest.mark.parametrize("config", [dict(num_players=2, target=None), dict(num_players=4, target=51)])
def test_R5_same_seed_same_game(config):
    e1, e2 = pisti_env.env(**config), pisti_env.env(**config)
    t1 = _trace(e1, 42, 7)
    t2 = _trace(e2, 42, 7)
    assert t1 == t2
    # The same env reset again with the same seed replays the same game too.
    assert _trace(e1, 42, 7) == t1


def test_different_seeds_give_different_games():
    e = pisti_env.env(num_players=2, target=None)
    decks = set()
    for s in range(10):
        e.reset(seed=s)
        decks.add(tuple(e.unwrapped.game.deck))
    assert len(decks) == 10
    t0 = _trace(pisti_env.env(target=None), 0, 1)
    t1 = _trace(pisti_env.env(target=None), 1, 1)
    assert t0 != t1


def test_unseeded_reset_after_seeded_reset_is_deterministic():
    e1, e2 = pisti_env.env(target=None), pisti_env.env(target=None)
    e1.reset(seed=9)
    e2.reset(seed=9)
    seeded_deck = tuple(e1.unwrapped.game.deck)
    decks1, decks2 = [], []
    for _ in range(3):
        e1.reset()
        e2.reset()
        decks1.append(tuple(e1.unwrapped.game.deck))
        decks2.append(tuple(e2.unwrapped.game.deck))
    assert decks1 == decks2
    # The unseeded resets do not replay the seeded game, nor each other.
    assert seeded_deck not in decks1
    assert len(set(decks1)) == 3
    # Whole episodes match as well.
    assert _trace(e1, None, 3, reset_seed=False) == _trace(e2, None, 3, reset_seed=False)


@pytest.mark.parametrize("n, dealer", [(2, 0), (2, 1), (3, 2), (4, 1), (4, 3)])
def test_R5_R6_reset_options_deck_and_dealer(n, dealer):
    deck = ALL_TEXT[::-1]  # K♠ first; its table cards are KS QS JS 10S: top 10S, no Jack on top
    e = pisti_env.env(num_players=n)
    e.reset(seed=0, options={"deck": deck, "dealer": dealer})
    game = e.unwrapped.game
    ids = [parse_card(c) for c in deck]
    assert list(game.deck) == ids
    assert game.dealer == dealer
    first = (dealer + 1) % n
    assert e.agent_selection == f"player_{first}"
    # R6.1: items 0-3 on the table, item 3 on top; R6.2: one card at a time from the first player.
    assert list(game.pile) == ids[:4]
    for i in range(n):
        seat = (first + i) % n
        assert sorted(game.hands[seat]) == sorted(ids[4 + i: 4 + 4 * n: n])
    # The mask of the first player is its dealt hand.
    assert legal_from_mask(e.observe(f"player_{first}")) == sorted(ids[4: 4 + 4 * n: n])


def test_reset_options_deck_accepts_ids_and_text_codes():
    e = pisti_env.env()
    ids = list(range(51, -1, -1))
    e.reset(options={"deck": ids, "dealer": 0})
    by_ids = list(e.unwrapped.game.deck)
    e.reset(options={"deck": [card_to_text(c) for c in ids], "dealer": 0})
    assert list(e.unwrapped.game.deck) == by_ids == ids


def test_given_dealer_does_not_change_the_seeded_deck():
    e = pisti_env.env()
    e.reset(seed=4, options={"dealer": 0})
    d0 = list(e.unwrapped.game.deck)
    e.reset(seed=4, options={"dealer": 1})
    assert list(e.unwrapped.game.deck) == d0
    assert e.unwrapped.game.dealer == 1
    assert e.agent_selection == "player_0"


def test_unknown_reset_option_warns():
    e = pisti_env.env()
    with pytest.warns(UserWarning, match="unknown reset option.*bogus"):
        e.reset(seed=0, options={"bogus": 1})
    assert e.agents == ["player_0", "player_1"]


# --------------------------------------------------------------------------- diff rewards

DIFF_CONFIGS = [
    pytest.param(dict(num_players=2, target=None), 12, id="2p-hand"),
    pytest.param(dict(num_players=2, target=51), 6, id="2p-51"),
    pytest.param(dict(num_players=3, target=None), 10, id="3p-hand"),
    pytest.param(dict(num_players=3, target=51), 4, id="3p-51"),
    pytest.param(dict(num_players=4, target=None), 10, id="4p-partners-hand"),
    pytest.param(dict(num_players=4, target=51), 4, id="4p-partners-51"),
    pytest.param(dict(num_players=4, partnerships=False, target=51), 3, id="4p-solo-51"),
    pytest.param(dict(num_players=2, target=51, win_margin=2, double_pisti=10), 4, id="2p-margin-dp10"),
    pytest.param(dict(num_players=2, target=None, last_card_pisti=False, double_pisti=0), 10, id="2p-nolast-dp0"),
    pytest.param(dict(num_players=3, target=51, ten_diamonds_pisti_bonus=3, show_stock_bottom=True), 3, id="3p-bonus-bottom"),
    pytest.param(dict(num_players=4, target=51, show_stock_bottom=True, last_card_pisti=False), 3, id="4p-bottom-nolast"),
]


@pytest.mark.parametrize("config, episodes", DIFF_CONFIGS)
def test_diff_rewards_sum_to_final_score_difference(config, episodes):
    """reward="diff": over an episode each agent's rewards (as returned by ``last()``) add up to
    its side's final match score minus the mean of the other sides'; partners get equal
    rewards; a step without a capture and without a hand end gives 0 to everyone."""
    e = pisti_env.env(reward="diff", **config)
    settings = e.unwrapped.settings
    n = settings.num_players
    for ep in range(episodes):
        e.reset(seed=1000 + ep)
        game = e.unwrapped.game
        rng = random.Random(ep)
        before = {}

        totals = {a: 0.0 for a in e.possible_agents}
        for agent, obs in live_turns(e, totals):
            pile_len, hands_done = len(game.pile), game.hands_completed
            e.step(rng.choice(legal_from_mask(obs)))
            rewards = e.unwrapped.rewards
            if game.hands_completed == hands_done and len(game.pile) == pile_len + 1:
                # The card just stayed on the pile: no capture, no hand end -> no reward.
                assert all(r == 0 for r in rewards.values()), rewards
            if settings.partnerships:
                assert rewards["player_0"] == rewards["player_2"]
                assert rewards["player_1"] == rewards["player_3"]
            assert sum(rewards.values()) == pytest.approx(0.0, abs=1e-9)

        assert game.done
        scores = game.match_scores
        for a, total in totals.items():
            side = side_of(settings, seat_of(a))
            others = [s for i, s in enumerate(scores) if i != side]
            expected = scores[side] - sum(others) / len(others)
            assert total == pytest.approx(expected, abs=1e-6), (config, ep, a, totals, scores)
        if settings.partnerships:
            assert totals["player_0"] == pytest.approx(totals["player_2"])
            assert totals["player_1"] == pytest.approx(totals["player_3"])
        if config.get("target") is not None:
            assert max(scores) >= config["target"]
        assert n == len(totals)


def _play_cards(e, cards):
    """Play the given text-coded cards in order (each must be legal for the seat to move);
    returns the env's reward dict after each play."""
    out = []
    for c in cards:
        cid = parse_card(c)
        assert cid in legal_from_mask(e.observe(e.agent_selection)), (c, e.agent_selection)
        e.step(cid)
        out.append(dict(e.unwrapped.rewards))
    return out


def test_R8_R13_R30_diff_rewards_reveal_only_public_points_2p():
    """Table: 10♦ A♣ 2♣ face down, 5♥ up. Seat 1 (first, dealer 0) takes it with 5♠: 6 hidden
    points (R8) are not public (R30), so nobody is rewarded. Then a pişti with 7♣ on 7♦ (R13):
    +10 / −10; a pişti of Aces: 10 + 1 + 1 = 12 public points: +12 / −12."""
    # items 4.. alternate seat 1, seat 0 (R6.2)
    deck = deck_with_prefix(["10D", "AC", "2C", "5H", "5S", "7D", "7C", "AD", "AH", "9D", "3D", "KD"])
    e = pisti_env.env(num_players=2, target=None)
    e.reset(options={"deck": deck, "dealer": 0})
    assert e.agent_selection == "player_1"
    r = _play_cards(e, ["5S", "7D", "7C", "AD", "AH", "9D", "3D", "KD"])
    zero = {"player_0": 0.0, "player_1": 0.0}
    assert r[0] == zero  # capture of the 4-card table: hidden points stay private, no pişti (R15)
    assert r[1] == zero
    assert r[2] == {"player_0": -10.0, "player_1": 10.0}
    assert r[3] == zero
    assert r[4] == {"player_0": -12.0, "player_1": 12.0}
    assert r[5] == r[6] == r[7] == zero
    # The hidden 6 points arrive with the hand end: the step rewards of the whole episode add up
    # to the final score difference.
    game = e.unwrapped.game
    totals = {a: sum(step[a] for step in r) for a in zero}
    rng = random.Random(0)
    while not game.done:
        e.step(rng.choice(legal_from_mask(e.observe(e.agent_selection))))
        for a in totals:
            totals[a] += e.unwrapped.rewards[a]
    s = game.match_scores
    assert totals["player_1"] == pytest.approx(s[1] - s[0])
    assert totals["player_0"] == pytest.approx(s[0] - s[1])
    assert game.last_hand_result[1]["card_points"] >= 6 + 2  # 10♦ A♣ 2♣ + A♦ A♥


@pytest.mark.parametrize("n, dealer, expected", [
    pytest.param(3, 2, {"player_0": -5.0, "player_1": -5.0, "player_2": 10.0}, id="R13-3p"),
    pytest.param(4, 3, {"player_0": 10.0, "player_1": -10.0, "player_2": 10.0, "player_3": -10.0}, id="R4-R13-4p-partners"),
])
def test_R4_R13_diff_reward_of_a_pisti(n, dealer, expected):
    """Seat 2 scores a pişti. With 3 players: +10 for it, 0 − mean(10, 0) = −5 for each of the
    others. With partnerships both partners (0 and 2) get +10, seats 1 and 3 get −10."""
    deck = deck_with_prefix(["3C", "4C", "6C", "5H", "5S", "8D", "8H"])
    e = pisti_env.env(num_players=n, target=None)
    e.reset(options={"deck": deck, "dealer": dealer})
    assert e.agent_selection == "player_0"
    r = _play_cards(e, ["5S", "8D", "8H"])
    if n == 3:
        assert r[0] == r[1] == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}
    assert r[2] == expected


# --------------------------------------------------------------------------- win rewards


@pytest.mark.parametrize(
    "config",
    [dict(num_players=2, target=51), dict(num_players=3, target=51), dict(num_players=4, target=51),
     dict(num_players=2, target=None), dict(num_players=4, partnerships=False, target=None)],
)
def test_win_rewards_only_at_the_end(config):
    e = pisti_env.env(reward="win", **config)
    settings = e.unwrapped.settings
    for ep in range(4):
        e.reset(seed=200 + ep)
        game = e.unwrapped.game
        rng = random.Random(ep)
        totals = {a: 0.0 for a in e.possible_agents}
        for agent, obs in live_turns(e, totals):
            e.step(rng.choice(legal_from_mask(obs)))
            if not game.done:
                assert all(r == 0 for r in e.unwrapped.rewards.values())
        scores = game.match_scores
        best = max(scores)
        for a, total in totals.items():
            side = side_of(settings, seat_of(a))
            if scores.count(best) > 1:  # only possible in a single hand (R25)
                assert config["target"] is None
                assert total == (0.0 if scores[side] == best else -1.0)
            else:
                assert total == (1.0 if scores[side] == best else -1.0), (scores, totals)
                assert game.winner == scores.index(best)


@pytest.mark.parametrize("n", [2, 3])
def test_R25_win_rewards_tied_best_single_hand_get_zero(n):
    """target=None: sides tied for the best total draw and get 0, the rest −1 (R25)."""
    e = pisti_env.env(num_players=n, target=None, reward="win")
    for seed in range(600):
        e.reset(seed=seed)
        totals = play_env_episode(e, random.Random(seed))
        scores = e.unwrapped.game.match_scores
        best = max(scores)
        if scores.count(best) > 1:
            break
    else:
        pytest.fail("no tied single hand found in 600 seeded random games")
    game = e.unwrapped.game
    assert game.winner is None
    for a, total in totals.items():
        assert total == (0.0 if scores[seat_of(a)] == best else -1.0), (scores, totals)


def test_R21_golden_26_26_hand_replays_with_win_rewards():
    """The golden hand "26-26: nobody gets the majority": its totals are 8 and 15 (no tie), so
    the win reward is +1 for the side with 15 and −1 for the other."""
    import json
    from pathlib import Path

    lines = Path("/work/shared/golden/hands.jsonl").read_text().splitlines()
    hand = next(json.loads(l) for l in lines if l.strip() and json.loads(l)["name"].startswith("26-26"))
    e = pisti_env.env(reward="win", target=None, **hand["settings"])
    e.reset(options={"deck": hand["deck"], "dealer": hand["dealer"]})
    totals = {a: 0.0 for a in e.possible_agents}
    actions = iter(zip(hand["seats"], hand["actions"]))
    for agent, obs in live_turns(e, totals):
        seat, card = next(actions)
        assert agent == f"player_{seat}"
        e.step(parse_card(card))
    expected = [r["total"] for r in hand["result"]]
    assert e.unwrapped.game.match_scores == expected
    assert [r["cards"] for r in hand["result"]] == [26, 26]
    best = max(expected)
    for a, total in totals.items():
        assert total == (1.0 if expected[seat_of(a)] == best else -1.0)


# --------------------------------------------------------------------------- infos

RESULT_KEYS = {"cards", "card_points", "majority", "pisti", "double_pisti", "pisti_points", "total"}


@pytest.mark.parametrize(
    "config", [dict(num_players=2, target=51), dict(num_players=4, target=51), dict(num_players=3, target=None)]
)
def test_hand_end_infos(config):
    e = pisti_env.env(**config)
    e.reset(seed=77)
    settings = e.unwrapped.settings
    game = e.unwrapped.game
    rng = random.Random(77)
    mid_match_ends = 0
    previous_scores = [0] * settings.num_sides
    seen_result = {a: False for a in e.agents}  # has the agent moved since the last hand end?
    while not game.done:
        hands_done = game.hands_completed
        mover = e.agent_selection
        e.step(rng.choice(legal_from_mask(e.observe(mover))))
        infos = e.unwrapped.infos
        if game.hands_completed == hands_done:
            # A hand result stays in an agent's info until that agent's next move.
            seen_result[mover] = True
            for a in e.agents:
                assert ("hand_result" in infos[a]) == (not seen_result[a] and mid_match_ends > 0)
            continue
        seen_result = {a: False for a in e.agents}
        for a in e.agents:
            info = infos[a]
            result = info["hand_result"]
            assert isinstance(result, list) and len(result) == settings.num_sides
            for side_result in result:
                assert set(side_result) >= RESULT_KEYS
                assert side_result["total"] == (
                    side_result["card_points"] + side_result["majority"] + side_result["pisti_points"]
                )
            assert sum(r["cards"] for r in result) == 52  # R19: every card ends up captured
            assert sum(r["card_points"] for r in result) == 13  # R20
            assert list(info["match_scores"]) == [p + r["total"] for p, r in zip(previous_scores, result)]
            assert info["side"] == side_of(settings, seat_of(a))
        previous_scores = list(infos[e.agents[0]]["match_scores"])
        if not game.done:
            mid_match_ends += 1
            # the match goes on: nobody is terminated and someone is to move
            assert not any(e.unwrapped.terminations.values())
            assert e.observe(e.agent_selection)["action_mask"].any()
            # the infos are visible through last() to the next agent
            assert "hand_result" in e.last()[4]
    if config["target"] is not None:
        assert mid_match_ends >= 1
    else:
        assert mid_match_ends == 0


# --------------------------------------------------------------------------- illegal actions


def _illegal_card(e) -> int:
    mask = e.observe(e.agent_selection)["action_mask"]
    return int(np.flatnonzero(mask == 0)[0])


def _expected_penalty_rewards(e, offender: str, reward: str) -> dict[str, float]:
    """Per agent: the offender's side gets the penalty, the other sides share its opposite
    (diff) or get +1 / 0 (win, two / more sides); see pisti_env.env's docstring."""
    raw = e.unwrapped
    settings = raw.settings
    k = settings.num_sides
    side = side_of(settings, seat_of(offender))
    if reward == "diff":
        penalty = illegal_action_penalty(raw.game, side)
        others = -penalty / (k - 1)
    else:
        penalty, others = -1.0, (1.0 if k == 2 else 0.0)
    return {a: (penalty if side_of(settings, seat_of(a)) == side else others) for a in e.possible_agents}


def test_illegal_action_defaults_follow_pettingzoo_classic():
    """env() ends the game with a penalty on an illegal move (as PettingZoo's classic env()s,
    wrapped in TerminateIllegalWrapper, do); the bare raw_env raises, for debugging."""
    assert pisti_env.env().unwrapped.illegal_action == "penalty"
    assert pisti_env.raw_env().illegal_action == "raise"
    assert pisti_env.env(illegal_action="raise").unwrapped.illegal_action == "raise"
    assert pisti_env.raw_env(illegal_action="penalty").illegal_action == "penalty"


@pytest.mark.parametrize("reward", ["diff", "win"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_illegal_action_penalty_at_first_move(reward, n):
    e = pisti_env.env(num_players=n, reward=reward)  # illegal_action="penalty" is env()'s default
    e.reset(seed=2)
    offender = e.agent_selection
    expected = _expected_penalty_rewards(e, offender, reward)
    assert expected[offender] < 0 and sum(expected.values()) == pytest.approx(
        0.0 if reward == "diff" or n != 3 else -1.0)  # per side the diff rewards sum to 0
    with pytest.warns(UserWarning, match=rf"illegal action \d+ by {offender}.*episode ends"):
        e.step(_illegal_card(e))
    assert all(e.terminations[a] for a in e.agents)
    obs, rew, term, trunc, info = e.last()
    assert e.agent_selection == offender
    assert rew == expected[offender] and term and info.get("illegal_move") is True
    assert not obs["action_mask"].any()
    totals = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, rew, term, trunc, info = e.last()
        assert term
        totals[agent] += rew
        if agent != offender:
            assert not info.get("illegal_move", False)
        e.step(None)
    assert e.agents == []
    assert totals == pytest.approx(expected)


def test_illegal_action_penalty_mid_game():
    e = pisti_env.env(num_players=3, illegal_action="penalty")
    e.reset(seed=8)
    rng = random.Random(8)
    for _ in range(20):
        e.step(rng.choice(legal_from_mask(e.observe(e.agent_selection))))
    history = list(e.unwrapped.game.history)
    offender = e.agent_selection
    expected = _expected_penalty_rewards(e, offender, "diff")
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(_illegal_card(e))
    assert e.unwrapped.game.history == history  # the illegal card is not played
    assert e.unwrapped.rewards == pytest.approx(expected)
    assert e.unwrapped._cumulative_rewards[offender] == expected[offender]
    assert all(e.terminations.values())
    assert e.infos[offender]["illegal_move"] is True
    for agent in e.agent_iter():
        assert e.last()[2]
        e.step(None)
    assert e.agents == []


def test_penalty_mode_plays_legal_actions_normally():
    e1 = pisti_env.env(illegal_action="penalty", target=None)
    e2 = pisti_env.env(illegal_action="raise", target=None)
    assert _trace(e1, 6, 6) == _trace(e2, 6, 6)


# --------------------------------------------------------------------------- render


def test_render_ansi_returns_text_with_card_symbols():
    e = pisti_env.env(render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str)
    assert any(s in text for s in SUIT_SYMBOLS)
    # every card of the mover's hand is shown
    game = e.unwrapped.game
    from pisti_env import card_to_symbol

    for c in game.hands[game.turn]:
        assert card_to_symbol(c) in text


def test_render_human_prints_and_returns_none(capsys):
    e = pisti_env.env(render_mode="human")
    e.reset(seed=0)
    capsys.readouterr()
    assert e.render() is None
    out = capsys.readouterr().out
    assert any(s in out for s in SUIT_SYMBOLS)
    # human mode also renders after each step
    e.step(legal_from_mask(e.observe(e.agent_selection))[0])
    assert any(s in capsys.readouterr().out for s in SUIT_SYMBOLS)


@pytest.mark.filterwarnings("ignore:.*render without specifying a render_mode")
def test_render_without_mode_returns_none():
    e = pisti_env.env()
    e.reset(seed=0)
    assert e.render() is None


# --------------------------------------------------------------------------- R29: claims and answers in the env
def test_R29_answer_is_a_turn_of_the_seat_that_played_the_lone_card_in_the_env():
    # 3 players, dealer 0: seat 1 takes the table, seat 2 plays the lone 9♣, seat 0 claims.
    e = pisti_env.env(num_players=3, bluff=True, target=None)
    e.reset(options={"deck": deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C")), "dealer": 0})
    for agent, action in (("player_1", C("7D")), ("player_2", C("9C"))):
        assert e.agent_selection == agent
        e.step(action)
    assert e.agent_selection == "player_0"
    mask = e.observe("player_0")["action_mask"]
    assert mask[down("3C")] == 1 and mask[BELIEVE] == 0 and mask[CHALLENGE] == 0
    e.step(down("3C"))
    assert e.agent_selection == "player_2"  # the seat that played the lone card answers
    assert legal_from_mask(e.observe("player_2")) == [BELIEVE, CHALLENGE]
    assert not e.observe("player_0")["action_mask"].any() and not e.observe("player_1")["action_mask"].any()
    e.step(CHALLENGE)
    assert e.agent_selection == "player_1"  # then the seat after the claimant
    assert e.rewards["player_2"] == pytest.approx(20 - 0)  # diff: +20 against the mean of 0 and 0
    assert e.rewards["player_0"] == pytest.approx(-10) and e.rewards["player_1"] == pytest.approx(-10)


def test_R29_illegal_bluff_actions_in_the_env():
    deck = deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 9D 4H"))
    e = pisti_env.env(bluff=True, target=None, illegal_action="raise")
    e.reset(options={"deck": deck, "dealer": 0})
    raw = e.unwrapped
    before = snapshot(raw.game)
    with pytest.raises(ValueError, match=r"only when exactly one card lies on the table.*R29"):
        e.step(down("7D"))
    with pytest.raises(ValueError, match=r"no claim to answer"):
        e.step(BELIEVE)
    with pytest.raises(TypeError, match=r"int action id 0\.\.105"):
        e.step("JD")
    assert snapshot(raw.game) == before and e.agent_selection == "player_1"
    assert raw.rewards == {"player_0": 0.0, "player_1": 0.0}
    # illegal_action="penalty" (env()'s default): an illegal face-down play ends the episode
    # with the penalty (no raise).
    p = pisti_env.env(bluff=True, target=None)
    p.reset(options={"deck": deck, "dealer": 0})
    expected = _expected_penalty_rewards(p, "player_1", "diff")
    with pytest.warns(UserWarning, match="illegal action 71 by player_1"):
        p.step(down("7D"))
    assert p.unwrapped.rewards == pytest.approx(expected) and all(p.unwrapped.terminations.values())
    assert p.unwrapped.infos["player_1"] == {"illegal_move": True}


@pytest.mark.parametrize("settings_case", cases(
    "2p hand bluff", "2p 51 jack-double bluff", "3p 51 bluff", "4p-partners hand bluff", "4p-solo hand bluff"))
def test_R29_masks_rewards_and_hand_results_in_random_play(settings_case):
    """Each mask is exactly the legal actions (others all zero); diff rewards add up to the
    final score difference; hand-end infos carry the bluff counts."""
    for seed in range(2):
        e = pisti_env.env(reward="diff", **settings_case.kwargs)
        e.reset(seed=seed)
        game = e.unwrapped.game
        agents = e.possible_agents
        rng = random.Random(seed)
        totals = dict.fromkeys(agents, 0.0)
        claims = answers = seen_results = 0
        for agent, obs in live_turns(e, totals):
            legal = legal_from_mask(obs)
            assert legal == game.legal_actions()
            for other in agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
            action = rng.choice(legal)
            claims += FACE_DOWN <= action < BELIEVE
            answers += action >= BELIEVE
            hands_before = game.hands_completed
            e.step(action)
            if game.hands_completed != hands_before:  # hand-end infos for every agent
                for a in e.agents:
                    info_hand = e.infos[a]["hand_result"]
                    assert info_hand == game.last_hand_result
                    assert all("bluff_points" in r and "bluff_challenged_false" in r for r in info_hand)
                seen_results += 1
        assert claims == answers > 0 and seen_results == game.hands_completed >= 1
        ms = game.match_scores
        for a in agents:
            side = game.side_of[agents.index(a)]
            others = [x for i, x in enumerate(ms) if i != side]
            assert totals[a] == pytest.approx(ms[side] - sum(others) / len(others), abs=1e-6)
