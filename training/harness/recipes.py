"""What every recipe in ``examples/`` shares: the flags every recipe has, what it prints when it
is done (how fast it trained, with the load average, since other jobs slow a shared CPU, and
the trained player's margins over the baselines on duplicate deals,
[`baseline_margins`][training.harness.evaluate.baseline_margins]), and ``--export``: the trained policy as a
``pisti-export`` file that ``pisti-benchmark`` plays without the library
(`export_policy_file`)."""

from __future__ import annotations

import argparse
import copy
import math
import os
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pisti_env.tools.flags import writable_file

if TYPE_CHECKING:
    from torch import nn

EXPORT_HELP = ("also write the trained policy to PATH as a pisti-export file (.pt: TorchScript, .onnx: ONNX) "
               "that pisti-benchmark and make_player play without the library")


def print_training(steps: int, seconds: float, unit: str = "steps", note: str = "") -> None:
    """``trained 3,830,000 steps in 600 s (6,383 steps/s; load average 4.1 on 2 CPUs)`` and
    ``note`` after it; ``unit`` names what ``steps`` counts (``"plays"``, ``"env steps"``)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    print(f"trained {steps:,} {unit} in {seconds:.0f} s ({steps / max(seconds, 1e-9):,.0f} steps/s; "
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
