"""One or more tests per rule R1..R28 of RULES.md, each on an exact, hand-built situation.

Conventions used throughout (see ``helpers.py``):

* ``deck_from_plays(table, plays)``: with 2–4 players and one deck the i-th card played is
  deck item ``4 + i`` when every seat plays its cards in the order they were dealt, so a
  situation is written as the table (item 3 face up) and the sequence of plays.
* 2 players with ``dealer=0``: seat 1 (F, the first player) plays first, seat 0 (O) second.
* Expected values are derived by hand from RULES.md, never copied from the engine.
"""

from __future__ import annotations

import random
import types

import numpy as np
import pytest

import pisti_env
from pisti_env import Game, ObservationEncoder, make_settings, new_game, parse_card
from pisti_env.game import engine as game_mod
from pisti_env.rules import locations
from pisti_env.rules.cards import card_to_text

from helpers import (  # tests/helpers.py; pytest puts tests/ on sys.path
    ALL_CODES,
    F,
    O,
    TABLE,
    codes,
    deck_from_plays,
    deck_with_prefix,
    deck_with_suffix,
    finish_hand_in_order,
    finish_hand_random,
    play,
    play_random,
)

C = parse_card
JACKS = [C(c) for c in ("JC", "JD", "JH", "JS")]


def ids(text: str) -> list[int]:
    return [C(c) for c in text.split()]


def two_player(plays: str, table=TABLE, **settings) -> Game:
    """2 players, dealer 0, the given table and first plays, target none unless given."""
    settings.setdefault("target", None)
    return new_game(deck=deck_from_plays(table, codes(plays)), dealer=0, **settings)


def hidden_in_pile(g: Game) -> int:
    """Table cards in the pile never turned face up (R8); also checks the engine's public count."""
    count = sum(1 for c in g.pile if g.where[c] == locations.PILE_HIDDEN)
    assert g.pile_hidden == count
    return count


def obs_plane(g: Game, seat: int, name: str) -> np.ndarray:
    enc = ObservationEncoder(g.settings)
    return enc.encode(g, seat)[enc.layout[name]]


def play_until_last_deal(g: Game) -> None:
    """Play in deal order until the stock is empty (the last deal has just been dealt)."""
    while g.stock_size > 0:
        hand = g.hands[g.turn]
        g.step(min(hand, key=g.deck.index) % 52)
    assert all(len(h) == 4 for h in g.hands)


def hands_until_done(g: Game, rng: random.Random, check=None, max_hands: int = 200) -> None:
    """Random legal play of a whole match; ``check(g, dealer_before)`` after every hand."""
    for _ in range(max_hands):
        if g.done:
            return
        dealer = g.dealer
        finish_hand_random(g, rng)
        if check is not None:
            check(g, dealer)
    raise AssertionError("match did not end")


# ============================================================================ R1
def test_R1_one_deck_of_52_distinct_cards():
    g = new_game(seed=3)
    assert sorted(g.deck) == list(range(52))
    held = list(g.pile) + [c for h in g.hands for c in h] + list(g.deck[g.stock_pos:])
    assert sorted(held) == list(range(52))


def test_R1_a_given_deck_must_hold_each_card_once():
    good = deck_with_prefix([])
    with pytest.raises(ValueError):
        new_game(deck=good[:-1])
    with pytest.raises(ValueError):
        new_game(deck=good[:-1] + [good[0]])  # AC twice, KS missing
    with pytest.raises(ValueError):
        new_game(deck=good + ["KS"])


def test_R1_suits_never_matter_only_rank():
    g = two_player("7H 8C 8D")  # 7♥ on 7♣ takes; 8♦ on 8♣ takes
    play(g, ["7H"], seats=[F])
    assert g.captured_count == [0, 5] and g.pile == []
    play(g, ["8C", "8D"], seats=[O, F])
    assert g.captured_count == [0, 7]
    # Same suit, other rank: no capture.
    g = two_player("8C")
    play(g, ["8C"])
    assert g.captured_count == [0, 0] and g.pile_top == C("8C")


def test_R1_two_decks_hold_each_card_twice():
    g = new_game(seed=5, num_players=5, decks=2)
    assert sorted(g.deck) == list(range(104))
    assert sorted(c % 52 for c in g.deck) == sorted(list(range(52)) * 2)
    with pytest.raises(ValueError):
        new_game(num_players=5)  # 5 players need two decks (R3, R27)


# ============================================================================ R2
def test_R2_card_ids_and_text_codes():
    assert [C(c) for c in ("AC", "2C", "10D", "JC", "JS", "KS")] == [0, 1, 22, 10, 49, 51]
    suits, ranks = "CDHS", ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    for s, suit in enumerate(suits):
        for r, rank in enumerate(ranks):
            assert C(rank + suit) == s * 13 + r
            assert card_to_text(s * 13 + r) == rank + suit
    assert C(22) == 22
    for bad in ("1D", "11C", "ZZ", "10X", ""):
        with pytest.raises(ValueError):
            C(bad)
    for bad in (-1, 52):
        with pytest.raises(ValueError):
            C(bad)


def test_R2_deck_as_ids_or_text_is_the_same_deck():
    deck = deck_from_plays(TABLE, codes("7D 4H 9C 9H"))
    a = new_game(deck=deck, dealer=0)
    b = new_game(deck=[C(c) for c in deck], dealer=0)
    assert a.deck == b.deck == [C(c) for c in deck]
    assert a.hands == b.hands and a.pile == b.pile


def test_R2_actions_are_card_ids():
    g = two_player("10D AC")
    assert g.legal_actions() == sorted(g.hands[F])
    assert C("10D") in g.legal_actions()
    g.step(22)  # 10♦
    assert g.pile_top == 22
    assert g.history == [(F, 22)]


def test_R2_two_copies_share_one_id():
    # 5 players, dealer 4: items 4..8 go to seats 0..4, then items 9..13 again, so seat 0
    # receives items 4 and 9: both copies of A♠.
    deck = deck_with_prefix(codes("2H 5S KD 7C AS 3C 3D 3H 3S AS"), decks=2)
    g = new_game(deck=deck, dealer=4, num_players=5, decks=2, target=None)
    first = 0
    assert g.hand_card_ids(first).count(C("AS")) == 2
    assert g.legal_actions().count(C("AS")) == 1
    g.step(C("AS"))
    assert g.hand_card_ids(first).count(C("AS")) == 1


