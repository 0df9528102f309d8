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
    pisti-train --nproc 2 --threads 1             # 2 processes (torchrun, DDP-style all-reduce)
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29400 -m training.trainer ...
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Sequence

from pisti_env.flags import (
    ArgumentParser, add_dataclass_arguments, add_settings_arguments, bounded, check_player_specs, checkpoint_dir, fail,
    non_negative_float, non_negative_int, positive_float, positive_int, probability, values_of, writable_dir,
)
from pisti_env.rules import Settings, make_settings

from .config import MAX_CAPTURE_VALUE, RESUMABLE, TrainConfig

# The short flags the README and scripts use, besides the generated ``--field-name`` ones.
ALIASES = {
    "total_steps": ("--steps",),
    "num_envs": ("--envs",),
    "rollout_steps": ("--rollout",),
    "torch_threads": ("--threads",),
    "out_dir": ("--out",),
}


def torch_device(text: str) -> str:
    """An argparse ``type=``: a torch device string (``cpu``, ``cuda``, ``cuda:1``) this machine has."""
    import torch  # the trainer needs it anyway; not for --help

    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"not a torch device: {text!r} (e.g. cpu, cuda, cuda:1)") from None
    if device.type == "cuda" and (not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()):
        raise argparse.ArgumentTypeError(f"{text!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return text


# What each value flag accepts, checked as it is parsed (a bad value: one line, exit status 2,
# before anything is built). ``pisti-exploit`` takes the entries of its own fields from here.
CONVERTERS = {
    "seed": non_negative_int,
    "total_steps": positive_int,
    "num_envs": positive_int,
    "rollout_steps": positive_int,
    "torch_threads": non_negative_int,
    "hidden_sizes": positive_int,
    "value_hidden_sizes": positive_int,
    "answer_hidden_sizes": positive_int,
    "claim_hidden_sizes": positive_int,
    "average_heads_every": non_negative_int,
    "average_heads_size": bounded(int, 2, 4096, name="count"),
    "claim_capture_value": bounded(float, 0, MAX_CAPTURE_VALUE, name="points"),
    "claim_capture_value_last_deal": bounded(float, 0, MAX_CAPTURE_VALUE, name="points"),
    "init_from": checkpoint_dir,
    "learning_rate": positive_float,
    "adam_eps": positive_float,
    "gamma": probability,
    "gae_lambda": probability,
    "reward_scale": positive_float,
    "num_minibatches": positive_int,
    "update_epochs": positive_int,
    "clip_coef": positive_float,
    "ent_coef": non_negative_float,
    "answer_ent_coef": non_negative_float,
    "vf_coef": non_negative_float,
    "max_grad_norm": positive_float,
    "target_kl": positive_float,
    "magnet_coef": non_negative_float,
    "magnet_every": non_negative_int,
    "self_play_share": probability,
    "snapshot_every": non_negative_int,
    "pool_size": positive_int,
    "pool_temperature": positive_float,
    "pool_uniform_share": probability,
    "pool_margin_decay": bounded(float, 0, 1, low_open=True, name="share"),
    "eval_every": non_negative_int,
    "eval_deals": positive_int,
    "checkpoint_every": non_negative_int,
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
    """The checking parsers of the fields ``names`` that have one (:data:`CONVERTERS`, :data:`CHOICES`)."""
    table = {**CONVERTERS, **{name: _choice(name) for name in CHOICES}}
    return {name: table[name] for name in names if name in table}


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
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
    parser.add_argument("--nproc", type=positive_int, default=None,
                        help="train with this many processes on this machine (launches torchrun; --envs is the "
                             "global number of games, split among them); see training.trainer.distributed")
    add_settings_arguments(parser)
    add_dataclass_arguments(parser, TrainConfig, exclude=("settings",), aliases=ALIASES,
                            converters=converters([f.name for f in dataclasses.fields(TrainConfig)]))
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


def check_config(config: TrainConfig) -> None:
    """What the flags cannot check one by one, before the run: the baselines and the evaluation's
    players are built once for the run's game (a bad spec fails now, not at the first evaluation
    hours in). Raises ``ValueError``/``TypeError`` (a checkpoint's ``CheckpointError`` is one)."""
    check_player_specs(config.baselines, config.settings)
    if config.eval_every:
        check_player_specs(config.eval_baselines, make_settings(**{**config.settings.to_dict(), "target": None}))


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
        if not args.resume:  # a resumed run plays its checkpoint's config
            check_config(config)
        if distributed.launched():  # a rank started by torchrun
            shard = distributed.init(config.device)
        changes = given_values(argv) if args.resume else None
        progress = not args.no_progress and (shard is None or shard.main)
        trainer = run(config, resume=args.resume, progress=progress, resume_changes=changes, shard=shard)
    except (ValueError, TypeError, OSError) as error:  # bad settings, players or checkpoint: one line, no traceback
        return fail("pisti-train", error)
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
        return fail("pisti-train", error)
    return subprocess.call(command)


if __name__ == "__main__":
    raise SystemExit(main())
