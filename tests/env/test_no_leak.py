"""R30/R31: a seat's observation, action mask and rewards depend only on what it may know.

The method and the checks themselves are in ``no_leak_support.py`` (``test_flat_observation.py``
runs them on the flat observation too).

The bluff variant is one more axis of the settings matrix: there the unknown cards include
the face-down cards other seats played and nobody saw (R29), the partner's among them, and the
replay deals those again too.
"""

from __future__ import annotations

import pisti_env
from pisti_env import ObservationEncoder

from helpers import deck_with_prefix, rules_unknown
from no_leak_support import check_plain, check_with_face_down


def test_R29_R30_R31_observation_is_independent_of_unknown_cards(settings_case) -> None:
    """Over the default settings matrix (``conftest.settings_case``: every table, with and
    without the shown stock bottom and bluffs): deal what a seat cannot know differently,
    replay the same plays: nothing the seat sees changes (observation, mask, rewards); a
    change it can see shows."""
    if settings_case.bluff:
        check_with_face_down(settings_case.kwargs)
    else:
        check_plain(settings_case.kwargs)


def test_R8_hidden_table_cards_known_to_capturing_side_only() -> None:
    """A crafted deal: the first capture takes the 3 never-turned table cards; the capturing
    side then knows them (the partner too), the other side does not (R8, R30, R31)."""
    # Table: 3C 4C 5C face down, 6C face up. 4 players, dealer 3, so seat 0 plays first.
    # Seat 0 gets 6D (captures the 4-card pile, R15: no pişti), seats 1-3 get the next cards.
    deck = deck_with_prefix(["3C", "4C", "5C", "6C", "6D", "7D", "8D", "9D"])
    g = pisti_env.new_game(num_players=4, partnerships=True, target=None, deck=deck, dealer=3)
    hidden = {pisti_env.parse_card(c) for c in ("3C", "4C", "5C")}
    enc = ObservationEncoder(g.settings)
    for seat in range(4):
        assert hidden <= set(g.unknown_cards(seat))
    g.step(pisti_env.parse_card("6D"))
    assert g.captured_count == [5, 0]
    for seat in range(4):
        u = set(g.unknown_cards(seat))
        assert u == rules_unknown(g, seat)
        if seat % 2 == 0:  # side 0 took them: both partners know them
            assert not hidden & u
            obs = enc.encode(g, seat)
            plane = obs[enc.layout["captured_side_0"]]
            assert all(plane[c] == 1 for c in hidden)
        else:
            assert hidden <= u
            obs = enc.encode(g, seat)
            plane = obs[enc.layout["captured_side_1"]]  # side +1 = side 0 seen from side 1
            assert not any(plane[c] for c in hidden)
            assert plane[pisti_env.parse_card("6C")] == 1 and plane[pisti_env.parse_card("6D")] == 1
