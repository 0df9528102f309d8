"""``Game.determinize(seat, rng)`` and ``Game.clone()``.

A determinization deals again, uniformly, exactly what ``seat`` cannot know (R31) and keeps
everything it can (R30): its observation is unchanged, the copy is a consistent game that can
be played to the end, and the original is untouched. A clone is an independent copy that plays
exactly like the original.
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from pisti_env import Game, ObservationEncoder, make_settings
from pisti_env.game import (
    LOC_CAPT_HIDDEN,
    LOC_CAPT_SHOWN,
    LOC_HAND,
    LOC_HAND_SHOWN,
    LOC_PILE_HIDDEN,
    LOC_PILE_JACK,
    LOC_PILE_UP,
    LOC_STOCK,
    LOC_STOCK_SHOWN,
)

JACK = 10


def card_points(card: int) -> int:
    """R20: Ace 1, Jack 1, 2♣ 2, 10♦ 3."""
    c = card % 52
    return 3 if c == 22 else 2 if c == 1 else 1 if c % 13 in (0, JACK) else 0


def snapshot(g: Game) -> dict:
    """A deep copy of the whole state (the random generator by its state)."""
    return {k: (v.getstate() if isinstance(v, random.Random) else copy.deepcopy(v)) for k, v in vars(g).items()}


def check_conservation(g: Game) -> None:
    """Every physical card in exactly one place, location codes and counters consistent."""
    n_cards = g.settings.num_cards
    where = g.where
    assert sorted(g.deck) == list(range(n_cards))
    placed: list[int] = []
    for seat, hand in enumerate(g.hands):
        placed += hand
        assert all(where[p] in (LOC_HAND + seat, LOC_HAND_SHOWN + seat) for p in hand)
    placed += g.pile
    assert all(where[p] in (LOC_PILE_UP, LOC_PILE_JACK, LOC_PILE_HIDDEN) for p in g.pile)
    stock = g.deck[g.stock_pos :]
    placed += stock
    assert all(where[p] in (LOC_STOCK, LOC_STOCK_SHOWN) for p in stock)
    assert len(placed) == len(set(placed))
    count, points = [0] * g.num_sides, [0] * g.num_sides
    for p in set(range(n_cards)) - set(placed):
        loc = where[p]
        if LOC_CAPT_SHOWN <= loc < LOC_CAPT_SHOWN + g.num_sides:
            side = loc - LOC_CAPT_SHOWN
        else:
            assert LOC_CAPT_HIDDEN <= loc < LOC_CAPT_HIDDEN + g.num_sides, f"card {p} is nowhere ({loc})"
            side = loc - LOC_CAPT_HIDDEN
        count[side] += 1
        points[side] += card_points(p)
    assert count == list(g.captured_count)
    assert points == list(g.card_points)


def play_to_end_checking(g: Game, rng: random.Random, max_steps: int = 20_000) -> None:
    """Random legal play to the end of the episode; every hand end must add up (R20–R23)."""
    decks = g.settings.decks
    steps = 0
    while not g.done:
        before = g.hands_completed
        g.step(rng.choice(g.legal_actions()))
        steps += 1
        assert steps < max_steps
        check_conservation(g)
        if g.hands_completed != before:
            result = g.last_hand_result
            cards = [r["cards"] for r in result]
            tied = cards.count(max(cards)) > 1
            assert sum(cards) == 52 * decks
            assert sum(r["card_points"] + r["majority"] for r in result) == 13 * decks + (0 if tied else 3)
            for r in result:
                assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"]
            assert list(g.match_scores) == [sum(h[i]["total"] for h in g.hand_results) for i in range(g.num_sides)]


def random_moment(settings, seed: int, hands_before: int = 0) -> Game:
    """A game after some random legal plays (optionally a few hands into a match)."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    while not g.done and g.hands_completed < hands_before:
        g.step(rng.choice(g.legal_actions()))
    if g.done:
        return random_moment(settings, seed + 1000, hands_before)
    for _ in range(rng.randrange(52 * settings.decks - 4)):
        g.step(rng.choice(g.legal_actions()))
    return g


