"""A policy exported by ``pisti-export`` (TorchScript ``.pt`` or ONNX ``.onnx``) as a player,
without the trainer's code.

An exported file holds one function, ``(observation float32[B, obs_size], action_mask
bool[B, num_actions]) -> log_probs float32[B, num_actions]``: the policy's masked
log-probabilities (an illegal action gets a log-probability far below any legal one), and its
*observation contract* as metadata (`CONTRACT_KEY`): the observation layout version
(``obs_version``, `pisti_env.OBS_VERSION`), ``observation_size``, ``num_actions``, the game
``settings`` it was trained for and the ``play`` mode it is meant to be played with. A loader
checks the contract against this package and the game before playing, so an export made for
another encoding or another game is refused instead of playing nonsense.

The file is untrusted input: the contract is checked against a schema
([`check_contract`][pisti_env.agents.exported.check_contract]: every required key, types and
ranges, the settings a valid game, the sizes those settings give), and the function is run once
on a tiny batch when the file is loaded
([`probe_forward`][pisti_env.agents.exported.probe_forward]: it must not raise and must return
`[B, num_actions]` log-probabilities), so a malformed file is an
[`ExportError`][pisti_env.agents.exported.ExportError] naming the file at load time, in one
line, never a TorchScript dump at the first move. Loading a TorchScript file runs no
arbitrary Python, but the file is a program: see docs/reliability.md ("Agent files that can run
code").

`ExportedPolicy` plays it one decision at a time (``act``) or for a batch of the batched
engine (``act_batch``), so the harness plays it on the batched engine like a checkpoint. Its
``play`` modes are the checkpoint player's ([`pisti_env.policies.player.CheckpointPlayer`][pisti_env.policies.player.CheckpointPlayer]):
``argmax``, ``sample`` (Gumbel-max over the log-probabilities: the same draws as the checkpoint
with the same generator) and ``sample_bluffs`` (R29's kind of action drawn by its total
probability, then the most likely card of that kind: `pisti_env.batched.draws.draw_bluffs`,
the checkpoint player's own rule).

Reading a ``.pt`` needs torch; a ``.onnx`` needs ``onnxruntime`` (the ``onnx`` extra) and torch
only for ``act_batch``/``act``'s draws.
"""

from __future__ import annotations

import json
import os
import unicodedata
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..rules.actions import num_actions as game_num_actions
from ..views.observation import OBS_VERSION, ObservationLayout
from ..rules.settings import SETTING_NAMES, Settings, make_settings
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

CONTRACT_KEY = "pisti_contract"  # the metadata entry (TorchScript extra file, ONNX metadata_props)
EXPORT_FORMAT = "pisti-policy-export"
EXPORT_FORMAT_VERSION = 1
PLAY_MODES = ("argmax", "sample", "sample_bluffs")
# Settings a policy sees only as match context: any other setting changes the game it plays.
MATCH_CONTEXT = ("target", "win_margin")
REQUIRED_KEYS = ("format", "format_version", "obs_version", "observation_size", "num_actions", "settings")
MAX_CONTRACT_BYTES = 1_048_576  # 1 MiB: a real contract is well under a kilobyte
MAX_NAME_CHARS = 200
MAX_ERROR_CHARS = 200  # what an error quotes of a message torch or onnxruntime raised
PROBE_BATCH = 2  # rows of the test input run once at load


class ExportError(ValueError):
    """An exported policy that is unreadable, malformed, or made for another encoding or game."""


