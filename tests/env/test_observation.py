"""The observation layout and encoder (R30): what each block holds, bounds, docs in sync; with
bluffs (R29) the claim, the face-down cards and the bluff counters."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from pisti_env import Game, ObservationEncoder, ObservationLayout, make_settings
from pisti_env.rules.actions import BELIEVE, CHALLENGE
from pisti_env.rules import locations

from helpers import C, F, O, bluff_game, cases, down, to_claim

CONFIGS = [
    dict(num_players=2),
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=4, partnerships=False),
    dict(num_players=5, decks=2),
    dict(num_players=6, decks=2, show_stock_bottom=True),
    dict(num_players=2, show_stock_bottom=True, double_pisti=10, ten_diamonds_pisti_bonus=3),
]


def plane(obs: np.ndarray, layout: ObservationLayout, name: str) -> np.ndarray:
    return obs[layout[name]]


def random_states(settings, games=6, seed=0):
    """(game, seat) pairs at every step of a few random games, every seat observing."""
    rng = random.Random(seed)
    for i in range(games):
        g = Game(settings, seed=seed * 1000 + i)
        while not g.done:
            for seat in range(g.num_players):
                yield g, seat
            g.step(rng.choice(g.legal_actions()))
        for seat in range(g.num_players):
            yield g, seat


def test_the_docs_generate_the_layout_from_the_code():
    """The observation page is never typed: its tables come from ``ObservationLayout`` at build time."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "environments" / "observation.md").read_text(encoding="utf-8")
    assert "<!-- pisti:observation-layout num_players=2" in page
    assert "| indices | name | meaning |" not in page


def test_layout_fields_tile_the_vector_without_gaps():
    for kw in CONFIGS:
        layout = ObservationLayout(make_settings(**kw))
        pos = 0
        for field in layout.fields:
            assert field.start == pos and field.stop > field.start
            pos = field.stop
        assert pos == layout.size == layout.high.shape[0]
        assert len({f.name for f in layout.fields}) == len(layout.fields)


@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_planes_match_the_game_state_and_stay_in_bounds(kw):
    settings = make_settings(target=51, **kw)
    enc = ObservationEncoder(settings)
    layout = enc.layout
    n, sides = settings.num_players, settings.num_sides

    def ids_count(cards):
        v = np.zeros(52, dtype=np.float32)
        for c in cards:
            v[c % 52] += 1
        return v

    for g, seat in random_states(settings, games=2):
        obs = enc.encode(g, seat)
        assert obs.dtype == np.float32 and obs.shape == (layout.size,)
        assert (obs >= 0).all() and (obs <= layout.high).all()
        side = g.side_of[seat]
        where = g.where
        np.testing.assert_array_equal(plane(obs, layout, "hand"), ids_count(g.hands[seat]))
        up = [c for c in g.pile if where[c] == locations.PILE_UP]
        np.testing.assert_array_equal(plane(obs, layout, "pile_face_up"), ids_count(up))
        np.testing.assert_array_equal(plane(obs, layout, "pile_top"), ids_count(g.pile[-1:]))
        jacks = [c for c in g.pile if where[c] == locations.PILE_JACK]
        np.testing.assert_array_equal(plane(obs, layout, "pile_public_jack"), ids_count(jacks))
        for k in range(sides):
            s = (side + k) % sides
            known = [p for p, loc in enumerate(where) if loc == locations.CAPT_SHOWN + s]
            if k == 0:
                known += [p for p, loc in enumerate(where) if loc == locations.CAPT_HIDDEN + s]
            np.testing.assert_array_equal(plane(obs, layout, f"captured_side_{k}"), ids_count(known))
        for k in range(n):
            s = (seat + k) % n
            played = [p for p, code in enumerate(g.played_by) if code == locations.PLAYED_BY + s]
            np.testing.assert_array_equal(plane(obs, layout, f"played_by_seat_{k}"), ids_count(played))
        np.testing.assert_array_equal(plane(obs, layout, "unseen"), ids_count(g.unknown_cards(seat)))
        # Every physical card is counted in exactly one location plane (cards another side
        # captured face down are among the unseen: the seat cannot tell which they are, R31).
        location_planes = ["hand", "pile_face_up", "pile_public_jack", "unseen", "stock_bottom"] + [
            f"captured_side_{k}" for k in range(sides)
        ]
        assert sum(plane(obs, layout, name).sum() for name in location_planes) == settings.num_cards


def test_scalars_are_seat_relative():
    settings = make_settings(num_players=3, target=None)
    enc = ObservationEncoder(settings)
    layout = enc.layout
    rng = random.Random(3)
    g = Game(settings, seed=3)
    for _ in range(20):
        g.step(rng.choice(g.legal_actions()))
    for seat in range(3):
        obs = enc.encode(g, seat)
        rel = [(seat + k) % 3 for k in range(3)]
        np.testing.assert_allclose(obs[layout["hand_sizes"]], [len(g.hands[s]) / 4 for s in rel])
        np.testing.assert_allclose(obs[layout["captured_count"]], [g.captured_count[s] / 52 for s in rel])
        np.testing.assert_allclose(obs[layout["public_hand_points"]], [g.public_points[s] / 100 for s in rel])
        assert obs[layout["dealer"]].tolist().index(1.0) == (g.dealer - seat) % 3
        assert obs[layout["to_move"]].tolist().index(1.0) == (g.turn - seat) % 3
        last = obs[layout["last_capturer"]].tolist().index(1.0)
        assert last == ((g.last_capturer - seat) % 3 if g.last_capturer >= 0 else 3)
        assert obs[layout["stock_size"]][0] == pytest.approx(g.stock_size / 52)


def test_settings_and_target_are_visible():
    a = ObservationEncoder(make_settings(target=101, double_pisti=10))
    b = ObservationEncoder(make_settings(target=None, last_card_pisti=False))
    ga = Game(a.settings, seed=1)
    gb = Game(b.settings, seed=1)
    oa, ob = a.encode(ga, 0), b.encode(gb, 0)
    assert oa[a.layout["target"]][0] == pytest.approx(1.01)
    assert ob[b.layout["target"]][0] == 0.0
    assert (oa[a.layout["settings"]] != ob[b.layout["settings"]]).any()


def test_two_decks_count_both_copies():
    settings = make_settings(num_players=5, decks=2, target=None)
    enc = ObservationEncoder(settings)
    for g, seat in random_states(settings, games=1):
        obs = enc.encode(g, seat)
        assert obs[enc.layout["unseen"]].max() <= 2
        held = np.zeros(52)
        for p in g.hands[seat]:
            held[p % 52] += 1
        np.testing.assert_array_equal(obs[enc.layout["hand"]], held)


# --------------------------------------------------------------------------- R29: bluffs
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


@pytest.mark.parametrize("settings_case", cases("2p 51 jack-double bluff", "4p-partners 51 bluff", "6p-2decks 51 bluff"))
def test_R29_observations_stay_in_bounds_in_random_play(settings_case):
    settings = settings_case.settings
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
