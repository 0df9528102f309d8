"""The long soak (``benchmarks/soak.py``, issue 16.7) kept exercised: a few hands of every
table through its referee, and a broken tally must show as a violation (exit status 1)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import referee

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"


def _soak_module():
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_soak_runs_clean_on_every_table(capsys):
    soak = _soak_module()
    assert soak.main(["--hands", "1", "--only", "hand"]) == 0
    out = capsys.readouterr().out
    assert "TOTAL 12 combinations, 12 hands" in out and " 0 violations" in out
    assert len(list(soak.combinations())) == 42 and len(list(soak.combinations(full=True))) == 6 * (96 + 144)


def test_soak_reports_a_broken_tally(monkeypatch):
    """Not vacuous: a shadow tally one point off for side 0 is caught at every hand end."""
    original = referee.Shadow.result

    def off_by_one(self):
        result = original(self)
        result[0]["total"] += 1
        return result

    monkeypatch.setattr(referee.Shadow, "result", off_by_one)
    soak = _soak_module()
    out = io.StringIO()
    totals = soak.soak(1, only=("2p", "plain", "hand"), out=out)
    assert len(totals["violations"]) == 1 and "VIOLATION 2p plain" in out.getvalue()
    assert soak.main(["--hands", "1", "--only", "3p", "--only", "plain", "--only", "hand"]) == 1
