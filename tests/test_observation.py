"""The observation layout and encoder (R30): what each block holds, bounds, docs in sync."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from pisti_env import Game, ObservationEncoder, ObservationLayout, make_settings
from pisti_env.game import LOC_CAPT_HIDDEN, LOC_CAPT_SHOWN, LOC_PILE_JACK, LOC_PILE_UP, PLAYED_BY

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


def test_readme_documents_the_two_player_layout():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert ObservationLayout(make_settings()).markdown_table() in readme


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
        up = [c for c in g.pile if where[c] == LOC_PILE_UP]
        np.testing.assert_array_equal(plane(obs, layout, "pile_face_up"), ids_count(up))
        np.testing.assert_array_equal(plane(obs, layout, "pile_top"), ids_count(g.pile[-1:]))
        jacks = [c for c in g.pile if where[c] == LOC_PILE_JACK]
        np.testing.assert_array_equal(plane(obs, layout, "pile_public_jack"), ids_count(jacks))
        for k in range(sides):
            s = (side + k) % sides
            known = [p for p, loc in enumerate(where) if loc == LOC_CAPT_SHOWN + s]
            if k == 0:
                known += [p for p, loc in enumerate(where) if loc == LOC_CAPT_HIDDEN + s]
            np.testing.assert_array_equal(plane(obs, layout, f"captured_side_{k}"), ids_count(known))
        for k in range(n):
            s = (seat + k) % n
            played = [p for p, code in enumerate(g.played_by) if code == PLAYED_BY + s]
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
