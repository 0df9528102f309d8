"""R29, the bluff variant, in the engine (``pisti_env.game``) on exact, hand-built situations.

Conventions (see ``helpers.py`` and ``test_rules.py``): ``deck_from_plays(table, plays)`` puts
the i-th card played (face up or face down) at deck item ``4 + i`` when every seat plays its
cards in the order they were dealt; answers (104, 105) play no card. With 2 players and
``dealer=0`` seat 1 (F) plays first, seat 0 (O) second. The table ``2H 5S KD 7C`` is taken by
F's 7♦ (R10, no pişti: R15), then O's card lies alone and F may claim a pişti on it.
Expected values are derived by hand from RULES.md, never copied from the engine.
"""

from __future__ import annotations

import random

import pytest

import pisti_env
from pisti_env import Game, ObservationEncoder, make_settings, new_game, parse_card
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN, action_to_text
from pisti_env.rules import locations

from helpers import F, O, bluff_game, codes, deck_with_suffix, down, play, snapshot, to_claim

C = parse_card


# ============================================================================ action ids
def test_R29_action_ids():
    assert (FACE_DOWN, BELIEVE, CHALLENGE) == (52, 104, 105)
    assert make_settings(bluff=True).num_actions == 106
    assert make_settings().num_actions == 52
    assert action_to_text(C("7C")) == "7C"
    assert action_to_text(52 + C("10D")) == "10D face down"
    assert action_to_text(104) == "believe" and action_to_text(105) == "challenge"


def test_R29_face_down_plays_are_offered_only_on_a_lone_card():
    g = bluff_game("7D 9C 9D 4H 3C 5H")
    assert g.legal_actions() == sorted(g._legal_cards(F))  # four table cards: no claim
    play(g, ["7D"], seats=[F])
    assert g.pile == [] and g.legal_actions() == sorted(g._legal_cards(O))  # empty table: none
    play(g, ["9C"], seats=[O])
    hand = sorted(g._legal_cards(F))
    assert g.legal_actions() == hand + [FACE_DOWN + c for c in hand]  # one card: every card, face down too
    play(g, ["9D"], seats=[F])  # a face-up pişti (R13) empties the table again
    play(g, ["4H", "3C"], seats=[O, F])
    assert len(g.pile) == 2 and all(a < FACE_DOWN for a in g.legal_actions())  # two cards: none


def test_R29_without_bluff_nothing_changes():
    g = bluff_game("7D 9C 9D 4H", bluff=False)
    play(g, ["7D", "9C"], seats=[F, O])
    assert g.legal_actions() == sorted(g._legal_cards(F)) and g.num_actions == 52
    assert "bluff_points" not in g.hand_scores()[0]
    with pytest.raises(ValueError, match=r"action 73 is out of range.*card ids 0\.\.51"):
        g.step(down("9D"))


# ============================================================================ believe
def test_R29_claim_moves_the_turn_to_the_seat_that_played_the_lone_card():
    g = to_claim("7D 9C 9D 4H")
    g.step(down("9D"))
    assert g.turn == O and g.pending_claim == (F, C("9C"))
    assert g.legal_actions() == [BELIEVE, CHALLENGE]
    assert g.where[C("9D")] == locations.PILE_DOWN + F and g.played_by[C("9D")] == locations.NOBODY
    assert g.pile == [C("9C")] and C("9D") not in g.hands[F]
    assert g.history == [(F, C("7D")), (O, C("9C"))]  # the face-down card is not shown


