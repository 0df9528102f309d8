"""Shared code of the play page's tests (tests/web and tests/browser): a server's app built for a
test, scripted players, games with a chosen deck, and a real uvicorn on 127.0.0.1 stopped
however the test ends."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import threading
import time
from typing import Any, Iterator, Sequence

from pisti_env import Game
from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.rules import Settings, make_settings
from pisti_env.terminal.web.cli import game_builder
from pisti_env.terminal.web.server import ServerConfig, create_app, replay_paths
from pisti_env.terminal.web.session import Sessions, WebGame


class Script:
    """A player replaying a fixed list of actions (the other seats of a no-leak pair)."""

    def __init__(self, actions: Sequence[int]) -> None:
        self.actions = list(actions)

    def act(self, view: Any) -> int:
        return self.actions.pop(0)


def config(tmp_path, settings: Settings | None = None, **values: Any) -> ServerConfig:
    """A server config writing its replays under ``tmp_path`` (``game.jsonl``, ``game-2.jsonl`` …),
    the page's delay 0."""
    settings = settings or make_settings(target=None)
    build = game_builder(values.pop("hint_policy", "greedy"), replay_paths(str(tmp_path / "game.jsonl")),
                         values.pop("seed", 7))
    values.setdefault("opponent", "greedy")
    values.setdefault("delay", 0.0)
    return ServerConfig(settings=settings, new_game=build, **values)


def client(cfg: ServerConfig, sessions: Sessions | None = None, **kwargs: Any):
    """Starlette's TestClient on the app (its ``Host`` is ``testserver``)."""
    from starlette.testclient import TestClient

    return TestClient(create_app(cfg, sessions, host="testserver"), **kwargs)


def random_prefix(settings: Settings, seed: int, seat: int = 0) -> tuple[Game, list[tuple[int, int]]]:
    """A single-hand game played at random to a random moment of the first hand when it is
    ``seat``'s turn; returns the game and its (seat, action) list."""
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    actions: list[tuple[int, int]] = []
    stop = rng.randrange(4, 40)
    while not g.done and g.hands_completed == 0:
        if len(actions) >= stop and g.turn == seat:
            break
        a = rng.choice(g.legal_actions())
        actions.append((g.turn, a))
        g.step(a)
    return g, actions


def mapped(action: int, mapping: dict[int, int]) -> int:
    """``action`` with its card (face up or down, R29) replaced through ``mapping``."""
    if action >= BELIEVE:
        return action
    card = action % FACE_DOWN
    return action - card + mapping.get(card, card)


def scripted_game(settings: Settings, deck: Sequence[int], dealer: int, seat: int,
                  actions: Sequence[tuple[int, int]], path, names: Sequence[str]) -> tuple[WebGame, list[int]]:
    """A web game on ``deck`` whose other seats replay their part of ``actions``; returns it and
    the person's part of ``actions``."""
    players = [None if s == seat else Script([a for t, a in actions if t == s]) for s in range(settings.num_players)]
    stream = open(path, "w", encoding="utf-8")
    game = WebGame(settings, seat, players, names, list(names), stream, deck=list(deck), dealer=dealer)
    return game, [a for t, a in actions if t == seat]


@contextlib.contextmanager
def live_server(cfg: ServerConfig) -> Iterator[tuple[str, Any]]:
    """A real uvicorn serving ``create_app(cfg)`` on 127.0.0.1 and a free port, in a thread of
    this process; yields ``(base URL, app)`` and stops the server however the block ends."""
    import uvicorn

    app = create_app(cfg, host="127.0.0.1")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.state.sessions.close_all()


def read_lines(path: os.PathLike | str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()