# ============================================================================ R3
@pytest.mark.parametrize("n", [2, 3, 4])
def test_R3_seats_play_in_order(n):
    rng = random.Random(n)
    for dealer in range(n):
        g = new_game(seed=dealer, dealer=dealer, num_players=n, target=None)
        seen = [g.turn]
        while not g.done:
            before = g.turn
            play_random(g, rng)
            if not g.done:
                assert g.turn == (before + 1) % n
                seen.append(g.turn)
        assert len(seen) == 52 - 4
        assert seen[:n] == [(dealer + 1 + k) % n for k in range(n)]


# ============================================================================ R4
def test_R4_partnerships_pool_captures_and_piştis():
    # dealer 3: seat 0 plays first; plays by seats 0, 1, 2, 3, 0.
    deck = deck_from_plays(TABLE, codes("7D 4H 4C 9C JC"))
    g = new_game(deck=deck, dealer=3, num_players=4, target=None)
    assert g.settings.partnerships and g.side_of == (0, 1, 0, 1)
    play(g, codes("7D 4H 4C 9C JC"), seats=[0, 1, 2, 3, 0])
    # side 0: 5 (table) + 2 (seat 2's pişti 4♣ on 4♥) + 2 (J♣ on 9♣)
    assert g.captured_count == [9, 0]
    assert g.pisti_count == [1, 0] and g.pisti_points == [10, 0]
    assert g.card_points == [1, 0]  # J♣


def test_R4_without_partnerships_every_seat_is_a_side():
    deck = deck_from_plays(TABLE, codes("7D 4H 4C 9C JC"))
    g = new_game(deck=deck, dealer=3, num_players=4, partnerships=False, target=None)
    assert g.side_of == (0, 1, 2, 3) and g.num_sides == 4
    play(g, codes("7D 4H 4C 9C JC"), seats=[0, 1, 2, 3, 0])
    assert g.captured_count == [7, 0, 2, 0]
    assert g.pisti_count == [0, 0, 1, 0] and g.pisti_points == [0, 0, 10, 0]


def test_R4_partnership_defaults():
    assert make_settings(num_players=4).partnerships is True
    assert make_settings(num_players=2).partnerships is False
    assert make_settings(num_players=3).partnerships is False
    with pytest.raises(ValueError):
        make_settings(num_players=3, partnerships=True)


# ============================================================================ R5
@pytest.mark.parametrize("n", [2, 3, 4])
def test_R5_seat_after_dealer_plays_first_and_given_dealer_respected(n):
    for dealer in range(n):
        g = new_game(seed=11, dealer=dealer, num_players=n)
        assert g.dealer == dealer
        assert g.turn == (dealer + 1) % n
    with pytest.raises(ValueError):
        new_game(dealer=n, num_players=n)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R5_dealer_drawn_from_seed(n):
    dealers = [new_game(seed=s, num_players=n).dealer for s in range(60)]
    assert dealers == [new_game(seed=s, num_players=n).dealer for s in range(60)]  # same seed, same dealer
    assert set(dealers) == set(range(n))  # really drawn: every seat deals for some seed
    # The env: same seed -> same dealer and deck; the dealer option is respected.
    e = pisti_env.env(num_players=n)
    e.reset(seed=123)
    d1, deck1 = e.unwrapped.game.dealer, list(e.unwrapped.game.deck)
    e.reset(seed=123)
    assert e.unwrapped.game.dealer == d1 and e.unwrapped.game.deck == deck1
    for dealer in range(n):
        e.reset(seed=123, options={"dealer": dealer})
        assert e.unwrapped.game.dealer == dealer
        assert e.agent_selection == f"player_{(dealer + 1) % n}"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R5_deal_passes_to_next_seat_between_hands(n):
    g = new_game(seed=7, num_players=n, target=151)
    rng = random.Random(7)
    hands = 0

    def check(g, dealer_before):
        nonlocal hands
        hands += 1
        if not g.done:
            assert g.dealer == (dealer_before + 1) % n
            assert g.turn == (dealer_before + 2) % n  # the first player of one hand deals the next
            assert g.history == []

    hands_until_done(g, rng, check)
    assert hands >= 3


# ============================================================================ R6
@pytest.mark.parametrize("n", [2, 3, 4])
def test_R6_deal_order(n):
    rng = random.Random(60 + n)
    for dealer in range(n):
        deck = list(ALL_CODES)
        rng.shuffle(deck)
        while C(deck[3]) in JACKS:  # keep R7 out of this test
            rng.shuffle(deck)
        g = new_game(deck=deck, dealer=dealer, num_players=n)
        d = [C(c) for c in deck]
        # R6.1: items 0-3 to the table, item 0 at the bottom, item 3 on top and face up.
        assert g.pile == d[:4]
        assert g.where[d[3]] == locations.PILE_UP
        for c in d[:3]:
            assert g.where[c] == locations.PILE_HIDDEN
        assert hidden_in_pile(g) == 3
        # R6.2: one card at a time, starting with the seat after the dealer, four times round.
        first = (dealer + 1) % n
        for j in range(n):
            seat = (first + j) % n
            assert sorted(g.hands[seat]) == sorted(d[4 + k * n + j] for k in range(4))
            for c in g.hands[seat]:
                assert g.where[c] == locations.HAND + seat
        # R6.3: the rest is the stock, in order.
        assert g.stock_pos == 4 + 4 * n
        assert g.stock_size == 48 - 4 * n
        assert list(g.deck[g.stock_pos:]) == d[4 + 4 * n:]


# ============================================================================ R7
def test_R7_jack_on_top_goes_to_the_bottom_and_is_public():
    g = two_player("", table=codes("2H 5S KD JC"))
    assert g.pile == ids("JC 2H 5S KD")
    assert g.pile_top == C("KD")
    assert g.where[C("JC")] == locations.PILE_JACK
    assert g.where[C("KD")] == locations.PILE_UP
    assert hidden_in_pile(g) == 2
    for seat in (0, 1):  # everyone saw it
        assert obs_plane(g, seat, "pile_public_jack")[C("JC")] == 1
        assert obs_plane(g, seat, "unseen")[C("JC")] == 0
        assert obs_plane(g, seat, "unseen")[C("2H")] == 1


