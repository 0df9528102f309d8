"""R29, the bluff variant, through the AEC environment, the observations, ``determinize`` and
the scripted players; plus invariants under random play with bluffs.

* PettingZoo's ``api_test``/``seed_test``; ``Discrete(106)`` and a 106-entry mask offering
  exactly the legal actions; the answer is a turn of the seat that played the lone card.
* R30–R31: a seat's observation, mask and rewards do not depend on what it may not know,
  face-down cards of other seats (its partner's included) among them; the converse shows.
* Random play with bluffs: every card accounted for, counters and an independent tally agree,
  points add up (R22, R23) for 2–6 players and partnerships.
* ``determinize`` keeps what the seat knows and deals the unseen face-down cards again;
  ``claim=`` conditions a pending claim.
* The baselines play legal actions, read no hidden state, and bluff as documented.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from functools import partial

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test

import pisti_env
from pisti_env import Game, ObservationEncoder, ObservationLayout, make_settings
from pisti_env.agents import SeatView, make_agent, view_for_agent
from pisti_env.agents.bluffing import challenge_pays, challenge_probability, claim_true_probability
from pisti_env.agents.greedy import provably_bluff
from pisti_env.game import (
    BELIEVE,
    CHALLENGE,
    FACE_DOWN,
    LOC_CAPT_DOWN,
    LOC_CAPT_HIDDEN,
    LOC_CAPT_SHOWN,
    LOC_HAND,
    LOC_HAND_SHOWN,
    LOC_PILE_DOWN,
    LOC_PILE_DOWN_SHOWN,
    LOC_PILE_HIDDEN,
    LOC_PILE_JACK,
    LOC_PILE_UP,
    LOC_STOCK,
    LOC_STOCK_SHOWN,
    NOBODY,
    PLAYED_BY,
)

from test_bluff import F, O, bluff_game, down, snapshot, to_claim  # hand-built R29 situations
from test_invariants import PLAYER_CONFIGS, check_conservation
from test_no_leak import rules_unknown as plain_rules_unknown

C = pisti_env.parse_card
JACK = 10


def rank(card: int) -> int:
    return card % 13


def card_points(card: int) -> int:
    """R20, written out independently of the engine's table."""
    c = card % 52
    return 3 if c == 22 else 2 if c == 1 else 1 if rank(c) in (0, JACK) else 0


def play(g, cards) -> None:
    for c in cards:
        g.step(C(c))


def legal_from_mask(obs) -> list[int]:
    return np.flatnonzero(obs["action_mask"]).tolist()


# =========================================================================== PettingZoo
API_CONFIGS = [
    pytest.param(dict(num_players=2, target=None), id="2p-hand"),
    pytest.param(dict(num_players=2, bluff_jack_double=True), id="2p-151-jackdouble"),
    pytest.param(dict(num_players=3, target=None, last_card_pisti=False), id="3p-hand"),
    pytest.param(dict(num_players=4, target=None), id="4p-partners-hand"),
    pytest.param(dict(num_players=4, partnerships=False, target=51, show_stock_bottom=True), id="4p-solo-51"),
]


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@pytest.mark.parametrize("config", API_CONFIGS)
def test_R29_pettingzoo_api_test(config):
    api_test(pisti_env.env(bluff=True, **config), num_cycles=300)


@pytest.mark.parametrize("config", API_CONFIGS[:3])
def test_R29_pettingzoo_seed_test(config):
    seed_test(partial(pisti_env.env, bluff=True, **config), num_cycles=300)


def test_R29_pettingzoo_render_test():
    render_test(partial(pisti_env.env, bluff=True, target=None))


@pytest.mark.parametrize("n, partnerships", [(2, False), (3, False), (4, True), (4, False)])
def test_R29_spaces_are_106_wide(n, partnerships):
    e = pisti_env.env(num_players=n, partnerships=partnerships, bluff=True)
    e.reset(seed=0)
    size = ObservationLayout(make_settings(num_players=n, partnerships=partnerships, bluff=True)).size
    for a in e.possible_agents:
        assert e.action_space(a) == spaces.Discrete(106)
        space = e.observation_space(a)
        assert space["action_mask"].shape == (106,) and space["observation"].shape == (size,)
        obs = e.observe(a)
        assert obs["action_mask"].shape == (106,) and space.contains(obs)
    plain = pisti_env.env(num_players=n, partnerships=partnerships)
    assert plain.action_space("player_0") == spaces.Discrete(52)  # bluff=False: unchanged


