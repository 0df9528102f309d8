"""The algorithms the protocol knows by name, and how any other is added: a command.

Each algorithm is a program that keeps the contract of [training.algorithms.recipe][]: given
``--seed``, ``--steps``, ``--threads``, ``--snapshot-steps`` and ``--snapshot-dir`` it trains
and writes a ``pisti-export`` file per snapshot. The protocol appends those flags (and ``--deals
0``: it rates the snapshots itself; the command's progress lines go to the seed's log) to the
algorithm's command, so an algorithm of
another library or language joins the comparison with ``pisti-learn --command "python
my_algo.py --lr 3e-4" --name my-algo``.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence


@dataclass(frozen=True)
class Algorithm:
    """An algorithm the protocol can run.

    Attributes:
        name: its name in results files and tables.
        family: the algorithm family it stands for in the comparison.
        description: one line for the docs.
        command: the program and its fixed arguments; ``python`` stands for this interpreter.
    """

    name: str
    family: str
    description: str
    command: tuple[str, ...]
    renamed: tuple[tuple[str, str | None], ...] = ()

    def argv(self, seed: int, steps: int, snapshot_steps: Sequence[int], snapshot_dir: str,
             threads: int = 1, device: str = "cpu", players: int = 2, partnerships: bool = False) -> list[str]:
        """The command line of one seed's training run (``renamed``: the contract's flags that
        this program spells otherwise, as ``(contract's, program's)`` pairs; ``None``: a
        contract's switch the program does not have)."""
        program = [sys.executable if part == "python" else part for part in self.command]
        extra = ["--partnerships"] if partnerships else []
        names = dict(self.renamed)
        if partnerships and names.get("--partnerships", "") is None:
            raise ValueError(f"{self.name} does not play partnerships")
        flags = [*program, "--seed", str(seed), "--steps", str(steps), "--threads", str(threads), "--device", device,
                 "--players", str(players), *extra, "--snapshot-steps", *map(str, snapshot_steps),
                 "--snapshot-dir", snapshot_dir, "--deals", "0"]
        return [names.get(word, word) if word.startswith("--") else word for word in flags]

    @property
    def command_text(self) -> str:
        """The command as a person types it (a path inside this checkout relative to its root)."""
        root = str(ROOT) + "/"
        return shlex.join(part[len(root):] if part.startswith(root) else part for part in self.command)


def _module(name: str) -> tuple[str, ...]:
    return ("python", "-m", f"training.algorithms.{name}")


# The CleanRL-style recipe lives in examples/ (a checkout's, not the wheel's), with its own flag names.
ROOT = Path(__file__).resolve().parents[2]
CLEANRL = str(ROOT / "examples" / "cleanrl_ppo_vector.py")


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("ppo", "policy gradient", "self-play PPO, the project's trainer with pisti-train's defaults",
                  _module("ppo")),
        Algorithm("cleanrl-ppo", "policy gradient",
                  "CleanRL-style single-file PPO on the vector env, learning against greedy (examples/)",
                  ("python", CLEANRL, "--minutes", "0"),
                  (("--steps", "--total-timesteps"), ("--players", "--num-players"), ("--deals", "--eval-deals"),
                   ("--partnerships", None))),
        Algorithm("dmc", "Monte-Carlo value", "Deep Monte-Carlo as in DouZero: Q(s, a) regressed on whole-hand returns",
                  _module("dmc")),
        Algorithm("dqn", "value-based off-policy", "masked Double DQN with a replay buffer, self-play",
                  _module("dqn")),
        Algorithm("nfsp", "fictitious self-play", "Neural Fictitious Self-Play: a DQN best response and an average policy",
                  _module("nfsp")),
    )
}


def algorithm_names() -> list[str]:
    return list(ALGORITHMS)


def resolve_algorithm(name: str, command: str | None = None) -> Algorithm:
    """The algorithm ``name``; with ``command``, a new one of that name running that command
    (``ValueError`` if the name is taken by a built-in one, or the command is empty)."""
    if not isinstance(name, str) or not name or any(c.isspace() or not c.isprintable() for c in name) or "/" in name:
        raise ValueError(f"an algorithm's name is a word without spaces or '/', got {name!r}")
    if command is None:
        if name not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {name!r}; algorithms are {algorithm_names()} "
                             "(or --command CMD for your own)")
        return ALGORITHMS[name]
    if name in ALGORITHMS:
        raise ValueError(f"{name!r} is a built-in algorithm: give your command another --name")
    parts = tuple(shlex.split(command))
    if not parts:
        raise ValueError("--command is empty")
    return Algorithm(name, "user", f"user command: {command}", parts)
