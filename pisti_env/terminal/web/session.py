"""The games a ``pisti-play --web`` server holds: one ``WebGame`` per person's game, kept
by ``Sessions`` under an unguessable token, expired when idle.

A ``WebGame`` is ``pisti_env.terminal.session.PlaySession``'s loop turned inside
out for a web page: the person's move comes in (checked by the engine), then the other seats'
players move until it is the person's turn again or the game is over, and the answer is the
person's ``pisti_env.agents.view.SeatView`` after each of those moves
(``pisti_env.terminal.web.views.seat_state``). The game is recorded as it is played
(``pisti_env.tools.replay.GameRecorder``, one JSON-lines replay file per game, flushed per
record); a game that expires, fails or is closed before its end is recorded as unfinished.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import IO, Any, Callable, Sequence

from ...agents import Player, SeatView
from ...tools.replay import GameRecorder, Record, line_writer
from ...rules import Settings
from ..events import describe_move, snapshot
from ...drawing.scene import side_names
from .views import hand_breakdown, seat_state, table_picture

DEFAULT_IDLE_SECONDS = 30 * 60  # an idle game is dropped after this long (recorded as unfinished)
DEFAULT_MAX_GAMES = 64  # games held at once; creating one more is refused until one ends or expires
TOKEN_BYTES = 24  # secrets.token_urlsafe(24): 32 characters, 192 random bits


class MoveError(ValueError):
    """A move the game refuses (not the person's turn, not a legal action): nothing changed."""


class GameOver(MoveError):
    """A move after the game's end."""


class Busy(RuntimeError):
    """Another request of the same game is being answered."""


class WebGame:
    """One person's game at the web page.

    Args:
        settings: the game's settings.
        seat: the person's seat.
        players: a player per seat, ``None`` for the person's.
        names: a display name per seat (``"you"`` for the person's).
        specs: the player spec per seat, for the replay.
        stream: the open replay file (closed by ``close``).
        hint: answers a hint for the person's view with a line of text, or ``None``.
        seed, deck, dealer: the game's (see ``pisti_env.game.Game``).
        meta: kept in the replay's ``game`` record.
    """

    def __init__(self, settings: Settings, seat: int, players: Sequence[Player | None], names: Sequence[str],
                 specs: Sequence[str], stream: IO[str], *, hint: Callable[[SeatView], str] | None = None,
                 seed: int | None = None, deck: Sequence[int | str] | None = None, dealer: int | None = None,
                 meta: dict | None = None) -> None:
        n = settings.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat}")
        if len(players) != n or len(names) != n:
            raise ValueError(f"players and names need one entry per seat ({n})")
        for s, player in enumerate(players):
            if s != seat and player is None:
                raise ValueError(f"seat {s} needs a player")
        self.settings, self.seat, self.players, self.names = settings, seat, list(players), list(names)
        self.stream, self.hint = stream, hint
        self.lock = threading.Lock()
        self.last_used = time.monotonic()
        self.breakdowns: list[dict[str, Any]] = []
        self.end: Record | None = None
        self.failure: str | None = None
        self._write = line_writer(stream)
        self.recorder = GameRecorder(settings, list(specs), self._record, seed=seed, deck=deck, dealer=dealer,
                                     meta=meta)
        self.game = self.recorder.game
        self.sides = side_names(self.names, self.view())
        self.last_line: str | None = None

    def _record(self, record: Record) -> None:
        """The recorder's sink: the replay file, and the public records the page shows (a
        finished hand's breakdown, the game's end; R30)."""
        self._write(record)
        self.stream.flush()
        if record["type"] == "hand_end":
            self.breakdowns.append(hand_breakdown(record, self.sides))
        elif record["type"] == "end":
            self.end = record

    def view(self) -> SeatView:
        """The person's view now."""
        return SeatView(self.game, self.seat)

    @property
    def done(self) -> bool:
        return self.end is not None

    def state(self, frames: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
        """The person's state now (``pisti_env.terminal.web.views.seat_state``)."""
        winner = None if self.end is None else self.end.get("winner")
        state = seat_state(self.view(), self.names, frames=frames, breakdowns=self.breakdowns, winner=winner,
                           last_move=self.last_line)
        state["failure"] = self.failure
        return state

    def _step(self, action: int, mover: int, frames: list[dict[str, str]]) -> None:
        before = snapshot(self.view())
        self.recorder.step(action)
        after = self.view()
        self.last_line = describe_move(before, after, mover, action, self.names, viewer=self.seat).plain
        frames.append({"line": self.last_line, "svg": table_picture(after, self.names, self.last_line)})

    def start(self) -> dict[str, Any]:
        """The other seats play until the person's turn (they may start); the state after."""
        frames: list[dict[str, str]] = []
        self._others(frames)
        return self.state(frames)

    def move(self, action: Any) -> dict[str, Any]:
        """The person plays ``action`` (an action id, R2/R29), then the other seats play until
        it is the person's turn again or the game is over.

        Raises ``GameOver`` after the game's end, ``MoveError`` for an action that is
        not an int or not one of the seat's legal actions now (naming them); the game is then
        unchanged.
        """
        if self.done:
            raise GameOver("the game is over: start a new one")
        if isinstance(action, bool) or not isinstance(action, int):
            raise MoveError(f"action must be an integer action id, got {type(action).__name__}")
        view = self.view()
        if not view.is_my_turn:
            raise MoveError("it is not your turn")
        legal = view.legal_actions
        if action not in legal:
            raise MoveError(f"action {action} is not legal now; legal actions: {legal}")
        frames: list[dict[str, str]] = []
        self._step(action, self.seat, frames)
        self._others(frames)
        return self.state(frames)

    def _others(self, frames: list[dict[str, str]]) -> None:
        game = self.game
        while not game.done and game.turn != self.seat:
            mover = game.turn
            player = self.players[mover]
            try:
                action = player.act(SeatView(game, mover))  # type: ignore[union-attr]
                self._step(action, mover, frames)
            except Exception as error:  # noqa: BLE001 - another seat's code: any failure ends the game cleanly
                self.failure = f"seat {mover} ({self.names[mover]}) failed: {type(error).__name__}"
                self.recorder.finish(reason=f"{self.failure}: {error}")
                return
        if game.done and self.end is None:  # pragma: no cover - the recorder writes the end itself
            self.recorder.finish()

    def hint_text(self) -> str:
        """The hint policy's move for the person's view (R30: it reads the view only)."""
        if self.hint is None:
            return "No hint policy in this game."
        view = self.view()
        if self.done or not view.is_my_turn:
            raise MoveError("a hint is for your turn")
        return self.hint(view)

    def close(self, reason: str | None = None) -> None:
        """Close the replay file; a game left before its end is recorded as unfinished."""
        if self.end is None:
            self.recorder.finish(reason=reason)
        self.stream.close()


class Sessions:
    """The server's games by token; thread-safe.

    Args:
        idle_seconds: a game unused this long is closed and dropped (``expire``).
        max_games: games held at once (``add`` refuses one more).
        clock: seconds, monotonic (a test's own clock).
    """

    def __init__(self, idle_seconds: float = DEFAULT_IDLE_SECONDS, max_games: int = DEFAULT_MAX_GAMES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if idle_seconds <= 0 or max_games <= 0:
            raise ValueError("idle_seconds and max_games must be positive")
        self.idle_seconds, self.max_games, self.clock = idle_seconds, max_games, clock
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def add(self, game: WebGame) -> str:
        """Keep ``game`` under a new unguessable token (``secrets.token_urlsafe``) and return it.
        Raises ``OverflowError`` when ``max_games`` are held already (after expiring idle ones)."""
        self.expire()
        with self._lock:
            if len(self._games) >= self.max_games:
                raise OverflowError(f"this server holds {self.max_games} games already; finish or leave one first")
            token = secrets.token_urlsafe(TOKEN_BYTES)
            game.last_used = self.clock()
            self._games[token] = game
        return token

    def get(self, token: Any) -> WebGame | None:
        """The game of ``token`` (its idle clock restarted), or ``None`` for an unknown or
        expired token."""
        self.expire()
        if not isinstance(token, str):
            return None
        with self._lock:
            game = self._games.get(token)
            if game is not None:
                game.last_used = self.clock()
        return game

    def expire(self) -> int:
        """Close and drop the games idle for ``idle_seconds``; returns how many."""
        now = self.clock()
        with self._lock:
            old = [t for t, g in self._games.items() if now - g.last_used >= self.idle_seconds and not g.lock.locked()]
            gone = [self._games.pop(t) for t in old]
        for game in gone:
            with game.lock:
                game.close(reason="the game expired: idle too long")
        return len(gone)

    def close_all(self) -> None:
        """Close every game (the server stops)."""
        with self._lock:
            gone = list(self._games.values())
            self._games.clear()
        for game in gone:
            with game.lock:
                game.close(reason="the server stopped")