def test_R7_several_jacks_on_top():
    g = two_player("", table=codes("2H 5S JD JC"))
    # J♣ to the bottom, then J♦ (now on top) to the bottom; 5♠ is turned up.
    assert g.pile == ids("JD JC 2H 5S")
    assert g.pile_top == C("5S")
    assert g.where[C("JD")] == g.where[C("JC")] == locations.PILE_JACK
    assert g.where[C("2H")] == locations.PILE_HIDDEN
    g = two_player("", table=codes("2H JH JD JC"))
    assert g.pile_top == C("2H") and hidden_in_pile(g) == 0
    assert sorted(g.pile[:3]) == sorted(ids("JH JD JC"))
    # A Jack below the top card is not moved and stays face down.
    g = two_player("", table=codes("JS 5S KD 7C"))
    assert g.pile == ids("JS 5S KD 7C") and g.where[C("JS")] == locations.PILE_HIDDEN


def test_R7_public_jacks_when_captured_stay_public_hidden_cards_do_not():
    g = two_player("7D", table=codes("2H 5S 7C JC"))
    assert g.pile_top == C("7C")
    play(g, ["7D"], seats=[F])
    assert g.where[C("JC")] == locations.CAPT_SHOWN + F
    assert g.where[C("2H")] == locations.CAPT_HIDDEN + F
    assert g.public_points[F] == 1  # the public J♣ counts publicly
    assert g.card_points[F] == 1


def test_R7_four_jacks_in_a_given_deck_is_an_error():
    deck = deck_with_prefix(codes("JC JD JH JS"))
    with pytest.raises(ValueError):
        new_game(deck=deck, dealer=0)
    e = pisti_env.env()
    with pytest.raises(ValueError):
        e.reset(seed=1, options={"deck": deck})


