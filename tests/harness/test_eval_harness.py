"""The evaluation harness (training.harness.duplicate, training.harness.evaluate, the registry):

* duplicate deals really mirror the seats: the same deal (deck, dealer) is played once per
  rotation and the cards a seat receives stay with the seat, not with the player;
* the figures do not depend on the number of worker processes, and the same seed deals the
  same games;
* strength on a seeded evaluation: greedy beats random and expert beats greedy clearly;
* the report, the JSON file, the plots and the CLI; checkpoints and bad input.
"""

from __future__ import annotations

import json
import os

import pytest

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_agent, make_player
from training.harness.duplicate import DEAL, MATCH, Table, make_seatings, play_seatings, run_games, stream_seed
from training.harness.evaluate import evaluate, main, unique_names
from training.harness.report import format_report
from training.trainer.checkpoint import CheckpointError


class SpyPlayer:
    """Plays like greedy and writes down, per game, its seat and the hand it was dealt."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log, self.inner = name, log, make_agent("greedy")
        self.first = True

    def reset(self, seed=None):
        self.inner.reset(seed)
        self.first = True

    def act(self, view: SeatView) -> int:
        if self.first:
            self.log.append((self.name, view.seat, tuple(view.hand), view.dealer))
            self.first = False
        return self.inner.act(view)


def test_duplicate_deal_mirrors_the_seats_2p():
    settings = make_settings(num_players=2, target=None)
    log: list = []
    players = [SpyPlayer("A", log), SpyPlayer("B", log)]
    seed = stream_seed(0, DEAL, 5)
    seatings = make_seatings([0, 1], settings)
    assert seatings == ((0, 1), (1, 0))
    records = play_seatings(Table(("A", "B"), seatings, settings), [[players[0]], [players[1]]], seed)
    assert len(records) == 2 and records[0]["dealer"] == records[1]["dealer"]
    (a0, b0), (a1, b1) = sorted(log[:2]), sorted(log[2:])
    # Rotation 0: A in seat 0; rotation 1: A in seat 1. Each seat gets the same cards both times.
    assert (a0[1], b0[1], a1[1], b1[1]) == (0, 1, 1, 0)
    assert a0[2] == b1[2] and b0[2] == a1[2] and a0[2] != b0[2]
    assert a0[3] == a1[3] == b0[3] == b1[3]  # same dealer
    game = Game(settings, seed=seed)
    assert game.hand_card_ids(0) == sorted(a0[2]) and game.hand_card_ids(1) == sorted(b0[2])


def test_duplicate_deal_seats_every_player_everywhere_and_after_everyone_3p():
    settings = make_settings(num_players=3, target=None)
    log: list = []
    players = [[SpyPlayer(name, log)] for name in "ABC"]
    seatings = make_seatings([0, 1, 2], settings)
    assert len(seatings) == 6  # every order: nobody always follows the same player
    play_seatings(Table(("A", "B", "C"), seatings, settings), players, stream_seed(3, DEAL, 0))
    seats = {name: sorted(seat for n, seat, *_ in log if n == name) for name in "ABC"}
    assert seats == {name: [0, 0, 1, 1, 2, 2] for name in "ABC"}
    follows = {(seating[s], seating[(s + 1) % 3]) for seating in seatings for s in range(3)}
    assert len(follows) == 6
    hands_by_seat = {}
    for _, seat, hand, *_ in log:
        hands_by_seat.setdefault(seat, set()).add(hand)
    assert all(len(h) == 1 for h in hands_by_seat.values())  # a seat's cards never change


def test_results_do_not_depend_on_workers_and_seed_replays():
    settings = make_settings(num_players=2, target=None)
    table = Table(("expert", "random"), make_seatings([0, 1], settings), settings)
    one = run_games(table, 30, 7, workers=1, chunk=4)
    two = run_games(table, 30, 7, workers=2, chunk=4)
    assert one == two
    assert run_games(table, 30, 8, workers=1) != one
    match_settings = make_settings(num_players=2, target=51)
    matches = run_games(Table(("expert", "random"), table.seatings, match_settings), 3, 7, stream=MATCH)
    assert all(rec["winner"] is not None and max(rec["totals"]) >= 51 for deal in matches for rec in deal)


def test_strength_greedy_beats_random_and_expert_beats_greedy():
    """Seeded evaluation, 400 duplicate deals each (measured: greedy − random ≈ +11,
    expert − greedy ≈ +4.4 points per hand)."""
    gr = evaluate(["greedy", "random"], deals=400, matches=0, seed=0, bootstrap=0)
    diff = gr["tables"][0]["pairs"][0]["score_diff"]
    assert diff["ci_low"] > 8.0, diff
    eg = evaluate(["expert", "greedy"], deals=400, matches=0, seed=0, bootstrap=0)
    diff = eg["tables"][0]["pairs"][0]["score_diff"]
    assert diff["ci_low"] > 2.5, diff
    assert eg["ladder"]["ratings"][0] > eg["ladder"]["ratings"][1]


def test_three_player_ladder_report_json_plots_and_cli(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["random", "greedy", "expert", "--players", "3", "--deals", "12", "--matches", "2",
                 "--target", "51", "--bootstrap", "10", "--workers", "1", "--quiet", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "ladder" in text and "greedy vs expert" in text
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["seed"] == 0 and report["settings"]["deals"] == 12
    assert report["versions"]["pisti"] and report["versions"]["obs_version"] == str(pisti_env.OBS_VERSION)
    (table,) = report["tables"]  # three players fill one 3-seat table
    assert len(table["pairs"]) == 3 and all(len(e["per_seat_from_dealer"]) == 3 for e in table["entries"])
    assert table["entries"][0]["match_win_rate"]["n"] == 2
    assert len(report["ladder"]["ratings"]) == 3 and "ci_low" in report["ladder"]
    assert (out / "ladder.png").stat().st_size > 1000 and (out / "heatmap.png").stat().st_size > 1000


def test_round_robin_over_pairs_with_partnerships():
    report = evaluate(["random", "greedy", "expert"], num_players=4, deals=6, matches=0, bootstrap=0)
    assert [t["players"] for t in report["tables"]] == [["random", "greedy"], ["random", "expert"], ["greedy", "expert"]]
    assert report["tables"][0]["seatings"] == [[0, 1, 0, 1], [1, 0, 1, 0]]  # partners sit opposite (R4)
    matrix = report["score_matrix"]["mean_score_diff_per_hand"]
    assert matrix[0][1] == pytest.approx(-matrix[1][0]) and matrix[0][0] is None


def test_policy_interface_and_checkpoints(tmp_path):
    with pytest.raises(ValueError, match="unknown player"):
        make_player(str(tmp_path / "missing.pt"))


def test_checkpoint_paths_go_through_the_policy_loader(tmp_path, monkeypatch):
    import pisti_env.policies.loader as policy

    path = tmp_path / "ckpt"
    path.mkdir()
    with pytest.raises(CheckpointError, match="is not a checkpoint"):
        make_player(str(path))

    class LastLegal:
        name = "last"
        seeds: list = []

        def act(self, view):
            return view.legal_actions[-1]

        def reset(self, seed=None):
            self.seeds.append(seed)

    loaded = []
    monkeypatch.setattr(policy, "load_policy", lambda p, **kwargs: loaded.append(p) or LastLegal())
    report = evaluate([str(path), "random"], deals=5, matches=1, target=31, bootstrap=0)
    assert loaded and all(p == str(path) for p in loaded)
    assert report["tables"][0]["pairs"][0]["hands"]["played"] == 10 and LastLegal.seeds


def test_evaluate_rejects_bad_input(capsys):
    with pytest.raises(ValueError, match="at least two players"):
        evaluate(["greedy"])
    with pytest.raises(ValueError, match="deals must be an int >= 0"):
        evaluate(["greedy", "random"], deals=-1)
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        evaluate(["greedy", "random"], workers=0)
    with pytest.raises(ValueError, match="nothing to play"):
        evaluate(["greedy", "random"], deals=0, matches=0)
    with pytest.raises(ValueError, match="num_players"):
        evaluate(["greedy", "random"], num_players=7)
    assert main(["greedy", "smart", "--quiet"]) == 2
    assert "unknown player 'smart'" in capsys.readouterr().err
    assert unique_names(["greedy", "greedy", "random"]) == ["greedy", "greedy#2", "random"]
    with pytest.raises(ValueError, match="one entry 0..0 per seat"):
        Table(("greedy",), ((0,),), make_settings(num_players=2))
    with pytest.raises(ValueError, match="split partnerships"):
        make_seatings([0, 1, 0, 1], make_settings(num_players=4), "permutations")
    with pytest.raises(ValueError, match="seatings must be one of"):
        evaluate(["greedy", "random"], seatings="all")


def test_bluff_statistics_count_claims_and_answers_consistently():
    """R29: every claim is answered once, bluffs are caught or believed, greedy never claims."""
    from training.harness.bluff_stats import bluff_statistics

    report = bluff_statistics(["random", "greedy"], deals=6, seed=1)
    rnd, greedy = report["random"], report["greedy"]
    assert greedy["claims"] == 0 and rnd["claims"] > 0
    assert rnd["bluffs_believed"] + rnd["bluffs_caught"] == rnd["bluffs"]
    assert rnd["true_claims_believed"] + rnd["true_claims_challenged"] == rnd["claims"] - rnd["bluffs"]
    assert greedy["answers"] == rnd["claims"] and greedy["challenges_right"] == rnd["bluffs_caught"]
    assert rnd["score_diff_per_hand"] == -greedy["score_diff_per_hand"]
    # The claimant's counts by hand size add up to its totals.
    for figures in (rnd, greedy):
        rows = figures["by_hand_size"].values()
        for key in ("claim_chances", "claims", "bluffs", "bluffs_caught", "true_claims_challenged"):
            assert sum(row[key] for row in rows) == figures[key]
    assert set(rnd["by_hand_size"]) <= {"1", "2", "3", "4"} and rnd["by_hand_size"]
    with pytest.raises(ValueError, match="two players"):
        bluff_statistics(["random"], deals=1)


def test_bluff_statistics_count_the_chances_of_a_true_claim():
    """R29: a chance at which the claimant holds the lone card's rank is a true-claim chance;
    the honest bluffer claims at every one of them and only there, challenger at none."""
    from training.harness.bluff_stats import bluff_statistics

    report = bluff_statistics(["bluffer:card=honest", "challenger"], deals=8, seed=2)
    honest, challenger = report["bluffer:card=honest"], report["challenger"]
    assert honest["bluffs"] == 0 and honest["claims"] > 0
    assert honest["true_claim_chances"] == honest["claims"] < honest["claim_chances"]
    assert honest["true_claim_rate"] == 1.0
    assert challenger["claims"] == 0 and 0 < challenger["true_claim_chances"] <= challenger["claim_chances"]
    assert challenger["true_claim_rate"] == 0.0


def test_baseline_margins_are_the_evaluations_pairs_from_the_players_side():
    """What every recipe reports: an object player (here a RandomAgent under a label) gets the
    same margin as the same player by its spec, and each is the evaluate() pair's difference."""
    from pisti_env.agents import make_player
    from training.harness.evaluate import baseline_margins

    by_spec = baseline_margins("random", baselines=("greedy",), deals=6, seed=3)
    report = evaluate(["random", "greedy"], deals=6, matches=0, seed=3, bootstrap=0)
    assert by_spec["greedy"] == report["tables"][0]["pairs"][0]["score_diff"]
    by_object = baseline_margins(make_player("random"), baselines=("greedy",), deals=6, seed=3)
    assert by_object["greedy"]["mean"] == by_spec["greedy"]["mean"]
    assert by_spec["greedy"]["mean"] < 0  # greedy beats random (R20 points go to the capturer)