@pytest.mark.parametrize("card", ["9D", "AC"], ids=["true", "bluff"])
def test_R29_believe_scores_10_takes_both_cards_and_never_shows_the_card(card):
    g = to_claim(f"7D 9C {card} 4H")
    before_public = list(g.public_points)
    g.step(down(card))
    g.step(BELIEVE)
    assert g.bluff_points == [0, 10]
    assert g.public_points == [before_public[0], before_public[1] + 10]  # 9♣ has no points; the hidden card is not counted
    assert g.pisti_count == [0, 1] and g.pisti_points == [0, 0] and g.double_pisti_count == [0, 0]
    assert g.captured_count == [0, 7]  # 5 from the table + both cards: a capture
    assert g.card_points[F] == (1 if card == "AC" else 0)  # the true card points, hidden from the public count
    assert g.last_capturer == F  # R19: a capture
    assert g.pile == [] and g.pending_claim is None
    assert g.where[C(card)] == locations.CAPT_DOWN + F and g.where[C("9C")] == locations.CAPT_SHOWN + F
    assert g.played_by[C(card)] == locations.NOBODY
    assert (F, C(card)) not in g.history
    assert g.claims == [(F, O, C("9C"), BELIEVE, -1)]
    assert g.bluff_believed == [0, 1] and g.bluff_claims == [0, 1]
    # Known to its player only (R30, R31).
    assert C(card) in g.unknown_cards(O) and C(card) not in g.unknown_cards(F)
    assert g.turn == O  # the seat after the claimant


# ============================================================================ challenge
def test_R29_challenged_true_claim_scores_20_and_takes_both_cards():
    g = to_claim("7D 9C 9D 4H")
    g.step(down("9D"))
    g.step(CHALLENGE)
    assert g.bluff_points == [0, 20] and g.public_points[F] == 20
    assert g.pisti_count == [0, 1] and g.bluff_challenged_true == [0, 1]
    assert g.captured_count == [0, 7] and g.last_capturer == F and g.pile == []
    assert g.where[C("9D")] == locations.CAPT_SHOWN + F and g.played_by[C("9D")] == locations.PLAYED_BY + F
    assert g.history[-1] == (F, C("9D"))  # shown
    assert C("9D") not in g.unknown_cards(O)
    assert g.claims == [(F, O, C("9C"), CHALLENGE, C("9D"))]
    assert g.turn == O


def test_R29_challenged_bluff_scores_20_for_the_challenger_and_both_cards_stay():
    g = to_claim("7D 9C 3C 3D")
    g.step(down("3C"))
    g.step(CHALLENGE)
    assert g.bluff_points == [20, 0] and g.public_points[O] == 20
    assert g.bluff_challenged_false == [0, 1] and g.pisti_count == [0, 0]
    assert g.pile == [C("9C"), C("3C")] and g.pile_top == C("3C")  # the bluff face up on top
    assert g.where[C("3C")] == locations.PILE_UP and g.played_by[C("3C")] == locations.PLAYED_BY + F
    assert g.captured_count == [0, 5]  # nobody captures
    assert g.last_capturer == F  # still the 7♦ capture
    assert g.turn == O
    # Play goes on: O's 3♦ takes the two cards (R10), three with its own, no pişti.
    play(g, ["3D"], seats=[O])
    assert g.captured_count == [3, 5] and g.pisti_count == [0, 0]


def test_R29_face_down_jack_on_a_lone_non_jack_is_a_bluff():
    g = to_claim("7D 9C JD 4H")
    g.step(down("JD"))
    g.step(CHALLENGE)
    assert g.bluff_points == [20, 0] and g.bluff_challenged_false == [0, 1]
    assert g.pile == [C("9C"), C("JD")] and g.captured_count == [0, 5]


def test_R29_face_down_jack_on_a_lone_jack_is_true():
    g = to_claim("7D JC JD 4H")
    g.step(down("JD"))
    g.step(CHALLENGE)
    assert g.bluff_points == [0, 20] and g.bluff_challenged_true == [0, 1]
    assert g.captured_count == [0, 7] and g.pisti_count == [0, 1] and g.double_pisti_count == [0, 0]


# ============================================================================ stakes
# (lone card, face-down card, answer) -> (claimant side's points, answerer side's points)
STAKES = [
    ("9C", "9D", BELIEVE, 10, 0),
    ("9C", "3C", BELIEVE, 10, 0),
    ("9C", "9D", CHALLENGE, 20, 0),
    ("9C", "3C", CHALLENGE, 0, 20),
    ("JC", "JD", BELIEVE, 10, 0),
    ("JC", "3C", BELIEVE, 10, 0),
    ("JC", "JD", CHALLENGE, 20, 0),
    ("JC", "3C", CHALLENGE, 0, 20),
]


