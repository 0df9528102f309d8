"""One person's game at the terminal: the loop of ``pisti-play``.

`PlaySession` seats the person in one seat and players from the registry (or any
[`Player`][pisti_env.agents.base.Player]) in the others, records the game ([`GameRecorder`][pisti_env.tools.replay.GameRecorder])
and shows, from the person's [`SeatView`][pisti_env.SeatView] only: the screen before
each of the person's moves, every move as it happens (with an optional delay), each hand's
score breakdown and the result. Input comes from ``read_line`` (``input`` at a terminal), so the
loop runs the same under a test.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from rich.console import Console
from rich.text import Text

from ..agents import Player, SeatView
from ..tools.replay import GameRecorder, Record
from ..rules.settings import Settings
from .commands import HELP, HINT, LEGAL, QUIT, CommandError, help_text, legal_moves_text, parse_command, resolve_action
from .events import describe_move, hand_summary, result_line, snapshot
from .screen import render_screen, side_names

PROMPT_MOVE = "Your move (card, number, ? legal, h hint, q quit): "
PROMPT_ANSWER = "Answer the claim (b believe, c challenge, h hint, q quit): "
PROMPT_QUIT = "Really quit? The game is recorded as unfinished. [y/N]: "


class PlayerFailed(RuntimeError):
    """Another seat's player made a move the game refuses, or failed: the game is over,
    recorded as unfinished with the reason."""


class PlaySession:
    """A person in ``seat`` against ``players`` in the other seats.

    Args:
        settings: the game's settings (any variant, a match or a single hand).
        seat: the person's seat.
        players: a player per seat; the person's entry is ignored (``None``).
        names: a display name per seat.
        console: where everything is printed.
        read_line: reads one line of input after printing its prompt (``input``); ``EOFError``
            leaves the game like ``q``.
        sink: receives the replay records ([`GameRecorder`][pisti_env.tools.replay.GameRecorder]).
        hint: answers ``h`` with a line of text for the person's view, or ``None`` (no hints).
        delay: seconds to wait after each move of another seat.
        seed, deck, dealer: the game's (see [`Game`][pisti_env.game.Game]).
        meta: kept in the replay's ``game`` record.
    """

    def __init__(
        self,
        settings: Settings,
        seat: int,
        players: Sequence[Player | None],
        names: Sequence[str],
        console: Console,
        read_line: Callable[[str], str],
        sink: Callable[[Record], None],
        *,
        hint: Callable[[SeatView], str] | None = None,
        delay: float = 0.0,
        seed: int | None = None,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        specs: Sequence[str] | None = None,
        meta: dict | None = None,
    ) -> None:
        n = settings.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat}")
        if len(players) != n or len(names) != n:
            raise ValueError(f"players and names need one entry per seat ({n})")
        self.settings, self.seat, self.players, self.names = settings, seat, list(players), list(names)
        self.console, self.read_line, self.hint, self.delay = console, read_line, hint, delay
        specs = list(specs) if specs is not None else list(names)
        self.recorder = GameRecorder(settings, specs, sink, seed=seed, deck=deck, dealer=dealer, meta=meta)
        self.game = self.recorder.game
        for s, player in enumerate(self.players):
            if s != seat and player is None:
                raise ValueError(f"seat {s} needs a player")
        self.sides = side_names(self.names, SeatView(self.game, seat))

    def view(self) -> SeatView:
        """The person's view of the game now."""
        return SeatView(self.game, self.seat)

    def print(self, text: Text | str) -> None:
        self.console.print(text, highlight=False, markup=False, emoji=False)

    def run(self) -> bool:
        """Play to the game's end, or until the person quits; returns whether the game ended."""
        game, seat = self.game, self.seat
        self.print(render_screen(self.view(), self.names))
        while not game.done:
            mover = game.turn
            before = snapshot(self.view())
            if mover == seat:
                action = self._ask()
                if action is None:
                    self.recorder.finish()
                    self.print("You left the game; it is recorded as unfinished.")
                    return False
                self.recorder.step(action)
            else:
                action = self._other_moves(mover)
            after = self.view()
            self.print(describe_move(before, after, mover, action, self.names, viewer=seat))
            if after.hands_completed > before.hands_completed:
                self.print(hand_summary(game.last_hand_result, self.sides, game.match_scores,  # type: ignore[arg-type]
                                        game.hands_completed, self.settings.target))
            if mover != seat and self.delay > 0:
                time.sleep(self.delay)
            if not game.done and game.turn == seat:
                self.print(render_screen(self.view(), self.names))
        self.print(result_line(game.winner, self.sides, game.match_scores, self.settings.target is not None))
        return True

    def _other_moves(self, mover: int) -> int:
        """Seat ``mover``'s player moves. A player that fails (an illegal card, an error of
        its own: an exported file, any player) ends the game: the replay is closed with an
        ``end`` record marking it unfinished and why, and `PlayerFailed` names it."""
        player = self.players[mover]
        try:
            action = player.act(SeatView(self.game, mover))  # type: ignore[union-attr]
        except Exception as error:  # noqa: BLE001 - another seat's code: any failure ends the game cleanly
            self._abort(mover, f"failed to choose a move ({type(error).__name__}: {error})")
        try:
            self.recorder.step(action)  # the game and the record are unchanged by a refused action
        except (ValueError, TypeError) as error:
            self._abort(mover, f"played an action the game refuses: {error}")
        return action

    def _abort(self, mover: int, what: str) -> None:
        reason = f"seat {mover} ({self.names[mover]}) {what}"
        self.recorder.finish(reason=reason)
        raise PlayerFailed(reason) from None

    def _ask(self) -> int | None:
        """The person's action, asked until it is a legal one; ``None`` when they quit."""
        view = self.view()
        prompt = PROMPT_ANSWER if view.pending_claim is not None else PROMPT_MOVE
        while True:
            try:
                text = self.read_line(prompt)
            except EOFError:
                return None
            try:
                command = parse_command(text)
                if command.kind == LEGAL:
                    self.print(legal_moves_text(view))
                elif command.kind == HELP:
                    self.print(help_text(view.settings.bluff))
                elif command.kind == HINT:
                    self.print("Hint: " + (self.hint(view) if self.hint else "no hint policy in this game."))
                elif command.kind == QUIT:
                    try:
                        sure = self.read_line(PROMPT_QUIT).strip().lower()
                    except EOFError:
                        return None
                    if sure in ("y", "yes"):
                        return None
                    self.print("Going on.")
                else:
                    return resolve_action(command, view)
            except CommandError as err:
                self.print(Text(f"Not allowed: {err}.", style="yellow"))
