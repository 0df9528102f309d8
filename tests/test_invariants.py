"""Invariants under random legal play, over every sensible combination of settings.

After every step: card conservation (every physical card in exactly one place, location codes
consistent with the containers), hand sizes and the seat to move as R6/R18/R27 prescribe,
per-side counters consistent with the captured cards. At every hand end: the R20–R23 totals,
and a hand result equal to what an independent shadow tally (fed only with the cards played
and the pile they landed on) computes from the rules (R10–R19). At match end: R24–R26.
The AEC env's ``diff`` rewards add up to the final score difference.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.scoring import POINTS
from pisti_env.game import (
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

JACK = 10
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


def test_R20_point_table_matches_rules() -> None:
    assert [card_points(p) for p in range(104)] == list(POINTS)
    assert sum(card_points(c) for c in range(52)) == 13  # R20: 13 in all with one deck


# --------------------------------------------------------------------------- state checks
def pile_hidden(g: Game) -> int:
    """The engine's public count of never-turned table cards in the pile (R8)."""
    return g.pile_hidden


def check_conservation(g: Game) -> None:
    """Every physical card is in exactly one place and its location code agrees (R30
    bookkeeping), the bluff variant's face-down cards (R29) included."""
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
            assert where[p] in (LOC_HAND + seat, LOC_HAND_SHOWN + seat), (p, seat, where[p])
    for p in g.pile:
        put(p, "pile")
        assert where[p] in (LOC_PILE_UP, LOC_PILE_JACK, LOC_PILE_HIDDEN), (p, where[p])
    assert 0 <= g.stock_pos <= len(g.deck)
    for p in g.deck[g.stock_pos :]:
        put(p, "stock")
        assert where[p] in (LOC_STOCK, LOC_STOCK_SHOWN), (p, where[p])
    if g.claimant >= 0:  # R29: the face-down card of a claim waiting for its answer
        put(g.claim_card, "claim")
        expected = LOC_PILE_DOWN_SHOWN if g.claim_card == g.stock_bottom else LOC_PILE_DOWN + g.claimant
        assert where[g.claim_card] == expected and g.played_by[g.claim_card] == NOBODY
        assert len(g.pile) == 1
    # Everything else has been captured (or swept) by some side.
    count = [0] * g.num_sides
    points = [0] * g.num_sides
    shown_points = [0] * g.num_sides
    hidden_captured = 0
    for p in range(n_cards):
        if p in place:
            continue
        loc = where[p]
        if LOC_CAPT_SHOWN <= loc < LOC_CAPT_SHOWN + g.num_sides:
            side = loc - LOC_CAPT_SHOWN
            shown_points[side] += card_points(p)
        elif LOC_CAPT_HIDDEN <= loc < LOC_CAPT_HIDDEN + g.num_sides:
            side = loc - LOC_CAPT_HIDDEN
            hidden_captured += 1
        elif LOC_CAPT_DOWN <= loc < LOC_CAPT_DOWN + g.num_players:  # R29: a believed card
            side = g.side_of[loc - LOC_CAPT_DOWN]
            assert g.played_by[p] == NOBODY, "a believed card was never shown"
        else:
            raise AssertionError(f"card {p} is nowhere (location code {loc})")
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
    codes = [where[p] for p in g.pile]
    if LOC_PILE_UP in codes:
        first_up = codes.index(LOC_PILE_UP)
        assert all(c == LOC_PILE_UP for c in codes[first_up:]), codes
    if g.pile:
        assert codes[-1] == LOC_PILE_UP, "the top of the pile is face up"
    assert pile_hidden(g) == codes.count(LOC_PILE_HIDDEN)
    assert codes.count(LOC_PILE_HIDDEN) + hidden_captured <= 3
    assert all(rank(p) == JACK for p in g.pile if where[p] == LOC_PILE_JACK)
    # R28: the shown stock bottom.
    shown_codes = [p for p in range(n_cards) if where[p] == LOC_STOCK_SHOWN or LOC_HAND_SHOWN <= where[p] < LOC_HAND_SHOWN + 6]
    if s.show_stock_bottom:
        assert g.stock_bottom == g.deck[-1]
        assert rank(g.stock_bottom) != JACK, "R28: the shown stock bottom is never a Jack"
        assert set(shown_codes) <= {g.stock_bottom}
        if g.stock_bottom in place and place[g.stock_bottom] == "stock":
            assert where[g.stock_bottom] == LOC_STOCK_SHOWN
    else:
        assert g.stock_bottom is None
        assert shown_codes == []
    # played_by: exactly the cards in this hand's history, by the seat that played them.
    played = sorted((g.played_by[p] - PLAYED_BY, p % 52) for p in range(n_cards) if g.played_by[p] != NOBODY)
    assert played == sorted(g.history)
    for p in range(n_cards):
        if g.played_by[p] != NOBODY:
            assert where[p] == LOC_PILE_UP or LOC_CAPT_SHOWN <= where[p] < LOC_CAPT_SHOWN + g.num_sides
    # R30 bookkeeping: public points this hand = face-up card points + pişti and bluff points.
    if not g.done:
        assert list(g.public_points) == [
            shown_points[i] + g.pisti_points[i] + g.bluff_points[i] for i in range(g.num_sides)
        ]
        assert list(g.public_total) == [g.match_scores[i] + g.public_points[i] for i in range(g.num_sides)]