def brief_error(error: BaseException, limit: int = MAX_ERROR_CHARS) -> str:
    """One short line for an error torch or onnxruntime raised: the line that says what failed
    (for a TorchScript interpreter traceback, its last line; else its first; the error's type
    when it has no text), cut to `limit` characters, control characters removed."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        text = type(error).__name__
    elif lines[0].startswith("The following operation failed in the TorchScript interpreter"):
        text = lines[-1]
    else:
        text = lines[0]
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _whole(contract: Mapping[str, Any], key: str, path: str, low: int, high: int) -> int:
    value = contract[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ExportError(f"{path!r}: metadata field {key!r} must be a whole number from {low} to {high}, "
                          f"got {_shown(value)}")
    return value


def _trained_settings(contract: Mapping[str, Any], path: str) -> Settings:
    """The contract's `settings`: an object holding every setting, a valid game."""
    given = contract["settings"]
    if not isinstance(given, dict):
        raise ExportError(f"{path!r}: metadata field 'settings' must be an object of the game settings, "
                          f"got {_shown(given)}")
    missing = [name for name in SETTING_NAMES if name not in given]
    if missing:
        raise ExportError(f"{path!r}: metadata field 'settings' lacks {missing} (an export names every setting "
                          "of its game)")
    try:
        return make_settings(**given)
    except (TypeError, ValueError) as err:
        raise ExportError(f"{path!r}: metadata field 'settings' is not a valid game: {err}") from None


def check_contract(contract: Any, path: str, settings: Settings | Mapping[str, Any] | None) -> None:
    """Raise [`ExportError`][pisti_env.agents.exported.ExportError] unless `contract` (an export's metadata) is a
    well-formed observation contract of this package's observation layout and, if given, of the
    game `settings` (match context aside).

    Checked, in order: a JSON object; the format, its version and the observation layout
    version; every key of `REQUIRED_KEYS`; `settings` a valid game naming every setting;
    `observation_size` and `num_actions` those of that game; `play` one of `PLAY_MODES` and
    `name` a short line of text, when present; then the game's settings equal to the trained
    ones but for `MATCH_CONTEXT`, and its observation size and action count the contract's.
    Every failure names the file and the field.
    """
    if not isinstance(contract, dict):
        raise ExportError(f"{path!r}: its {CONTRACT_KEY!r} metadata must be a JSON object, got "
                          f"{type(contract).__name__}")
    if contract.get("format") != EXPORT_FORMAT or contract.get("format_version") != EXPORT_FORMAT_VERSION \
            or isinstance(contract.get("format_version"), bool):
        raise ExportError(f"{path!r} is not a pisti policy export of format {EXPORT_FORMAT} "
                          f"v{EXPORT_FORMAT_VERSION} (got {_shown(contract.get('format'))} "
                          f"v{_shown(contract.get('format_version'))})")
    if contract.get("obs_version") != OBS_VERSION or isinstance(contract.get("obs_version"), bool):
        raise ExportError(f"{path!r} reads observation layout v{_shown(contract.get('obs_version'))}, this package "
                          f"encodes v{OBS_VERSION}: export the policy again with a matching version")
    missing = [key for key in REQUIRED_KEYS if key not in contract]
    if missing:
        raise ExportError(f"{path!r}: metadata field {missing[0]!r} is missing (required: {list(REQUIRED_KEYS)})")
    trained = _trained_settings(contract, path)
    size = ObservationLayout(trained).size
    _whole(contract, "observation_size", path, size, size)
    actions = game_num_actions(trained.bluff)
    _whole(contract, "num_actions", path, actions, actions)
    if "play" in contract and contract["play"] not in PLAY_MODES:
        raise ExportError(f"{path!r}: metadata field 'play' must be one of {list(PLAY_MODES)}, "
                          f"got {_shown(contract['play'])}")
    if "name" in contract:
        name = contract["name"]
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS \
                or any(unicodedata.category(ch)[0] == "C" for ch in name):
            raise ExportError(f"{path!r}: metadata field 'name' must be text of at most {MAX_NAME_CHARS} "
                              f"characters without control characters, got {_shown(name)}")
    if settings is None:
        return
    game = settings if isinstance(settings, Settings) else make_settings(**settings)
    wanted, had = game.to_dict(), trained.to_dict()
    differ = sorted(k for k in wanted if k not in MATCH_CONTEXT and had[k] != wanted[k])
    if differ:
        raise ExportError(f"{path!r} was trained for another game: " + ", ".join(
            f"{k}={had[k]!r} (asked {wanted[k]!r})" for k in differ))
    if ObservationLayout(game).size != size or game.num_actions != actions:
        raise ExportError(f"{path!r} reads observations of size {size} with {actions} actions; this game has "
                          f"{ObservationLayout(game).size} and {game.num_actions}")


