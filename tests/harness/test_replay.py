"""Issue 15: game replays (pisti_env/tools/replay.py): the JSON-lines format round-trips, replaying
every recorded game through the engine reproduces its decks and results exactly, and a bad or
truncated file is refused with an error naming the line. ``pisti-eval --save-games`` records
games without changing a figure."""

from __future__ import annotations

import json

import pytest

from pisti_env import make_settings
from pisti_env.tools.replay import GameRecorder, ReplayError, parse_replay_lines, read_replays, replay, write_records
from training.harness.evaluate import evaluate

from helpers import recorded_random_game

VARIANTS = [
    dict(),  # a match to 151 (R24)
    dict(target=None, bluff=True, last_card_pisti=False),  # R29
    dict(num_players=4, partnerships=True, target=61, bluff=True),  # R4, R29
    dict(num_players=3, target=None, show_stock_bottom=True, double_pisti=10),  # R14, R28
    dict(num_players=5, decks=2, target=None),  # R27
]


@pytest.mark.parametrize("kw", VARIANTS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "default")
def test_round_trip_and_replay_reproduces_results(tmp_path, kw):
    games = [recorded_random_game(seed, **kw) for seed in (1, 2)]
    path = tmp_path / "games.jsonl"
    write_records(games[0], path)
    write_records(games[1], path, append=True)
    read = read_replays(path)
    assert len(read) == 2
    for recorded, records in zip(read, games):
        assert [recorded.header] + [r for _, r in recorded.records] == json.loads(json.dumps(records))
        game = replay(recorded)
        end = records[-1]
        assert end["complete"] and game.done
        assert list(game.match_scores) == end["match_scores"] and game.winner == end["winner"]
        assert [r["result"] for r in records if r["type"] == "hand_end"] == game.hand_results
        assert recorded.actions() == [(r["seat"], r["action"]) for r in records if r["type"] == "action"]


def test_every_hand_of_a_match_is_recorded():
    records = recorded_random_game(5)
    hands = [r for r in records if r["type"] == "hand"]
    ends = [r for r in records if r["type"] == "hand_end"]
    assert len(hands) == len(ends) == records[-1]["hands"] > 1
    assert [h["hand"] for h in hands] == list(range(1, len(hands) + 1))
    assert all(len(h["deck"]) == 52 for h in hands)


def lines_of(records) -> list[str]:
    return [json.dumps(r) for r in records]


def error_of(lines) -> str:
    with pytest.raises(ReplayError) as info:
        games = parse_replay_lines(lines, "g.jsonl")
        for g in games:
            replay(g)
    return str(info.value)


