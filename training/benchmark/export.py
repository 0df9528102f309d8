"""``pisti-export``: a checkpoint's policy as one self-contained file (TorchScript or ONNX) that
plays without this project's trainer code.

Examples::

    pisti-export pisti-2p --format torchscript --out exports/
    pisti-export runs/my-run/checkpoint --format onnx --out exports/

The file computes ``(observation float32[B, obs_size], action_mask bool[B, num_actions]) ->
log_probs float32[B, num_actions]`` (illegal actions masked out) and carries the observation
contract (`pisti_env.agents.exported`: observation layout version, sizes, game settings,
play mode) as metadata: a TorchScript extra file or ONNX ``metadata_props`` entry named
``pisti_contract``. ``make_player("exports/pisti-2p.pt")`` (or ``.onnx``) plays it, and so does
any program that builds ``pisti_v0``'s observations: feed ``observation`` and ``action_mask``,
take the argmax (or sample). ONNX needs the ``onnx`` extra (``onnx``, ``onnxscript`` to write,
``onnxruntime`` to play).

Other programs write the same files with `write_policy_file` and `policy_contract`:
the library recipes in ``examples/`` do with ``--export PATH``
(`training.harness.recipes.export_policy_file`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from typing import Any, Iterator, Mapping, Sequence

import torch
from torch import nn

from pisti_env.rules.actions import num_actions
from pisti_env.agents import make_player
from pisti_env.util.atomic import write_atomic
from pisti_env.agents.exported import CONTRACT_KEY, EXPORT_FORMAT, EXPORT_FORMAT_VERSION, PLAY_MODES
from pisti_env.tools.flags import ArgumentParser, fail, writable_dir
from pisti_env.views.observation import OBS_VERSION
from pisti_env.rules.settings import Settings

FORMATS = {"torchscript": ".pt", "onnx": ".onnx"}
EXAMPLE_BATCH = 3  # rows of the example input the graph is traced with (any batch size plays)


class MaskedLogProbs(nn.Module):
    """The exported function: a policy network's log-probabilities over the legal actions.
    Illegal actions get the most negative float before the softmax, as the trainer masks them.

    ``network`` maps the observation (``float32[B, obs]``) to logits (``[B, A]``); with
    ``reads_mask`` it is called ``network(observation, action_mask)`` (a policy that reads the
    mask as an input feature, as SB3's ``MultiInputPolicy`` does)."""

    def __init__(self, network: nn.Module, reads_mask: bool = False) -> None:
        super().__init__()
        self.network = network
        self.reads_mask = reads_mask

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
        logits = (self.network(observation, action_mask) if self.reads_mask else self.network(observation)).float()
        return torch.log_softmax(logits.masked_fill(~action_mask, torch.finfo(logits.dtype).min), dim=-1)


def policy_contract(settings: Settings | Mapping[str, Any], observation_size: int, name: str,
                    source: Mapping[str, Any], play: str = "argmax", obs_version: int = OBS_VERSION) -> dict[str, Any]:
    """The observation contract of a policy for the game ``settings`` (see the module
    docstring): ``observation_size`` inputs, the game's action count, its ``play`` mode, and
    ``name`` and ``source`` (how it was made: a checkpoint, a recipe) for the reader."""
    settings = settings.to_dict() if isinstance(settings, Settings) else dict(settings)
    if play not in PLAY_MODES:
        raise ValueError(f"play must be one of {list(PLAY_MODES)}, got {play!r}")
    return {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "obs_version": int(obs_version),
        "observation_size": int(observation_size),
        "num_actions": num_actions(bool(settings.get("bluff", False))),
        "settings": settings,
        "play": play,
        "name": name,
        "source": dict(source),
        "inputs": {"observation": "float32[batch, observation_size]", "action_mask": "bool[batch, num_actions]"},
        "output": {"log_probs": "float32[batch, num_actions]"},
    }


def contract_of(player: Any, source: str) -> dict[str, Any]:
    """The observation contract of a loaded checkpoint player (see the module docstring)."""
    meta = player.metadata
    return policy_contract(
        player.settings, player.network.observation_size, os.path.basename(os.path.normpath(source)),
        {"spec": source, "step": meta.get("step"), "update": meta.get("update")}, play=player.play,
        obs_version=int(meta.get("obs_version", OBS_VERSION)),
    )


def format_of(path: str) -> str:
    """The export format a file name asks for, by its suffix (``.pt``: TorchScript, ``.onnx``)."""
    for fmt, suffix in FORMATS.items():
        if path.endswith(suffix):
            return fmt
    raise ValueError(f"an exported policy's file name ends with .pt (TorchScript) or .onnx (ONNX), got {path!r}")


def _example(contract: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    observation = torch.rand(EXAMPLE_BATCH, contract["observation_size"], generator=generator)
    mask = torch.rand(EXAMPLE_BATCH, contract["num_actions"], generator=generator) < 0.5
    mask[:, 0] = True
    return observation, mask


def write_policy_file(module: nn.Module, contract: dict[str, Any], fmt: str, path: str) -> str:
    """Write ``module`` (``(observation, action_mask) -> log_probs``, e.g. a
    `MaskedLogProbs`; on the CPU, in evaluation mode) with its ``contract`` as one
    ``fmt`` file (``torchscript`` or ``onnx``) at ``path``; returns ``path``. The file is
    written whole or not at all (``pisti_env.util.atomic.write_atomic``), so a reader never sees half of it."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    example = _example(contract)

    def write(tmp: str) -> None:
        if fmt == "torchscript":
            # The tracer warns of values it records as constants (the claim game's capture
            # values, fixed per policy); the tests check the file against the network.
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore", torch.jit.TracerWarning)
                warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript: deprecated, still supported
                traced = torch.jit.trace(module, example, check_trace=False)
                torch.jit.save(traced, tmp, _extra_files={CONTRACT_KEY: json.dumps(contract)})
        else:
            _export_onnx(module, example, contract, tmp)

    write_atomic(path, write)  # the project's one atomic writer: a shared file's mode, no temporary left
    return path


def export_policy(spec: str, fmt: str, out_dir: str) -> str:
    """Export the checkpoint ``spec`` (a directory or a shipped policy's name) as ``fmt``
    (``torchscript`` or ``onnx``) into ``out_dir``; returns the file's path
    (`write_policy_file`: written atomically)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    player = make_player(spec)
    if not hasattr(player, "network"):
        raise ValueError(f"{spec!r} is not a trained checkpoint (a checkpoint directory or a shipped policy's name)")
    contract = contract_of(player, spec)
    module = MaskedLogProbs(player.network.float().cpu()).eval()
    return write_policy_file(module, contract, fmt, os.path.join(out_dir, contract["name"] + FORMATS[fmt]))


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Stdout and stderr discarded at the file-descriptor level: on failure torch's C++ side
    prints the whole graph, many screens; the one-line error raised after says what matters."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def _export_onnx(module: nn.Module, example: tuple[torch.Tensor, torch.Tensor], contract: dict[str, Any],
                 path: str) -> None:
    try:
        import onnx
    except ImportError:
        raise ImportError("--format onnx needs onnx and onnxscript: pip install 'pisti[onnx]'") from None
    batch = {0: "batch"}
    # The TorchScript-based exporter: it writes every network of ours but the bluff policy's
    # solved-claims layer (lgamma, which ONNX lacks), where both exporters fail alike.
    try:
        with warnings.catch_warnings(), _silenced():
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(module, example, path, input_names=["observation", "action_mask"],
                              output_names=["log_probs"], dynamo=False,
                              dynamic_axes={"observation": batch, "action_mask": batch, "log_probs": batch})
    except Exception as err:  # torch.onnx raises several types; the first line says what is missing
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"ONNX cannot express this policy ({first}); export it with --format torchscript") from None
    model = onnx.load(path)
    entry = model.metadata_props.add()
    entry.key, entry.value = CONTRACT_KEY, json.dumps(contract)
    onnx.save(model, path)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-export", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="a checkpoint directory or a shipped policy's name (pisti-2p, pisti-4p, "
                                           "pisti-bluff)")
    parser.add_argument("--format", choices=list(FORMATS), default="torchscript", help="file format (default torchscript)")
    parser.add_argument("--out", type=writable_dir, default="exports", help="output folder (default exports/)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        path = export_policy(args.checkpoint, args.format, args.out)
    except (ValueError, TypeError, ImportError, OSError, RuntimeError) as err:
        return fail("pisti-export", err)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
