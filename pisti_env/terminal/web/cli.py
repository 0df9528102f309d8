"""``pisti-play --web``: the command line's choices turned into a server, started and opened.

The first game is the one the command line asked for (its opponent, players, variant, seat and
seed); the page's form starts others. Every game is written as a replay (``--replay-out`` for
the first, the same name with ``-2``, ``-3`` … for the next ones; see
``pisti_env.terminal.web.server.replay_paths``).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import webbrowser
from types import SimpleNamespace
from typing import Any, Callable

from ...tools.flags import check_path, fail, printable, values_of, writable_file
from ...rules import SETTING_NAMES, make_settings
from ..hint import Hinter
from ...tools.versions import versions
from .session import WebGame

LOOPBACK = "127.0.0.1"


def game_builder(hint_policy: str | None, replay_path: Callable[[int], str],
                 first_seed: int | None = None) -> Callable[[dict[str, Any]], WebGame]:
    """A function building a ``pisti_env.terminal.web.session.WebGame`` from the page's checked
    choices (``pisti_env.terminal.web.server.parse_choices``): players from the registry as in the
    terminal game, a hint policy loaded on first use, the replay file opened."""
    from ..play_cli import _opponents, _short
    from .server import fresh_seed

    seeds = [first_seed] if first_seed is not None else []
    about = versions()

    def build(choices: dict[str, Any]) -> WebGame:
        settings, seat = choices["settings"], choices["seat"]
        seed = seeds.pop() if seeds else fresh_seed()
        args = SimpleNamespace(opponent=choices["opponent"], partner=choices["partner"], seat=seat)
        players, specs, _ = _opponents(settings, args, seed)
        names = ["you" if s == seat else f"{printable(_short(spec), 40)} ({s})" for s, spec in enumerate(specs)]
        path = replay_path(seed)
        check_path(writable_file, path, "--replay-out")
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        stream = open(path, "w", encoding="utf-8")
        hinter = Hinter(settings, hint_policy)
        meta = {"source": "pisti-play --web", "person_seat": seat, "names": names, "versions": about}
        try:
            return WebGame(settings, seat, players, names, specs, stream, hint=hinter, seed=seed, meta=meta)
        except BaseException:
            stream.close()
            raise

    return build


def free_port(host: str) -> int:
    """A port free on ``host`` now (the server binds it right after)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def main_web(args: argparse.Namespace) -> int:
    """Run the server for ``pisti-play --web`` until Ctrl-C; returns the exit status."""
    try:
        import uvicorn

        from .server import ServerConfig, create_app, replay_paths
    except ImportError as err:
        return fail("pisti-play", f"--web needs the web extra (pip install 'pisti[web]'): {err}")
    try:
        settings = make_settings(**values_of(args, SETTING_NAMES))
        if not 0 <= args.seat < settings.num_players:
            raise ValueError(f"--seat must be 0..{settings.num_players - 1}, got {args.seat}")
        if args.replay_out is not None:
            check_path(writable_file, args.replay_out, "--replay-out")
        build = game_builder(args.hint_policy, replay_paths(args.replay_out), args.seed)
        allowed = {s for s in (args.opponent, args.partner, args.hint_policy) if s is not None}
        config = ServerConfig(settings=settings, new_game=build, seat=args.seat, opponent=args.opponent,
                              partner=args.partner, hint_policy=args.hint_policy, delay=args.delay,
                              idle_seconds=args.idle_minutes * 60, allowed_specs=allowed)
        port = args.port or free_port(args.host)
    except (TypeError, ValueError, OSError) as err:
        return fail("pisti-play", err)
    if args.host != LOOPBACK:
        print(f"pisti-play: warning: listening on {args.host}, not {LOOPBACK}: anyone who can reach this address "
              "can start games here (a game itself still needs its token)", file=sys.stderr)
    app = create_app(config, host=args.host)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{port}/"
    print(f"Pişti in your browser: {url}  (Ctrl-C stops the server; replays in "
          f"{os.path.dirname(args.replay_out or os.path.join('runs', 'play', 'x')) or '.'})", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=port, log_level="warning"))
    if not args.no_browser:
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    try:
        server.run()
    finally:
        app.state.sessions.close_all()
    return 0
