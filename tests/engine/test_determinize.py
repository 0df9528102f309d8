"""``Game.determinize(seat, rng)`` and ``Game.clone()``.

A determinization deals again, uniformly, exactly what ``seat`` cannot know (R31) and keeps
everything it can (R30): its observation is unchanged, the copy is a consistent game that can
be played to the end, and the original is untouched. A clone is an independent copy that plays
exactly like the original.

The bluff variant is one more axis of the settings matrix: there a determinization also deals
again the face-down cards the seat did not see (R29), a pending claim's card among them, and
``claim=`` conditions a pending claim on being true or a bluff.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pisti_env import Game, ObservationEncoder, make_settings
from pisti_env.agents import SeatView
from pisti_env.agents.bluffing import claim_true_probability
from pisti_env.agents.greedy import provably_bluff
from pisti_env.rules import locations

from helpers import (
    C,
    F,
    O,
    cases,
    check_bluff_conservation,
    check_hand_end_sums,
    down,
    provable_bluff_game,
    rank,
    snapshot,
    to_claim,
)


def play_to_end_checking(g: Game, rng: random.Random, max_steps: int = 20_000) -> None:
    """Random legal play to the end of the episode; every hand end must add up (R20–R23)."""
    steps = 0
    while not g.done:
        before = g.hands_completed
        g.step(rng.choice(g.legal_actions()))
        steps += 1
        assert steps < max_steps
        check_bluff_conservation(g, dealt_order_known=False)
        if g.hands_completed != before:
            check_hand_end_sums(g)


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


CASES = cases(
    "2p hand", "2p 51 stock-bottom", "3p hand stock-bottom", "4p-partners 51", "4p-solo hand",
    "5p-2decks hand stock-bottom", "6p-2decks 51",
)
BLUFF_CASES = cases(
    "2p hand bluff", "3p hand stock-bottom bluff", "4p-partners hand bluff", "4p-solo hand bluff", "6p-2decks hand bluff",
)


PUBLIC_ATTRS = (
    "dealer", "turn", "stock_pos", "captured_count", "pisti_count", "double_pisti_count", "pisti_points",
    "public_points", "public_total", "match_scores", "hands_completed", "hand_results", "last_capturer",
    "history", "done", "winner", "stock_bottom", "side_of",
)


@pytest.mark.parametrize("settings_case", CASES + BLUFF_CASES)
def test_R29_R30_R31_determinize_keeps_what_the_seat_knows(settings_case) -> None:
    """With bluffs the moments alternate between a pending claim and none, and the face-down
    cards the seat did not see are dealt again too."""
    settings = settings_case.settings
    enc = ObservationEncoder(settings)
    n = settings.num_players
    redealt = 0
    for trial in range(6):
        if settings.bluff:
            g = random_bluff_moment(settings, seed=trial, want_claim=trial % 2 == 0)
        else:
            g = random_moment(settings, seed=100 * trial + n, hands_before=trial % 2 if settings.target else 0)
        for seat in range(n):
            before = snapshot(g)
            unknown = g.unknown_cards(seat)
            d = g.determinize(seat, random.Random(trial * (7 if settings.bluff else 10) + seat))
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
            # R29: the claim record and a pending claim are kept; its unseen card is dealt again.
            assert d.claimant == g.claimant and d.claims == g.claims and d.bluff_points == g.bluff_points
            if g.claimant >= 0 and g.claim_card in u:
                assert d.claim_card in u and d.where[d.claim_card] == locations.PILE_DOWN + g.claimant
                redealt += d.claim_card != g.claim_card
            assert Counter(d.where[p] for p in u) == Counter(g.where[p] for p in u)
            # The copy is a consistent game...
            check_bluff_conservation(d, dealt_order_known=False)
            # ...that plays to the end (R23 sums at every hand end), leaving the original alone.
            play_to_end_checking(d, random.Random(seat))
            assert snapshot(g) == before, "playing the determinized copy changed the original"
    assert redealt > 0 or not settings.bluff


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
    g = provable_bluff_game()
    g.step(down("3C"))
    assert sorted(g.hands[O]) == sorted(C(c) for c in ("9D", "9H", "9S"))
    with pytest.raises(ValueError, match=r"no world has a true claim"):
        g.determinize(O, 0, claim=True)
    assert claim_true_probability(SeatView(g, O), 0.2) == 0.0  # surely a bluff (R29)
    assert provably_bluff(SeatView(g, O))


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
            if {locations.HAND + 1, locations.HAND + 2, locations.STOCK} <= locs and locs & {locations.CAPT_HIDDEN + 1, locations.CAPT_HIDDEN + 2}:
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


@pytest.mark.parametrize("settings_case", CASES)
def test_clone_is_independent_and_plays_identically(settings_case) -> None:
    settings = settings_case.settings
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
