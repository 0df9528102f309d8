"""``pisti-train``: train a Pişti policy by self-play PPO ([`training.trainer.runner.run`][training.trainer.runner.run]).

Every field of [`TrainConfig`][training.trainer.config.TrainConfig] is a flag, generated from the
dataclass with its docstring as help (`pisti_env.tools.flags`), and every game setting of
[`pisti_env.rules.Settings`][pisti_env.rules.Settings] too. With no arguments it trains the default 2-player policy.

Examples::

    pisti-train                                   # the default 2-player policy, into runs/pisti/
    pisti-train --players 4 --out runs/pisti-4p   # 4 players in partnerships
    pisti-train --bluff --steps 1.2e7 --ent-coef 0.02
    pisti-train --resume                          # continue runs/pisti from its newest checkpoint
    pisti-train --resume --steps 1e8              # ... and extend it to 100M steps
    pisti-train --nproc 2 --threads 1             # 2 processes (torchrun, DDP-style all-reduce)
    pisti-train --quiet --seed 3 --out runs/s3    # no progress output
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29400 -m training.trainer ...
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Sequence

from pisti_env.tools.flags import (
    ArgumentParser, add_dataclass_arguments, add_settings_arguments, check_player_specs, checkpoint_dir, fail,
    non_negative_float, non_negative_int, positive_float, positive_int, torch_device, values_of, writable_dir,
)
from pisti_env.rules.settings import Settings, make_settings

from .config import FLAG_NAMES, RESUMABLE, TrainConfig, flag
from .failures import RunStopped
from .pause import Pause, Paused, exit_code

ALIASES = FLAG_NAMES  # pisti-exploit spells its fields of the same meaning the same way


# pisti-train's flags only parse (text -> int, float, ...): the values are checked by
# TrainConfig itself, so a bad value gives the same error from Python and from the command
# line. The exceptions check what only exists outside the config: the paths and the device.
# --seed uses the project-wide checker of every command's seed.
PARSERS = {"seed": non_negative_int, "init_from": checkpoint_dir, "out_dir": writable_dir, "device": torch_device}

# The checking parsers of pisti-exploit's fields of the same names (its own flags).
CONVERTERS = {
    "seed": non_negative_int,
    "total_steps": positive_int,
    "num_envs": positive_int,
    "rollout_steps": positive_int,
    "torch_threads": non_negative_int,
    "hidden_sizes": positive_int,
    "init_from": checkpoint_dir,
    "learning_rate": positive_float,
    "ent_coef": non_negative_float,
    "out_dir": writable_dir,
    "device": torch_device,
}
CHOICES = {"precision": ("auto", "bf16", "fp32")}


def _choice(name: str) -> object:
    allowed = CHOICES[name]

    def convert(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(allowed)}, got {text!r}")
        return text

    convert.__name__ = name
    return convert


def converters(names: Sequence[str]) -> dict[str, object]:
    """The checking parsers of the fields ``names`` that have one (`CONVERTERS`, `CHOICES`),
    for pisti-exploit's command line."""
    table = {**CONVERTERS, **{name: _choice(name) for name in CHOICES}}
    return {name: table[name] for name in names if name in table}


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="pisti-train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--resume", action="store_true",
        help="continue the run in OUT from its newest complete checkpoint (OUT/checkpoint), with the run's own "
             "config and game; only " + ", ".join(flag(k) for k in RESUMABLE)
             + " may change "
             "(--steps extends the run to that many steps); any other flag given must match the checkpoint, else "
             "an error naming it. A run stopped before its first checkpoint starts again from its saved config "
             "(OUT/config.json). Without --resume or --fresh, an OUT that already holds a run is an error (never "
             "overwritten)")
    parser.add_argument(
        "--fresh", action="store_true",
        help="start a new run in OUT even if it holds one: the old run's checkpoints, logs and policy are deleted "
             "(once this run holds OUT's lock and its flags are checked), only what the run's own records show it "
             "wrote (checkpoints with pisti metadata, its metrics, config and event files); files of your own in OUT "
             "are left alone, and a folder that is not a pisti run (or a file no run writes at a run's name) is "
             "refused")
    parser.add_argument("--quiet", action="store_true", help="no progress output (bar and summary lines)")
    parser.add_argument(
        "--budget", type=duration, default=None, metavar="DURATION",
        help="a wall-clock budget for this command (90s, 10m, 1.5h; a bare number is minutes): a fresh run without "
             "--steps sizes itself after its first update to the whole updates that fit (recorded in its config as "
             f"its steps: --envs {BUDGET_ENVS} --steps with that number repeats it exactly) and plays {BUDGET_ENVS} games "
             "at a time unless --envs is given; any run stops when no further update fits, then writes its checkpoint, policy and "
             "evaluation as a finished run does. One process only (not with --nproc)")
    parser.add_argument("--nproc", type=positive_int, default=None,
                        help="train with this many processes on this machine (launches torchrun; --envs is the "
                             "global number of games, split among them); see training.trainer.distributed")
    add_settings_arguments(parser)
    add_dataclass_arguments(parser, TrainConfig, exclude=("settings",), names=FLAG_NAMES, converters=PARSERS)
    parser.set_defaults(total_steps=None)  # None: not given (the config's default, or with --resume the run's own)
    return parser


