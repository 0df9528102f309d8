"""From game records to the figures of the report: paired score differences, win rates,
per-seat means and the rating ladder.

Records come from `training.harness.duplicate.run_games`: one list per deal (or match) with one
record per seating, and ``seatings[k][seat]`` is the entry (a player being compared) in that
seat at seating ``k``. An entry's score in a game is its side's total (R20–R24), averaged over
its seats if it holds several.
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from pisti_env import Settings

from .stats import bradley_terry, mean_ci, rate_ci


Seatings = Sequence[Sequence[int]]


def entry_scores(deal: Sequence[dict[str, Any]], seatings: Seatings, settings: Settings) -> np.ndarray:
    """Scores of every entry in every seating of one duplicate deal: ``[seatings, entries]``."""
    return table_scores([deal], seatings, settings)[0]


def table_scores(deals: Sequence[Sequence[dict[str, Any]]], seatings: Seatings, settings: Settings) -> np.ndarray:
    """`entry_scores` of every deal at once: ``[deals, seatings, entries]`` (an entry
    holding several seats gets their mean; an entry absent from a seating, NaN)."""
    holds = _holds(seatings, settings)
    if not deals:
        return np.zeros((0,) + holds.shape[::2])
    return _entry_means(_seat_totals(deals, settings), holds)


def _entry_means(seat_totals: np.ndarray, holds: np.ndarray) -> np.ndarray:
    """``[deals, seatings, entries]`` from `_seat_totals` and `_holds`: each
    entry's mean over the seats it holds."""
    return np.einsum("dks,ksm->dkm", seat_totals, holds) / holds.sum(axis=1)


def _holds(seatings: Seatings, settings: Settings) -> np.ndarray:
    """``[seatings, seats, entries]``: 1 where the entry sits in the seat at that seating."""
    entries = max(max(s) for s in seatings) + 1
    holds = np.zeros((len(seatings), settings.num_players, entries))
    for r, seating in enumerate(seatings):
        holds[r, np.arange(len(seating)), list(seating)] = 1.0
    return holds


def _seat_totals(deals: Sequence[Sequence[dict[str, Any]]], settings: Settings) -> np.ndarray:
    """``[deals, seatings, seats]``: each seat's side total (R20–R24) in each record, as floats
    (whole numbers, so every sum of them below is exact in any order)."""
    totals = np.array([[record["totals"] for record in deal] for deal in deals], dtype=float)
    return totals[:, :, [settings.side_of(seat) for seat in range(settings.num_players)]]


def winners(deal: Sequence[dict[str, Any]], seatings: Seatings, settings: Settings) -> list[set[int]]:
    """Per seating, the entries holding the winning side (empty for a drawn single hand)."""
    out = []
    for r, record in enumerate(deal):
        won = set()
        if record["winner"] is not None:
            for seat, e in enumerate(seatings[r]):
                if settings.side_of(seat) == record["winner"]:
                    won.add(e)
        out.append(won)
    return out


def pairwise_outcomes(scores: np.ndarray) -> np.ndarray:
    """Win points of each entry over each other in one deal: ``[entries, entries]``, a win 1 and a
    draw 1/2 per seating (summed over seatings); of many deals at once, ``scores`` ``[deals,
    seatings, entries]``: ``[deals, entries, entries]``."""
    a = scores[..., :, :, None]
    b = scores[..., :, None, :]
    w = (a > b).sum(axis=-3) + 0.5 * (a == b).sum(axis=-3)
    diagonal = np.arange(w.shape[-1])
    w[..., diagonal, diagonal] = 0.0
    return w


