"""``pisti-train``: train a Pişti policy by self-play PPO (:func:`training.trainer.train.run`).

Every field of :class:`~training.trainer.config.TrainConfig` is a flag, generated from the
dataclass with its docstring as help (:mod:`pisti_env.flags`), and every game setting of
:class:`pisti_env.rules.Settings` too. With no arguments it trains the default 2-player policy.

Examples::

    pisti-train                                   # the default 2-player policy, into runs/pisti/
    pisti-train --players 4 --out runs/pisti-4p   # 4 players in partnerships
    pisti-train --bluff --steps 1.2e7 --ent-coef 0.02
    pisti-train --resume                          # continue runs/pisti from its newest checkpoint
    pisti-train --resume --steps 1e8              # ... and extend it to 100M steps
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Sequence

from pisti_env.rules import Settings

from pisti_env.flags import add_dataclass_arguments, add_settings_arguments, values_of
from .config import RESUMABLE, TrainConfig

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
    parser.add_argument(
        "--resume", action="store_true",
        help="continue the run in OUT from its newest complete checkpoint (OUT/checkpoint), with the run's own "
             "config and game; only " + ", ".join(ALIASES.get(k, ("--" + k.replace("_", "-"),))[0] for k in RESUMABLE)
             + " may change "
             "(--steps extends the run to that many steps); any other flag given must match the checkpoint, else "
             "an error naming it. No complete checkpoint in OUT is an error. Without --resume, an OUT that already "
             "holds a run is an error (never overwritten)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
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


def given_values(argv: Sequence[str]) -> dict[str, object]:
    """The config and game-setting values the command line ``argv`` gives explicitly (not the
    defaults): what ``--resume`` compares with the checkpoint."""
    parser = build_parser()
    names = [f.name for f in dataclasses.fields(TrainConfig) if f.name != "settings"]
    names += [f.name for f in dataclasses.fields(Settings)]
    for action in parser._actions:  # (set_defaults would store the marker itself as a default)
        if action.dest in names:
            action.default = argparse.SUPPRESS  # a flag not given leaves no attribute
    args = parser.parse_args(argv)
    return values_of(args, [n for n in names if hasattr(args, n)])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    from .train import run  # torch: not needed for --help

    try:
        config = config_from_args(args)
        changes = given_values(argv) if args.resume else None
        trainer = run(config, resume=args.resume, progress=not args.no_progress, resume_changes=changes)
    except (ValueError, TypeError) as error:  # bad settings or checkpoint: a clear message, no traceback
        print(f"pisti-train: error: {error}", file=sys.stderr)
        return 2
    print(f"trained {trainer.step:,} steps; policy written to {Path(config.out_dir) / 'policy'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