# The layout sizes with bluff=True (for the README section); bluff=False keeps 556/670/666/784.
@pytest.mark.parametrize("kw, size, plain", [
    (dict(num_players=2), 620, 556), (dict(num_players=3), 740, 670),
    (dict(num_players=4), 732, 666), (dict(num_players=4, partnerships=False), 860, 784),
])
def test_R29_observation_sizes(kw, size, plain):
    layout = ObservationLayout(make_settings(bluff=True, **kw))
    assert layout.size == size and layout.num_card_features == ObservationLayout(make_settings(**kw)).num_card_features + 1
    assert ObservationLayout(make_settings(**kw)).size == plain
    assert [f.name for f in layout.fields[-6:]] == [
        "claimant", "bluff_points", "bluff_claims", "bluff_believed", "bluff_challenged_true", "bluff_challenged_false"]
    assert "claimant" not in ObservationLayout(make_settings(**kw)).by_name
    pos = 0
    for f in layout.fields:
        assert f.start == pos
        pos = f.stop
    assert pos == layout.size == layout.high.shape[0]


def test_R29_answer_is_a_turn_of_the_seat_that_played_the_lone_card_in_the_env():
    # 3 players, dealer 0: seat 1 takes the table, seat 2 plays the lone 9♣, seat 0 claims.
    from helpers import codes, deck_from_plays

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
    from helpers import codes, deck_from_plays

    deck = deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 9D 4H"))
    e = pisti_env.env(bluff=True, target=None)
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
    # illegal_action="penalty": an illegal face-down play ends the episode with -1 (no raise).
    p = pisti_env.env(bluff=True, target=None, illegal_action="penalty")
    p.reset(options={"deck": deck, "dealer": 0})
    p.step(down("7D"))
    assert p.unwrapped.rewards["player_1"] == -1.0 and all(p.unwrapped.terminations.values())
    assert p.unwrapped.infos["player_1"] == {"illegal_move": True}


@pytest.mark.parametrize("kw", [
    dict(num_players=2, target=None), dict(num_players=2, target=51, bluff_jack_double=True),
    dict(num_players=3, target=51), dict(num_players=4, target=None), dict(num_players=4, partnerships=False, target=None),
])
def test_R29_masks_rewards_and_hand_results_in_random_play(kw):
    """Each mask is exactly the legal actions (others all zero); diff rewards add up to the
    final score difference; hand-end infos carry the bluff counts."""
    for seed in range(2):
        e = pisti_env.env(bluff=True, reward="diff", **kw)
        e.reset(seed=seed)
        game = e.unwrapped.game
        agents = e.possible_agents
        rng = random.Random(seed)
        totals = dict.fromkeys(agents, 0.0)
        claims = answers = seen_results = 0
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            totals[agent] += reward
            if term or trunc:
                e.step(None)
                continue
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


# =========================================================================== observations
def test_R29_R30_observation_of_a_claim_and_its_outcomes():
    enc = ObservationEncoder(make_settings(bluff=True, target=None))
    lay = enc.layout
    g = to_claim("7D 9C 9D 4H")
    g.step(down("9D"))
    for seat in (F, O):
        obs = enc.encode(g, seat)
        claimant = obs[lay["claimant"]]
        assert claimant.tolist() == ([1.0, 0.0] if seat == F else [0.0, 1.0])  # seat-relative
        assert obs[lay.card_feature(C("9C"), "pile_top")] == 1
    mine, theirs = enc.encode(g, F), enc.encode(g, O)
    assert mine[lay.card_feature(C("9D"), "face_down_self")] == 1 and mine[lay.card_feature(C("9D"), "unseen")] == 0
    assert theirs[lay.card_feature(C("9D"), "unseen")] == 1 and theirs[lay.card_feature(C("9D"), "face_down_self")] == 0
    believed = g.clone()
    believed.step(BELIEVE)
    mine, theirs = enc.encode(believed, F), enc.encode(believed, O)
    assert mine[lay.card_feature(C("9D"), "captured_side_0")] == 1
    assert theirs[lay.card_feature(C("9D"), "unseen")] == 1
    assert theirs[lay.card_feature(C("9D"), "captured_side_1")] == 0
    assert theirs[lay.card_feature(C("9C"), "captured_side_1")] == 1  # the lone card was public
    assert not theirs[lay["claimant"]].any()
    assert theirs[lay["bluff_points"]].tolist() == pytest.approx([0.0, 0.1]) and theirs[lay["bluff_believed"]].tolist() == pytest.approx([0.0, 0.2])
    g.step(CHALLENGE)  # a true claim, shown
    theirs = enc.encode(g, O)
    assert theirs[lay.card_feature(C("9D"), "captured_side_1")] == 1
    assert theirs[lay.card_feature(C("9D"), "played_by_seat_1")] == 1
    assert theirs[lay["bluff_challenged_true"]].tolist() == pytest.approx([0.0, 0.2])
    assert theirs[lay["bluff_points"]].tolist() == pytest.approx([0.0, 0.2])
    g = to_claim("7D 9C 3C 4H")
    g.step(down("3C"))
    g.step(CHALLENGE)  # a bluff, shown face up on the pile
    theirs = enc.encode(g, O)
    assert theirs[lay.card_feature(C("3C"), "pile_face_up")] == 1 and theirs[lay.card_feature(C("3C"), "pile_top")] == 1
    assert theirs[lay["bluff_points"]].tolist() == pytest.approx([0.2, 0.0])