class VoidFirstRandom(random.Random):
    """A seeded generator whose first shuffle deals four Jacks to the table (R7 void deal)."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.shuffles = 0

    def shuffle(self, x):
        self.shuffles += 1
        if self.shuffles == 1:
            x.sort(key=lambda c: (c % 13 != 10, c))  # the four Jacks first
            assert all(c % 13 == 10 for c in x[:4])
            return
        super().shuffle(x)


def test_R7_four_jacks_from_a_seeded_shuffle_redeal_first_hand(monkeypatch):
    plain = new_game(seed=17)  # what the seed deals without the void deal
    monkeypatch.setattr(game_mod, "random", types.SimpleNamespace(Random=VoidFirstRandom))
    g = Game(make_settings(), seed=17)
    assert g.rng.shuffles == 2  # the void deal was dealt again from the next shuffle
    assert g.dealer == plain.dealer  # the same dealer
    assert g.deck == plain.deck
    assert not all(c % 13 == 10 for c in g.deck[:4])


def test_R7_four_jacks_from_a_seeded_shuffle_redeal_in_match_play():
    g = new_game(seed=4, target=151)
    g.rng = VoidFirstRandom(99)  # only used to shuffle the next hand
    dealer = g.dealer
    finish_hand_random(g, random.Random(0))
    assert not g.done and g.hands_completed == 1
    assert g.rng.shuffles == 2
    expected = list(range(52))
    random.Random(99).shuffle(expected)  # the shuffle after the void one
    assert g.deck == expected
    assert g.dealer == (dealer + 1) % 2  # R5 rotation, no extra rotation for the void deal
    assert g.turn == (g.dealer + 1) % 2


# ============================================================================ R8
def test_R8_hidden_table_cards_known_only_to_the_capturing_side():
    table = codes("AC 10D 2C 7C")  # 6 points face down
    g = two_player("7D", table=table)
    hidden = ids("AC 10D 2C")
    for seat in (F, O):  # before the capture nobody knows them
        assert all(obs_plane(g, seat, "unseen")[c] == 1 for c in hidden)
        assert all(obs_plane(g, seat, "pile_face_up")[c] == 0 for c in hidden)
    play(g, ["7D"], seats=[F])
    for c in hidden:
        assert g.where[c] == locations.CAPT_HIDDEN + F
    assert g.card_points[F] == 6
    assert g.public_points[F] == 0 and g.public_total[F] == 0  # only F can count them
    # F sees them among its own captures; O does not (they stay unseen for O).
    assert all(obs_plane(g, F, "captured_side_0")[c] == 1 for c in hidden)
    for c in hidden:
        assert obs_plane(g, O, "unseen")[c] == 1
        assert obs_plane(g, O, "captured_side_1")[c] == 0
    assert obs_plane(g, O, "captured_side_1")[C("7C")] == 1  # the face-up cards are public
    assert set(hidden) <= set(g.unknown_cards(O))
    assert not set(hidden) & set(g.unknown_cards(F))
    # At the end of the hand they are counted for F (R20) and everything is public.
    finish_hand_in_order(g)
    assert g.last_hand_result[F]["card_points"] >= 6
    assert g.public_total == g.match_scores


def test_R8_partners_share_the_knowledge():
    table = codes("AC 10D 2C 7C")
    deck = deck_from_plays(table, codes("7D"))
    g = new_game(deck=deck, dealer=3, num_players=4, target=None)
    play(g, ["7D"], seats=[0])
    hidden = ids("AC 10D 2C")
    for seat in (0, 2):
        assert all(obs_plane(g, seat, "captured_side_0")[c] == 1 for c in hidden)
        assert all(obs_plane(g, seat, "unseen")[c] == 0 for c in hidden)
    for seat in (1, 3):
        assert all(obs_plane(g, seat, "unseen")[c] == 1 for c in hidden)
        assert all(obs_plane(g, seat, "captured_side_1")[c] == 0 for c in hidden)


# ============================================================================ R9
def test_R9_exactly_one_card_per_turn():
    g = two_player("9C 8D")
    before = {s: len(g.hands[s]) for s in (0, 1)}
    play(g, ["9C"], seats=[F])
    assert len(g.hands[F]) == before[F] - 1 and len(g.hands[O]) == before[O]
    assert C("9C") not in g.hands[F]
    assert len(g.pile) == 5 and g.turn == O
    play(g, ["8D"], seats=[O])
    assert len(g.hands[O]) == before[O] - 1 and len(g.pile) == 6 and g.turn == F


def test_R9_a_card_not_in_hand_is_refused_and_changes_nothing():
    g = two_player("9C")
    snap = g.clone()
    not_held = next(c for c in range(52) if c not in g.hands[F])
    with pytest.raises(ValueError):
        g.step(not_held)
    assert g.hands == snap.hands and g.pile == snap.pile and g.turn == snap.turn
    assert g.history == [] and g.where == snap.where


# ============================================================================ R10
def test_R10_seed_001_example():
    # Seed 001: player 2 (seat 1) deals; a 7 lies face up on three face-down cards; player 1
    # (seat 0) holds a 7, a Jack and two other cards.
    plays = codes("7D 4H 9C 9H JC 5D QC 6D")
    g = new_game(deck=deck_from_plays(TABLE, plays), dealer=1, target=None)
    p1, p2 = 0, 1
    assert g.turn == p1 and sorted(g.hands[p1]) == sorted(ids("7D 9C JC QC"))
    # 1. Player 1 plays his 7 and takes the pile: 5 cards, the three face-down ones included.
    play(g, ["7D"], seats=[p1])
    assert g.captured_count == [5, 0] and g.pile == [] and g.pisti_count == [0, 0]
    # 2. The pile is empty. Player 2 plays a 4.
    play(g, ["4H"], seats=[p2])
    assert g.pile == ids("4H")
    # 3. A Jack now would take just one card and not be a pişti.
    alt = g.clone()
    play(alt, ["JC"])
    assert alt.captured_count == [7, 0] and alt.pisti_count == [0, 0] and alt.pisti_points == [0, 0]
    # He plays a 9 instead.
    play(g, ["9C"], seats=[p1])
    # 4. Player 2 plays a 9 and takes both cards (3 with his own): not a pişti.
    play(g, ["9H"], seats=[p2])
    assert g.captured_count == [5, 3] and g.pile == []
    assert g.pisti_count == [0, 0] and g.pisti_points == [0, 0] and g.last_capturer == p2


def test_R10_rank_capture_takes_the_whole_pile():
    g = two_player("9C 4H 6D 6S")  # F 9♣ on 7♣, O 4♥, F 6♦, O 6♠ takes all 8
    play(g, codes("9C 4H 6D"), seats=[F, O, F])
    assert len(g.pile) == 7
    play(g, ["6S"], seats=[O])
    assert g.captured_count == [8, 0] and g.pile == []
    assert g.last_capturer == O
    for c in ids("9C 4H 6D 6S 7C"):
        assert g.where[c] == locations.CAPT_SHOWN + O


# ============================================================================ R11
def test_R11_jack_takes_whatever_top_and_lies_on_an_empty_pile():
    g = two_player("JC JD KC KH")
    play(g, ["JC"], seats=[F])  # J♣ on 7♣ takes the 4-card pile
    assert g.captured_count == [0, 5] and g.pile == [] and g.last_capturer == F
    play(g, ["JD"], seats=[O])  # on an empty pile: takes nothing, lies there
    assert g.pile == ids("JD") and g.where[C("JD")] == locations.PILE_UP
    assert g.captured_count == [0, 5] and g.last_capturer == F
    play(g, ["KC"], seats=[F])  # a King on the Jack stays (R12)
    assert g.pile == ids("JD KC")
    play(g, ["KH"], seats=[O])
    assert g.captured_count == [3, 5] and g.pisti_count == [0, 0]


def test_R11_jack_on_any_rank():
    for top in ("AC", "2C", "10D", "QS", "KH"):
        table = ["3H", "4S", "5S", top]
        g = two_player("JD", table=table)
        play(g, ["JD"])
        assert g.captured_count == [0, 5] and g.pile == []


# ============================================================================ R12
def test_R12_otherwise_the_card_stays_on_top():
    g = two_player("9C 8D QS")
    play(g, ["9C"], seats=[F])
    assert g.pile == ids("2H 5S KD 7C 9C") and g.pile_top == C("9C")
    assert g.where[C("9C")] == locations.PILE_UP
    play(g, codes("8D QS"), seats=[O, F])
    assert g.pile_top == C("QS") and len(g.pile) == 7
    assert g.captured_count == [0, 0] and g.last_capturer == -1


# ============================================================================ R13
def test_R13_pisti_scores_10():
    g = two_player("7D 4H 4C")
    play(g, codes("7D 4H"), seats=[F, O])
    assert g.pile == ids("4H")
    play(g, ["4C"], seats=[F])  # 4♣ takes the lone 4♥: pişti
    assert g.pisti_count == [0, 1] and g.pisti_points == [0, 10]
    assert g.captured_count == [0, 7]
    assert g.public_points[F] == 10
    assert g.double_pisti_count == [0, 0]


def test_R13_jack_on_lone_non_jack_is_not_a_pisti():
    g = two_player("7D 9C JC")
    play(g, codes("7D 9C JC"), seats=[F, O, F])
    assert g.captured_count == [0, 7] and g.pile == []
    assert g.pisti_count == [0, 0] and g.pisti_points == [0, 0] and g.double_pisti_count == [0, 0]


def test_R13_pisti_counts_in_the_hand_total():
    g = two_player("7D 4H 4C")
    play(g, codes("7D 4H 4C"))
    finish_hand_in_order(g)
    r = g.last_hand_result[F]
    assert r["pisti"] >= 1 and r["pisti_points"] >= 10
    assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"]


# ============================================================================ R14
@pytest.mark.parametrize(
    "double_pisti, pisti, double, points",
    [(20, 0, 1, 20), (10, 1, 0, 10), (0, 0, 0, 0)],
)
def test_R14_double_pisti_jack_on_lone_jack(double_pisti, pisti, double, points):
    g = two_player("7D JH JC", double_pisti=double_pisti)
    play(g, codes("7D JH"), seats=[F, O])
    assert g.pile == ids("JH")
    play(g, ["JC"], seats=[F])
    assert g.captured_count == [0, 7] and g.pile == []  # the capture stands in every case
    assert g.pisti_count == [0, pisti]
    assert g.double_pisti_count == [0, double]
    assert g.pisti_points == [0, points]
    finish_hand_in_order(g)
    assert g.last_hand_result[F]["pisti_points"] >= points


def test_R14_default_is_20():
    assert make_settings().double_pisti == 20
    with pytest.raises(ValueError):
        make_settings(double_pisti=15)


# ============================================================================ R15
@pytest.mark.parametrize(
    "table, card",
    [
        (TABLE, "7D"),  # rank capture of the initial pile
        (TABLE, "JD"),  # Jack capture of the initial pile
        (codes("2H 5S KD JC"), "KC"),  # after R7 moved the Jack: still 4 cards
    ],
)
def test_R15_capturing_the_initial_pile_is_never_a_pisti(table, card):
    g = two_player(card, table=table)
    play(g, [card], seats=[F])
    assert g.captured_count == [0, 5]
    assert g.pisti_count == [0, 0] and g.double_pisti_count == [0, 0] and g.pisti_points == [0, 0]


# ============================================================================ R16
# Last deal of a 2-player hand (F, O alternating), built so that the last card makes a pişti:
# the other three Queens lie face down in the table, so Q♣ never meets a Queen on top.
LAST_TABLE = codes("QD QH QS 2C")
LAST_PISTI = codes("QC JS 9C 9D 5C JD 8C 8D")  # O's J♠ takes; 9♦ pişti; J♦ takes lone 5♣; 8♦ pişti
LAST_DOUBLE = codes("QC JS 9C 9D 5C JD JC JH")  # ... J♣ lies on the empty pile; J♥ double pişti


def _play_last_deal(deck_last, **settings):
    g = new_game(deck=deck_with_suffix(LAST_TABLE, deck_last), dealer=0, target=None, **settings)
    play_until_last_deal(g)
    assert g.pile_top is None or g.pile_top % 13 != C("QC") % 13
    play(g, deck_last[:-1], seats=[F, O] * 3 + [F])
    assert len(g.pile) == 1 and g.pile_top % 13 == C(deck_last[-1]) % 13
    before = (list(g.pisti_count), list(g.double_pisti_count), list(g.pisti_points), list(g.captured_count))
    play(g, deck_last[-1:], seats=[O])
    assert g.done
    return before, g


@pytest.mark.parametrize("last_card_pisti", [True, False])
def test_R16_pisti_with_the_last_card(last_card_pisti):
    (pc, dc, pp, cc), g = _play_last_deal(LAST_PISTI, last_card_pisti=last_card_pisti)
    r = g.last_hand_result[O]
    assert pc[O] >= 1  # the 9♦ pişti before it counts either way
    gained = 1 if last_card_pisti else 0
    assert r["pisti"] == pc[O] + gained
    assert r["pisti_points"] == pp[O] + 10 * gained
    assert r["double_pisti"] == dc[O]
    assert r["cards"] == cc[O] + 2  # the capture stands
    assert g.last_capturer == O


@pytest.mark.parametrize("last_card_pisti", [True, False])
def test_R16_double_pisti_with_the_last_card(last_card_pisti):
    (pc, dc, pp, cc), g = _play_last_deal(LAST_DOUBLE, last_card_pisti=last_card_pisti)
    r = g.last_hand_result[O]
    gained = 1 if last_card_pisti else 0
    assert r["double_pisti"] == dc[O] + gained
    assert r["pisti"] == pc[O]
    assert r["pisti_points"] == pp[O] + 20 * gained
    assert r["cards"] == cc[O] + 2


def test_R16_default_is_true():
    assert make_settings().last_card_pisti is True


# ============================================================================ R17
@pytest.mark.parametrize("plays", ["7D 10D 10C", "7D 10C 10D"])
@pytest.mark.parametrize("bonus", [0, 3])
def test_R17_ten_of_diamonds_pisti_bonus(plays, bonus):
    g = two_player(plays, ten_diamonds_pisti_bonus=bonus)
    play(g, codes(plays), seats=[F, O, F])
    assert g.pisti_count == [0, 1]
    assert g.pisti_points == [0, 10 + bonus]


def test_R17_no_bonus_without_the_ten_of_diamonds():
    g = two_player("7D 10H 10C", ten_diamonds_pisti_bonus=3)
    play(g, codes("7D 10H 10C"))
    assert g.pisti_points == [0, 10]


def test_R17_no_bonus_when_the_ten_of_diamonds_is_not_one_of_the_two_cards():
    # 10♦ in the initial pile captured by a 10: not a pişti at all (R15), no bonus.
    g = two_player("10C", table=codes("2H 5S KD 10D"), ten_diamonds_pisti_bonus=3)
    play(g, ["10C"])
    assert g.pisti_points == [0, 0]


# ============================================================================ R18
@pytest.mark.parametrize("n, deals", [(2, 6), (3, 4), (4, 3)])
def test_R18_redeal_counts_and_table_not_replenished(n, deals):
    for seed in range(5):
        g = new_game(seed=seed, num_players=n, target=None)
        rng = random.Random(seed)
        first = (g.dealer + 1) % n
        count = 1
        while not g.done:
            pos, pile = g.stock_pos, list(g.pile)
            card = play_random(g, rng)
            if g.stock_pos != pos:  # a redeal happened after this play
                count += 1
                # The table is not replenished: it holds exactly what the play left.
                captured = bool(pile) and (card % 13 == pile[-1] % 13 or card % 13 == 10)
                assert g.pile == ([] if captured else pile + [card])
                # Four cards each, one at a time from the first player (R6.2).
                assert g.stock_pos == pos + 4 * n
                for j in range(n):
                    seat = (first + j) % n
                    assert sorted(g.hands[seat]) == sorted(g.deck[pos + k * n + j] for k in range(4))
                assert g.turn == first  # play continues with the first player
        assert count == deals
        assert g.stock_size == 0


# ============================================================================ R19
LAST_SWEEP = codes("QC JS 9C 9D JD 5D JC AD")  # F's J♣ takes last (2 cards), O's A♦ lies alone


def test_R19_leftover_goes_to_the_last_capturer_and_is_no_pisti():
    g = new_game(deck=deck_with_suffix(LAST_TABLE, LAST_SWEEP), dealer=0, target=None)
    play_until_last_deal(g)
    play(g, LAST_SWEEP[:7], seats=[F, O, F, O, F, O, F])
    assert g.last_capturer == F and g.pile == []
    before_cards, before_points = list(g.captured_count), list(g.card_points)
    before_pisti = list(g.pisti_count)
    play(g, LAST_SWEEP[7:], seats=[O])  # the A♦ lies alone on the empty pile: hand over
    assert g.done
    r = g.last_hand_result
    assert r[F]["cards"] == before_cards[F] + 1  # the lone A♦ goes to F, who captured last
    assert r[O]["cards"] == before_cards[O]
    assert r[F]["card_points"] == before_points[F] + 1
    assert r[F]["pisti"] == before_pisti[F] and r[O]["pisti"] == before_pisti[O]
    assert g.where[C("AD")] == locations.CAPT_SHOWN + F
    assert sum(x["cards"] for x in r) == 52


def test_R19_many_leftover_cards_with_hidden_ones():
    # A whole hand in which nobody captures until a Jack; the last capturer sweeps the rest.
    rng = random.Random(5)
    swept = 0
    for seed in range(30):
        g = new_game(seed=seed, target=None)
        while not g.done:
            if g.stock_size == 0 and sum(map(len, g.hands)) == 1:
                side, pile_len, cards = g.last_capturer, len(g.pile), list(g.captured_count)
                card = g.legal_actions()[0]
                top = g.pile_top
                takes = top is not None and (card % 13 == top % 13 or card % 13 == 10)
                pc = list(g.pisti_count)
                g.step(card)
                r = g.last_hand_result
                if not takes:
                    # the played card joins the pile and all of it goes to the last capturer
                    assert r[side]["cards"] == cards[side] + pile_len + 1
                    assert [x["pisti"] for x in r] == pc
                    assert sum(x["cards"] for x in r) == 52
                    swept += 1
                break
            play_random(g, rng)
    assert swept > 0


# ============================================================================ R20
def test_R20_card_points():
    # F's J♥ takes A♣, 2♣, 10♦ (face up): 1 + 2 + 3 + 1 (the Jack itself) = 7.
    g = two_player("7D AC 2C 10D JH", table=codes("3H 4S 5S 7C"))
    play(g, codes("7D AC 2C 10D JH"), seats=[F, O, F, O, F])
    assert g.captured_count == [0, 9]
    assert g.card_points == [0, 7] and g.public_points == [0, 7]


def test_R20_values_of_every_card():
    from pisti_env.rules.scoring import card_points

    expected = {c: 0 for c in range(52)}
    for c in ids("AC AD AH AS JC JD JH JS"):
        expected[c] = 1
    expected[C("2C")] = 2
    expected[C("10D")] = 3
    assert {c: card_points(c) for c in range(52)} == expected
    assert sum(expected.values()) == 13


@pytest.mark.parametrize("n, decks, total", [(2, 1, 13), (3, 1, 13), (4, 1, 13), (5, 2, 26), (6, 2, 26)])
def test_R20_card_points_of_a_hand_add_up(n, decks, total):
    for seed in range(10):
        g = new_game(seed=seed, num_players=n, decks=decks, target=None)
        finish_hand_random(g, random.Random(seed))
        assert sum(r["card_points"] for r in g.last_hand_result) == total


# ============================================================================ R21
def _majority_expected(cards):
    best = max(cards)
    return [3 if c == best and cards.count(best) == 1 else 0 for c in cards]


@pytest.mark.parametrize("n, partnerships", [(2, None), (3, None), (4, True), (4, False)])
def test_R21_majority_strictly_most_cards(n, partnerships):
    kw = {} if partnerships is None else {"partnerships": partnerships}
    ties = 0
    not_half = 0
    for seed in range(300):
        g = new_game(seed=seed, num_players=n, target=None, **kw)
        finish_hand_random(g, random.Random(seed))
        cards = [r["cards"] for r in g.last_hand_result]
        assert sum(cards) == 52
        assert [r["majority"] for r in g.last_hand_result] == _majority_expected(cards)
        ties += cards.count(max(cards)) > 1
        not_half += max(cards) < 27 and cards.count(max(cards)) == 1
    assert ties > 0  # the tie case was exercised
    if len(cards) > 2:
        assert not_half > 0  # "most cards", not "more than half"


def test_R21_two_sides_26_26_gives_nobody_the_majority():
    for seed in range(2000):
        g = new_game(seed=seed, target=None)
        finish_hand_random(g, random.Random(seed))
        r = g.last_hand_result
        if r[0]["cards"] == 26:
            assert r[0]["majority"] == r[1]["majority"] == 0
            assert r[0]["card_points"] + r[1]["card_points"] == 13
            return
    pytest.fail("no 26-26 hand found")


def test_R21_two_sides_27_of_52_wins_it():
    for seed in range(100):
        g = new_game(seed=seed, target=None)
        finish_hand_random(g, random.Random(seed))
        for r in g.last_hand_result:
            assert r["majority"] == (3 if r["cards"] >= 27 else 0)


# ============================================================================ R22
def test_R22_hand_total_is_cards_majority_and_pisti_points():
    for settings in ({}, {"num_players": 3}, {"num_players": 4}, {"ten_diamonds_pisti_bonus": 3}):
        for seed in range(40):
            g = new_game(seed=seed, target=None, **settings)
            finish_hand_random(g, random.Random(seed))
            for r in g.last_hand_result:
                assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"]
            assert g.match_scores == [r["total"] for r in g.last_hand_result]


# ============================================================================ R23
# The worked example of R23 (seed 004) as a real hand. F = side A, O = side B; dealer 0.
#   play 0     F 5♦ takes the 4-card table (J♣ face down among them): A 5 cards, not a pişti.
#   plays 1-2  O 9♣ on the empty pile, F 9♦ takes it: a pişti for A (A 7 cards).
#   plays 3-24 O J♥ on the empty pile (lies there), 20 cards without a rank repeat on top,
#              F's J♠ takes all 22 (A♣ and 10♦ among them): A 29 cards.
#   plays 25-47 23 cards (A♦ A♥ A♠ 2♣ among them), the last one O's J♦ takes all: B 23 cards.
R23_TABLE = codes("JC 3C 4C 5C")
R23_PLAYS = codes(
    "5D "
    "9C 9D "
    "JH AC 6C 7C 8C 10C QC KC 2D 3D 4D 6D 7D 8D 10D QD KD 2H 3H 4H 5H JS "
    "2C AD 6H AH 7H AS 8H 2S 9H 3S 10H 4S QH 5S KH 6S 7S 8S 9S 10S QS KS JD"
)


def test_R23_worked_example_as_a_played_hand():
    assert len(R23_PLAYS) == 48 and len(set(R23_TABLE + R23_PLAYS)) == 52
    g = new_game(deck=deck_from_plays(R23_TABLE, R23_PLAYS), dealer=0, target=None)
    play(g, R23_PLAYS, seats=[F, O] * 24)
    assert g.done
    a, b = g.last_hand_result[F], g.last_hand_result[O]
    # Side A: 29 cards with 3 Jacks, 1 Ace, the 10♦ and one pişti: 3 + 1 + 3 + 3 + 10 = 20.
    assert a == {"cards": 29, "card_points": 7, "majority": 3, "pisti": 1, "double_pisti": 0,
                 "pisti_points": 10, "total": 20}
    # Side B: 23 cards with 1 Jack, 3 Aces and the 2♣: 1 + 3 + 2 = 6.
    assert b == {"cards": 23, "card_points": 6, "majority": 0, "pisti": 0, "double_pisti": 0,
                 "pisti_points": 0, "total": 6}
    jacks_a = [c for c in JACKS if g.where[c] in (locations.CAPT_SHOWN + F, locations.CAPT_HIDDEN + F)]
    assert sorted(jacks_a) == sorted(ids("JC JH JS"))
    assert g.match_scores[F] == 20 and g.match_scores[O] == 6 and g.winner == F


@pytest.mark.parametrize("n, decks, full, tied", [(2, 1, 16, 13), (3, 1, 16, 13), (4, 1, 16, 13), (5, 2, 29, 26), (6, 2, 29, 26)])
def test_R23_a_hand_hands_out_16_or_29_points_without_pistis(n, decks, full, tied):
    for seed in range(30):
        g = new_game(seed=seed, num_players=n, decks=decks, target=None)
        finish_hand_random(g, random.Random(seed))
        r = g.last_hand_result
        cards = [x["cards"] for x in r]
        expected = tied if cards.count(max(cards)) > 1 else full
        assert sum(x["total"] - x["pisti_points"] for x in r) == expected


# ============================================================================ R24
def test_R24_match_scores_add_up_and_default_target():
    assert make_settings().target == 151
    for target in (151, 51):
        g = new_game(seed=target, target=target)

        def check(g, _):
            sums = [sum(h[s]["total"] for h in g.hand_results) for s in range(g.num_sides)]
            assert g.match_scores == sums
            assert len(g.hand_results) == g.hands_completed

        hands_until_done(g, random.Random(target), check)
        assert max(g.match_scores) >= target
        if target == 151:
            assert g.hands_completed >= 3


def test_R24_target_values():
    assert make_settings(target=1).target == 1
    assert make_settings(target=101).target == 101
    assert make_settings(target=None).target is None
    for bad in (0, -5):
        with pytest.raises(ValueError):
            make_settings(target=bad)
    with pytest.raises(TypeError):
        make_settings(target=1.5)


def test_R24_target_none_is_a_single_hand():
    g = new_game(seed=2, target=None)
    finish_hand_random(g, random.Random(2))
    assert g.done and g.hands_completed == 1


# ============================================================================ R25
def _check_match_end(g, dealer_before):
    scores = [sum(h[s]["total"] for h in g.hand_results) for s in range(g.num_sides)]
    assert g.match_scores == scores
    best = max(scores)
    leaders = [s for s, v in enumerate(scores) if v == best]
    target, margin = g.settings.target, g.settings.win_margin
    runner_up = max(v for s, v in enumerate(scores) if s != leaders[0])
    should_end = best >= target and len(leaders) == 1 and best - runner_up >= margin
    assert g.done == should_end, (scores, target, margin)
    if g.done:
        assert g.winner == leaders[0]
    else:
        assert g.dealer == (dealer_before + 1) % g.num_players
        assert g.legal_actions()


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R25_match_ends_with_a_single_leader_at_target(n):
    for seed in range(6):
        g = new_game(seed=seed, num_players=n, target=51)
        hands_until_done(g, random.Random(seed), _check_match_end)


def test_R25_tie_at_the_top_plays_another_hand():
    found = 0
    for seed in range(400):
        g = new_game(seed=seed, target=1)
        finish_hand_random(g, random.Random(seed))
        s = g.match_scores
        if s[0] == s[1]:
            assert not g.done and g.hands_completed == 1 and g.winner is None
            hands_until_done(g, random.Random(seed), _check_match_end)
            found += 1
        else:
            assert g.done and g.winner == (0 if s[0] > s[1] else 1)
    assert found > 0


def test_R25_with_three_sides_a_top_tie_continues():
    found = 0
    for seed in range(600):
        g = new_game(seed=seed, num_players=3, target=1)
        finish_hand_random(g, random.Random(seed))
        s = g.match_scores
        if s.count(max(s)) > 1:
            assert not g.done
            hands_until_done(g, random.Random(seed), _check_match_end)
            found += 1
    assert found > 0


def test_R25_single_hand_equal_totals_is_a_draw():
    for seed in range(400):
        g = new_game(seed=seed, target=None)
        finish_hand_random(g, random.Random(seed))
        assert g.done and g.hands_completed == 1
        s = g.match_scores
        if s[0] == s[1]:
            assert g.winner is None
            return
        assert g.winner == (0 if s[0] > s[1] else 1)
    pytest.fail("no drawn single hand found")


# ============================================================================ R26
def test_R26_win_margin_needs_a_clear_lead():
    assert make_settings().win_margin == 0
    blocked = 0
    for seed in range(300):
        g = new_game(seed=seed, target=1, win_margin=8)
        finish_hand_random(g, random.Random(seed))
        s = g.match_scores
        if max(s) - min(s) < 8:
            assert not g.done  # leader not 8 points clear: another hand
            blocked += 1
            hands_until_done(g, random.Random(seed), _check_match_end)
            assert max(g.match_scores) - min(g.match_scores) >= 8
        else:
            assert g.done
    assert blocked > 0
    for seed in range(5):
        g = new_game(seed=seed, num_players=3, target=51, win_margin=2)
        hands_until_done(g, random.Random(seed), _check_match_end)
    with pytest.raises(ValueError):
        make_settings(win_margin=-1)


# ============================================================================ R27
def _deal_sizes(g, rng):
    sizes = [sum(map(len, g.hands))]
    turns = []
    while not g.done:
        pos = g.stock_pos
        turns.append(g.turn)
        play_random(g, rng)
        if g.stock_pos != pos:
            sizes.append(g.stock_pos - pos)
    return sizes, turns


def test_R27_five_players_five_deals_of_20():
    for seed in range(5):
        g = new_game(seed=seed, num_players=5, decks=2, target=None)
        sizes, _ = _deal_sizes(g, random.Random(seed))
        assert sizes == [20] * 5
        r = g.last_hand_result
        assert sum(x["cards"] for x in r) == 104
        assert sum(x["card_points"] for x in r) == 26


def test_R27_six_players_four_deals_of_24_then_four_cards():
    suffix = codes("AS 2S 3S 4S")  # the deck's last four cards
    for dealer in (0, 3, 5):
        deck = deck_with_suffix([], suffix, decks=2)
        g = new_game(deck=deck, dealer=dealer, num_players=6, decks=2, target=None)
        rng = random.Random(dealer)
        while g.stock_size > 0:
            play_random(g, rng)
        # The fifth deal: one card each to the first four seats after the dealer, in order.
        for k in range(6):
            seat = (dealer + 1 + k) % 6
            assert g.hand_card_ids(seat) == ([C(suffix[k])] if k < 4 else [])
        turns = []
        while not g.done:
            turns.append(g.turn)
            play_random(g, rng)
        assert turns == [(dealer + 1 + k) % 6 for k in range(4)]  # seats with no card are skipped
    for seed in range(5):
        g = new_game(seed=seed, num_players=6, decks=2, target=None)
        sizes, turns = _deal_sizes(g, random.Random(seed))
        assert sizes == [24, 24, 24, 24, 4]
        assert len(turns) == 100
        r = g.last_hand_result
        assert sum(x["cards"] for x in r) == 104
        assert sum(x["card_points"] for x in r) == 26
        cards = [x["cards"] for x in r]
        assert [x["majority"] for x in r] == _majority_expected(cards)
        assert sum(x["total"] - x["pisti_points"] for x in r) in (26, 29)


def test_R27_no_seat_skipped_while_everyone_holds_cards():
    # 6 players: during the four deals of 24 everyone holds cards, so play goes round in
    # plain order (the fifth deal, where seats are skipped, is tested above).
    g = new_game(seed=9, dealer=2, num_players=6, decks=2, target=None)
    rng = random.Random(9)
    prev = None
    plays = 0
    while g.stock_size > 0:
        if prev is not None:
            assert g.turn == (prev + 1) % 6
        prev = g.turn
        play_random(g, rng)
        plays += 1
    assert plays == 96
    assert g.turn == 3  # the fifth deal starts with the seat after the dealer


def test_R27_two_decks_only_for_five_or_six():
    with pytest.raises(ValueError):
        make_settings(num_players=4, decks=2)
    with pytest.raises(ValueError):
        make_settings(num_players=6, decks=1)
    assert make_settings(num_players=6, decks=2).decks == 2


# ============================================================================ R28
def test_R28_stock_bottom_is_shown_and_goes_to_the_dealer():
    for n in (2, 3, 4):
        dealer = n - 1
        deck = deck_with_suffix(TABLE, ["5H"])
        g = new_game(deck=deck, dealer=dealer, num_players=n, show_stock_bottom=True, target=None)
        card = C("5H")
        assert g.stock_bottom == card and g.deck[-1] == card
        assert g.where[card] == locations.STOCK_SHOWN
        for seat in range(n):
            assert obs_plane(g, seat, "stock_bottom")[card] == 1
            assert obs_plane(g, seat, "unseen")[card] == 0
        rng = random.Random(n)
        while g.stock_size > 0:
            play_random(g, rng)
        assert card in g.hands[dealer]  # the dealer receives the deck's last card
        assert g.where[card] == locations.HAND_SHOWN + dealer
        for seat in range(n):
            if seat != dealer:
                assert obs_plane(g, seat, "stock_bottom")[card] == 1
                assert obs_plane(g, seat, "unseen")[card] == 0
        assert obs_plane(g, dealer, "hand")[card] == 1


def test_R28_off_by_default():
    g = new_game(deck=deck_with_suffix(TABLE, ["5H"]), dealer=0)
    assert g.stock_bottom is None and g.where[C("5H")] == locations.STOCK
    assert all(obs_plane(g, s, "stock_bottom").sum() == 0 for s in (0, 1))
    assert obs_plane(g, 0, "unseen")[C("5H")] == 1


def test_R28_never_a_jack_cut_model():
    # Deck ends Q♥ J♣ J♠: the non-Jack with the highest index (Q♥) is moved to the end.
    deck = deck_with_suffix(TABLE, codes("QH JC JS"))
    g = new_game(deck=deck, dealer=0, show_stock_bottom=True)
    expected = [C(c) for c in deck[:-3]] + ids("JC JS QH")
    assert g.deck == expected
    assert g.stock_bottom == C("QH")
    # Without the setting the deck is dealt as given.
    g = new_game(deck=deck, dealer=0)
    assert g.deck == [C(c) for c in deck]


def test_R28_seeded_decks_never_show_a_jack():
    jack_bottoms = 0
    for seed in range(300):
        plain = new_game(seed=seed)
        g = new_game(seed=seed, show_stock_bottom=True)
        assert g.stock_bottom == g.deck[-1]
        assert g.stock_bottom % 13 != 10
        jack_bottoms += plain.deck[-1] % 13 == 10
    assert jack_bottoms > 0  # the cut was exercised


def test_R28_two_decks_goes_to_whoever_gets_the_last_card():
    for n, offset in ((5, 0), (6, 4)):  # 5: the dealer; 6: the fourth seat after the dealer
        g = new_game(seed=1, dealer=1, num_players=n, decks=2, show_stock_bottom=True, target=None)
        bottom = g.stock_bottom
        assert bottom == g.deck[-1] and bottom % 13 != 10
        rng = random.Random(1)
        while g.stock_size > 0:
            play_random(g, rng)
        receiver = (1 + offset) % n
        assert bottom in g.hands[receiver]
        assert g.where[bottom] == locations.HAND_SHOWN + receiver
