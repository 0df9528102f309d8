"""The web server of ``pisti-play --web``: a Starlette app on uvicorn.

Why Starlette on uvicorn and not the standard library's ``http.server``: the server must read
bounded JSON bodies, answer many games at once without one slow player (a policy's forward
pass, a ``pimc`` search) blocking the others, and stop cleanly from a test. ``http.server``
gives none of that ready-made (a threading server with hand-written body limits, routing,
error pages and shutdown), which is more code of our own to keep safe. Starlette (routing,
``TestClient``, a thread pool for blocking work) and uvicorn (the ASGI server) are small, well
kept and widely used; they are the optional ``web`` extra (``pip install 'pisti[web]'``), and
this module is imported only by ``pisti-play --web`` (never by ``import pisti_env``).

Safe by default:

* it listens on ``127.0.0.1`` (``--host`` changes it, with a warning) and answers only requests
  whose ``Host`` names the address it was given or ``localhost`` (no DNS rebinding);
* each game lives under an unguessable token (``secrets.token_urlsafe``, 192 bits) in its URL;
  an unknown token is a 404; the page never sees another game;
* a body must be ``application/json`` (415 otherwise: a cross-site form cannot post one without
  a CORS preflight, which the server never grants), at most ``MAX_BODY`` bytes (413), a JSON
  object with the expected keys and types (400, naming what is allowed);
* moves are checked by the engine on the server: a card not in hand, a move out of turn or after
  the end is a 409 and changes nothing; the other seats' moves are chosen on the server only;
* every answer is built from the person's ``pisti_env.agents.view.SeatView``
  (``pisti_env.terminal.web.views``): it holds only what the seat may know (R30–R31);
* idle games expire (``--idle-minutes``, 30 by default), at most ``max_games`` at once (503);
* an unexpected error is logged here and answered with a generic 500 body, never a traceback;
* the page loads nothing from elsewhere (a strict Content-Security-Policy, no referrer).
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Awaitable, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...agents.registry import SHIPPED_POLICIES, agent_names
from ...rules import Settings, make_settings
from .session import Busy, GameOver, MoveError, Sessions, WebGame

LOG = logging.getLogger("pisti_env.terminal.web")
MAX_BODY = 4096  # bytes of a request body
MAX_SPEC = 100  # characters of a player spec sent by the page
PLAYER_COUNTS = (2, 3, 4)  # the page's choices (R3); 5 and 6 need two decks, the terminal's --decks 2
_SPEC_CHARS = re.compile(r"[A-Za-z0-9_.:=,@-]+")
_STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
           "/static/play.js": ("play.js", "text/javascript; charset=utf-8"),
           "/static/play.css": ("play.css", "text/css; charset=utf-8")}
SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class BadRequest(ValueError):
    """A request the server refuses; ``status`` is its 4xx code."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ServerConfig:
    """What a server is started with.

    Attributes:
        settings: the settings of the game the command line asked for (the form's defaults).
        seat: the person's seat by default.
        opponent, partner: the command line's player specs (``None``: the shipped policy for the
            settings, else ``expert``, as in the terminal game); checkpoint paths are accepted
            from the command line only, the page offers registry names and these.
        hint_policy: the hint's policy spec (``None``: the shipped policy).
        new_game: builds a game from its choices (``pisti_env.terminal.web.cli.build_game``).
        idle_seconds, max_games: see ``pisti_env.terminal.web.session.Sessions``.
        delay: seconds the page waits between the other seats' moves.
    """

    settings: Settings
    new_game: Callable[[dict[str, Any]], WebGame]
    seat: int = 0
    opponent: str | None = None
    partner: str | None = None
    hint_policy: str | None = None
    idle_seconds: float = 30 * 60
    max_games: int = 64
    delay: float = 0.6
    allowed_specs: set[str] = field(default_factory=set)


def page_choices() -> list[str]:
    """The opponents the page lists by name: the shipped policies and the scripted players."""
    return list(SHIPPED_POLICIES) + [n for n in agent_names() if n not in ("ismcts", "search")]