def test_R29_R30_partner_does_not_see_a_believed_card():
    g = bluff_game("7D 9C 9D", num_players=4)
    for card in ("7D", "9C"):
        g.step(C(card))
    g.step(down("9D"))
    g.step(BELIEVE)
    enc = ObservationEncoder(g.settings)
    lay = enc.layout
    assert enc.encode(g, 3)[lay.card_feature(C("9D"), "captured_side_0")] == 1
    for seat in (0, 1, 2):
        assert enc.encode(g, seat)[lay.card_feature(C("9D"), "unseen")] == 1


def test_R29_observations_stay_in_bounds_in_random_play():
    for kw in (dict(num_players=2, bluff_jack_double=True), dict(num_players=4), dict(num_players=6, decks=2)):
        settings = make_settings(bluff=True, target=51, **kw)
        enc = ObservationEncoder(settings)
        rng = random.Random(3)
        g = Game(settings, seed=3)
        while not g.done:
            for seat in range(settings.num_players):
                obs = enc.encode(g, seat)
                assert (obs >= 0).all() and (obs <= enc.layout.high).all()
                cards = enc.layout.card_block(obs)
                # Every card is somewhere for every seat: its location features add up to its copies.
                assert (cards[:, [i for i, name in enumerate(enc.layout.card_features)
                                  if not name.startswith("played_by") and name != "pile_top"]].sum(1)
                        == settings.decks).all()
            g.step(rng.choice(g.legal_actions()))


# =========================================================================== no leak (R30, R31)
def rules_unknown(g: Game, seat: int, face_down: list[tuple[int, int]]) -> set[int]:
    """What ``seat`` cannot know, from the rules and the plays (not from ``g.where``): what it
    cannot know without the variant (``test_no_leak.rules_unknown``: other hands, the stock but
    the shown stock bottom, never-turned table cards its side did not take), and the face-down
    cards other seats played that were never shown (R29): ``face_down`` lists this hand's
    face-down plays as (seat, card). (The first capture comes before any claim, as a claim
    needs a lone card, so R8's taker is found as without the variant.)"""
    unknown = plain_rules_unknown(g, seat)
    sb = g.deck[-1] if g.settings.show_stock_bottom else None
    shown = {c for _, c in g.history}
    unknown.update(card for claimant, card in face_down if claimant != seat and card not in shown and card != sb)
    return unknown


NO_LEAK_CONFIGS = [dict(num_players=n, partnerships=p, show_stock_bottom=ssb, target=None, bluff=True)
                   for n, p in ((2, False), (3, False), (4, True), (4, False)) for ssb in (False, True)]


def _random_run(kw: dict, seed: int):
    """A random single hand through the env, stopped at a random moment; returns the env, the
    actions as (seat, action), the face-down plays, rewards and observations at every step."""
    rng = random.Random(seed)
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=seed)
    game = e.unwrapped.game
    stop = rng.randrange(10, 70)
    actions, face_down, rewards = [], [], []
    obs = [{a: e.observe(a)["observation"].tobytes() for a in e.possible_agents}]
    while len(actions) < stop:
        left = game.in_hands + game.stock_size
        if left == 0 or (left == 1 and game.claimant < 0):
            break  # the hand's end makes every point public (R30): stop just before it
        seat = game.turn
        legal = legal_from_mask(e.observe(e.agent_selection))
        # Prefer claims so that face-down cards are common.
        downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
        action = rng.choice(downs) if downs and rng.random() < 0.6 else rng.choice(legal)
        if FACE_DOWN <= action < BELIEVE:
            face_down.append((seat, action - FACE_DOWN))
        actions.append((seat, action))
        e.step(action)
        rewards.append(dict(e.rewards))
        obs.append({a: e.observe(a)["observation"].tobytes() for a in e.possible_agents})
    return e, actions, face_down, rewards, obs


