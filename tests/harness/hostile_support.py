"""Hostile agents and malformed exports for ``test_hostile_agents.py``: factories that
``pisti-benchmark`` loads as ``hostile_support:NAME`` (with ``--trust-code``), and helpers that
write a ``pisti-export`` file with its metadata or its function replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pisti_env.agents.exported import CONTRACT_KEY


class _Base:
    """A player of the protocol (``name``, ``reset``, ``act``) that misbehaves as asked."""

    name = "pisti-2p"  # what it calls itself: the report names it by its spec all the same

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, view: Any) -> int:
        return view.legal_actions[0]


class _Illegal(_Base):
    def act(self, view: Any) -> int:
        return next(a for a in range(52) if a not in view.legal_actions)


class _ExitsInAct(_Base):
    def act(self, view: Any) -> int:
        raise SystemExit(0)


class _InterruptsItself(_Base):
    def act(self, view: Any) -> int:
        raise KeyboardInterrupt


class _DividesByZero(_Base):
    def act(self, view: Any) -> int:
        return 1 // 0


class _IllegalBatched(_Base):
    """A batched form (played on the batched engine) choosing an illegal action wherever one is."""

    def act_batch(self, observation: Any, mask: Any, generator: Any = None) -> Any:
        return mask.to(dtype=observation.dtype).argmin(1)


class _WrongShapeBatched(_Base):
    def act_batch(self, observation: Any, mask: Any, generator: Any = None) -> Any:
        return mask.nonzero()[:, 1]  # every legal action of every row: not one per row


class _RaisesInBatch(_Base):
    """A batched form (played on the batched engine) that raises at its first batch."""

    def act_batch(self, observation: Any, mask: Any, generator: Any = None) -> Any:
        raise RuntimeError("the batch went wrong")


def fails_to_build() -> _Base:
    raise LookupError("the factory went wrong")


def raises_in_act_batch() -> _Base:
    return _RaisesInBatch()


def illegal() -> _Base:
    return _Illegal()


def exits_in_act() -> _Base:
    return _ExitsInAct()


def interrupts_itself() -> _Base:
    return _InterruptsItself()


def divides_by_zero() -> _Base:
    return _DividesByZero()


def illegal_batched() -> _Base:
    return _IllegalBatched()


def wrong_shape_batched() -> _Base:
    return _WrongShapeBatched()


# ---------------------------------------------------------------------------- exports
def read_export(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """``(module, contract)`` of a TorchScript ``pisti-export`` file."""
    import torch

    files = {CONTRACT_KEY: ""}
    module = torch.jit.load(str(path), _extra_files=files)
    return module, json.loads(files[CONTRACT_KEY])


def write_export(module: Any, contract: Any, path: str | Path, raw: str | None = None) -> str:
    """Save the TorchScript ``module`` at ``path`` with ``contract`` as its metadata (``raw``:
    this text instead, for metadata that is not a contract at all)."""
    import torch

    text = json.dumps(contract) if raw is None else raw
    torch.jit.save(module, str(path), _extra_files={CONTRACT_KEY: text})
    return str(path)


def scripted(kind: str, num_actions: int) -> Any:
    """A TorchScript function of the export's signature that misbehaves: ``"raises"`` (always),
    ``"wrong-shape"`` (``[B, num_actions - 1]`` log-probabilities), ``"zeros"`` (equal
    log-probabilities for every action, legal or not: its argmax, action 0, is often illegal)."""
    import torch
    from torch import nn

    class Raises(nn.Module):
        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
            if bool(observation.sum() >= 0):
                raise RuntimeError("this export always fails")
            return observation

    class WrongShape(nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.width = width

        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
            return torch.zeros(observation.shape[0], self.width)

    class Zeros(nn.Module):
        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
            return torch.zeros(action_mask.shape, dtype=torch.float32)

    module = {"raises": lambda: Raises(), "wrong-shape": lambda: WrongShape(num_actions - 1),
              "zeros": lambda: Zeros()}[kind]()
    return torch.jit.script(module)
