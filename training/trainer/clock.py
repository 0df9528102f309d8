"""The wall clock of a training run: checkpoints by time, the expected duration, the budget.

None of it changes what the run computes: a checkpoint by time is written at the same place
between two updates as one by count (writing one reads the trainer's state, it draws no random
number), and the expected duration is measured on the run's own first updates. Only a
``--budget`` run lets the clock choose something, its number of steps (`Budget`), once,
after its first update; the run records the choice in its config, so ``--steps`` with that
number repeats the run exactly. The clock also tells a Ctrl-C how long the update in progress
still takes (`RunClock.update_left`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pisti_env.tools.flags import format_duration  # the commands' one way to write a duration

if TYPE_CHECKING:
    from .train import Trainer

MEASURE_SECONDS = 5.0  # the expected duration is measured over at least this long of updates after the first
SLACK = 1.1  # a budget run plans its updates 10% slower than its first (evaluations, checkpoints, a busier CPU)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(s|sec|m|min|h)?\s*$")
_UNIT = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds of a duration written ``90s``, ``10m``, ``1.5h`` (a bare number is minutes);
    ``ValueError`` for anything else or a duration that is not positive."""
    match = _DURATION.match(str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"must be a positive duration such as 90s, 10m or 1.5h, got {text!r}")
    return float(match.group(1)) * _UNIT[match.group(2) or "m"]


@dataclass
class Budget:
    """A wall-clock budget (``pisti-train --budget``).

    Attributes:
        seconds: the whole command's time, from ``started`` (its start) to the final policy.
        started: ``time.monotonic()`` when the command started.
        size_run: choose the run's ``total_steps`` after its first update, as many whole
            updates as fit in the budget at that update's speed (`SLACK` slower), so
            that the learning rate anneals to 0 at the budget; false (``--steps`` given, or a
            resumed run): keep the run's steps and only stop at the budget.
        min_reserve: the least time kept for the end (the last checkpoint, the policy, its
            evaluation); the reserve is this or 2% of the budget, whichever is more.
    """

    seconds: float
    started: float
    size_run: bool = True
    min_reserve: float = 10.0

    @property
    def reserve(self) -> float:
        """Time kept for the end: the last checkpoint, the policy, its evaluation."""
        return max(self.min_reserve, 0.02 * self.seconds)

    def left(self, now: float) -> float:
        return self.started + self.seconds - self.reserve - now


class RunClock:
    """What a run's loop asks the clock between updates.

    ``checkpoint_minutes``: the config's time between checkpoints (0: none by time).
    ``budget``: the run's `Budget`, or ``None``."""

    def __init__(self, checkpoint_minutes: float, budget: Budget | None = None) -> None:
        self.checkpoint_seconds = 60.0 * checkpoint_minutes
        self.budget = budget
        self.begin = time.monotonic()  # the loop's start
        self.last_checkpoint = self.begin
        self.updates = 0  # updates run by this process
        self.steps = 0  # their environment steps
        self.first_done = self.begin  # when the first of them ended (the first is slower: warm-up)
        self.first_steps = 0
        self.slowest = 0.0  # the longest of them, with its logging and checkpoint
        self.last_seconds: float | None = None  # the latest of them (None: none ran yet)
        self._update_began = self.begin
        self._updating = False
        self.measured = False

    def update_begins(self) -> None:
        self._update_began = time.monotonic()
        self._updating = True

    def update_left(self) -> float | None:
        """Seconds the update in progress still needs at the latest update's pace (0 between
        updates; ``None`` during the first, whose length nothing tells yet): what a Ctrl-C
        waits for before the run checkpoints (`training.trainer.pause.Pause`)."""
        if not self._updating:
            return 0.0
        if self.last_seconds is None:
            return None
        return max(0.0, self.last_seconds - (time.monotonic() - self._update_began))

    def checkpoint_due(self) -> bool:
        """A checkpoint by time is due: ``checkpoint_minutes`` since the last one (or the start)."""
        return self.checkpoint_seconds > 0 and time.monotonic() - self.last_checkpoint >= self.checkpoint_seconds

    def checkpointed(self) -> None:
        self.last_checkpoint = time.monotonic()

    def out_of_time(self) -> bool:
        """The budget has no room for another update (at the slowest one's pace so far)."""
        if self.budget is None:
            return False
        return self.budget.left(time.monotonic()) < self.slowest

    def update_done(self, trainer: "Trainer", steps: int) -> str | None:
        """Count an update of ``steps`` environment steps; return the line that says how long
        the whole run takes: a first estimate after the first update (which warms up, so it
        runs slow), then once the updates after it have run for `MEASURE_SECONDS` (or
        the run is over) the steadier figure of their pace (``None`` otherwise). A budget run
        is sized after its first update instead (`size`), and the line says what it
        chose."""
        now = time.monotonic()
        self.updates += 1
        self.steps += steps
        self._updating = False
        self.last_seconds = now - self._update_began
        self.slowest = max(self.slowest, self.last_seconds)
        over = trainer.update >= trainer.num_updates
        if self.updates == 1:
            self.first_done, self.first_steps = now, steps
            rate = steps / (now - self.begin)
            if self.budget is not None and self.budget.size_run:
                self.measured = True
                return f"{rate:,.0f} steps/s here over the first update: " + self.size(trainer, now - self._update_began, now)
            self.measured = over
            if not over:
                return (f"{rate:,.0f} steps/s here over the first update (it warms up): "
                        + self._takes(trainer, rate, now) + "; a steadier figure follows")
        if self.measured or not over and now - self.first_done < MEASURE_SECONDS:
            return None
        self.measured = True
        if self.updates > 1:  # the pace after the first update
            measured, rate = self.updates - 1, (self.steps - self.first_steps) / (now - self.first_done)
        else:
            measured, rate = 1, self.steps / (now - self.begin)
        return f"{rate:,.0f} steps/s here over {measured} update{'s' * (measured > 1)}: " + self._takes(trainer, rate, now)

    def _takes(self, trainer: "Trainer", rate: float, now: float) -> str:
        """How long the run takes at ``rate`` steps/s: the whole of it, or the rest of a resumed one."""
        total = trainer.num_updates * trainer.config.batch_decisions
        left = (total - trainer.step) / rate
        if trainer.step <= self.steps:  # the whole run in this process
            return f"the whole run ({total:,} steps) takes about {format_duration(now - self.begin + left)}"
        return f"the rest of the run (to {total:,} steps) takes about {format_duration(left)}"

    def size(self, trainer: "Trainer", seconds: float, now: float) -> str:
        """Set a budget run's ``total_steps`` (config and trainer) to the whole updates that fit
        in the budget after its first update took ``seconds``; returns the words saying so. The
        first update's learning rate does not depend on the run's length (the annealing starts
        at the full rate), so the run is the one ``--steps`` with the chosen number makes."""
        assert self.budget is not None
        c = trainer.config
        more = max(0, math.floor(self.budget.left(now) / (seconds * SLACK)))
        updates = max(trainer.update, trainer.update + more)
        trainer.config = dataclasses.replace(c, total_steps=updates * c.batch_decisions)
        trainer.num_updates = updates
        return (f"--budget {format_duration(self.budget.seconds)} fits {updates:,} updates "
                f"({updates * c.batch_decisions:,} steps, recorded as the run's --steps)")