def _replay(kw: dict, ids: list[int], dealer: int, actions, mapping: dict[int, int]):
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=1, options={"deck": ids, "dealer": dealer})
    rewards = []
    obs = [{a: e.observe(a)["observation"].tobytes() for a in e.possible_agents}]
    for seat, action in actions:
        assert e.agent_selection == f"player_{seat}"
        if action < BELIEVE:  # a card, face up or down: the same physical place
            action = (action - action % FACE_DOWN) + mapping.get(action % FACE_DOWN, action % FACE_DOWN)
        e.step(action)
        rewards.append(dict(e.rewards))
        obs.append({a: e.observe(a)["observation"].tobytes() for a in e.possible_agents})
    return e, rewards, obs


@pytest.mark.parametrize("kw", NO_LEAK_CONFIGS, ids=lambda kw: f"{kw['num_players']}p-{'pairs' if kw['partnerships'] else 'solo'}-{'ssb' if kw['show_stock_bottom'] else 'nossb'}")
def test_R29_R30_R31_observation_is_independent_of_unseen_cards_face_down_included(kw):
    """Deal what a seat cannot know differently (permuting it among its deck positions, the
    face-down cards of other seats included), replay the same actions: the seat's observation
    at every step, its mask and its rewards are unchanged. Swapping a card of its own hand
    with an unknown one does show."""
    settings = make_settings(**kw)
    n = settings.num_players
    enc = ObservationEncoder(settings)
    face_down_unknown = partner_face_down = moved = converse = 0
    for trial in range(8):
        seed = 1000 * trial + 17 * n + kw["show_stock_bottom"]
        rng = random.Random(seed)
        ea, actions, face_down, rewards_a, obs_a = _random_run(kw, seed)
        g = ea.unwrapped.game
        ids = list(g.deck)  # one deck: physical index = card id
        for seat in range(n):
            unknown = g.unknown_cards(seat)
            assert set(unknown) == rules_unknown(g, seat, face_down), f"seat {seat}: unknown_cards disagrees with R8/R28/R29/R31"
            assert all(g.played_by[p] == NOBODY for p in unknown)
            hidden_down = [p for p in unknown if g.where[p] in range(LOC_PILE_DOWN, LOC_CAPT_DOWN + 6)]
            face_down_unknown += bool(hidden_down)
            if settings.partnerships:
                partner = (seat + 2) % 4
                partner_face_down += any(g.where[p] in (LOC_PILE_DOWN + partner, LOC_CAPT_DOWN + partner) for p in unknown)
            positions = sorted(ids.index(p) for p in unknown)
            perm = [ids[i] for i in positions]
            rng.shuffle(perm)
            new_ids = list(ids)
            mapping = {}
            for i, c in zip(positions, perm):
                new_ids[i] = c
                mapping[ids[i]] = c
            moved += any(mapping[p] != p for p in hidden_down)
            eb, rewards_b, obs_b = _replay(kw, new_ids, g.dealer, actions, mapping)
            agent = f"player_{seat}"
            assert [o[agent] for o in obs_b] == [o[agent] for o in obs_a], f"seat {seat}: the observation leaks"
            assert rewards_b == rewards_a, f"seat {seat}: the rewards depend on unseen cards"
            g2 = eb.unwrapped.game
            assert enc.encode(g2, seat).tobytes() == enc.encode(g, seat).tobytes()
            assert eb.observe(agent)["action_mask"].tobytes() == ea.observe(agent)["action_mask"].tobytes()
            # Converse: one card of the seat's own hand swapped with an unknown one shows.
            hand = g.hands[seat]
            candidates = [u for u in unknown if rank(u) != rank(hand[0])] if hand else []
            if candidates:
                h, u = hand[0], rng.choice(candidates)
                swapped = list(ids)
                swapped[ids.index(h)], swapped[ids.index(u)] = u, h
                try:
                    ec, _, _ = _replay(kw, swapped, g.dealer, actions, {h: u, u: h})
                except ValueError:
                    continue  # the swap made an earlier play illegal (e.g. an R7 deal Jack): skip
                assert enc.encode(ec.unwrapped.game, seat).tobytes() != enc.encode(g, seat).tobytes()
                converse += 1
    assert face_down_unknown > 0 and moved > 0, "no unseen face-down card was ever dealt again: vacuous"
    if settings.partnerships:
        assert partner_face_down > 0, "never met a partner's face-down card"
    assert converse > 0