def check_spec(value: Any, what: str, allowed: set[str]) -> str | None:
    """A player spec sent by the page: ``None`` (the default), a registry name (a shipped policy
    or a scripted player, with options: ``pimc:n=32``), or one of the command line's specs
    (``allowed``); never a path the page chose (checkpoint paths come from the command line)."""
    if value is None or value in allowed:
        return value
    names = set(SHIPPED_POLICIES) | set(agent_names())
    if (not isinstance(value, str) or len(value) > MAX_SPEC or not _SPEC_CHARS.fullmatch(value)
            or value.split(":")[0] not in names):
        raise BadRequest(400, f"{what} must be a player name with options if any ({', '.join(page_choices())}; "
                              f"e.g. pimc:n=32), at most {MAX_SPEC} characters; checkpoint paths are given on the "
                              "command line (pisti-play --web --opponent PATH), not by the page")
    return value


_CHOICE_KEYS = {"opponent", "partner", "players", "partnerships", "match", "bluff", "seat"}


def parse_choices(body: Any, config: ServerConfig) -> dict[str, Any]:
    """The page's choices for a new game, checked: ``opponent``/``partner`` (specs or null),
    ``players`` (2, 3, 4), ``partnerships``, ``match`` (to the settings' target, else a single
    hand), ``bluff`` (booleans) and ``seat``; every key optional."""
    if not isinstance(body, dict):
        raise BadRequest(400, "the body must be a JSON object")
    unknown = sorted(set(body) - _CHOICE_KEYS)
    if unknown:
        raise BadRequest(400, f"unknown keys {unknown}; allowed keys: {sorted(_CHOICE_KEYS)}")
    base = config.settings
    players = body.get("players", base.num_players)
    if isinstance(players, bool) or players not in PLAYER_COUNTS:
        raise BadRequest(400, f"players must be one of {list(PLAYER_COUNTS)}")
    flags = {}
    for key, default in (("partnerships", players == 4 and (base.partnerships or base.num_players != 4)),
                         ("match", base.target is not None), ("bluff", base.bluff)):
        flags[key] = body.get(key, default)
        if not isinstance(flags[key], bool):
            raise BadRequest(400, f"{key} must be true or false")
    seat = body.get("seat", config.seat if config.seat < players else 0)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
        raise BadRequest(400, f"seat must be an integer 0..{players - 1}")
    values: dict[str, Any] = {"num_players": players, "bluff": flags["bluff"]}
    if players == 4:
        values["partnerships"] = flags["partnerships"]
    elif flags["partnerships"]:
        raise BadRequest(400, "partnerships need 4 players (R4)")
    if not flags["match"]:
        values["target"] = None
    elif base.target is not None:
        values["target"] = base.target
    try:
        settings = make_settings(**values)
    except (TypeError, ValueError) as err:
        raise BadRequest(400, str(err)) from None
    allowed = config.allowed_specs
    opponent = check_spec(body.get("opponent", config.opponent), "opponent", allowed)
    partner = check_spec(body.get("partner", config.partner if settings.partnerships else None), "partner", allowed)
    if partner is not None and not settings.partnerships:
        raise BadRequest(400, "partner needs 4 players in partnerships (R4)")
    return {"settings": settings, "seat": seat, "opponent": opponent, "partner": partner}


async def read_json(request: Request) -> Any:
    """The request's JSON body: ``application/json`` (415), at most ``MAX_BODY`` bytes (413),
    valid UTF-8 JSON (400)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise BadRequest(415, "the body must be application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise BadRequest(413, f"the body is larger than {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise BadRequest(413, f"the body is larger than {MAX_BODY} bytes")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadRequest(400, "the body is not valid JSON") from None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _Headers:
    """ASGI middleware adding ``SECURITY_HEADERS`` to every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (n, v) for n, v in SECURITY_HEADERS if n not in names]
            await send(message)

        await self.app(scope, receive, with_headers)


def allowed_hosts(host: str) -> list[str]:
    """The ``Host`` names a server on ``host`` answers: the address, ``localhost`` and the
    loopback addresses; any name when it listens on every interface (said by a warning)."""
    if host in ("0.0.0.0", "::", ""):
        return ["*"]
    return sorted({host, "127.0.0.1", "localhost", "[::1]"})