BUDGET_ENVS = 1024  # a --budget run's games at a time: half the default, twice the updates in the same time


def duration(text: str) -> float:
    """``--budget``'s parser: seconds (`training.trainer.clock.parse_duration`)."""
    from .clock import parse_duration

    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def resume_command(out: str, world: int = 1) -> str:
    """The command that continues the run in ``out`` (on ``world`` processes)."""
    return shlex.join(["pisti-train", *(["--nproc", str(world)] if world > 1 else []), "--resume", "--out", out])


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
    parser._defaults.pop("total_steps", None)  # (build_parser's default for --steps is a value otherwise)
    args = parser.parse_args(argv)
    return values_of(args, [n for n in names if hasattr(args, n)])


def check_config(config: TrainConfig) -> None:
    """What the flags cannot check one by one, before the run: the baselines and the evaluation's
    players are built once for the run's game (a bad spec fails now, not at the first evaluation
    hours in). Raises ``ValueError``/``TypeError`` (a checkpoint's ``CheckpointError`` is one)."""
    check_player_specs(config.baselines, config.settings)
    if config.eval_every:
        check_player_specs(config.eval_baselines, make_settings(**{**config.settings.to_dict(), "target": None}))


def in_flags(error: BaseException) -> str:
    """``error``'s message with the config's field names (``TrainConfig.num_envs``) spelled as
    this command's flags (``--envs``): the same check, the same words, the command's names."""
    return re.sub(r"\bTrainConfig\.(\w+)", lambda m: flag(m.group(1)), str(error))


def main(argv: Sequence[str] | None = None) -> int:
    started = time.monotonic()  # a --budget counts from here
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.fresh and args.resume:
        return fail("pisti-train", "--fresh starts a new run and --resume continues one: give one of them")
    if args.nproc is not None:
        if args.budget is not None:
            return fail("pisti-train", "--budget runs in one process: not with --nproc")
        return _launch(args.nproc, argv)
    # From here Ctrl-C (SIGINT) and SIGTERM pause the run (training.trainer.pause), also while
    # torch is still being imported.
    with Pause("pisti-train", resume_command(args.out_dir, int(os.environ.get("WORLD_SIZE", "1")))) as pause:
        return _train(args, argv, pause, started)


def _train(args: argparse.Namespace, argv: list[str], pause: Pause, started: float) -> int:
    from . import distributed
    from .clock import Budget
    from .runner import run  # torch: not needed for --help

    shard = None
    try:
        if args.budget is not None and distributed.launched():
            raise ValueError("--budget runs in one process: not under torchrun")
        given = given_values(argv)
        if args.budget is not None and not args.resume and "num_envs" not in given:
            args.num_envs = BUDGET_ENVS
        config = config_from_args(args)
        if not args.resume:  # a resumed run plays its checkpoint's config
            check_config(config)
        if distributed.launched():  # a rank started by torchrun
            shard = distributed.init(config.device)
        changes = given if args.resume else None
        progress = not args.quiet and (shard is None or shard.main)
        budget = None
        if args.budget is not None:
            budget = Budget(args.budget, started, size_run=not args.resume and "total_steps" not in given)
        trainer = run(config, resume=args.resume, progress=progress, resume_changes=changes, shard=shard,
                      pause=pause, budget=budget, fresh=args.fresh)
    except Paused as paused:  # the checkpoint is written: say how to continue, exit 128 + signal
        if shard is None or shard.main:
            where = f"; checkpoint {paused.checkpoint}" if paused.checkpoint is not None else ""
            print(f"pisti-train: paused after update {paused.update:,}{where}; continue with: "
                  f"{resume_command(args.out_dir, shard.world if shard is not None else 1)}", file=sys.stderr)
        return paused.exit_code
    except RunStopped as error:  # a write failed or training diverged: one line, its own exit status
        fail("pisti-train", error)
        return error.exit_code
    except (ValueError, TypeError, OSError) as error:  # bad settings, players or checkpoint: one line, no traceback
        return fail("pisti-train", in_flags(error))
    finally:
        distributed.finish()
    if pause.requested and not args.quiet and (shard is None or shard.main):
        print("pisti-train: the run had finished: nothing to pause", file=sys.stderr)
    if (shard is None or shard.main) and not args.quiet:
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
        return fail("pisti-train", error)
    # A terminal's Ctrl-C reaches torchrun itself (this process group), which passes it on to
    # the ranks (each in a session of its own); they pause together and rank 0 prints the line
    # that continues. This process only waits: it passes a SIGTERM on to torchrun and exits
    # 128 + the signal, torchrun's own exit status otherwise.
    received: list[int] = []
    child = subprocess.Popen(command)

    def forward(signum: int, frame: object) -> None:
        received.append(signum)
        if signum == signal.SIGTERM:
            child.send_signal(signum)

    previous = {signum: signal.signal(signum, forward) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return exit_code(received[0]) if received else code


if __name__ == "__main__":
    raise SystemExit(main())
