"""The comparison's statistics are rliable's: our aggregation against rliable called directly on
known inputs, and ``pisti-learn-report``'s table, numbers and plots. Needs the ``learning``
extra (rliable); CI installs it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

rliable = pytest.importorskip("rliable")
from rliable import library, metrics  # noqa: E402

from training.learning import statistics  # noqa: E402
from training.learning.report import collect, report  # noqa: E402
from training.learning.results import ResultsError, write_results  # noqa: E402

# arch warns that rliable passes random_state (see training.learning.statistics)
pytestmark = pytest.mark.filterwarnings("ignore:random_state is deprecated:FutureWarning")

STEPS = [100 * k for k in range(1, 9)]


def _runs(finals, slope=1.0):
    return [{"seed": seed, "rating": float(final), "train_seconds": 10.0, "eval_seconds": 2.0,
             "train_cpu_seconds": 360.0, "eval_cpu_seconds": 36.0,
             "curve": [[s, float(final) * (k + 1) / 8 * slope] for k, s in enumerate(STEPS)]}
            for seed, final in enumerate(finals)]


A = [1210.0, 1190.0, 1305.0, 1250.0, 900.0]
B = [1000.0, 1020.0, 1100.0, 980.0, 1400.0]
C = [400.0, 420.0, 380.0, 500.0, 450.0]


def test_iqm_and_its_interval_are_rlibles():
    scores = {"a": np.array(A)[:, None], "b": np.array(B)[:, None]}
    iqm, interval = statistics.iqm_with_interval(scores, reps=3000, seed=7)
    np.random.seed(7)  # arch draws from NumPy's global generator too; statistics seeds it with the same seed
    points, cis = library.get_interval_estimates(scores, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=3000,
                                                 random_state=np.random.RandomState(7))
    for name in scores:
        assert iqm[name] == pytest.approx(float(points[name][0]))
        assert interval[name] == pytest.approx((float(cis[name][0, 0]), float(cis[name][1, 0])))
    # The IQM of 5 runs: scipy's trimmed mean at 25% cuts one run from each end.
    assert iqm["a"] == pytest.approx(np.mean(sorted(A)[1:4]))
    assert interval["a"][0] <= iqm["a"] <= interval["a"][1]


def test_probability_of_improvement_is_rlibles_for_every_ordered_pair():
    scores = {"a": np.array(A)[:, None], "b": np.array(B)[:, None], "c": np.array(C)[:, None]}
    p, intervals = statistics.probability_of_improvement(scores, reps=500, seed=3)
    assert set(p) == {(x, y) for x in "abc" for y in "abc" if x != y}
    for (x, y), value in p.items():
        assert value == pytest.approx(float(metrics.probability_of_improvement(scores[x], scores[y])))
        assert value + p[(y, x)] == pytest.approx(1.0)  # ties count one half either way
        low, high = intervals[(x, y)]
        assert low <= value <= high
    # a run of a beats a run of b in 16 of 25 pairs (Mann-Whitney); c never beats a
    assert p[("a", "b")] == pytest.approx(16 / 25)
    assert p[("a", "c")] == 1.0 and intervals[("a", "c")] == (1.0, 1.0)


def test_iqm_curves_and_profiles_are_rlibles():
    curves = {"a": statistics.curve_scores(_runs(A), 8)}
    iqm, cis = statistics.iqm_curves(curves, reps=500, seed=1)
    for point in range(8):
        assert iqm["a"][point] == pytest.approx(metrics.aggregate_iqm(curves["a"][..., point]))
    assert cis["a"].shape == (2, 8)
    taus = np.linspace(0, 1500, 11)
    profiles, bands = statistics.performance_profiles({"a": np.array(A)[:, None]}, taus, reps=200)
    expected = [(np.array(A) > tau).mean() for tau in taus]
    assert profiles["a"] == pytest.approx(expected)
    assert bands["a"].shape == (2, len(taus))


def test_the_intervals_are_reproducible():
    results = {"a": {"runs": _runs(A)}, "b": {"runs": _runs(B)}}
    first = statistics.compare(results, STEPS, reps=300)
    again = statistics.compare(results, STEPS, reps=300)
    assert first.iqm_interval == again.iqm_interval and first.improvement_interval == again.improvement_interval
    assert np.array_equal(first.curve_intervals["a"], again.curve_intervals["a"])


def _write(root, algorithm, finals, **changes):
    doc = {"algorithm": algorithm, "family": "test", "task": "pisti-2p@1", "budget": "standard",
           "budget_steps": 800, "evaluation_steps": STEPS, "command": f"pisti-learn {algorithm} --task pisti-2p",
           "runs": _runs(finals)}
    doc.update(changes)
    write_results(root / "pisti-2p" / f"{algorithm}.json", doc)


def test_the_report_writes_the_table_numbers_and_plots(tmp_path):
    results = tmp_path / "results"
    _write(results, "alpha", A)
    _write(results, "beta", B)
    _write(results, "beta-tuning", C, seeds_kind="tuning")  # never reported
    pages = report(str(results), str(tmp_path / "out"), reps=300)
    assert pages == [tmp_path / "out" / "pisti-2p.md"]
    page = pages[0].read_text()
    assert f"| `alpha` | test | 5 | **{np.mean(sorted(A)[1:4]):.0f}** [" in page  # the IQM of A, first: ranked by it
    assert page.index("`alpha`") < page.index("`beta`") and "beta-tuning" not in page
    assert "pisti-learn alpha --task pisti-2p" in page
    assert "Cost: 0.11 CPU-hours per seed" in page and "10 runs take about 1.1 CPU-hours" in page
    assert "0.64 [" in page  # P(alpha > beta)
    numbers = json.loads((tmp_path / "out" / "pisti-2p.json").read_text())
    assert numbers["algorithms"]["alpha"]["ratings"] == A
    for kind in ("curves", "profiles", "iqm", "improvement"):
        for suffix in ("png", "svg"):
            image = tmp_path / "out" / "img" / f"pisti-2p-{kind}.{suffix}"
            assert image.stat().st_size > 1000, image
        assert f"img/pisti-2p-{kind}.svg" in page


def test_the_report_refuses_files_of_different_protocols(tmp_path):
    _write(tmp_path, "alpha", A)
    _write(tmp_path, "beta", B, budget_steps=1600)
    with pytest.raises(ResultsError, match="beta.json: budget_steps: 1600 differs"):
        collect(tmp_path)


def test_pisti_learn_report_bad_file_is_one_line(tmp_path):
    (tmp_path / "pisti-2p").mkdir()
    (tmp_path / "pisti-2p" / "bad.json").write_text('{"algorithm": "x"}')
    result = subprocess.run([sys.executable, "-m", "training.learning.report", "--results", str(tmp_path), "--out",
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == f"pisti-learn-report: error: {tmp_path}/pisti-2p/bad.json: task: missing"


def test_the_leaderboard_learning_section_escapes_what_the_files_say(tmp_path):
    from training.learning.report import learning_section

    _write(tmp_path, "alpha", A, family="x | <script>alert(1)</script>")
    _write(tmp_path, "beta", B)
    section = learning_section(tmp_path)
    assert "<script>" not in section and "&lt;script&gt;" in section
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert [row.split(" | ")[0] for row in rows] == ["| `alpha`", "| `beta`"]  # ranked by the median: 1210, 1020
    assert all(row.count(" | ") == 5 for row in rows)  # no cell split by a '|' from a file
    assert "900–1305" in rows[0] and "[pisti-2p](learning/pisti-2p.md)" in section


def test_a_folder_that_is_no_learning_task_is_refused(tmp_path):
    write_results(tmp_path / "chess" / "a.json", {"algorithm": "a", "task": "chess@1", "budget_steps": 800,
                                                   "command": "x", "runs": _runs(A)})
    with pytest.raises(ResultsError, match="chess: not a learning task's folder"):
        collect(tmp_path)