# =========================================================================== invariants
class BluffShadow:
    """An independent tally of one hand (R10–R22, R29), fed with every action before the engine
    takes it; it keeps its own table pile as (physical card, seat that played it or None)."""

    def __init__(self, g: Game) -> None:
        self.s = g.settings
        k = g.num_sides
        self.side_of = g.side_of
        self.pile = [(p, None) for p in g.pile]
        self.cards, self.points = [0] * k, [0] * k
        self.pisti, self.double, self.pisti_points = [0] * k, [0] * k, [0] * k
        self.bluff_points = [0] * k
        self.counts = {name: [0] * k for name in (
            "bluff_claims", "bluff_believed", "bluff_challenged_true", "bluff_challenged_false")}
        self.last = -1
        self.dealer_side = g.side_of[g.dealer]
        self.pending = None  # (claimant, physical card, was it the hand's last card)

    def expected_legal(self, g: Game) -> list[int]:
        if self.pending is not None:
            return [BELIEVE, CHALLENGE]
        cards = sorted({p % 52 for p in g.hands[g.turn]})
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        if len(self.pile) == 1 and (self.s.last_card_pisti or not last_card):  # R29, R16
            return cards + [FACE_DOWN + c for c in cards]
        return cards

    def expected_answerer(self) -> int:
        return self.pile[0][1]

    def take(self, side: int, cards: list[int]) -> None:
        self.cards[side] += len(cards)
        self.points[side] += sum(card_points(c) for c in cards)
        self.last = side

    def sweep(self) -> None:  # R19
        if self.pile:
            side = self.last if self.last >= 0 else self.dealer_side
            self.cards[side] += len(self.pile)
            self.points[side] += sum(card_points(c) for c, _ in self.pile)
            self.pile = []

    def play(self, g: Game, action: int) -> None:
        seat = g.turn
        side = self.side_of[seat]
        s = self.s
        if action >= BELIEVE:
            claimant, p, final = self.pending
            cside = self.side_of[claimant]
            lone = self.pile[0][0]
            stake = 20 if s.bluff_jack_double and rank(lone) == JACK else 10
            if action == BELIEVE or rank(p) == rank(lone):
                points = stake if action == BELIEVE else 2 * stake
                self.bluff_points[cside] += points
                self.pisti[cside] += 1
                self.counts["bluff_believed" if action == BELIEVE else "bluff_challenged_true"][cside] += 1
                self.take(cside, [lone, p])
                self.pile = []
            else:
                self.bluff_points[side] += 2 * stake  # the challenger's side alone
                self.counts["bluff_challenged_false"][cside] += 1
                self.pile.append((p, claimant))
            self.pending = None
            if final:
                self.sweep()
            return
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        p = next(q for q in (action % FACE_DOWN, action % FACE_DOWN + 52) if q in g.hands[seat])
        if action >= FACE_DOWN:
            self.counts["bluff_claims"][side] += 1
            self.pending = (seat, p, last_card)
            return
        pile = self.pile
        if pile and (rank(p) == rank(pile[-1][0]) or rank(p) == JACK):  # R10, R11
            if len(pile) == 1:  # R13, R14, R16, R17
                lone = pile[0][0]
                pts, kind = 0, None
                if rank(p) != JACK:
                    pts, kind = 10, "pisti"
                elif rank(lone) == JACK:
                    pts = s.double_pisti
                    kind = {20: "double", 10: "pisti", 0: None}[pts]
                if kind is not None and (s.last_card_pisti or not last_card):
                    if 22 in (p % 52, lone % 52):
                        pts += s.ten_diamonds_pisti_bonus
                    (self.double if kind == "double" else self.pisti)[side] += 1
                    self.pisti_points[side] += pts
            self.take(side, [c for c, _ in pile] + [p])
            self.pile = []
        else:
            pile.append((p, seat))
        if last_card:
            self.sweep()

    def result(self) -> list[dict[str, int]]:
        best = max(self.cards)
        out = []
        for side in range(len(self.cards)):
            maj = 3 if self.cards[side] == best and self.cards.count(best) == 1 else 0
            r = {"cards": self.cards[side], "card_points": self.points[side], "majority": maj,
                 "pisti": self.pisti[side], "double_pisti": self.double[side],
                 "pisti_points": self.pisti_points[side],
                 "total": self.points[side] + maj + self.pisti_points[side] + self.bluff_points[side],
                 "bluff_points": self.bluff_points[side]}
            r.update({name: v[side] for name, v in self.counts.items()})
            out.append(r)
        return out