def test_truncated_file_names_the_line():
    lines = lines_of(recorded_random_game(3, target=None))
    message = error_of(lines[:10])
    assert "g.jsonl, line 10" in message and "truncated" in message and "line 1" in message
    # Cut inside a line: not JSON.
    cut = lines[:7] + [lines[7][: len(lines[7]) // 2]]
    assert "line 8" in error_of(cut) and "not valid JSON" in error_of(cut)


@pytest.mark.parametrize("edit, expected", [
    (lambda ls: ls.insert(3, ""), "line 4: empty line"),
    (lambda ls: ls.__setitem__(2, json.dumps({"type": "move"})), "line 3: unknown record type 'move'"),
    (lambda ls: ls.__setitem__(2, json.dumps({"type": "action", "seat": 0})), "line 3: a 'action' record needs 'action'"),
    (lambda ls: ls.__setitem__(2, json.dumps({"type": "action", "seat": "0", "action": 1})), "line 3: action record's 'seat'"),
    (lambda ls: ls.__setitem__(0, "[1, 2]"), "line 1: expected a JSON object"),
    (lambda ls: ls.pop(0), "line 1: a 'hand' record before any 'game' record"),
    (lambda ls: ls.insert(5, ls[0]), "line 6: a new game starts before the game of line 1"),
])
def test_malformed_records_name_the_line(edit, expected):
    lines = lines_of(recorded_random_game(4, target=None))
    edit(lines)
    assert expected in error_of(lines)


def _edit_record(lines, index, **changes):
    record = json.loads(lines[index])
    record.update(changes)
    lines[index] = json.dumps(record)


def test_records_the_engine_does_not_reproduce_name_the_line():
    records = recorded_random_game(6, target=None)
    lines = lines_of(records)
    first_action = next(i for i, r in enumerate(records) if r["type"] == "action")
    seat = records[first_action]["seat"]

    wrong_seat = list(lines)
    _edit_record(wrong_seat, first_action, seat=1 - seat)
    assert f"line {first_action + 1}: seat {1 - seat} acts, but it is seat {seat}'s turn" in error_of(wrong_seat)

    illegal = list(lines)
    hand = [r for r in records if r["type"] == "hand"][0]["deck"]
    not_held = next(c for c in hand[:4])  # a table card: never in the mover's hand at the start
    from pisti_env.rules.cards import parse_card
    _edit_record(illegal, first_action, action=parse_card(not_held))
    assert f"line {first_action + 1}: the engine refuses this action" in error_of(illegal)

    other_result = list(lines)
    end = next(i for i, r in enumerate(records) if r["type"] == "hand_end")
    result = records[end]["result"]
    result[0] = dict(result[0], total=result[0]["total"] + 1)
    _edit_record(other_result, end, result=result)
    assert f"line {end + 1}: recorded result of hand 1 differs" in error_of(other_result)

    other_deck = list(lines)
    deck = list(hand)
    deck[10], deck[20] = deck[20], deck[10]
    _edit_record(other_deck, 1, deck=deck)
    assert "line 2: the engine deals hand 1" in error_of(other_deck)

    other_end = list(lines)
    _edit_record(other_end, len(lines) - 1, winner=None if records[-1]["winner"] is not None else 0)
    assert f"line {len(lines)}: recorded end" in error_of(other_end)


def test_bad_header_names_the_line():
    lines = lines_of(recorded_random_game(7, target=None))
    bad = list(lines)
    _edit_record(bad, 0, format="other")
    assert "line 1: not a pisti replay" in error_of(bad)
    bad = list(lines)
    _edit_record(bad, 0, settings={"num_players": 9})
    assert "line 1: bad settings" in error_of(bad)
    bad = list(lines)
    _edit_record(bad, 0, version=99)
    assert "line 1: replay version 99" in error_of(bad)


def test_recorder_refuses_a_bad_action_and_records_nothing():
    records: list[dict] = []
    rec = GameRecorder(make_settings(target=None), ["a", "b"], records.append, seed=1)
    before = list(records)
    with pytest.raises(ValueError):
        rec.step(999)
    assert records == before


def test_eval_save_games_records_without_changing_the_figures(tmp_path):
    kw = dict(deals=6, matches=1, seed=3, bootstrap=0, workers=1)
    plain = evaluate(["greedy", "random"], **kw)
    path = tmp_path / "games.jsonl"
    saved = evaluate(["greedy", "random"], save_games=2, replay_path=str(path), **kw)
    def figures(report):  # every figure but the timing (json: NaN half-widths compare equal)
        return json.dumps([{k: v for k, v in t.items() if k != "seconds"} for t in report["tables"]], sort_keys=True)

    assert figures(saved) == figures(plain)
    games = read_replays(path)
    # Two deals and one match (matches=1 < save_games), each once per seating (2 rotations).
    assert len(games) == (2 + 1) * 2
    assert {g.header["meta"]["source"] for g in games} == {"pisti-eval"}
    assert [g.players for g in games[:2]] == [["greedy", "random"], ["random", "greedy"]]
    for g in games:
        final = replay(g)
        assert final.done and g.end["complete"]
    with pytest.raises(ValueError, match="replay_path"):
        evaluate(["greedy", "random"], save_games=1, **kw)


def test_import_pisti_env_stays_free_of_rich_and_torch():
    """pisti_env and its replay module import neither rich (the terminal's) nor torch."""
    import subprocess
    import sys

    code = "import sys, pisti_env, pisti_env.tools.replay; print(sorted(m for m in ('rich', 'torch') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
