"""Evaluation on the batched engine (training.harness.batched_play, issue 17 item 4):

* the same deals as the Python path (the Python game's deck and dealer, R5–R7, R28), and the
  same result of every deal, seating by seating, for checkpoints (their most likely legal
  action) and for ``random``, ``greedy`` and ``expert`` (the Python players' own draws), on 2,
  3 and 4 players, partnerships (R4) and the bluff variant (R29; ``expert`` without it);
* the replays of the first games (``save_games``) are the games played;
* players drawing from the block's torch generator (``bluffer``, ``challenger``) are
  reproducible with the seed;
* ``evaluate(engine=...)`` / ``pisti-eval --engine``: auto picks the batched engine only when
  every player has a batched form, one is a network and the table is single hands; the others
  fall back to the Python engine, or are refused with ``engine="batched"``.
"""

from __future__ import annotations

import json

import pytest

from pisti_env import make_settings
from pisti_env.agents import make_player
from pisti_env.tools.replay import read_replays, replay
from training.harness.batched_play import play_batched, why_not_batched
from training.harness.duplicate import Table, make_seatings, run_games
from training.harness.evaluate import evaluate, main

from helpers import network_player


CASES = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4, partnerships=True),
    "2p-bluff": dict(num_players=2, bluff=True),
}


@pytest.mark.parametrize("case,specs", [(c, ("A", "B")) for c in sorted(CASES)]
                         + [(c, ("greedy", "random")) for c in sorted(CASES)] + [("2p", ("A", "greedy"))]
                         + [(c, ("expert", "A")) for c in ("2p", "3p", "4p-partners")] + [("2p", ("expert", "greedy"))])
def test_batched_deals_give_the_python_results_deal_by_deal_r5_r7(case, specs):
    settings = make_settings(target=None, **CASES[case])
    lineup = [p % 2 for p in range(settings.num_players)]
    table = Table(specs, make_seatings(lineup, settings), settings)
    nets = {"A": network_player(settings, 1, "A"), "B": network_player(settings, 2, "B")}

    def loader(spec):
        return nets[spec] if spec in nets else make_player(spec, settings=settings)

    python = run_games(table, 4, 7, loader=loader)
    batched = play_batched(table, [loader(s) for s in specs], 4, 7, block=3)  # two blocks
    assert batched == python
    totals = {tuple(r["totals"]) for deal in python for r in deal}
    assert len(totals) > 2  # real, varied games


def test_saved_games_are_the_games_played_and_match_the_python_replays(tmp_path):
    settings = make_settings(num_players=2, target=None)
    table = Table(("A", "B"), make_seatings([0, 1], settings), settings)
    players = {"A": network_player(settings, 3, "A"), "B": network_player(settings, 4, "B")}
    python = run_games(table, 5, 2, loader=players.__getitem__, save_games=3)
    batched = play_batched(table, [players["A"], players["B"]], 5, 2, save_games=3, block=2)
    assert batched == python  # records and replays, line by line
    assert sum("replay" in r for deal in batched for r in deal) == 3 * 2


def test_generator_players_are_reproducible_with_the_seed_r29():
    settings = make_settings(num_players=2, target=None, bluff=True)
    table = Table(("bluffer", "challenger"), make_seatings([0, 1], settings), settings)

    def players():
        return [make_player("bluffer:claim=0.5", settings=settings), make_player("challenger", settings=settings)]

    first = play_batched(table, players(), 20, 5)
    assert play_batched(table, players(), 20, 5) == first
    assert play_batched(table, players(), 20, 6) != first
    # The same deals as the Python path (deck and first dealer), whoever plays them.
    assert [d[0]["dealer"] for d in first] == [d[0]["dealer"] for d in run_games(table, 20, 5)]


