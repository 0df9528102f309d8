"""The statistics of the evaluation harness against hand-computed cases (training.harness.stats,
training.harness.analysis)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pisti_env import make_settings
from training.harness.analysis import entry_scores, ladder_ratings, pairwise_outcomes, summarize_table
from training.harness.stats import (
    bradley_terry, elo_difference, incomplete_beta, mean_ci, rate_ci, rate_interval, t_cdf, t_quantile,
)


@pytest.mark.parametrize(
    "df, quantile",
    [(1, 12.7062047), (2, 4.3026527), (5, 2.5705818), (10, 2.2281389), (30, 2.0422725), (1000, 1.9623391)],
)
def test_t_quantile_matches_tables(df, quantile):
    assert t_quantile(0.975, df) == pytest.approx(quantile, abs=1e-6)
    assert t_quantile(0.025, df) == pytest.approx(-quantile, abs=1e-6)


def test_t_cdf_and_incomplete_beta_closed_forms():
    # t with 1 degree of freedom is Cauchy: F(t) = 1/2 + atan(t)/pi.
    for t in (-3.0, -0.5, 0.0, 1.0, 4.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)
    # t with 2 degrees of freedom: F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
    for t in (-2.0, 0.3, 5.0):
        assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)
    # I_x(1, 1) = x; I_x(2, 1) = x^2.
    assert incomplete_beta(1, 1, 0.3) == pytest.approx(0.3)
    assert incomplete_beta(2, 1, 0.3) == pytest.approx(0.09)
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\)"):
        t_quantile(1.0, 3)


def test_mean_ci_hand_computed():
    # values 1, 2, 3, 4, 5: mean 3, sd sqrt(2.5), t(0.975, 4) = 2.7764451.
    ci = mean_ci([1, 2, 3, 4, 5])
    half = 2.7764451 * math.sqrt(2.5) / math.sqrt(5)
    assert ci["mean"] == 3 and ci["n"] == 5
    assert ci["half_width"] == pytest.approx(half, abs=1e-6)
    assert ci["ci_low"] == pytest.approx(3 - half, abs=1e-6) and ci["ci_high"] == pytest.approx(3 + half, abs=1e-6)
    assert math.isnan(mean_ci([2.0])["half_width"])
    with pytest.raises(ValueError, match="at least one value"):
        mean_ci([])


def test_rate_ci_is_wilson_with_the_effective_trials():
    """Independent 0/1 results: the effective trials are the deals and the bounds are Wilson's
    (hand-computed with the t quantile as z)."""
    values = np.array([1.0] * 30 + [0.0] * 10)
    got = rate_ci(values, trials=40)
    p, n = 0.75, got["n_eff"]
    assert n == pytest.approx(p * (1 - p) / (values.std(ddof=1) ** 2 / 40))  # 39: sd's n - 1
    z = t_quantile(0.975, 39)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    spread = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((centre - spread, centre + spread))
    assert got["half_width"] == pytest.approx(max(p - got["ci_low"], got["ci_high"] - p))


def test_rate_ci_keeps_a_width_at_0_and_1_and_stays_inside():
    """A 100% win rate over 400 hands is not '± 0': Wilson's bound with all 400 hands as trials;
    near the bounds the interval never leaves [0, 1], where a t interval does."""
    top = rate_ci(np.ones(200), trials=400)
    assert top["ci_high"] == 1.0 and 0.98 < top["ci_low"] < 1.0 and top["half_width"] > 0
    assert rate_ci(np.zeros(200), trials=400)["ci_low"] == 0.0
    near = np.r_[np.ones(199), 0.5]
    assert mean_ci(near)["ci_high"] > 1.0 and rate_ci(near, trials=400)["ci_high"] <= 1.0
    # Every deal split alike (a deterministic mirror): no width, as the t interval says.
    assert rate_ci(np.full(50, 0.5), trials=100)["half_width"] == 0.0
    with pytest.raises(ValueError, match="rates in"):
        rate_ci([1.5, 0.0], trials=4)
    with pytest.raises(ValueError, match="trials"):
        rate_ci([1.0, 0.0, 1.0], trials=2)


def test_rate_ci_keeps_what_pairing_gains_in_mid_range():
    """Paired seatings that mostly split a deal (one win, one loss) make the per-deal rates far
    less spread than independent hands: the interval is the t interval's, not a binomial one over
    the hands."""
    rng = np.random.default_rng(3)
    values = rng.choice([0.0, 0.5, 1.0], size=4000, p=[0.1, 0.7, 0.2])
    wilson, t = rate_ci(values, trials=8000), mean_ci(values)
    assert wilson["n_eff"] > 8000  # more than the hands: the pairing's variance reduction
    assert wilson["half_width"] == pytest.approx(t["half_width"], rel=0.01)
    assert rate_interval(mean_ci(values), trials=8000) == wilson


def test_bradley_terry_two_players_closed_form():
    # 30 wins and 10 losses: the MLE win probability is 3/4, so the gap is 400 log10(3).
    wins = np.array([[0.0, 30.0], [10.0, 0.0]])
    r = bradley_terry(wins)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r.sum() == pytest.approx(0.0, abs=1e-9)
    assert elo_difference(0.75) == pytest.approx(400 * math.log10(3))


def test_bradley_terry_recovers_exact_strengths():
    # Results exactly proportional to strengths 4 : 2 : 1 make those strengths the MLE.
    wins = np.array([[0, 20, 24], [10, 0, 20], [6, 10, 0]], dtype=float)
    r = bradley_terry(wins)
    assert r[0] - r[1] == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert r[1] - r[2] == pytest.approx(400 * math.log10(2), abs=1e-6)


def test_bradley_terry_draws_count_half_and_degenerate_cases():
    # A symmetric cycle: everyone equal.
    cycle = np.array([[0, 5, 3], [3, 0, 5], [5, 3, 0]], dtype=float)
    assert np.allclose(bradley_terry(cycle), 0.0, atol=1e-6)
    # A player who never won has no finite rating.
    r = bradley_terry(np.array([[0, 4, 2], [0, 0, 0], [2, 3, 0]], dtype=float))
    assert r[1] == -np.inf and np.isfinite(r[0]) and np.isfinite(r[2])
    with pytest.raises(ValueError, match="square"):
        bradley_terry(np.zeros((2, 3)))


def test_entry_scores_and_pairwise_outcomes_follow_the_rotation():
    settings = make_settings(num_players=2, target=None)
    # Rotation 0: entry 0 in seat 0 scores 20, entry 1 scores 6; rotation 1 (swapped seats):
    # seat 0 (entry 1) scores 10, seat 1 (entry 0) 12.
    deal = [{"dealer": 1, "totals": [20, 6], "winner": 0, "hands": 1},
            {"dealer": 1, "totals": [10, 12], "winner": 1, "hands": 1}]
    scores = entry_scores(deal, [(0, 1), (1, 0)], settings)
    assert scores.tolist() == [[20, 6], [12, 10]]
    assert pairwise_outcomes(scores).tolist() == [[0, 2], [0, 0]]
    summary = summarize_table([deal, deal], [], [(0, 1), (1, 0)], ["a", "b"], settings)
    pair = summary["pairs"][0]
    assert pair["score_diff"]["mean"] == pytest.approx(8.0)  # ((20-6) + (12-10)) / 2
    assert pair["hands"] == {"played": 4, "a_wins": 4, "draws": 0, "b_wins": 0}
    # Seat counted from the dealer (seat 1): seat 0 plays first.
    assert summary["entries"][0]["per_seat_from_dealer"] == [20, 12]


def test_partnership_scores_and_ladder_interval_cover_the_fit():
    settings = make_settings(num_players=4, target=None)
    deal = [{"dealer": 0, "totals": [9, 7], "winner": 0, "hands": 1} for _ in range(4)]
    # A B A B rotated: at seatings 0 and 2 entry A holds side 0, at 1 and 3 side 1.
    scores = entry_scores(deal, [(0, 1, 0, 1), (1, 0, 1, 0)] * 2, settings)
    assert scores.tolist() == [[9, 7], [7, 9], [9, 7], [7, 9]]
    rng = np.random.default_rng(0)
    per_deal = np.zeros((200, 2, 2))
    per_deal[:, 0, 1] = rng.binomial(2, 0.7, 200)
    per_deal[:, 1, 0] = 2 - per_deal[:, 0, 1]
    ladder = ladder_ratings([([0, 1], per_deal)], 2, bootstrap=100, seed=1)
    p = per_deal[:, 0, 1].sum() / 400
    assert ladder["ratings"][0] - ladder["ratings"][1] == pytest.approx(elo_difference(p), abs=1e-6)
    assert ladder["ci_low"][0] < ladder["ratings"][0] < ladder["ci_high"][0]
    again = ladder_ratings([([0, 1], per_deal)], 2, bootstrap=100, seed=1)
    assert again["ci_low"] == ladder["ci_low"]  # the bootstrap is seeded
