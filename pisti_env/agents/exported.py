"""A policy exported by ``pisti-export`` (TorchScript ``.pt`` or ONNX ``.onnx``) as a player,
without the trainer's code.

An exported file holds one function, ``(observation float32[B, obs_size], action_mask
bool[B, num_actions]) -> log_probs float32[B, num_actions]``: the policy's masked
log-probabilities (an illegal action gets a log-probability far below any legal one), and its
*observation contract* as metadata (:data:`CONTRACT_KEY`): the observation layout version
(``obs_version``, :data:`pisti_env.OBS_VERSION`), ``observation_size``, ``num_actions``, the game
``settings`` it was trained for and the ``play`` mode it is meant to be played with. A loader
checks the contract against this package and the game before playing, so an export made for
another encoding or another game is refused instead of playing nonsense.

:class:`ExportedPolicy` plays it one decision at a time (``act``) or for a batch of the batched
engine (``act_batch``), so the harness plays it on the batched engine like a checkpoint. Its
``play`` modes are the checkpoint player's (:class:`training.trainer.policy.CheckpointPlayer`):
``argmax``, ``sample`` (Gumbel-max over the log-probabilities: the same draws as the checkpoint
with the same generator) and ``sample_bluffs`` (R29's kind of action drawn by its total
probability, then the most likely card of that kind: :func:`pisti_env.batched.draws.draw_bluffs`,
the checkpoint player's own rule).

Reading a ``.pt`` needs torch; a ``.onnx`` needs ``onnxruntime`` (the ``onnx`` extra) and torch
only for ``act_batch``/``act``'s draws.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..observation import OBS_VERSION
from ..rules import Settings
from .view import SeatView

if TYPE_CHECKING:
    import torch

CONTRACT_KEY = "pisti_contract"  # the metadata entry (TorchScript extra file, ONNX metadata_props)
EXPORT_FORMAT = "pisti-policy-export"
EXPORT_FORMAT_VERSION = 1
PLAY_MODES = ("argmax", "sample", "sample_bluffs")
# Settings a policy sees only as match context: any other setting changes the game it plays.
MATCH_CONTEXT = ("target", "win_margin")


class ExportError(ValueError):
    """An exported policy that is unreadable or made for another encoding or game."""


def check_contract(contract: Mapping[str, Any], path: str, settings: Settings | Mapping[str, Any] | None) -> None:
    """Raise :class:`ExportError` unless ``contract`` (an export's metadata) fits this package's
    observation layout and, if given, the game ``settings`` (match context aside)."""
    if contract.get("format") != EXPORT_FORMAT or contract.get("format_version") != EXPORT_FORMAT_VERSION:
        raise ExportError(f"{path!r} is not a pisti policy export of format {EXPORT_FORMAT} "
                          f"v{EXPORT_FORMAT_VERSION} (got {contract.get('format')!r} v{contract.get('format_version')!r})")
    if contract.get("obs_version") != OBS_VERSION:
        raise ExportError(f"{path!r} reads observation layout v{contract.get('obs_version')}, this package "
                          f"encodes v{OBS_VERSION}: export the policy again with a matching version")
    if settings is None:
        return
    wanted = settings.to_dict() if isinstance(settings, Settings) else dict(settings)
    trained = contract.get("settings", {})
    differ = sorted(k for k in wanted if k not in MATCH_CONTEXT and k in trained and trained[k] != wanted[k])
    if differ:
        raise ExportError(f"{path!r} was trained for another game: " + ", ".join(
            f"{k}={trained[k]!r} (asked {wanted[k]!r})" for k in differ))


def read_contract(path: str) -> dict[str, Any]:
    """The observation contract stored in an exported file (``ExportError`` if it has none)."""
    return _open(path, "cpu")[1]


def _open(path: str, device: str) -> tuple[Any, dict[str, Any]]:
    """``(forward, contract)`` of an exported file: ``forward`` maps ``(observation, mask)``
    tensors to log-probabilities (a TorchScript module on ``device``, or onnxruntime on the CPU)."""
    try:
        if path.endswith(".onnx"):
            session = _onnx_session(path)
            forward, text = _onnx_forward(session), session.get_modelmeta().custom_metadata_map.get(CONTRACT_KEY)
        else:
            files = {CONTRACT_KEY: ""}
            forward = _jit_load(path, device, files).eval()
            text = files[CONTRACT_KEY]
    except (OSError, RuntimeError) as err:
        raise ExportError(f"cannot read the exported policy {path!r}: {err}") from None
    if not text:
        raise ExportError(f"{path!r} has no {CONTRACT_KEY!r} metadata: not written by pisti-export")
    try:
        return forward, json.loads(text)
    except ValueError:
        raise ExportError(f"{path!r}: its {CONTRACT_KEY!r} metadata is not JSON") from None


class ExportedPolicy:
    """An exported policy as a :class:`~pisti_env.agents.base.Player` with a batched form.

    Args:
        forward: ``(observation, mask) -> log_probs``, torch tensors in and out.
        contract: the file's observation contract (see the module docstring).
        play: ``argmax``, ``sample`` or ``sample_bluffs``; ``None``: the contract's.
        name: the player's label.
    """

    def __init__(self, forward: Any, contract: Mapping[str, Any], play: str | None = None, name: str = "exported"):
        import torch

        play = play or contract.get("play", "argmax")
        if play not in PLAY_MODES:
            raise ValueError(f"play must be one of {list(PLAY_MODES)}, got {play!r}")
        self._forward = forward
        self.contract = dict(contract)
        self.play = play
        self.name = name
        self.observation_size = int(contract["observation_size"])
        self.num_actions = int(contract["num_actions"])
        self.generator = torch.Generator().manual_seed(0)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (``None``: seed 0)."""
        self.generator.manual_seed(0 if seed is None else int(seed))

    def act(self, view: SeatView | Mapping[str, Any]) -> int:
        """The action for one decision (a :class:`SeatView` or the env's observation dict)."""
        import torch

        observation = view.observation() if isinstance(view, SeatView) else view
        vector = np.asarray(observation["observation"], dtype=np.float32)
        if vector.shape != (self.observation_size,):
            raise ValueError(f"exported policy {self.name!r} expects observations of size {self.observation_size}, "
                             f"got shape {vector.shape}: other game settings?")
        mask = torch.as_tensor(np.asarray(observation["action_mask"]) > 0)[None]
        return int(self.act_batch(torch.from_numpy(vector)[None], mask))

    def action_log_probs(self, observation: "torch.Tensor", mask: "torch.Tensor") -> "torch.Tensor":
        """The masked log-probabilities of a batch."""
        import torch

        with torch.no_grad():
            return self._forward(observation.float(), mask.bool())

    def act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor",
                  generator: "torch.Generator | None" = None) -> "torch.Tensor":
        """One legal action per row (``generator``, default the player's own, draws samples)."""
        import torch

        logp = self.action_log_probs(observation, mask)
        generator = self.generator if generator is None else generator
        if self.play == "argmax":
            return logp.argmax(-1)
        if self.play == "sample":
            uniform = torch.rand(logp.shape, generator=generator, device=logp.device).clamp_(1e-10, 1.0)
            return (logp - torch.log(-torch.log(uniform))).argmax(-1)
        from ..batched.draws import draw_bluffs  # torch: only when a policy plays

        return draw_bluffs(logp, generator)

    def __repr__(self) -> str:
        return f"ExportedPolicy({self.name!r}, play={self.play!r})"


