"""A batched engine or vector env too large for the memory available is refused at once with a
``ValueError`` naming the size and the estimate (a MemoryError came after 12-29 s of
allocating), and sizes that fit are built as before. The estimate's constants are measured by
``benchmarks/bench_memory.py``."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")

from pisti_env.batched import BatchedPisti  # noqa: E402
from pisti_env.batched import engine as engine_module  # noqa: E402
from pisti_env.views.observation import ObservationEncoder  # noqa: E402
from pisti_env.rules.settings import make_settings  # noqa: E402
from pisti_env.envs.vector import HOST_BYTES_PER_OBSERVATION_ENTRY, PistiVectorEnv  # noqa: E402


@pytest.mark.parametrize("build, name", [(BatchedPisti, "batch_size"), (PistiVectorEnv, "num_envs")])
@pytest.mark.parametrize("size", [10**9, 2**40])
def test_a_huge_size_is_refused_at_once_naming_the_estimate(build, name, size):
    start = time.perf_counter()
    with pytest.raises(ValueError) as caught:
        build(size)
    assert time.perf_counter() - start < 5  # no allocation was tried
    message = str(caught.value)
    assert f"{name}={size:,} needs about" in message and "bytes per game" in message and "available" in message


def test_the_limit_follows_the_memory_available(monkeypatch):
    """With 100 MB available: a size needing less is built, one needing more is refused, and
    the message says how many games fit."""
    monkeypatch.setattr(engine_module, "available_memory", lambda device: 100_000_000)
    entries = ObservationEncoder(make_settings()).layout.size
    per_game = engine_module.BYTES_PER_OBSERVATION_ENTRY * entries
    fits = 100_000_000 // per_game
    assert BatchedPisti(64).batch_size == 64
    with pytest.raises(ValueError, match=f"at most about {fits:,} games fit"):
        BatchedPisti(fits + 1)
    vector_fits = 100_000_000 // (HOST_BYTES_PER_OBSERVATION_ENTRY * entries)
    with pytest.raises(ValueError, match="num_envs="):
        PistiVectorEnv(vector_fits + 1)
    assert PistiVectorEnv(64).num_envs == 64


def test_unknown_available_memory_refuses_nothing(monkeypatch):
    monkeypatch.setattr(engine_module, "available_memory", lambda device: None)
    assert BatchedPisti(8).batch_size == 8


def test_available_memory_is_a_positive_count_on_this_machine():
    have = engine_module.available_memory(torch.device("cpu"))
    assert have is None or have > 0
