"""``benchmarks/bench_batched_ab.py`` runs: it imports a commit's batched engine beside the
working tree's and prints one line per configuration with both rates and their ratio (the
figures themselves are never asserted: speed lives in benchmarks, not tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the git history")
def test_ab_bench_compares_a_commit_with_the_working_tree():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_batched_ab.py"), "HEAD", "--rounds", "1", "--steps", "3",
         "--configs", "2:plain:uint8:8", "2:bluff:float:8"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "new/old" in line]
    assert len(lines) == 2, result.stdout
    assert lines[0].startswith("2 players plain uint8 B=8") and lines[1].startswith("2 players bluff float B=8")
    for line in lines:
        assert re.search(r"old\s+[\d,]+\s+new\s+[\d,]+\s+new/old \d+\.\d\d$", line), line


def test_ab_bench_refuses_a_malformed_configuration():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_batched_ab.py"), "HEAD", "--configs", "2:plain:uint8"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert result.returncode == 2
    assert "players:variant:format:batch" in result.stderr