def _onnx_session(path: str) -> Any:
    """An onnxruntime session of the file on the CPU provider, one thread."""
    try:
        import onnxruntime
    except ImportError:
        raise ImportError("an .onnx policy needs onnxruntime: pip install 'pisti[onnx]'") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # decisions are tiny; threads only contend with the games
    try:
        return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own exception types for a bad file
        raise ExportError(f"cannot read the exported policy {path!r}: {err}") from None


def _onnx_forward(session: Any) -> Any:
    """``(observation, mask) -> log_probs`` running an onnxruntime session."""
    import torch

    def forward(observation: "torch.Tensor", mask: "torch.Tensor") -> "torch.Tensor":
        out = session.run(["log_probs"], {"observation": observation.cpu().numpy().astype(np.float32),
                                          "action_mask": mask.cpu().numpy().astype(bool)})[0]
        return torch.from_numpy(out).to(observation.device)

    return forward


def _jit_load(path: str, device: str, files: dict[str, Any]) -> Any:
    """``torch.jit.load``: recent torch marks TorchScript deprecated in favour of
    ``torch.export``, but still loads it; the warning would only worry a user."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.load(path, map_location=device, _extra_files=files)


def load_exported(
    path: str | os.PathLike, settings: Settings | Mapping[str, Any] | None = None, device: str = "cpu",
    play: str | None = None,
) -> ExportedPolicy:
    """Load an exported policy file (``.pt`` TorchScript or ``.onnx``) as a player.

    ``settings``: the game it will play (an export trained for another game raises
    :class:`ExportError`); ``device``: where a TorchScript module runs (ONNX runs on the CPU);
    ``play``: as :class:`ExportedPolicy`. Raises :class:`ExportError` for a file without a
    fitting contract.
    """
    path = os.fspath(path)
    forward, contract = _open(path, device)
    check_contract(contract, path, settings)
    return ExportedPolicy(forward, contract, play=play, name=contract.get("name") or os.path.basename(path))