def probe_forward(forward: Any, contract: Mapping[str, Any], path: str, device: str = "cpu") -> None:
    """Run `forward` once on a tiny batch (zero observations, every action legal in one row,
    one action in the other); [`ExportError`][pisti_env.agents.exported.ExportError] naming `path` unless it returns
    floating `[B, num_actions]` log-probabilities without NaN."""
    import torch

    size, actions = contract["observation_size"], contract["num_actions"]
    observation = torch.zeros(PROBE_BATCH, size, dtype=torch.float32, device=device)
    mask = torch.zeros(PROBE_BATCH, actions, dtype=torch.bool, device=device)
    mask[0] = True
    mask[1:, 0] = True
    try:
        with torch.no_grad():
            out = forward(observation, mask)
    except Exception as err:  # torch and onnxruntime raise several types; a program may raise any
        raise ExportError(f"{path!r}: the policy fails on a test input: {brief_error(err)}") from None
    if not isinstance(out, torch.Tensor):
        raise ExportError(f"{path!r}: the policy returns {type(out).__name__}, not a tensor of log-probabilities")
    if tuple(out.shape) != (PROBE_BATCH, actions) or not out.is_floating_point():
        raise ExportError(f"{path!r}: the policy returns {out.dtype} of shape {list(out.shape)} for a batch of "
                          f"{PROBE_BATCH}; an export returns float log-probabilities of shape [batch, {actions}]")
    if bool(torch.isnan(out).any()):
        raise ExportError(f"{path!r}: the policy returns NaN on a test input")


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
    except (OSError, RuntimeError, ValueError) as err:
        raise ExportError(f"cannot read the exported policy {path!r}: {brief_error(err)}") from None
    if not text:
        raise ExportError(f"{path!r} has no {CONTRACT_KEY!r} metadata: not written by pisti-export")
    if len(text) > MAX_CONTRACT_BYTES:
        raise ExportError(f"{path!r}: its {CONTRACT_KEY!r} metadata is {len(text)} bytes, more than the "
                          f"{MAX_CONTRACT_BYTES} it may have")
    try:
        contract = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ExportError(f"{path!r}: its {CONTRACT_KEY!r} metadata is not JSON (or nests too deeply)") from None
    return forward, contract


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


class ExportedPolicy:
    """An exported policy as a [`Player`][pisti_env.agents.base.Player] with a batched form.

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
        """The action for one decision (a [`SeatView`][pisti_env.SeatView] or the env's observation dict)."""
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

        try:
            with torch.no_grad():
                return self._forward(observation.float(), mask.bool())
        except RuntimeError as err:  # a TorchScript failure: one line, not the interpreter's dump
            raise ExportError(f"exported policy {self.name!r} failed: {brief_error(err)}") from None

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
    `ExportError`); ``device``: where a TorchScript module runs (ONNX runs on the CPU);
    ``play``: as [`ExportedPolicy`][pisti_env.agents.exported.ExportedPolicy]. Raises
    [`ExportError`][pisti_env.agents.exported.ExportError] naming the file for a file that cannot
    be read, without a well-formed and fitting contract
    ([`check_contract`][pisti_env.agents.exported.check_contract]), or whose function fails on
    a test input ([`probe_forward`][pisti_env.agents.exported.probe_forward]).
    """
    path = os.fspath(path)
    forward, contract = _open(path, device)
    check_contract(contract, path, settings)
    probe_forward(forward, contract, path, device if not path.endswith(".onnx") else "cpu")
    return ExportedPolicy(forward, contract, play=play, name=contract.get("name") or os.path.basename(path))