def test_baseline_margins_bad_input():
    from training.harness.evaluate import baseline_margins

    with pytest.raises(TypeError, match="player spec or a Player"):
        baseline_margins(42, deals=2)
    with pytest.raises(ValueError, match="also a baseline"):
        baseline_margins("greedy", deals=2)
    with pytest.raises(ValueError, match="single hands"):
        baseline_margins("expert", deals=2, target=151)


class FirstLegal:
    """A deterministic player: the first legal card."""

    name = "first"

    def act(self, view):
        return view.legal_actions[0]

    def reset(self, seed=None):
        pass


def test_a_deterministic_player_against_its_own_copy_is_a_mirror_shown_without_an_interval():
    loader = lambda spec: FirstLegal() if spec == "first" else make_player(spec)  # noqa: E731
    report = evaluate(["first", "first", "random"], deals=6, matches=1, target=31, bootstrap=0, loader=loader)
    pairs = {(p["a"], p["b"]): p for table in report["tables"] for p in table["pairs"]}
    mirror = pairs[("first", "first#2")]
    assert mirror["mirror"] and mirror["score_diff"]["mean"] == 0 and mirror["score_diff"]["half_width"] == 0
    assert not pairs[("first", "random")]["mirror"]
    lines = format_report(report).splitlines()
    row = next(line for line in lines if line.startswith("  first vs first#2"))
    assert "+0.00 (mirror)" in row and row.count("50.0% (mirror)") == 2 and "±" not in row
    assert any(line.strip().startswith("(mirror): the two played every deal alike") for line in lines)
    assert "(mirror)" not in next(line for line in lines if line.startswith("  first vs random"))
