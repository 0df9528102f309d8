"""What every algorithm of ``training.algorithms`` shares: its command line, its snapshots along
training and its progress line.

The learning protocol (``training.learning``, [Comparing algorithms](learning/index.md)) runs an algorithm as a command and reads nothing
from it but files; the contract is:

    python -m training.algorithms.NAME --seed S --steps N --threads 1 \\
        --snapshot-steps s1 s2 ... sK --snapshot-dir DIR [--export FILE]

trains for ``N`` environment steps (decisions made in the training games, every seat's: in
self-play each one is the learner's) and, the first time its step count reaches each ``s_i``
(at the end of the update that crosses it), writes the policy of that moment as a
``pisti-export`` file ``DIR/step-<steps, 12 digits>.pt`` ([snapshot_name][training.algorithms.recipe.snapshot_name]), the last one at
``N`` or just past it. The same seed, steps and thread count give the same files on the same
machine. Any program that keeps this contract can be rated by the protocol
(``pisti-learn --command``), in any library or language.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

# The flags' value checks are the CLIs' own (pisti_env.tools.flags), re-exported for the algorithms.
from pisti_env.tools.flags import non_negative_int, positive_int, writable_file
# The progress line is the recipes' (examples/), re-exported for the algorithms.
from training.harness.recipes import Progress  # noqa: F401

if TYPE_CHECKING:
    from torch import nn

SNAPSHOT_PATTERN = re.compile(r"^step-(\d{12})\.pt$")


def snapshot_name(steps: int) -> str:
    """``step-000000625000.pt``: a snapshot's file name, its step count zero-padded so that the
    names sort in training order."""
    return f"step-{steps:012d}.pt"


def add_algorithm_flags(parser: argparse.ArgumentParser, *, steps: int) -> None:
    """The flags every algorithm has, the same way (see the module docstring): ``--seed``,
    ``--steps`` (default ``steps``), ``--threads``, ``--device``, ``--players``,
    ``--partnerships``, ``--snapshot-steps``, ``--snapshot-dir``, ``--export``, ``--deals`` (the
    final evaluation's duplicate deals against ``random`` and ``greedy``, 0: none) and
    ``--quiet``."""
    from training.harness.recipes import export_path

    parser.add_argument("--seed", type=non_negative_int, default=0, help="seeds the deals, the networks and the sampling")
    parser.add_argument("--steps", type=positive_int, default=steps,
                        help="environment steps to train for: decisions in the training games, every seat's")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", help="torch device ('cpu', 'cuda')")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players at the table (R3)")
    parser.add_argument("--partnerships", action="store_true", help="4 players in two partnerships (R4)")
    parser.add_argument("--snapshot-steps", type=positive_int, nargs="+", default=[], metavar="STEPS",
                        help="write the policy to --snapshot-dir the first time the step count reaches each of these")
    parser.add_argument("--snapshot-dir", default=None, metavar="DIR", help="where the snapshots go (created)")
    parser.add_argument("--export", type=export_path, default=None, metavar="PATH",
                        help="also write the final policy to PATH as a pisti-export file (.pt or .onnx)")
    parser.add_argument("--deals", type=non_negative_int, default=2000,
                        help="duplicate deals of the final evaluation against random and greedy (0: none)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def check_algorithm_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The combinations argparse cannot check, as ``parser.error`` (one line, exit 2)."""
    if args.partnerships and args.players != 4:
        parser.error("--partnerships needs --players 4 (R4)")
    if args.snapshot_steps and args.snapshot_dir is None:
        parser.error("--snapshot-steps needs --snapshot-dir")
    if sorted(set(args.snapshot_steps)) != list(args.snapshot_steps):
        parser.error(f"--snapshot-steps must increase, got {args.snapshot_steps}")
    if args.snapshot_steps and args.snapshot_steps[-1] > args.steps:
        parser.error(f"--snapshot-steps go up to {args.snapshot_steps[-1]:,}, past --steps {args.steps:,}")
    if args.snapshot_dir is not None:
        writable_file(os.path.join(args.snapshot_dir, snapshot_name(0)))  # checked now, not after training


def game_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The training game of the flags: single hands (``target=None``) for ``--players``."""
    return {"num_players": args.players, "partnerships": args.partnerships, "target": None}


class Snapshots:
    """Writes the policy at the steps the protocol asked for (see the module docstring).

    Args:
        steps: the step counts to snapshot at, increasing.
        directory: where the files go (``None``: no snapshots).
        settings: the game the policy plays (``make_settings`` keywords).
        name: the policy's name in the file's metadata; ``recipe``: the module that trained it.
        update_steps: the steps one update takes: two targets inside one update would give two
            snapshots of the same policy, so that is refused (``ValueError``) up front.
    """

    def __init__(self, steps: Sequence[int], directory: str | None, settings: Mapping[str, Any], name: str,
                 recipe: str, update_steps: int) -> None:
        self.pending = list(steps)
        self.directory = Path(directory) if directory is not None else None
        self.settings, self.name, self.recipe = dict(settings), name, recipe
        gaps = [b - a for a, b in zip(self.pending, self.pending[1:])]
        if gaps and min(gaps) < update_steps:
            raise ValueError(f"snapshots {min(gaps):,} steps apart, but one update takes {update_steps:,} steps: "
                             "ask for fewer snapshots or smaller updates")
        if self.directory is not None and self.pending:
            self.directory.mkdir(parents=True, exist_ok=True)
        self.written: list[str] = []

    def after_update(self, network: "nn.Module", steps: int, reads_mask: bool = False) -> None:
        """Call after each update with the policy (``observation -> logits``, or with
        ``reads_mask`` ``(observation, mask) -> logits``) and the steps so far."""
        if not self.pending or steps < self.pending[0]:
            return
        while self.pending and steps >= self.pending[0]:
            self.pending.pop(0)
        self.written.append(self.write(network, steps, reads_mask))

    def write(self, network: "nn.Module", steps: int, reads_mask: bool = False, path: str | None = None) -> str:
        """Export ``network`` as ``DIR/step-N.pt`` (or to ``path``); returns the path."""
        from training.harness.recipes import export_policy_file

        target = path or str(self.directory / snapshot_name(steps))
        with contextlib.redirect_stdout(io.StringIO()):  # its "exported the policy to" line: the progress says enough
            return export_policy_file(network, target, settings=self.settings, name=self.name, recipe=self.recipe,
                                      steps=steps, reads_mask=reads_mask)
