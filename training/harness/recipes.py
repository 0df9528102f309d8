"""What every recipe in ``examples/`` shares: its command line (the `--help` text from its
docstring, [`recipe_parser`][training.harness.recipes.recipe_parser], and the flags every recipe
has), its progress while it trains ([`Progress`][training.harness.recipes.Progress]: how far,
how fast, and how long is left, as ``pisti-train`` says it), what it prints when it is done (how
fast it trained, with the load average, since other jobs slow a shared CPU, and the trained
player's margins over the baselines on duplicate deals,
[`baseline_margins`][training.harness.evaluate.baseline_margins]), and ``--export``: the trained policy as a
``pisti-export`` file that ``pisti-benchmark`` plays without the library
(`export_policy_file`)."""

from __future__ import annotations

import argparse
import copy
import math
import os
import re
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, TextIO

from pisti_env.tools.flags import format_duration, terminal_text, writable_file

if TYPE_CHECKING:
    from torch import nn

EXPORT_HELP = ("also write the trained policy to PATH as a pisti-export file (.pt: TorchScript, .onnx: ONNX) "
               "that pisti-benchmark and make_player play without the library")


def recipe_parser(doc: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A recipe's argument parser, its ``--help`` text from the recipe's docstring ``doc``: the
    first paragraph whole (not its first line: that stopped mid-sentence) and the example
    commands that follow it, each on its own line; cross-references shown as their names.
    ``kwargs`` go to ``argparse.ArgumentParser``."""
    blocks = re.split(r"\n\s*\n", textwrap.dedent(doc).strip())
    plain = [terminal_text(block).replace("``", "") for block in blocks]
    text = textwrap.fill(" ".join(plain[0].split()), 100, break_on_hyphens=False)
    commands = [block for block in plain[1:3] if all(line.startswith("    ") for line in block.splitlines())]
    if commands:
        text += "\n\nexamples:\n" + textwrap.indent(textwrap.dedent(commands[0]), "  ")
    if "description" in kwargs:
        raise TypeError("recipe_parser makes the description from doc: no description argument")
    return argparse.ArgumentParser(description=text, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


PROGRESS_SECONDS = 20.0  # between two progress lines: about 30 in a 10-minute run


class Progress:
    """A recipe's progress while it trains, as ``pisti-train`` reports its own: after the first
    update, then every ``every`` seconds, a line on ``stream`` with the steps so far, their pace
    and the time left: to ``steps`` at that pace or to the end of the ``seconds`` budget,
    whichever comes first, e.g. ``sb3_maskable_ppo: 409,600 steps in 22 s (18,994 steps/s);
    about 8 s left (the 30 s budget)``.

    Args:
        name: the recipe, the lines' prefix.
        steps: the most steps the run trains (``None``: no such bound).
        seconds: its wall-clock budget (``None``, 0 or infinite: none).
        unit: what a step counts (``"plays"``, ``"env steps"``).
        every: seconds between two lines after the first.
        stream: where the lines go (default: standard error, where ``pisti-train`` reports).
        enabled: false prints nothing (a command's ``--quiet``).

    The clock starts when the object is made: make it just before training starts. The recipes
    and the learning algorithms' commands (`training.algorithms.recipe`) share it.
    """

    def __init__(self, name: str, steps: int | None = None, seconds: float | None = None, unit: str = "steps",
                 every: float = PROGRESS_SECONDS, stream: TextIO | None = None, enabled: bool = True) -> None:
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
            raise ValueError(f"steps must be a positive int or None, got {steps!r}")
        if seconds is not None and not seconds >= 0:
            raise ValueError(f"seconds must be >= 0 or None, got {seconds!r}")
        if not every >= 0:
            raise ValueError(f"every must be >= 0 seconds, got {every!r}")
        self.name, self.steps, self.unit, self.every = name, steps, unit, every
        self.seconds = seconds if seconds and math.isfinite(seconds) else None
        self.stream, self.enabled = stream, enabled
        self.start = time.monotonic()
        self._last: float | None = None  # when the last line was printed

    def update(self, done: int, metrics: Mapping[str, float] | None = None, force: bool = False) -> str | None:
        """``done`` steps trained so far (after an update): print the line if it is due (the
        first update's, ``every`` seconds after the last, or ``force``), ``metrics`` after it
        as ``name=value``; returns it, ``None`` if not due (or not ``enabled``)."""
        now = time.monotonic()
        if not self.enabled or done <= 0 or self._last is not None and now - self._last < self.every and not force:
            return None
        self._last = now
        line = self.line(done, now - self.start) + "".join(f" {k}={v:.3g}" for k, v in (metrics or {}).items())
        print(line, file=self.stream or sys.stderr, flush=True)
        return line

    def line(self, done: int, elapsed: float) -> str:
        """The progress line after ``done`` steps in ``elapsed`` seconds."""
        rate = done / max(elapsed, 1e-9)
        text = f"{self.name}: {done:,} {self.unit} in {format_duration(elapsed)} ({rate:,.0f} {self.unit}/s)"
        left = []  # (seconds left, what ends the run then)
        if self.steps is not None:
            left.append((max(0.0, (self.steps - done) / rate), f"to {self.steps:,} {self.unit}"))
        if self.seconds is not None:
            left.append((max(0.0, self.seconds - elapsed), f"the {format_duration(self.seconds)} budget"))
        if not left:
            return text
        seconds, end = min(left)
        return text + f"; about {format_duration(seconds)} left ({end})"


def print_training(steps: int, seconds: float, unit: str = "steps", note: str = "") -> None:
    """``trained 3,830,000 steps in 600 s (6,383 steps/s; load average 4.1 on 2 CPUs)`` and
    ``note`` after it; ``unit`` names what ``steps`` counts (``"plays"``, ``"env steps"``)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(f"trained {steps:,} {unit} in {seconds:.0f} s ({steps / max(seconds, 1e-9):,.0f} {unit}/s; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs){note}", flush=True)


def print_margins(margins: dict[str, dict[str, float]], deals: int) -> None:
    """[`baseline_margins`][training.harness.evaluate.baseline_margins]' result, a line per baseline:
    ``vs greedy: +4.77 ± 0.45 points per hand (2000 duplicate deals)``."""
    for baseline, diff in margins.items():
        print(f"vs {baseline}: {diff['mean']:+.2f} ± {diff['half_width']:.2f} points per hand ({deals} duplicate deals)", flush=True)


def add_run_flags(parser: argparse.ArgumentParser, *, seed: int = 0, save: str = "where to save the trained weights",
                  threads: str = "--threads", export: bool = False) -> None:
    """The flags every recipe has, the same way: ``--deals`` (duplicate deals per evaluation, 0:
    none), ``--seed``, torch's thread count (``threads`` names the flag), ``--save`` (``save``
    says what it saves) and, for a recipe that writes one (``export``), ``--export PATH``
    (`export_path`, checked before training; `export_policy_file` writes it)."""
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per evaluation (0: none)")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument(threads, type=int, default=1, help="torch CPU threads (small networks gain nothing from more)")
    parser.add_argument("--save", default=None, help=save)
    if export:
        parser.add_argument("--export", type=export_path, default=None, metavar="PATH", help=EXPORT_HELP)


def export_path(text: str) -> str:
    """An argparse ``type=`` for ``--export``: a file name ending ``.pt`` or ``.onnx`` that can
    be written (`pisti_env.tools.flags.writable_file`), so a bad path fails at once, not after
    the training budget."""
    from training.benchmark.export import format_of  # torch: only for a recipe that exports

    try:
        format_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return writable_file(text)


def export_policy_file(network: "nn.Module", path: str, *, settings: Mapping[str, Any], name: str, recipe: str,
                       steps: int, reads_mask: bool = False) -> str:
    """Write a recipe's trained actor to ``path`` as a ``pisti-export`` file (the format by the
    suffix: ``.pt`` TorchScript, ``.onnx`` ONNX), played by argmax, as the recipes evaluate.

    Args:
        network: the actor's logits: ``observation float32[B, obs] -> logits [B, actions]``,
            where ``observation`` is ``pisti_v0``'s flat ``observation`` vector, exactly what
            an `ExportedPolicy` feeds it; with
            ``reads_mask``, ``network(observation, action_mask)`` (the mask a bool tensor).
            A copy is exported (on the CPU, in evaluation mode); the logits of illegal actions
            need not be masked: the file masks them.
        settings: the game it was trained for (game settings as ``make_settings`` takes them).
        name: the policy's name (the benchmark's label); ``recipe``: the script that trained
            it; ``steps``: the decisions it trained on (recorded in the file's ``source``).

    Returns the path written (atomically: see `training.benchmark.export.write_policy_file`).
    """
    from pisti_env import make_settings
    from pisti_env.views.observation import ObservationLayout
    from training.benchmark.export import MaskedLogProbs, format_of, policy_contract, write_policy_file

    game = make_settings(**settings)
    contract = policy_contract(game, ObservationLayout(game).size, name, {"recipe": recipe, "steps": int(steps)}, play="argmax")
    module = MaskedLogProbs(copy.deepcopy(network).float().cpu(), reads_mask=reads_mask).eval()
    written = write_policy_file(module, contract, format_of(path), path)
    print(f"exported the policy to {written}", flush=True)
    return written


def report(steps: int, seconds: float, deals: int, margins: Callable[[], dict[str, dict[str, float]]],
           unit: str = "steps", note: str = "") -> dict[str, dict[str, float]] | None:
    """`print_training`, then (``deals`` > 0) ``margins()`` printed by `print_margins`
    and returned."""
    print_training(steps, seconds, unit, note)
    if not deals:
        return None
    results = margins()
    print_margins(results, deals)
    return results
