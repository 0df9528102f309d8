"""The R29 research tests' shared fixture."""

from __future__ import annotations

import pytest

from bluff_support import train_bluff


@pytest.fixture(scope="module")
def headless(tmp_path_factory) -> str:
    """A bluff-variant policy without an answer head (its answers come from the context)."""
    tmp_path = tmp_path_factory.mktemp("headless")
    train_bluff(tmp_path, "run")
    return str(tmp_path / "run" / "policy")