def deal_sizes(n: int, dealer: int, stock: int) -> tuple[list[int], int]:
    """R6.2/R18/R27: four cards each, one at a time from the seat after the dealer, while the
    stock lasts. Returns the hand sizes and the stock left."""
    sizes = [0] * n
    k = min(stock, 4 * n)
    for i in range(k):
        sizes[(dealer + 1 + i) % n] += 1
    return sizes, stock - k


class Shadow:
    """An independent tally of one hand (R10–R22), fed with the pile and the card played."""

    def __init__(self, g: Game) -> None:
        self.s = g.settings
        k = g.num_sides
        self.cards = [0] * k
        self.points = [0] * k
        self.pisti = [0] * k
        self.double = [0] * k
        self.pisti_points = [0] * k
        self.ten_d_bonus = [0] * k
        self.last = -1
        self.dealer_side = g.side_of[g.dealer]

    def play(self, g: Game, action: int) -> None:
        """Called *before* ``g.step(action)``."""
        s = self.s
        side = g.side_of[g.turn]
        pile = list(g.pile)
        last_card = g.stock_size == 0 and sum(len(h) for h in g.hands) == 1
        if pile and (rank(action) == rank(pile[-1]) or rank(action) == JACK):  # R10, R11
            self.cards[side] += len(pile) + 1
            self.points[side] += sum(card_points(c) for c in pile) + card_points(action)
            self.last = side
            if len(pile) == 1:  # R13, R14, R15 (the 4-card deal pile never has length 1)
                lone = pile[0] % 52
                kind, pts = None, 0
                if rank(action) != JACK:
                    assert rank(lone) == rank(action)
                    kind, pts = "pisti", 10
                elif rank(lone) == JACK:
                    pts = s.double_pisti
                    kind = {20: "double", 10: "pisti", 0: None}[pts]
                if kind is not None and (s.last_card_pisti or not last_card):  # R16
                    if TEN_DIAMONDS in (action, lone):  # R17
                        pts += s.ten_diamonds_pisti_bonus
                        self.ten_d_bonus[side] += 1
                    if kind == "double":
                        self.double[side] += 1
                    else:
                        self.pisti[side] += 1
                    self.pisti_points[side] += pts
            pile = []
        else:
            pile.append(action)
        if last_card and pile:  # R19: the sweep to the last capturer
            side = self.last if self.last >= 0 else self.dealer_side
            self.cards[side] += len(pile)
            self.points[side] += sum(card_points(c) for c in pile)

    def result(self) -> list[dict[str, int]]:
        best = max(self.cards)
        out = []
        for side in range(len(self.cards)):
            maj = 3 if self.cards[side] == best and self.cards.count(best) == 1 else 0  # R21
            out.append(
                {
                    "cards": self.cards[side],
                    "card_points": self.points[side],
                    "majority": maj,
                    "pisti": self.pisti[side],
                    "double_pisti": self.double[side],
                    "pisti_points": self.pisti_points[side],
                    "total": self.points[side] + maj + self.pisti_points[side],
                }
            )
        return out


def check_hand_result(settings, result: list[dict[str, int]], shadow: Shadow) -> None:
    decks = settings.decks
    cards = [r["cards"] for r in result]
    assert sum(cards) == 52 * decks
    majority = [r["majority"] for r in result]
    best = max(cards)
    tied = cards.count(best) > 1
    # R21: strictly most cards scores 3; a tie for the most gives nothing.
    assert majority == [3 if (c == best and not tied) else 0 for c in cards]
    # R23: 16/13 with one deck, 29/26 with two.
    expected = 13 * decks + (0 if tied else 3)
    assert sum(r["card_points"] + r["majority"] for r in result) == expected
    for side, r in enumerate(result):
        assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"]  # R22
        # Pişti points consistent with counts and settings (R13, R14, R17).
        if settings.double_pisti != 20:
            assert r["double_pisti"] == 0
        base = 10 * r["pisti"] + 20 * r["double_pisti"]
        extra = r["pisti_points"] - base
        assert extra % 3 == 0 and 0 <= extra <= 3 * decks
        if settings.ten_diamonds_pisti_bonus == 0:
            assert extra == 0
        assert extra == settings.ten_diamonds_pisti_bonus * shadow.ten_d_bonus[side]
    assert result == shadow.result()


