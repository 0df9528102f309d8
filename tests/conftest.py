"""Shared fixtures. The settings matrix itself (tables × variant words × bluff) and every other
helper live in ``helpers.py``, which test modules import; this file only turns the matrix into
the ``settings_case`` fixture.

``settings_case`` runs a test once per case of ``helpers.DEFAULT_MATRIX`` (every table, single
hands, with and without the shown stock bottom, with bluffs on the one-deck tables); a test that needs
other cases or a sub-selection parametrises it directly, e.g.
``@pytest.mark.parametrize("settings_case", cases("2p hand", "4p-solo 51 bluff"))`` or
``matrix(tables=("2p", "3p"), variants=("hand",), bluff=(True,))``.
"""

from __future__ import annotations

import pytest

from helpers import DEFAULT_MATRIX, Case


@pytest.fixture(params=[p.values[0] for p in DEFAULT_MATRIX], ids=[p.id for p in DEFAULT_MATRIX])
def settings_case(request) -> Case:
    """One named case of the settings matrix (``case.id``, ``case.kwargs``, ``case.settings``)."""
    return request.param