def create_app(config: ServerConfig, sessions: Sessions | None = None, host: str = "127.0.0.1") -> Starlette:
    """The app serving the page and its games (``app.state.sessions``).

    Args:
        config: the server's settings and game builder.
        sessions: the games (a new ``pisti_env.terminal.web.session.Sessions`` from ``config``).
        host: the address the server listens on (the ``Host`` names it answers,
            ``allowed_hosts``).
    """
    if sessions is None:
        sessions = Sessions(config.idle_seconds, config.max_games)

    def game_of(request: Request) -> WebGame:
        game = sessions.get(request.path_params["token"])
        if game is None:
            raise BadRequest(404, "no such game (a wrong token, or it expired): start a new one")
        return game

    def locked(game: WebGame, work: Callable[[], Any]) -> Any:
        if not game.lock.acquire(blocking=False):
            raise Busy("this game is answering another request")
        try:
            return work()
        finally:
            game.lock.release()

    def handle(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                return await endpoint(request)
            except BadRequest as err:
                return _error(err.status, str(err))
            except Busy as err:
                return _error(409, str(err))
            except MoveError as err:
                return _error(409, str(err))
            except OverflowError as err:
                return _error(503, str(err))
            except Exception:  # noqa: BLE001 - logged here; the page gets a generic answer
                LOG.exception("error answering %s %s", request.method, request.url.path)
                return _error(500, "internal error (logged by the server)")
        return run

    async def static(request: Request) -> Response:
        name, kind = _STATIC[request.url.path]
        body = resources.files("pisti_env.terminal.web").joinpath("static", name).read_bytes()
        return Response(body, media_type=kind)

    async def options(request: Request) -> Response:
        s = config.settings
        return JSONResponse({
            "opponents": list(dict.fromkeys(sorted(config.allowed_specs) + page_choices())), "players": list(PLAYER_COUNTS),
            "defaults": {"opponent": config.opponent, "partner": config.partner, "players": s.num_players,
                         "partnerships": s.partnerships, "match": s.target is not None, "bluff": s.bluff,
                         "seat": config.seat},
            "target": s.target if s.target is not None else make_settings().target, "delay": config.delay,
        })

    async def new_game(request: Request) -> Response:
        choices = parse_choices(await read_json(request), config)
        try:
            game = await run_in_threadpool(config.new_game, choices)
        except (ImportError, TypeError, ValueError) as err:
            raise BadRequest(400, str(err)) from None
        try:
            token = sessions.add(game)
        except OverflowError:
            game.close(reason="not started: the server was full")
            raise
        state = await run_in_threadpool(locked, game, game.start)
        return JSONResponse({"token": token, "url": f"/?game={token}", "state": state}, status_code=201)

    async def show(request: Request) -> Response:
        game = game_of(request)
        return JSONResponse(await run_in_threadpool(locked, game, game.state))

    async def move(request: Request) -> Response:
        game = game_of(request)
        body = await read_json(request)
        if not isinstance(body, dict) or set(body) != {"action"}:
            raise BadRequest(400, 'the body must be {"action": <action id>}, an action of your legal moves')
        if isinstance(body["action"], bool) or not isinstance(body["action"], int):
            raise BadRequest(400, "action must be an integer action id (R2, R29): one of your legal moves")
        return JSONResponse(await run_in_threadpool(locked, game, lambda: game.move(body["action"])))

    async def hint(request: Request) -> Response:
        game = game_of(request)
        return JSONResponse({"hint": await run_in_threadpool(locked, game, game.hint_text)})

    routes = [Route(path, handle(static), methods=["GET"]) for path in _STATIC]
    routes += [
        Route("/api/options", handle(options), methods=["GET"]),
        Route("/api/games", handle(new_game), methods=["POST"]),
        Route("/api/games/{token}", handle(show), methods=["GET"]),
        Route("/api/games/{token}/move", handle(move), methods=["POST"]),
        Route("/api/games/{token}/hint", handle(hint), methods=["POST"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(_Headers),
                                               Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts(host))])
    app.state.sessions = sessions
    app.state.config = config
    return app


def fresh_seed() -> int:
    """A new game's seed (recorded in its replay)."""
    return random.SystemRandom().randrange(2**31)


def replay_paths(first: str | None, folder: str = os.path.join("runs", "play")) -> Callable[[int], str]:
    """The replay file of each game a server starts: ``first`` (``--replay-out``) for the first,
    then ``first`` with ``-2``, ``-3`` … before its extension; without ``first``,
    ``runs/play/pisti-web-<time>-seed<seed>.jsonl``. Returns ``path(seed)``."""
    count = 0

    def path(seed: int) -> str:
        nonlocal count
        count += 1
        if first is None:
            return os.path.join(folder, f"pisti-web-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}-{count}.jsonl")
        if count == 1:
            return first
        stem, ext = os.path.splitext(first)
        return f"{stem}-{count}{ext}"

    return path
