"""The batched engine of the working tree against the one of an earlier commit, in one process.

On a shared machine steps/s move by tens of percent from hour to hour, so a change to the
engine is judged by a same-run ratio: this script imports the commit's ``pisti_env`` (taken
with ``git archive`` into a temporary directory, under another package name) beside the working
tree's, and plays both under random legal play in alternating slices (``--rounds`` rounds of
``--steps`` batch steps each, after a warm-up), so a burst of load elsewhere hits them alike.
For each configuration it prints both engines' steps/s (total steps over total time of their
slices) and the ratio new / old.

The policy is ``bench_batched.random_legal_actions`` for both; observations are written into a
buffer, as in ``bench_batched.py``.

Usage: ``python benchmarks/bench_batched_ab.py REV [--rounds 10] [--steps 48]
[--configs 2:plain:uint8:4096 2:bluff:float:256 ...]`` (a configuration is
players:variant:format:batch; the default set covers 2 and 4 players, plain and bluff).
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from types import ModuleType

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_batched import random_legal_actions  # noqa: E402

import pisti_env.batched  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OLD_PACKAGE = "pisti_env_at_rev"  # the commit's pisti_env, imported under this name
DEFAULT_CONFIGS = (
    "2:plain:uint8:4096", "2:plain:float:4096", "2:plain:uint8:256", "2:plain:float:256", "4:plain:uint8:4096",
    "2:bluff:uint8:256", "2:bluff:uint8:4096", "2:bluff:float:4096", "4:bluff:float:256", "4:bluff:uint8:4096",
)


def import_at(rev: str, into: Path) -> ModuleType:
    """``pisti_env.batched`` as of commit ``rev``, imported from ``into`` as
    ``OLD_PACKAGE.batched`` (the package's own imports are relative, so the name does not matter
    to it)."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "pisti_env"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "pisti_env").rename(into / OLD_PACKAGE)
    sys.path.insert(0, str(into))
    return importlib.import_module(f"{OLD_PACKAGE}.batched")


class Runner:
    """One engine under random legal play, resumable in slices."""

    def __init__(self, batched: ModuleType, players: int, variant: str, fmt: str, batch: int) -> None:
        self.engine = batched.BatchedPisti(batch, seed=0, num_players=players, target=None, bluff=variant == "bluff")
        self.buffer = self.engine.observation_buffer(fmt)
        self.format, self.batch = fmt, batch
        self.generator = torch.Generator().manual_seed(0)
        self.out = self.engine.reset()
        self.steps, self.seconds = 0, 0.0

    def run(self, steps: int) -> None:
        engine, buffer, fmt, generator, out = self.engine, self.buffer, self.format, self.generator, self.out
        start = time.perf_counter()
        for _ in range(steps):
            out = engine.step(random_legal_actions(out.action_mask, generator), buffer, observation_format=fmt)
        self.seconds += time.perf_counter() - start
        self.steps += steps * self.batch
        self.out = out

    @property
    def rate(self) -> float:
        return self.steps / self.seconds


def parse_config(text: str) -> tuple[int, str, str, int]:
    try:
        players, variant, fmt, batch = text.split(":")
        config = int(players), variant, fmt, int(batch)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a configuration is players:variant:format:batch, got {text!r}") from None
    if config[1] not in ("plain", "bluff") or config[2] not in ("float", "uint8"):
        raise argparse.ArgumentTypeError(f"variant plain|bluff and format float|uint8, got {text!r}")
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the commit to compare with (anything git accepts)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=48, help="batch steps per slice")
    parser.add_argument("--configs", type=parse_config, nargs="+", default=[parse_config(c) for c in DEFAULT_CONFIGS])
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as directory:
        old = import_at(args.rev, Path(directory))
        print(f"batched engine, working tree (new) vs {args.rev} (old), 1 thread, {args.rounds} rounds of {args.steps} steps")
        for players, variant, fmt, batch in args.configs:
            runners = [Runner(old, players, variant, fmt, batch), Runner(pisti_env.batched, players, variant, fmt, batch)]
            for runner in runners:  # warm-up, not counted
                runner.run(5)
                runner.steps, runner.seconds = 0, 0.0
            for _ in range(args.rounds):
                for runner in runners:
                    runner.run(args.steps)
            before, after = (runner.rate for runner in runners)
            print(f"{players} players {variant:5} {fmt:5} B={batch:<5} old {before:>11,.0f}  new {after:>11,.0f}  "
                  f"new/old {after / before:.2f}", flush=True)


if __name__ == "__main__":
    main()