@pytest.mark.parametrize("jack_double", [False, True], ids=["plain", "bluff_jack_double"])
@pytest.mark.parametrize("lone, card, answer, claimant_pts, answerer_pts", STAKES)
def test_R29_stakes_and_bluff_jack_double(jack_double, lone, card, answer, claimant_pts, answerer_pts):
    g = to_claim(f"7D {lone} {card} 4H", bluff_jack_double=jack_double)
    g.step(down(card))
    g.step(answer)
    factor = 2 if jack_double and lone == "JC" else 1  # 20 / 40 / 40 on a lone Jack
    assert g.bluff_points == [answerer_pts * factor, claimant_pts * factor]
    assert g.pisti_points == [0, 0]


def test_R29_bluff_points_ignore_double_pisti_and_the_ten_of_diamonds_bonus():
    g = to_claim("7D JC JD 4H", double_pisti=0)  # a face-up J on a lone J would score nothing (R14)
    g.step(down("JD"))
    g.step(BELIEVE)
    assert g.bluff_points == [0, 10] and g.pisti_count == [0, 1] and g.double_pisti_count == [0, 0]
    g = to_claim("7D 10C 10D 4H", ten_diamonds_pisti_bonus=3)  # a face-up one would score 13 (R17)
    g.step(down("10D"))
    g.step(CHALLENGE)
    assert g.bluff_points == [0, 20] and g.pisti_points == [0, 0]


# ============================================================================ sides
def test_R29_three_sides_the_challenger_alone_scores():
    # 3 players, dealer 0: seats 1, 2, 0 play in turn. Seat 1 takes the table, seat 2 plays the
    # lone 9♣, seat 0 claims: seat 2 answers, then seat 1 (after the claimant) moves.
    g = bluff_game("7D 9C 3C", num_players=3)
    play(g, ["7D", "9C"], seats=[1, 2])
    g.step(down("3C"))
    assert g.turn == 2 and g.pending_claim == (0, C("9C"))
    g.step(CHALLENGE)
    assert g.bluff_points == [0, 0, 20]
    assert g.public_points == [0, 0, 20]
    assert g.turn == 1
    # A believed claim and a proven one score the claimant's side only.
    for answer, expected in ((BELIEVE, [10, 0, 0]), (CHALLENGE, [20, 0, 0])):
        g = bluff_game("7D 9C 9D", num_players=3)
        play(g, ["7D", "9C"], seats=[1, 2])
        g.step(down("9D"))
        g.step(answer)
        assert g.bluff_points == expected and g.captured_count == [2, 5, 0] and g.turn == 1


def test_R4_R29_partnerships_pool_bluff_points():
    # 4 players, partners 0+2 and 1+3, dealer 0: seats 1, 2, 3, 0. Seat 3 claims on seat 2's 9♣.
    g = bluff_game("7D 9C 3C", num_players=4)
    play(g, ["7D", "9C"], seats=[1, 2])
    g.step(down("3C"))
    assert g.turn == 2
    g.step(CHALLENGE)
    assert g.bluff_points == [20, 0] and g.bluff_challenged_false == [0, 1]
    assert g.turn == 0
    g = bluff_game("7D 9C 9D", num_players=4)
    play(g, ["7D", "9C"], seats=[1, 2])
    g.step(down("9D"))
    g.step(BELIEVE)
    assert g.bluff_points == [0, 10] and g.captured_count == [0, 7]
    # R30: the partner (seat 1) does not learn the believed card; the claimant does.
    assert C("9D") in g.unknown_cards(1) and C("9D") not in g.unknown_cards(3)
    assert C("9D") in g.unknown_cards(0) and C("9D") in g.unknown_cards(2)


# ============================================================================ last card (R16)
LAST_TABLE = codes("QD QH QS 2C")
LAST_DEAL = codes("QC JS 9C 9D 5C JD 8C 8D")  # ... F's 8♣ lies alone; O's 8♦ is the hand's last card