CONFIGS = [
    dict(num_players=2, target=None),
    dict(num_players=2, target=51, show_stock_bottom=True),
    dict(num_players=3, target=None, show_stock_bottom=True),
    dict(num_players=4, partnerships=True, target=51),
    dict(num_players=4, partnerships=False, target=None),
    dict(num_players=5, decks=2, target=None, show_stock_bottom=True),
    dict(num_players=6, decks=2, target=51),
]


def config_id(kw: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in kw.items())


PUBLIC_ATTRS = (
    "dealer", "turn", "stock_pos", "captured_count", "pisti_count", "double_pisti_count", "pisti_points",
    "public_points", "public_total", "match_scores", "hands_completed", "hand_results", "last_capturer",
    "history", "done", "winner", "stock_bottom", "side_of",
)


@pytest.mark.parametrize("kw", CONFIGS, ids=config_id)
def test_R30_R31_determinize_keeps_what_the_seat_knows(kw: dict) -> None:
    settings = make_settings(**kw)
    enc = ObservationEncoder(settings)
    n = settings.num_players
    for trial in range(6):
        g = random_moment(settings, seed=100 * trial + n, hands_before=trial % 2 if settings.target else 0)
        for seat in range(n):
            before = snapshot(g)
            unknown = g.unknown_cards(seat)
            d = g.determinize(seat, random.Random(trial * 10 + seat))
            assert snapshot(g) == before, "determinize changed the original game"
            assert d is not g
            # The seat's view is byte-identical (R30), and so is its action mask.
            assert enc.encode(d, seat).tobytes() == enc.encode(g, seat).tobytes()
            if g.turn == seat:
                assert d.legal_actions() == g.legal_actions()
            assert d.hands[seat] == g.hands[seat]
            # Sizes and public counters are kept.
            assert [len(h) for h in d.hands] == [len(h) for h in g.hands]
            assert d.stock_size == g.stock_size and len(d.pile) == len(g.pile) and len(d.deck) == len(g.deck)
            for name in PUBLIC_ATTRS:
                assert getattr(d, name) == getattr(g, name), name
            if hasattr(g, "pile_hidden"):
                assert d.pile_hidden == g.pile_hidden
            # Every card the seat knows stays exactly where it was; unknown cards stay unknown.
            u = set(unknown)
            assert set(d.unknown_cards(seat)) == u
            for p in range(settings.num_cards):
                if p not in u:
                    assert d.where[p] == g.where[p] and d.played_by[p] == g.played_by[p], p
            for i, c in enumerate(g.pile):
                assert (d.pile[i] == c) if c not in u else (d.pile[i] in u)
            for i, c in enumerate(g.deck[g.stock_pos :], start=g.stock_pos):
                assert (d.deck[i] == c) if c not in u else (d.deck[i] in u)
            # The dealt cards' real deal order is not knowable: ascending in the copy.
            assert d.deck[: d.stock_pos] == sorted(set(range(settings.num_cards)) - set(d.deck[d.stock_pos :]))
            for s, hand in enumerate(g.hands):
                for i, c in enumerate(hand):
                    assert (d.hands[s][i] == c) if c not in u else (d.hands[s][i] in u)
            # The copy is a consistent game...
            check_conservation(d)
            # ...that plays to the end (R23 sums at every hand end), leaving the original alone.
            play_to_end_checking(d, random.Random(seat))
            assert snapshot(g) == before, "playing the determinized copy changed the original"


def _find_rich_moment() -> tuple[Game, int]:
    """A 3-player moment where seat 0's unknown cards are spread over both other hands, the
    stock and never-turned table cards that another side captured (R8)."""
    settings = make_settings(num_players=3, target=None)
    for seed in range(500):
        rng = random.Random(seed)
        g = Game(settings, seed=seed, dealer=2)  # seat 0 plays first
        for _ in range(12):
            g.step(rng.choice(g.legal_actions()))
            locs = {g.where[p] for p in g.unknown_cards(0)}
            if {LOC_HAND + 1, LOC_HAND + 2, LOC_STOCK} <= locs and locs & {LOC_CAPT_HIDDEN + 1, LOC_CAPT_HIDDEN + 2}:
                return g, 0
    raise AssertionError("no suitable moment found")