def match_should_end(settings, scores: list[int]) -> bool:
    """R25/R26 (and R24/R25's single hand with target=None)."""
    if settings.target is None:
        return True
    best = max(scores)
    if best < settings.target or scores.count(best) > 1:
        return False
    runner_up = max(x for i, x in enumerate(scores) if i != scores.index(best))
    return best - runner_up >= settings.win_margin


DEALS_PER_HAND = {(2, 1): 6, (3, 1): 4, (4, 1): 3, (5, 2): 5, (6, 2): 5}  # R18, R27


def play_and_check(settings, seed: int) -> int:
    """Random legal play of a whole episode with every check; returns the number of steps."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    n = settings.num_players
    check_conservation(g)
    assert [len(h) for h in g.hands] == deal_sizes(n, g.dealer, 52 * settings.decks - 4)[0]
    assert g.turn == (g.dealer + 1) % n  # R5
    assert len(g.pile) == 4 and g.history == []
    shadow = Shadow(g)
    deals = 1
    steps = 0
    first_dealer = g.dealer
    while not g.done:
        legal = g.legal_actions()
        assert legal == sorted({p % 52 for p in g.hands[g.turn]}) and legal, "R9: any card in the hand"
        action = rng.choice(legal)
        sizes = [len(h) for h in g.hands]
        stock = g.stock_size
        seat, dealer, hands_done = g.turn, g.dealer, g.hands_completed
        pile_before = list(g.pile)
        shadow.play(g, action)
        g.step(action)
        steps += 1
        check_conservation(g)
        if g.hands_completed != hands_done:  # the hand ended (R19-R23)
            assert sum(sizes) == 1 and stock == 0
            assert g.hands_completed == hands_done + 1 == len(g.hand_results)
            assert deals == DEALS_PER_HAND[(n, settings.decks)]
            check_hand_result(settings, g.last_hand_result, shadow)
            sums = [sum(r[i]["total"] for r in g.hand_results) for i in range(g.num_sides)]
            assert list(g.match_scores) == sums  # R24
            # R25/R26: the match ends at the first hand end that satisfies them, not before.
            assert g.done == match_should_end(settings, sums), (sums, settings)
            if g.done:
                best = max(sums)
                if sums.count(best) == 1:
                    assert g.winner == sums.index(best)
                else:
                    assert settings.target is None and g.winner is None  # a drawn single hand
                assert g.legal_actions() == []
                with pytest.raises(ValueError):
                    g.step(action)
                break
            assert g.winner is None
            # R5: the deal passes to the next seat; a fresh deal (R6).
            assert g.dealer == (dealer + 1) % n
            assert g.dealer == (first_dealer + g.hands_completed) % n
            assert g.turn == (g.dealer + 1) % n
            exp_sizes, exp_stock = deal_sizes(n, g.dealer, 52 * settings.decks - 4)
            assert [len(h) for h in g.hands] == exp_sizes and g.stock_size == exp_stock
            assert len(g.pile) == 4 and g.history == [] and g.captured_count == [0] * g.num_sides
            assert g.public_total == g.match_scores
            shadow = Shadow(g)
            deals = 1
            continue
        assert g.history[-1] == (seat, action)
        if sum(sizes) == 1:  # R18: every hand empty, the stock is not: deal again
            assert stock > 0
            exp_sizes, exp_stock = deal_sizes(n, g.dealer, stock)
            deals += 1
            assert g.turn == (g.dealer + 1) % n  # play continues with the first player
        else:
            exp_sizes = list(sizes)
            exp_sizes[seat] -= 1
            exp_stock = stock
            nxt = (seat + 1) % n
            while exp_sizes[nxt] == 0:  # R27: a seat with an empty hand is skipped
                nxt = (nxt + 1) % n
            assert g.turn == nxt
        assert [len(h) for h in g.hands] == exp_sizes
        assert g.stock_size == exp_stock
        assert g.dealer == dealer
        # The pile: captured whole (R10, R11) or the card lies on top (R12).
        if not g.pile:
            assert pile_before and (rank(action) == rank(pile_before[-1]) or rank(action) == JACK)
        else:
            assert [p % 52 for p in g.pile] == [p % 52 for p in pile_before] + [action]
            assert not pile_before or (rank(action) != rank(pile_before[-1]) and rank(action) != JACK)
        # Per-side counters agree with the shadow tally during the hand, too.
        assert g.captured_count == shadow.cards
        assert g.card_points == shadow.points
        assert g.pisti_count == shadow.pisti and g.double_pisti_count == shadow.double
        assert g.pisti_points == shadow.pisti_points
        assert g.last_capturer == shadow.last
    return steps


PLAYER_CONFIGS = [
    pytest.param(dict(num_players=2), id="2p"),
    pytest.param(dict(num_players=3), id="3p"),
    pytest.param(dict(num_players=4, partnerships=True), id="4p-partners"),
    pytest.param(dict(num_players=4, partnerships=False), id="4p-solo"),
    pytest.param(dict(num_players=5, decks=2), id="5p-2decks"),
    pytest.param(dict(num_players=6, decks=2), id="6p-2decks"),
]
VARIANTS = list(
    itertools.product(
        (20, 10, 0),  # double_pisti
        (True, False),  # last_card_pisti
        (0, 3),  # ten_diamonds_pisti_bonus
        (False, True),  # show_stock_bottom
        ((None, 0), (51, 0), (51, 2)),  # target, win_margin
    )
)


@pytest.mark.parametrize("players", PLAYER_CONFIGS)
def test_R6_R27_invariants_under_random_play_all_variants(players: dict) -> None:
    total_steps = 0
    for i, (dp, lcp, bonus, ssb, (target, margin)) in enumerate(VARIANTS):
        settings = make_settings(
            **players,
            double_pisti=dp,
            last_card_pisti=lcp,
            ten_diamonds_pisti_bonus=bonus,
            show_stock_bottom=ssb,
            target=target,
            win_margin=margin,
        )
        total_steps += play_and_check(settings, seed=1000 * players["num_players"] + i)
    assert total_steps >= len(VARIANTS) * 48


def test_R25_R26_long_match_with_margin() -> None:
    """A default-target match (151) with a margin: several hands, ends exactly per R25/R26."""
    for seed in range(3):
        play_and_check(make_settings(num_players=2, target=151, win_margin=2), seed=77 + seed)
        play_and_check(make_settings(num_players=3, target=101, win_margin=5), seed=88 + seed)


# --------------------------------------------------------------------------- AEC env
ENV_CONFIGS = [
    dict(num_players=2, target=None),
    dict(num_players=2, target=51, win_margin=2, ten_diamonds_pisti_bonus=3),
    dict(num_players=3, target=51, last_card_pisti=False),
    dict(num_players=4, partnerships=True, target=51, double_pisti=10, show_stock_bottom=True),
    dict(num_players=4, partnerships=False, target=None, double_pisti=0),
    dict(num_players=6, decks=2, target=51, win_margin=2),
    dict(num_players=5, decks=2, target=None, show_stock_bottom=True),
]


def final_diff(game: Game, side: int) -> float:
    ms = game.match_scores
    others = [x for i, x in enumerate(ms) if i != side]
    return ms[side] - sum(others) / len(others)


@pytest.mark.parametrize("kw", ENV_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_env_diff_rewards_sum_to_final_score_difference(kw: dict) -> None:
    for seed in range(2):
        e = pisti_env.env(reward="diff", **kw)
        e.reset(seed=seed)
        rng = random.Random(seed)
        game = e.unwrapped.game
        side_of = game.side_of
        agents = list(e.possible_agents)
        per_step = {a: 0.0 for a in agents}
        public_before = list(game.public_total)
        while not game.done:
            agent = e.agent_selection
            seat = agents.index(agent)
            assert seat == game.turn
            mask = e.observe(agent)["action_mask"]
            assert sorted(np.flatnonzero(mask).tolist()) == game.legal_actions()
            for other in agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
            e.step(int(rng.choice(np.flatnonzero(mask).tolist())))
            # Each step's reward is the change in (own public points - mean of the others').
            pub = list(game.public_total)
            for a in agents:
                side = side_of[agents.index(a)]
                others_now = [x for i, x in enumerate(pub) if i != side]
                others_before = [x for i, x in enumerate(public_before) if i != side]
                expected = (pub[side] - sum(others_now) / len(others_now)) - (
                    public_before[side] - sum(others_before) / len(others_before)
                )
                assert e.rewards[a] == pytest.approx(expected, abs=1e-9)
                per_step[a] += e.rewards[a]
            public_before = pub
        for a in agents:
            assert per_step[a] == pytest.approx(final_diff(game, side_of[agents.index(a)]), abs=1e-6)


@pytest.mark.parametrize("kw", ENV_CONFIGS[:4], ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_env_agent_iter_last_rewards_sum_to_final_score_difference(kw: dict) -> None:
    """The canonical AEC loop (``agent_iter``/``last``) sees the same episode totals."""
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=5)
    rng = random.Random(5)
    game = e.unwrapped.game
    agents = list(e.possible_agents)
    totals = {a: 0.0 for a in agents}
    for agent in e.agent_iter(max_iter=100_000):
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]).tolist())))
    assert game.done and e.agents == []
    for a in agents:
        assert totals[a] == pytest.approx(final_diff(game, game.side_of[agents.index(a)]), abs=1e-6)