def _to_last_card(**settings) -> Game:
    g = new_game(deck=deck_with_suffix(LAST_TABLE, LAST_DEAL), dealer=0, target=None, bluff=True, **settings)
    while g.stock_size > 0:  # every deal before the last in deck order, face up
        hand = g.hands[g.turn]
        g.step(min(hand, key=g.deck.index) % 52)
    play(g, LAST_DEAL[:3], seats=[F, O, F])
    assert len(g.pile) == 1 and g.turn == O
    assert down("9D") in g.legal_actions()  # a lone card, not the last card: allowed either way
    play(g, LAST_DEAL[3:7], seats=[O, F, O, F])
    assert g.pile == [C("8C")] and g.hands[O] == [C("8D")] and g.stock_size == 0
    return g


def test_R16_R29_last_card_cannot_be_played_face_down_without_last_card_pisti():
    g = _to_last_card(last_card_pisti=False)
    assert g.legal_actions() == [C("8D")]
    before = snapshot(g)
    with pytest.raises(ValueError, match=r"illegal action 72 \(8D face down\).*never as the hand's last card.*R29"):
        g.step(down("8D"))
    assert snapshot(g) == before


def test_R29_last_card_claim_is_answered_before_the_hand_ends():
    g = _to_last_card()
    assert g.legal_actions() == [C("8D"), down("8D")]
    g.step(down("8D"))
    assert not g.done and g.turn == F and g.legal_actions() == [BELIEVE, CHALLENGE]
    points = list(g.bluff_points)
    g.step(BELIEVE)
    assert g.done
    result = g.last_hand_result
    assert result[O]["bluff_points"] == points[O] + 10 and result[O]["bluff_believed"] >= 1
    assert sum(r["cards"] for r in result) == 52


# ============================================================================ hand results
def test_R22_R23_R29_hand_result_reports_bluff_points_and_counts():
    g = to_claim("7D 9C 3C 3D")
    g.step(down("3C"))
    g.step(CHALLENGE)
    rng = random.Random(0)
    while not g.done:  # the rest face up
        g.step(rng.choice([a for a in g.legal_actions() if a < FACE_DOWN] or g.legal_actions()))
    result = g.last_hand_result
    keys = {"bluff_points", "bluff_claims", "bluff_believed", "bluff_challenged_true", "bluff_challenged_false"}
    assert keys <= set(result[0])
    assert result[O]["bluff_points"] >= 20 and result[F]["bluff_challenged_false"] >= 1
    tied = result[0]["cards"] == result[1]["cards"]
    assert sum(r["card_points"] + r["majority"] for r in result) == (13 if tied else 16)  # R23
    for r in result:
        assert r["total"] == r["card_points"] + r["majority"] + r["pisti_points"] + r["bluff_points"]  # R22
        assert r["bluff_claims"] == r["bluff_believed"] + r["bluff_challenged_true"] + r["bluff_challenged_false"]


# ============================================================================ R28
def test_R28_R29_the_shown_stock_bottom_card_stays_known_face_down():
    """The shown stock-bottom card (R28) played face down: everyone knows it, so it is no hidden
    card pending or believed, and its points are public."""
    settings = make_settings(num_players=2, target=None, bluff=True, show_stock_bottom=True)
    for seed in range(400):
        rng = random.Random(seed)
        g = Game(settings, seed=seed)
        while not g.done:
            legal = g.legal_actions()
            sb = g.stock_bottom
            if sb is not None and FACE_DOWN + sb in legal and sb in g.hands[g.turn]:
                seat, other = g.turn, 1 - g.turn
                points = g.public_points[seat]
                g.step(FACE_DOWN + sb)
                assert g.where[sb] == locations.PILE_DOWN_SHOWN
                assert sb not in g.unknown_cards(other)
                enc = ObservationEncoder(settings)
                obs = enc.encode(g, other)
                assert obs[enc.layout.card_feature(sb, "stock_bottom")] == 1
                assert obs[enc.layout.card_feature(sb, "unseen")] == 0
                lone = g.pile[0]
                g.step(BELIEVE)
                assert g.where[sb] == locations.CAPT_SHOWN + seat
                assert g.public_points[seat] == points + 10 + pisti_env.rules.scoring.POINTS[sb] + pisti_env.rules.scoring.POINTS[lone]
                assert g.claims[-1][4] == sb
                return
            g.step(rng.choice(legal))
    raise AssertionError("no game offered a face-down play of the shown stock-bottom card")


