"""Ctrl-C and SIGTERM as a pause: the run stops between two updates with a checkpoint.

A command that trains (``pisti-train``, ``pisti-exploit``) holds a `Pause` around its
work. The first SIGINT or SIGTERM only sets `Pause.requested` and says how long the update
in progress still takes where the run told it (`Pause.update_left`); the training loop
reads it between updates, lets the current update finish, writes a checkpoint and raises
`Paused`, and the command prints the line that continues the run and exits with
``128 + signal`` (130 for SIGINT, 143 for SIGTERM), the shell's convention. A second signal
stops the process at once (``os._exit``): every checkpoint is written to a temporary
directory and renamed into place complete, and a resume cuts the logs back to the checkpoint,
so stopping anywhere leaves the newest complete checkpoint to continue from.

The handlers are installed only in the main thread of the process (Python delivers signals
there) and the previous ones are put back on leaving the ``with`` block, so a command called
as a function (the tests) leaves the caller's handling as it found it.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any, Callable

from pisti_env.tools.flags import format_duration

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_code(signum: int) -> int:
    """The exit status of a command stopped by signal ``signum``: 128 + its number."""
    return 128 + int(signum)


class Paused(Exception):
    """The run stopped at a signal's request after writing its checkpoint (``checkpoint``,
    ``None`` where there was nothing to write). ``signum``: the signal; ``update``: the update
    the run stopped after."""

    def __init__(self, signum: int, update: int, checkpoint: Any = None) -> None:
        super().__init__(f"paused by {signal.Signals(signum).name} after update {update}")
        self.signum = signum
        self.update = update
        self.checkpoint = checkpoint

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)


class Pause:
    """The pause request of a command: ``with Pause(program, resume_command) as pause: ...``.

    ``program``: the command's name, for its messages. ``resume_command``: the command that
    continues the run, printed when a second signal stops the process at once (the first one
    lets the command print it after its checkpoint). `requested` turns true at the first
    signal; `signum` is that signal."""

    def __init__(self, program: str, resume_command: str | None = None) -> None:
        self.program = program
        self.resume_command = resume_command
        self.signum: int | None = None
        # Set by the run while it trains: seconds the update in progress still needs (None:
        # not known yet), said with the first signal (training.trainer.clock.RunClock.update_left).
        self.update_left: Callable[[], float | None] | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> "Pause":
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # os.write, not print: the signal may interrupt a print to the same stream.
        if self.signum is None:
            self.signum = signum
            _say(f"\n{self.program}: {signal.Signals(signum).name}: pausing after the current update{self._wait()} "
                 "(a checkpoint, then the command that continues); press Ctrl-C again to stop at once\n")
            return
        line = f"\n{self.program}: stopped at once by a second signal"
        if self.resume_command:
            line += f"; continue from the newest complete checkpoint: {self.resume_command}"
        _say(line + "\n")
        os._exit(exit_code(signum))


    def _wait(self) -> str:
        """``, which ends in about 12 s`` from `update_left`; nothing where it is not known
        (no run, the first update still running) or the run is between updates."""
        try:
            left = self.update_left() if self.update_left is not None else None
        except Exception:  # a signal handler must not fail: the pause goes on without the estimate
            left = None
        if left is None:
            return ""
        return f", which ends in about {format_duration(max(1.0, left))}" if left > 0 else ""


def _say(text: str) -> None:
    try:
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:  # stderr closed: the exit code still says it
        pass
