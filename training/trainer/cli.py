"""``pisti-train``: train a Pişti policy by self-play PPO (:func:`training.trainer.train.run`).

Every field of :class:`~training.trainer.config.TrainConfig` is a flag, generated from the
dataclass with its docstring as help (:mod:`pisti_env.flags`), and every game setting of
:class:`pisti_env.rules.Settings` too. With no arguments it trains the default 2-player policy.

Examples::

    pisti-train                                   # the default 2-player policy, into runs/pisti/
    pisti-train --players 4 --out runs/pisti-4p   # 4 players in partnerships
    pisti-train --bluff --steps 1.2e7 --ent-coef 0.02
    pisti-train --resume                          # continue runs/pisti/checkpoint
    pisti-train --nproc 2 --threads 1             # 2 processes (torchrun, DDP-style all-reduce)
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29400 -m training.trainer ...
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Sequence

from pisti_env.rules import Settings

from pisti_env.flags import add_dataclass_arguments, add_settings_arguments, values_of
from .config import TrainConfig

# The short flags the README and scripts use, besides the generated ``--field-name`` ones.
ALIASES = {
    "total_steps": ("--steps",),
    "num_envs": ("--envs",),
    "rollout_steps": ("--rollout",),
    "torch_threads": ("--threads",),
    "out_dir": ("--out",),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pisti-train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--resume", action="store_true",
                        help="continue OUT/checkpoint with its own config; --steps then extends the run to that many")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--nproc", type=int, default=None,
                        help="train with this many processes on this machine (launches torchrun; --envs is the "
                             "global number of games, split among them); see training.trainer.distributed")
    add_settings_arguments(parser)
    add_dataclass_arguments(parser, TrainConfig, exclude=("settings",), aliases=ALIASES)
    parser.set_defaults(total_steps=None)  # None: not given (the config's default, or with --resume the run's own)
    return parser


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The config the parsed flags describe."""
    settings = Settings(**values_of(args, (f.name for f in dataclasses.fields(Settings))))
    names = [f.name for f in dataclasses.fields(TrainConfig) if f.name != "settings"]
    values = {k: v for k, v in values_of(args, names).items() if v is not None or k != "total_steps"}
    return TrainConfig(settings=settings, **values)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.nproc is not None:
        return _launch(args.nproc, argv)
    from . import distributed
    from .train import run  # torch: not needed for --help

    shard = None
    try:
        config = config_from_args(args)
        if distributed.launched():  # a rank started by torchrun
            shard = distributed.init(config.device)
        resume_steps = args.total_steps if args.resume else None
        progress = not args.no_progress and (shard is None or shard.main)
        trainer = run(config, resume=args.resume, progress=progress, resume_steps=resume_steps, shard=shard)
    except (ValueError, TypeError) as error:  # bad settings or checkpoint: a clear message, no traceback
        print(f"pisti-train: error: {error}", file=sys.stderr)
        return 2
    finally:
        distributed.finish()
    if shard is None or shard.main:
        print(f"trained {trainer.step:,} steps; policy written to {Path(config.out_dir) / 'policy'}")
    return 0


def _launch(nproc: int, argv: list[str]) -> int:
    """``pisti-train --nproc N ...``: the same command on N processes through torchrun."""
    import subprocess

    from .distributed import free_port, torchrun_command

    rest, skip = [], False
    for i, arg in enumerate(argv):  # drop --nproc N / --nproc=N
        if skip:
            skip = False
        elif arg == "--nproc":
            skip = True
        elif not arg.startswith("--nproc="):
            rest.append(arg)
    try:
        command = torchrun_command(nproc, rest, free_port(), sys.executable)
    except ValueError as error:
        print(f"pisti-train: error: {error}", file=sys.stderr)
        return 2
    return subprocess.call(command)


if __name__ == "__main__":
    raise SystemExit(main())