# ============================================================================ bad actions
def test_R29_illegal_bluff_actions_raise_and_change_nothing():
    g = bluff_game("7D 9C 9D 4H 3C 5H")
    legal_re = r"legal now: \[.*\]"
    cases = [
        (down("7D"), r"illegal action 71 \(7D face down\).*only when exactly one card lies on the table.*R29.*" + legal_re),
        (BELIEVE, r"illegal action 104 \(believe\).*no claim to answer.*R29"),
        (CHALLENGE, r"illegal action 105 \(challenge\).*no claim to answer"),
        (106, r"action 106 is out of range.*0\.\.105.*104 believe, 105 challenge"),
        (-1, r"action -1 is out of range.*0\.\.105"),
    ]
    for action, match in cases:
        before = snapshot(g)
        with pytest.raises(ValueError, match=match):
            g.step(action)
        assert snapshot(g) == before
    with pytest.raises(TypeError, match=r"action must be an int action id 0\.\.105.*float"):
        g.step(3.0)
    play(g, ["7D", "9C"], seats=[F, O])
    before = snapshot(g)
    with pytest.raises(ValueError, match=r"illegal action 59 \(8C face down\).*seat 1 does not hold"):
        g.step(down("8C"))
    assert snapshot(g) == before
    g.step(down("9D"))
    for action in (C("4H"), down("4H"), C("3C")):
        before = snapshot(g)
        with pytest.raises(ValueError, match=r"seat 0 must answer seat 1's claim.*believe \(104\) or challenge \(105\).*legal now: \[104, 105\] \(believe, challenge\)"):
            g.step(action)
        assert snapshot(g) == before
    g.step(BELIEVE)  # and the game goes on
    assert g.turn == O


def test_R29_numpy_actions_accepted():
    import numpy as np

    g = to_claim("7D 9C 9D 4H")
    g.step(np.int64(down("9D")))
    g.step(np.int32(CHALLENGE))
    assert g.bluff_points == [0, 20]


# ============================================================================ reproducibility
def _random_bluff_game(seed: int, **settings) -> Game:
    g = Game(make_settings(bluff=True, **settings), seed=seed)
    rng = random.Random(seed)
    while not g.done:
        g.step(rng.choice(g.legal_actions()))
    return g


def test_R5_R29_same_seed_same_game_with_bluffs():
    for n in (2, 3, 4):
        a = _random_bluff_game(11, num_players=n, target=51)
        b = _random_bluff_game(11, num_players=n, target=51)
        assert a.hand_results == b.hand_results and a.match_scores == b.match_scores and a.winner == b.winner
        assert sum(r["bluff_claims"] for hand in a.hand_results for r in hand) > 0
    assert _random_bluff_game(1, target=None).hand_results != _random_bluff_game(2, target=None).hand_results


def test_R29_clone_copies_the_pending_claim():
    g = to_claim("7D 9C 9D 4H")
    g.step(down("9D"))
    c = g.clone()
    assert snapshot(c) == snapshot(g)
    c.step(CHALLENGE)
    assert g.pending_claim == (F, C("9C")) and g.bluff_points == [0, 0]
    g.step(CHALLENGE)
    assert snapshot(c) == snapshot(g)


def test_R29_render_shows_the_claim_and_bluff_points():
    from pisti_env.envs.render import render_text

    g = to_claim("7D 9C 3C 4H")
    g.step(down("3C"))
    text = render_text(g)
    assert "claim: seat 1 plays face down (3♣) claiming a pişti on 9♣; seat 0 answers" in text
    assert "bluff pts" in text
    g.step(CHALLENGE)
    text = render_text(g)
    assert "last claim: seat 1 on 9♣, seat 0 challenged: 3♣ was a bluff" in text
    assert "bluff pts" not in render_text(bluff_game("7D 9C", bluff=False))