def test_determinize_is_uniform_over_unknown_slots() -> None:
    g, seat = _find_rich_moment()
    unknown = g.unknown_cards(seat)
    slots = Counter(g.where[p] for p in unknown)  # slots per kind of place
    size = len(unknown)
    rng = random.Random(2024)
    samples = 3000
    landed = {p: Counter() for p in unknown}  # card -> kind of place -> times
    first_slot = Counter()  # which card lands in one fixed unknown deck position
    pos = g.deck.index(unknown[0])
    for _ in range(samples):
        d = g.determinize(seat, rng)
        # Every sample keeps the number of unknown cards per kind of place.
        assert Counter(d.where[p] for p in unknown) == slots
        for p in unknown:
            landed[p][d.where[p]] += 1
        first_slot[d.deck[pos]] += 1
    # Each unknown card lands in an opponent's hand / the stock / a hidden captured slot in
    # proportion to the slot counts (a chi-square statistic with a generous bound).
    df = len(slots) - 1
    bound = df + 6 * (2 * df) ** 0.5 + 5
    for p in unknown:
        chi2 = sum((landed[p][loc] - samples * k / size) ** 2 / (samples * k / size) for loc, k in slots.items())
        assert chi2 < bound, (p, chi2, dict(landed[p]), dict(slots))
    # A fixed deck position receives every unknown card about equally often.
    df = size - 1
    expected = samples / size
    chi2 = sum((first_slot[p] - expected) ** 2 / expected for p in unknown)
    assert set(first_slot) <= set(unknown)
    assert chi2 < df + 6 * (2 * df) ** 0.5, chi2


def test_determinize_same_seed_same_copy_different_seeds_differ() -> None:
    g = random_moment(make_settings(num_players=2, target=51), seed=3)
    seat = g.turn

    def key(d: Game) -> tuple:
        return (tuple(map(tuple, d.hands)), tuple(d.deck), tuple(d.pile), bytes(d.where), d.rng.getstate())

    a = g.determinize(seat, random.Random(7))
    b = g.determinize(seat, random.Random(7))
    c = g.determinize(seat, 7)  # an int seeds a random.Random
    assert key(a) == key(b) == key(c)
    keys = {key(g.determinize(seat, s))[:4] for s in range(20)}
    assert len(keys) == 20, "different seeds must give different determinizations"
    # The copy's generator is reseeded: later hands are not the original's real shuffles (R31).
    assert a.rng.getstate() != g.rng.getstate()
    # A shared generator moves on: two calls in a row give two different copies.
    rng = random.Random(1)
    assert key(g.determinize(seat, rng))[:4] != key(g.determinize(seat, rng))[:4]


def test_determinize_rejects_bad_seat() -> None:
    g = Game(make_settings(num_players=2), seed=0)
    for bad in (-1, 2, True, "0"):
        with pytest.raises((ValueError, TypeError)):
            g.determinize(bad, 0)


@pytest.mark.parametrize("kw", CONFIGS, ids=config_id)
def test_clone_is_independent_and_plays_identically(kw: dict) -> None:
    settings = make_settings(**kw)
    for trial in range(3):
        g = random_moment(settings, seed=500 + trial)
        before = snapshot(g)
        c = g.clone()
        assert snapshot(c) == before
        # Stepping the clone to the end does not touch the original.
        play_to_end_checking(c, random.Random(trial))
        assert snapshot(g) == before, "stepping the clone changed the original"
        # Same actions -> same states, through hand ends and new shuffles (the generator too).
        c = g.clone()
        rng = random.Random(trial + 99)
        steps = 0
        while not g.done:
            action = rng.choice(g.legal_actions())
            assert c.legal_actions() == g.legal_actions()
            g.step(action)
            c.step(action)
            steps += 1
            assert snapshot(c) == snapshot(g)
        assert c.done and c.winner == g.winner and c.match_scores == g.match_scores
        # And stepping the original did not drag a fresh clone along.
        g2 = random_moment(settings, seed=900 + trial)
        c2 = g2.clone()
        frozen = snapshot(c2)
        g2.step(g2.legal_actions()[0])
        assert snapshot(c2) == frozen
