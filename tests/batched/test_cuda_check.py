"""``benchmarks/cuda_check.py`` (the one command a GPU lease runs) works end to end: on a CPU,
with ``--quick``, every step runs, writes its log and the summary, and a failing step is
reported without stopping the others (the figures themselves are never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "cuda_check.py"


@pytest.mark.slow
def test_every_step_runs_and_logs_on_a_cpu(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=600, cwd=tmp_path)  # any cwd
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = (tmp_path / "summary.txt").read_text().splitlines()
    assert [line.split()[:2] for line in summary] == [[s, "ok"] for s in ("gpu", "tests", "batched", "train", "eval")]
    assert "torch" in (tmp_path / "gpu.log").read_text()
    assert "passed" in (tmp_path / "tests.log").read_text()
    assert "steps/s" in (tmp_path / "batched.log").read_text()
    assert "end to end" in (tmp_path / "train.log").read_text()
    assert "pisti-2p" in (tmp_path / "eval.log").read_text()


def test_a_failing_step_is_reported_and_the_next_still_runs(tmp_path):
    # No such device: the benchmark fails; the GPU report before it still runs and succeeds.
    result = subprocess.run([sys.executable, str(SCRIPT), "--device", "nonsense", "--quick", "--only", "gpu", "batched",
                             "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    summary = (tmp_path / "summary.txt").read_text().splitlines()
    assert summary[0].split()[:2] == ["gpu", "ok"] and summary[1].split()[:2] == ["batched", "FAILED"]
    assert (tmp_path / "batched.log").read_text()