def check_bluff_conservation(g: Game, shadow: BluffShadow | None = None) -> None:
    """The card bookkeeping of :func:`test_invariants.check_conservation` (face-down cards
    included), believed cards per seat against the claims record, and the counters against
    the shadow tally, if given."""
    check_conservation(g)
    # Believed cards per seat: the believed claims of the record whose card nobody saw.
    believed = Counter(c for c, _, _, answer, shown in g.claims if answer == BELIEVE and shown < 0)
    down_per_seat = [sum(loc == LOC_CAPT_DOWN + seat for loc in g.where) for seat in range(g.num_players)]
    assert down_per_seat == [believed[seat] for seat in range(g.num_players)]
    if shadow is not None and not g.done:
        assert g.captured_count == shadow.cards and g.card_points == shadow.points
        assert g.pisti_count == shadow.pisti and g.double_pisti_count == shadow.double
        assert g.pisti_points == shadow.pisti_points and g.bluff_points == shadow.bluff_points
        assert g.last_capturer == shadow.last
        assert [p for p, _ in shadow.pile] == g.pile
        for name, values in shadow.counts.items():
            assert getattr(g, name) == values, name


def play_and_check_bluff(settings, seed: int) -> int:
    """Random play of a whole episode with bluffs and every check; returns the claims made."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    shadow = BluffShadow(g)
    claims = 0
    while not g.done:
        legal = g.legal_actions()
        assert legal == shadow.expected_legal(g), "R9/R29: the legal actions"
        action = rng.choice(legal)
        seat, hands_done = g.turn, g.hands_completed
        shadow.play(g, action)
        g.step(action)
        if FACE_DOWN <= action < BELIEVE:
            claims += 1
            assert g.turn == shadow.expected_answerer() and g.pending_claim[0] == seat  # R29
        if g.hands_completed != hands_done:
            result = g.last_hand_result
            cards = [r["cards"] for r in result]
            tied = cards.count(max(cards)) > 1
            assert sum(cards) == settings.num_cards
            assert sum(r["card_points"] + r["majority"] for r in result) == 13 * settings.decks + (0 if tied else 3)  # R23
            for r in result:
                assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"] + r["bluff_points"]  # R22
                assert r["bluff_claims"] == r["bluff_believed"] + r["bluff_challenged_true"] + r["bluff_challenged_false"]
                assert r["pisti"] >= r["bluff_believed"] + r["bluff_challenged_true"]
            assert result == shadow.result()
            assert list(g.match_scores) == [sum(h[i]["total"] for h in g.hand_results) for i in range(g.num_sides)]
            shadow = BluffShadow(g)
        check_bluff_conservation(g, shadow)
    return claims


INVARIANT_PLAYERS = PLAYER_CONFIGS  # 2–6 players, partnerships, two decks
BLUFF_VARIANTS = list(itertools.product(
    (False, True),  # bluff_jack_double
    (True, False),  # last_card_pisti
    ((20, 0, False), (0, 3, True), (10, 3, False)),  # double_pisti, 10♦ bonus, show_stock_bottom
    ((None, 0), (51, 2)),  # target, win_margin
))


@pytest.mark.parametrize("players", INVARIANT_PLAYERS)
def test_R22_R23_R29_invariants_under_random_play_with_bluffs(players):
    claims = 0
    for i, (jd, lcp, (dp, bonus, ssb), (target, margin)) in enumerate(BLUFF_VARIANTS):
        settings = make_settings(**players, bluff=True, bluff_jack_double=jd, last_card_pisti=lcp, double_pisti=dp,
                                 ten_diamonds_pisti_bonus=bonus, show_stock_bottom=ssb, target=target,
                                 win_margin=margin)
        for k in range(3):
            claims += play_and_check_bluff(settings, seed=500 * players["num_players"] + 31 * i + k)
    assert claims > 3 * len(BLUFF_VARIANTS)


# =========================================================================== determinize
def random_bluff_moment(settings, seed: int, want_claim: bool) -> Game:
    """A bluff game after random plays, optionally stopped while a claim is pending."""
    for attempt in range(50):
        rng = random.Random(seed + 1000 * attempt)
        g = Game(settings, seed=seed + 1000 * attempt)
        stop = rng.randrange(8, 40)
        for _ in range(200):
            if g.done:
                break
            if (g.claimant >= 0) == want_claim and len(g.history) >= stop:
                return g
            g.step(rng.choice(g.legal_actions()))
    raise AssertionError("no suitable moment")


DETERMINIZE_CONFIGS = [dict(num_players=2), dict(num_players=3, show_stock_bottom=True), dict(num_players=4),
                       dict(num_players=4, partnerships=False), dict(num_players=6, decks=2)]


@pytest.mark.parametrize("kw", DETERMINIZE_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_R29_R30_determinize_keeps_what_the_seat_knows_and_redeals_face_down_cards(kw):
    settings = make_settings(bluff=True, target=None, **kw)
    enc = ObservationEncoder(settings)
    redealt = 0
    for trial in range(6):
        g = random_bluff_moment(settings, seed=trial, want_claim=trial % 2 == 0)
        for seat in range(settings.num_players):
            before = g.clone()
            d = g.determinize(seat, random.Random(trial * 7 + seat))
            assert enc.encode(d, seat).tobytes() == enc.encode(g, seat).tobytes()
            if g.turn == seat:
                assert d.legal_actions() == g.legal_actions()
            unknown = set(g.unknown_cards(seat))
            assert set(d.unknown_cards(seat)) == unknown
            for p in range(settings.num_cards):
                if p not in unknown:
                    assert d.where[p] == g.where[p] and d.played_by[p] == g.played_by[p]
            assert d.claimant == g.claimant and d.claims == g.claims and d.bluff_points == g.bluff_points
            if g.claimant >= 0 and g.claim_card in unknown:
                assert d.claim_card in unknown and d.where[d.claim_card] == LOC_PILE_DOWN + g.claimant
                redealt += d.claim_card != g.claim_card
            assert Counter(d.where[p] for p in unknown) == Counter(g.where[p] for p in unknown)
            check_bluff_conservation(d)
            rng = random.Random(seat)
            while not d.done:  # the copy is a consistent game that plays to the end
                d.step(rng.choice(d.legal_actions()))
            result = d.last_hand_result
            tied = [r["cards"] for r in result].count(max(r["cards"] for r in result)) > 1
            assert sum(r["card_points"] + r["majority"] for r in result) == 13 * settings.decks + (0 if tied else 3)
            assert vars(before).keys() == vars(g).keys() and before.where == g.where and before.hands == g.hands
    assert redealt > 0


def test_R29_determinize_claim_condition():
    g = to_claim("7D 9C 3C 4H")
    g.step(down("3C"))  # a bluff on 9♣; seat O answers and cannot see the card
    rng = random.Random(5)
    nines = {C(c) for c in ("9D", "9H", "9S")}
    true_cards, false_cards = Counter(), Counter()
    for _ in range(600):
        t = g.determinize(O, rng, claim=True)
        assert t.claim_card in nines
        true_cards[t.claim_card] += 1
        f = g.determinize(O, rng, claim=False)
        assert rank(f.claim_card) != rank(C("9C")) and f.claim_card in g.unknown_cards(O)
        false_cards[f.claim_card] += 1
    assert set(true_cards) == nines and min(true_cards.values()) > 120  # about uniform over the three nines
    assert len(false_cards) > 20
    with pytest.raises(ValueError, match=r"claim=True needs a pending claim whose face-down card seat 1 cannot see"):
        g.determinize(F, rng, claim=True)  # the claimant sees its own card
    fresh = to_claim("7D 9C 3C 4H")
    with pytest.raises(ValueError, match=r"needs a pending claim"):
        fresh.determinize(F, rng, claim=False)


def test_R29_determinize_claim_condition_impossible():
    # The answerer holds the other three nines itself: the claim on 9♣ cannot be true.
    from helpers import codes, deck_from_plays

    g = pisti_env.new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")),
                           dealer=0, target=None, bluff=True)
    play(g, ["7D", "9C"])
    g.step(down("3C"))
    assert sorted(g.hands[O]) == sorted(C(c) for c in ("9D", "9H", "9S"))
    with pytest.raises(ValueError, match=r"no world has a true claim"):
        g.determinize(O, 0, claim=True)
    assert claim_true_probability(SeatView(g, O), 0.2) == 0.0  # surely a bluff (R29)
    assert provably_bluff(SeatView(g, O))


# =========================================================================== players
BLUFF_TABLES = [
    dict(num_players=2), dict(num_players=3), dict(num_players=4), dict(num_players=4, partnerships=False),
    dict(num_players=2, bluff_jack_double=True, last_card_pisti=False, show_stock_bottom=True, double_pisti=0),
]
SPECS = ["random", "greedy", "expert", "pimc:n=3"]


@pytest.mark.parametrize("table", BLUFF_TABLES, ids=lambda t: "-".join(f"{k}={v}" for k, v in t.items()))
def test_R29_baselines_take_only_legal_actions(table):
    settings = make_settings(target=None, bluff=True, **table)
    for spec in SPECS:
        players = [make_agent(spec, seed=seat) for seat in range(settings.num_players)]
        game = Game(settings, seed=4)
        while not game.done:
            action = players[game.turn].act(SeatView(game, game.turn))
            assert action in game.legal_actions(), (spec, action)
            game.step(action)


def test_R27_R29_baselines_with_two_decks_and_every_pimc_rollout():
    settings = make_settings(num_players=6, decks=2, target=None, bluff=True)
    for spec in ["greedy", "expert", "pimc:n=2"]:
        players = [make_agent(spec, seed=seat) for seat in range(6)]
        game = Game(settings, seed=2)
        while not game.done:
            action = players[game.turn].act(SeatView(game, game.turn))
            assert action in game.legal_actions()
            game.step(action)
    settings = make_settings(num_players=3, target=None, bluff=True)
    for rollout in ("random", "greedy", "expert"):
        players = [make_agent(f"pimc:n=2,rollout={rollout}", seed=seat) for seat in range(3)]
        game = Game(settings, seed=1)
        while not game.done:
            action = players[game.turn].act(SeatView(game, game.turn))
            assert action in game.legal_actions()
            game.step(action)


@pytest.mark.parametrize("table", BLUFF_TABLES[:4], ids=lambda t: "-".join(f"{k}={v}" for k, v in t.items()))
def test_R29_R30_R31_baselines_play_the_same_on_a_determinized_copy(table):
    """A baseline reads no hidden state, face-down cards included: on a copy with everything
    the seat cannot know dealt again it takes the same action, answers included."""
    settings = make_settings(target=None, bluff=True, **table)
    rng = random.Random(9)
    players = {spec: make_agent(spec) for spec in SPECS}
    answers = claims_seen = 0
    for game_seed in range(2):
        game = Game(settings, seed=game_seed)
        while not game.done:
            seat = game.turn
            copy = game.determinize(seat, rng)
            answers += game.claimant >= 0
            claims_seen += any(a >= FACE_DOWN for a in game.legal_actions())
            for spec, player in players.items():
                player.reset(99)
                real = player.act(SeatView(game, seat))
                player.reset(99)
                assert player.act(SeatView(copy, seat)) == real, (spec, game.history)
            game.step(rng.choice(game.legal_actions()))
    assert answers > 0 and claims_seen > 0


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
    from helpers import codes, deck_from_plays

    g = pisti_env.new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")),
                           dealer=0, target=None, bluff=True)
    play(g, ["7D", "9C"])
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
    from helpers import codes, deck_from_plays

    g = pisti_env.new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")),
                           dealer=0, target=None, bluff=True)
    play(g, ["7D", "9C"])
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


def test_R29_players_inside_the_aec_env():
    e = pisti_env.env(num_players=2, bluff=True, target=None)
    e.reset(seed=3)
    players = {a: make_agent(spec, seed=i) for i, (a, spec) in enumerate(zip(e.possible_agents, ["expert", "pimc:n=2"]))}
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        view = view_for_agent(e, agent)
        mine = view.observation()
        assert np.array_equal(mine["observation"], obs["observation"])
        assert np.array_equal(mine["action_mask"], obs["action_mask"])
        e.step(players[agent].act(view))
    assert e.unwrapped.game.done