def summarize_table(
    deals: Sequence[Sequence[dict[str, Any]]],
    matches: Sequence[Sequence[dict[str, Any]]],
    seatings: Seatings,
    names: Sequence[str],
    settings: Settings,
    level: float = 0.95,
) -> dict[str, Any]:
    """Every figure of one table (a pairing with two entries).

    Args:
        deals: single-hand duplicate deals (records per seating).
        matches: duplicate matches to the target (may be empty).
        seatings: per seating, the entry in each seat.
        names: name of each entry.
        settings: the game settings of the hands (``side_of``, seats).
        level: confidence level of the intervals.

    Returns a JSON-ready dict: ``entries`` (mean score per hand and per seat counted from the
    dealer, match wins) and ``pairs`` (for each pair: mean score difference per hand with its
    interval from the paired per-deal differences, hand win/draw/loss counts and win rate,
    match win rate; the win rates with Wilson intervals, `rate_ci`;
    ``mirror``: every deal and match came out even between the seatings, by construction).
    """
    n = settings.num_players
    m = len(names)
    scores = np.zeros((0, 1, m))
    # Per seat counted from the dealer: 0 plays first, n-1 is the dealer (R5).
    seat_sum = np.zeros((m, n))
    seat_count = np.zeros((m, n))
    if deals:
        seat_totals = _seat_totals(deals, settings)
        scores = _entry_means(seat_totals, _holds(seatings, settings))
        dealer = np.array([[record["dealer"] for record in deal] for deal in deals])  # [deals, seatings]
        order = (np.arange(n) - dealer[:, :, None] - 1) % n  # [deals, seatings, seats]
        entry = np.broadcast_to(np.array([list(s) for s in seatings]), order.shape)
        np.add.at(seat_sum, (entry, order), seat_totals)
        np.add.at(seat_count, (entry, order), 1.0)
    match_scores = table_scores(matches, seatings, settings) if matches else None
    match_winners = [winners(mt, seatings, settings) for mt in matches]

    entries = []
    for e in range(m):
        entry: dict[str, Any] = {"player": names[e]}
        if len(deals):
            entry["mean_score"] = mean_ci(scores[:, :, e].mean(axis=1), level)
            entry["per_seat_from_dealer"] = [
                float(seat_sum[e, k] / seat_count[e, k]) if seat_count[e, k] else None for k in range(n)
            ]
        if matches:
            wins = np.array([[e in w for w in mw] for mw in match_winners], dtype=float).mean(axis=1)
            entry["match_win_rate"] = rate_ci(wins, len(matches) * len(seatings), level)
            entry["match_hands"] = float(np.mean([[rec["hands"] for rec in mt] for mt in matches]))
        entries.append(entry)

    pairs = []
    for i, j in itertools.combinations(range(m), 2):
        pair: dict[str, Any] = {"a": names[i], "b": names[j]}
        if len(deals):
            diff = scores[:, :, i] - scores[:, :, j]
            pair["score_diff"] = mean_ci(diff.mean(axis=1), level)
            wins, draws, losses = int((diff > 0).sum()), int((diff == 0).sum()), int((diff < 0).sum())
            pair["hands"] = {"played": int(diff.size), "a_wins": wins, "draws": draws, "b_wins": losses}
            pair["hand_win_rate"] = rate_ci(((diff > 0) + 0.5 * (diff == 0)).mean(axis=1), int(diff.size), level)
        if matches:
            md = match_scores[:, :, i] - match_scores[:, :, j]
            beat = np.array(
                [[(i in w) - (j in w) for w in mw] for mw in match_winners], dtype=float
            )  # +1 a won, -1 b won, 0 a third side won
            pair["match_win_rate"] = rate_ci(((md > 0) + 0.5 * (md == 0)).mean(axis=1), int(md.size), level)
            pair["matches"] = {
                "played": int(md.size),
                "a_wins": int((beat > 0).sum()),
                "b_wins": int((beat < 0).sum()),
                "mean_total_diff": float(md.mean()),
            }
        # In every deal (and match) each scored over the seatings exactly what the other did, seat
        # for seat swapped: the two played it alike from either seat (a deterministic player
        # against its own copy), so the zero difference and the 50% are so by construction and
        # their zero-width intervals measure nothing.
        tables = ([scores] if len(deals) else []) + ([match_scores] if matches else [])
        pair["mirror"] = bool(tables) and all(
            np.array_equal(np.sort(t[:, :, i], axis=1), np.sort(t[:, :, j], axis=1)) for t in tables)
        pairs.append(pair)
    return {"players": list(names), "seatings": [list(s) for s in seatings], "entries": entries, "pairs": pairs}


def win_matrices(deals: Sequence[Sequence[dict[str, Any]]], seatings: Seatings, settings: Settings) -> np.ndarray:
    """Per deal, the pairwise win points between the entries: ``[deals, entries, entries]``."""
    m = max(max(s) for s in seatings) + 1
    if not deals:
        return np.zeros((0, m, m))
    return pairwise_outcomes(table_scores(deals, seatings, settings))


def ladder_ratings(
    tables: Sequence[tuple[Sequence[int], np.ndarray]],
    num_players: int,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Bradley–Terry (Elo-scale) ratings from the hand outcomes of every table, with bootstrap
    intervals (deals resampled within each table, ``bootstrap`` times, from ``seed``).

    Args:
        tables: per table, the global player index of each of its entries and its
            `win_matrices` array.
        num_players: players in the ladder.
        bootstrap: resamples for the intervals (0: none).
        seed: seed of the resampling.
        level: confidence level.

    With more than two sides a hand gives one outcome per pair of entries at the table
    (pairwise Bradley–Terry).
    """
    def total(weights: list[np.ndarray] | None) -> np.ndarray:
        w = np.zeros((num_players, num_players))
        for t, (players, per_deal) in enumerate(tables):
            agg = per_deal.sum(axis=0) if weights is None else np.tensordot(weights[t], per_deal, axes=1)
            idx = np.asarray(players)
            w[np.ix_(idx, idx)] += agg
        return w

    wins = total(None)
    ratings = bradley_terry(wins)
    result: dict[str, Any] = {"ratings": ratings.tolist(), "wins": wins.tolist(), "bootstrap": bootstrap}
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        samples = np.empty((bootstrap, num_players))
        for b in range(bootstrap):
            weights = [rng.multinomial(len(pd), np.full(len(pd), 1.0 / len(pd))).astype(float) for _, pd in tables]
            samples[b] = bradley_terry(total(weights))
        alpha = (1.0 - level) / 2.0
        with np.errstate(invalid="ignore"):
            result["ci_low"] = np.nanquantile(samples, alpha, axis=0).tolist()
            result["ci_high"] = np.nanquantile(samples, 1.0 - alpha, axis=0).tolist()
    return result
