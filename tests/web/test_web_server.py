"""``pisti-play --web``'s server over HTTP (Starlette's TestClient, and a real uvicorn on
127.0.0.1): a whole hand played by a scripted client and its replay checked by the engine, the
4xx answers that change nothing, games isolated and expiring, the seat's answers independent of
what it cannot know (R30–R31), a generic 500, and the command line's ``--web --no-browser``."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install 'pisti[web]')")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install 'pisti[web]')")

from pisti_env.tools.replay import read_replays, replay  # noqa: E402
from pisti_env.rules import make_settings  # noqa: E402
from pisti_env.terminal.web.session import Sessions  # noqa: E402

from web_support import client, config, live_server, random_prefix, read_lines, scripted_game, mapped  # noqa: E402


def new_game(c, **choices):
    r = c.post("/api/games", json=choices)
    assert r.status_code == 201, r.text
    return r.json()["token"], r.json()["state"]


def play_to_end(c, token, state, choose=lambda legal: legal[0]):
    moves = 0
    while not state["done"]:
        assert state["your_turn"] and state["legal"]
        r = c.post(f"/api/games/{token}/move", json={"action": choose(state["legal"])["action"]})
        assert r.status_code == 200, r.text
        state = r.json()
        moves += 1
    return state, moves


@pytest.mark.parametrize("choices", [dict(players=2), dict(players=4, partnerships=True, bluff=True, seat=1),
                                     dict(players=3, bluff=True)], ids=["2p", "4p-partners-bluff", "3p-bluff"])
def test_R9_R19_whole_hand_by_a_scripted_client_is_replayed_by_the_engine(tmp_path, choices):
    rng = random.Random(3)
    with client(config(tmp_path)) as c:
        token, state = new_game(c, match=False, **choices)
        state, moves = play_to_end(c, token, state, lambda legal: rng.choice(legal))
    assert moves > 0 and state["done"] and state["result"].startswith("Hand over")
    assert len(state["breakdowns"]) == 1
    recorded = read_replays(tmp_path / "game.jsonl")
    assert len(recorded) == 1 and recorded[0].end["complete"]
    game = replay(recorded[0])  # the engine again: every deck, result and the end checked
    assert list(game.match_scores) == state["match_scores"] == recorded[0].end["match_scores"]
    assert [row["total"] for row in state["breakdowns"][0]["rows"]] == [r["total"] for r in game.last_hand_result]


def test_R24_R25_a_match_to_the_target_is_played_and_recorded(tmp_path):
    with client(config(tmp_path, opponent="random")) as c:
        token, state = new_game(c, match=True)
        state, _ = play_to_end(c, token, state)
    recorded = read_replays(tmp_path / "game.jsonl")[0]
    game = replay(recorded)
    target = make_settings().target
    assert max(game.match_scores) >= target and state["match_scores"] == list(game.match_scores)
    assert len(state["breakdowns"]) == game.hands_completed > 1


def snapshot_of(c, token, path):
    return c.get(f"/api/games/{token}").content, read_lines(path)


def test_bad_requests_get_a_4xx_and_change_nothing(tmp_path):
    path = tmp_path / "game.jsonl"
    with client(config(tmp_path, settings=make_settings(target=None, bluff=True))) as c:
        token, state = new_game(c, bluff=True)
        before = snapshot_of(c, token, path)
        hand = {m["card"] for m in state["legal"] if m["kind"] == "play"}
        not_in_hand = next(a for a in range(52) if a not in {m["action"] for m in state["legal"]})
        url = f"/api/games/{token}/move"
        cases = [
            (c.post("/api/games/" + "x" * 32 + "/move", json={"action": state["legal"][0]["action"]}), 404),
            (c.post("/api/games//move", json={"action": 0}), 404),
            (c.get("/api/games/nope"), 404),
            (c.post(url, json={"action": not_in_hand}), 409),  # a card not in hand
            (c.post(url, json={"action": 104}), 409),  # R29: an answer without a claim
            (c.post(url, json={"action": 999}), 409),
            (c.post(url, json={"action": -1}), 409),
            (c.post(url, json={"action": "0"}), 400),
            (c.post(url, json={"action": True}), 400),
            (c.post(url, json={"action": 1.0}), 400),
            (c.post(url, json={"action": 0, "seat": 1}), 400),  # the page cannot move another seat
            (c.post(url, json=[0]), 400),
            (c.post(url, content=b"{not json", headers={"content-type": "application/json"}), 400),
            (c.post(url, content=b"\xff\xfe", headers={"content-type": "application/json"}), 400),
            (c.post(url, content=b'{"action": 0}', headers={"content-type": "text/plain"}), 415),
            (c.post(url, data={"action": "0"}), 415),  # a form post (what a cross-site page could send)
            (c.post(url, content=b'{"action": 0' + b" " * 5000 + b"}", headers={"content-type": "application/json"}), 413),
            (c.get(url), 405),
            (c.post("/api/games", json={"players": 9}), 400),
            (c.post("/api/games", json={"players": 2, "partnerships": True}), 400),
            (c.post("/api/games", json={"opponent": "/etc/passwd"}), 400),
            (c.post("/api/games", json={"opponent": str(tmp_path)}), 400),  # a path that exists
            (c.post("/api/games", json={"opponent": "nosuchplayer"}), 400),
            (c.post("/api/games", json={"colour": "red"}), 400),
            (c.get("/", headers={"host": "evil.example"}), 400),  # DNS rebinding: an unknown Host
        ]
        for response, status in cases:
            assert response.status_code == status, (response.request.url, response.text)
            assert "Traceback" not in response.text
        assert hand  # the game had cards to play
        assert snapshot_of(c, token, path) == before, "a refused request changed the game"
        # Out of turn: while a move of the same game is being answered, another is refused.
        game = c.app.state.sessions.get(token)
        with game.lock:
            assert c.post(url, json={"action": state["legal"][0]["action"]}).status_code == 409
        assert snapshot_of(c, token, path) == before
        # After the end, no move.
        state, _ = play_to_end(c, token, state)
        end = snapshot_of(c, token, path)
        assert c.post(url, json={"action": 0}).status_code == 409
        assert snapshot_of(c, token, path) == end


def test_games_are_isolated_and_tokens_unguessable(tmp_path):
    with client(config(tmp_path)) as c:
        a, state_a = new_game(c)
        b, _ = new_game(c)
        assert a != b and len(a) >= 32
        before_b = c.get(f"/api/games/{b}").content
        assert c.post(f"/api/games/{a}/move", json={"action": state_a["legal"][0]["action"]}).status_code == 200
        assert c.get(f"/api/games/{b}").content == before_b
    assert (tmp_path / "game.jsonl").exists() and (tmp_path / "game-2.jsonl").exists()


def test_idle_games_expire_and_are_recorded_unfinished(tmp_path):
    now = [0.0]
    sessions = Sessions(idle_seconds=60, max_games=2, clock=lambda: now[0])
    with client(config(tmp_path), sessions) as c:
        token, _ = new_game(c)
        new_game(c)
        assert c.post("/api/games", json={}).status_code == 503  # at most max_games at once
        now[0] = 59
        assert c.get(f"/api/games/{token}").status_code == 200  # used: its clock restarts
        now[0] = 118
        assert sessions.expire() == 1 and len(sessions) == 1  # the other game, idle since 0
        now[0] = 200
        assert c.get(f"/api/games/{token}").status_code == 404
    end = json.loads(read_lines(tmp_path / "game.jsonl")[-1])
    assert end["type"] == "end" and end["complete"] is False and "expired" in end["reason"]
    assert read_replays(tmp_path / "game.jsonl")  # still a valid replay


def test_an_unexpected_error_is_a_generic_500_logged_by_the_server(tmp_path, caplog):
    cfg = config(tmp_path)

    def broken(choices):
        raise RuntimeError("secret detail /home/someone")

    cfg.new_game = broken
    with client(cfg, raise_server_exceptions=False) as c:
        r = c.post("/api/games", json={})
    assert r.status_code == 500 and r.json() == {"error": "internal error (logged by the server)"}
    assert "secret" not in r.text and "Traceback" not in r.text
    assert "secret detail" in caplog.text


NO_LEAK = [dict(target=None), dict(target=None, bluff=True), dict(num_players=3, target=None, bluff=True),
           dict(num_players=4, partnerships=True, target=None, bluff=True, show_stock_bottom=True)]


@pytest.mark.parametrize("kw", NO_LEAK, ids=["2p", "2p-bluff", "3p-bluff", "4p-partners-bluff-bottom"])
def test_R30_R31_answers_do_not_depend_on_what_the_seat_cannot_know(tmp_path, kw):
    """Two games alike in all the person's seat may know at a moment K (the cards it cannot know
    then, R31, dealt differently: other hands, the stock, never-turned table cards, others'
    face-down cards), the same moves played: every answer the server sends up to K is the same
    byte for byte, while the true states differ."""
    settings = make_settings(**kw)
    names = ["you"] + [f"p{s}" for s in range(1, settings.num_players)]
    differ = 0
    with client(config(tmp_path)) as c:
        sessions = c.app.state.sessions
        for trial in range(5):
            g, actions = random_prefix(settings, 40 + trial)
            if g.done or g.turn != 0:
                continue
            unknown = g.unknown_cards(0)
            shuffled = list(unknown)
            random.Random(trial).shuffle(shuffled)
            mapping = dict(zip(unknown, shuffled))
            deck2 = [mapping.get(card, card) for card in g.deck]
            one, mine = scripted_game(settings, g.deck, g.dealer, 0, actions, tmp_path / f"a{trial}.jsonl", names)
            two, _ = scripted_game(settings, deck2, g.dealer, 0, [(s, mapped(a, mapping)) for s, a in actions],
                                   tmp_path / f"b{trial}.jsonl", names)
            answers = []
            for game in (one, two):
                token = sessions.add(game)
                seen = [json.dumps(game.start()), c.get(f"/api/games/{token}").content]
                for action in mine:
                    r = c.post(f"/api/games/{token}/move", json={"action": action})
                    assert r.status_code == 200, r.text
                    seen.append(r.content)
                seen.append(c.get(f"/api/games/{token}").content)
                answers.append(seen)
            assert answers[0] == answers[1], f"trial {trial}: an answer depends on cards the seat cannot know"
            assert one.game.turn == 0 and not one.done
            differ += any(one.game.hand_card_ids(s) != two.game.hand_card_ids(s)
                          for s in range(1, settings.num_players))
    assert differ > 0, "the permutations never changed another hand: vacuous"


def test_importing_pisti_env_imports_no_web_library():
    code = ("import sys, pisti_env, pisti_env.terminal.web, pisti_env.terminal.play_cli; "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
    assert out.strip() == "[]"


def test_a_real_server_on_loopback_plays_a_hand(tmp_path):
    with live_server(config(tmp_path)) as (base, _app):
        def call(method, path, body=None):
            request = urllib.request.Request(base + path, method=method, data=None if body is None else
                                             json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())

        created = call("POST", "/api/games", {})
        state, token = created["state"], created["token"]
        while not state["done"]:
            state = call("POST", f"/api/games/{token}/move", {"action": state["legal"][0]["action"]})
    assert replay(read_replays(tmp_path / "game.jsonl")[0]).done


def test_cli_web_no_browser_prints_the_address_and_serves_the_page(tmp_path):
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "pisti_env.terminal.play_cli", "--web", "--no-browser", "--opponent", "greedy",
           "--target", "0", "--replay-out", str(out), "--host", "localhost"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        line = proc.stdout.readline()
        assert "http://localhost:" in line, line + proc.stderr.read() if proc.poll() is not None else line
        url = line.split()[line.split().index("browser:") + 1]
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert "/static/play.js" in page
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert "warning: listening on localhost" in proc.stderr.read()