def test_why_not_batched_names_the_reason():
    hand = make_settings(num_players=2, target=None)
    greedy, pimc = make_player("greedy", settings=hand), make_player("pimc", settings=hand)
    seat = make_seatings([0, 1], hand)
    assert why_not_batched(Table(("greedy", "greedy"), seat, hand), [greedy, greedy]) is None
    assert "pimc" in why_not_batched(Table(("greedy", "pimc"), seat, hand), [greedy, pimc])
    bluff_expert = make_player("expert", settings=make_settings(num_players=2, target=None, bluff=True))
    assert "expert" in why_not_batched(Table(("greedy", "expert"), seat, hand), [greedy, bluff_expert])
    match = make_settings(num_players=2, target=51)
    assert "matches" in why_not_batched(Table(("greedy", "greedy"), seat, match), [greedy, greedy])
    bluff = make_settings(num_players=2, target=None, bluff=True, show_stock_bottom=True)
    assert "show_stock_bottom" in why_not_batched(Table(("greedy", "greedy"), seat, bluff), [greedy, greedy])
    with pytest.raises(ValueError, match="batched engine: .*pimc"):
        play_batched(Table(("greedy", "pimc"), seat, hand), [greedy, pimc], 2, 0)
    with pytest.raises(ValueError, match="block"):
        play_batched(Table(("greedy", "greedy"), seat, hand), [greedy, greedy], 2, 0, block=0)


def _figures(report: dict) -> str:
    return json.dumps([{k: v for k, v in t.items() if k not in ("seconds", "engine")} for t in report["tables"]],
                      sort_keys=True)


def test_evaluate_engines_agree_on_deterministic_players_and_pick_the_engine():
    settings = make_settings(num_players=2, target=None)
    players = {"A": network_player(settings, 5, "A"), "B": network_player(settings, 6, "B")}

    def loader(spec):
        return players[spec] if spec in players else make_player(spec, settings=settings)

    kw = dict(deals=6, matches=1, target=51, seed=3, bootstrap=10, workers=1, loader=loader)
    auto = evaluate(["A", "B"], **kw)
    python = evaluate(["A", "B"], engine="python", **kw)
    assert auto["tables"][0]["engine"] == "batched" and python["tables"][0]["engine"] == "python"
    assert auto["settings"]["engine"] == "auto" and python["settings"]["engine"] == "python"
    assert _figures(auto) == _figures(python)  # deals and the (Python-engine) match alike
    assert auto["ladder"] == python["ladder"]
    mixed = evaluate(["A", "pimc:n=2"], deals=2, matches=0, seed=0, bootstrap=0, workers=1, loader=loader)
    assert mixed["tables"][0]["engine"] == "python"  # pimc has no batched form
    with pytest.raises(ValueError, match="engine='batched'.*pimc.*no batched form"):
        evaluate(["A", "pimc:n=2"], deals=2, matches=0, engine="batched", loader=loader)
    # expert has one: with a network at the table, auto plays it batched, with the same figures.
    kw = dict(deals=6, matches=0, seed=3, bootstrap=10, workers=1, loader=loader)
    auto = evaluate(["A", "expert"], **kw)
    assert auto["tables"][0]["engine"] == "batched"
    assert _figures(auto) == _figures(evaluate(["A", "expert"], engine="python", **kw))
    with pytest.raises(ValueError, match="engine must be one of"):
        evaluate(["A", "B"], deals=2, matches=0, engine="gpu", loader=loader)


def test_cli_engine_flag_and_saved_games(tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["greedy", "random", "--deals", "4", "--matches", "0", "--bootstrap", "0", "--quiet", "--no-plots",
                 "--workers", "1", "--engine", "batched", "--save-games", "2", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["tables"][0]["engine"] == "batched"
    games = read_replays(out / "games.jsonl")
    assert len(games) == 2 * 2 and all(replay(g).done for g in games)
    assert main(["greedy", "random", "--deals", "4", "--matches", "0", "--bootstrap", "0", "--quiet", "--no-plots",
                 "--workers", "1", "--out", str(out)]) == 0  # auto: scripted players alone stay on the Python engine
    assert json.loads((out / "report.json").read_text())["tables"][0]["engine"] == "python"
    assert main(["greedy", "pimc", "--deals", "2", "--engine", "batched", "--quiet", "--out", str(out)]) != 0
    assert "batched" in capsys.readouterr().err
