"""The networks a run trains: the policy network (`PolicyNetwork`, with the masked
distribution over its actions, lives in `pisti_env.policies.network`, since playing a policy
needs it without the trainer, and is re-exported here), and the value network, the precision
choice and the entropy, which only training needs.

One policy network serves every seat (self-play shares parameters): the observation is
seat-relative (`pisti_env.views.observation`), so "me" is always the observer.

The value network is a separate MLP (as in CleanRL's ``ppo.py``: no shared trunk, so the value
loss never pulls on the policy's features) and may be *privileged*: during training it also
reads what the deciding seat cannot see, the other hands and the stock's contents
([`pisti_env.batched.BatchedPisti.hidden_information`][pisti_env.batched.BatchedPisti.hidden_information]). The value only ever serves as the
baseline of the advantages, never at play time, so no hidden information reaches a decision;
but a critic that knows the hands predicts a hand's outcome far better, which takes most of
the deal luck out of the advantages (the asymmetric actor-critic of card-game agents such as
Suphx and PerfectDou).
"""

from __future__ import annotations

import contextlib
import platform
from typing import Sequence

import torch
from torch import nn

from pisti_env.policies.network import (  # noqa: F401 - re-exported: the policy network's home
    NUM_ACTIONS, NUM_SUITS, PolicyNetwork, _orthogonal, log_probs, masked_logits, mlp, policy_network, sample,
    sample_bluffs,
)
from pisti_env.policies.spec import NetworkSpec

PRECISIONS = ("fp32", "bf16")

__all__ = [
    "NUM_ACTIONS", "NUM_SUITS", "PRECISIONS", "ActorCritic", "PolicyNetwork", "ValueNetwork", "autocast",
    "cpu_has_fast_bf16", "entropy", "log_probs", "masked_logits", "mlp", "policy_network", "resolve_precision",
    "sample", "sample_bluffs",
]


class ValueNetwork(nn.Module):
    """(Observation, hidden information) -> expected rest-of-episode reward of the observer.
    ``hidden_size`` 0 makes it a plain critic of the observation alone.

    The first layer reads the two inputs through two weight matrices whose outputs are added
    (the same function as one layer over their concatenation, without copying every minibatch
    into a concatenated tensor first)."""

    def __init__(self, observation_size: int, hidden_size: int, hidden_sizes: Sequence[int] = (128, 128)) -> None:
        super().__init__()
        if not hidden_sizes:
            raise ValueError("the value network needs at least one hidden layer")
        self.observation_size = observation_size
        self.hidden_size = hidden_size
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        self.observation_layer = _orthogonal(nn.Linear(observation_size, self.hidden_sizes[0]))
        self.hidden_layer = _orthogonal(nn.Linear(hidden_size, self.hidden_sizes[0], bias=False)) if hidden_size else None
        self.rest = mlp(self.hidden_sizes[0], self.hidden_sizes[1:], 1, output_gain=1.0)

    def forward(self, observation: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        x = self.observation_layer(observation)
        if self.hidden_layer is not None:
            if hidden is None:
                raise ValueError("this value network is privileged: pass the hidden information too")
            x = x + self.hidden_layer(hidden)
        return self.rest(torch.tanh(x)).squeeze(-1).float()


class ActorCritic(nn.Module):
    """The two networks a run trains (state-dict keys ``policy.*`` and ``value.*``); a shipped
    policy keeps only ``policy.*``. ``hidden_information_size``: what the value network reads
    beyond the observation (0: a plain critic)."""

    def __init__(
        self, spec: NetworkSpec, hidden_information_size: int = 0, value_hidden_sizes: Sequence[int] = (128, 128)
    ) -> None:
        super().__init__()
        self.policy = PolicyNetwork(spec)
        self.value = ValueNetwork(self.policy.observation_size, hidden_information_size, value_hidden_sizes)




def resolve_precision(precision: str, device: torch.device | str) -> str:
    """``"auto"`` -> ``"bf16"`` where bfloat16 matrix products are fast (a GPU with bf16, a CPU
    with `cpu_has_fast_bf16`), else ``"fp32"``; ``"bf16"``/``"fp32"`` pass through. The
    choice depends on the machine only, never on a timing, so a seed still fixes the run."""
    if precision not in PRECISIONS + ("auto",):
        raise ValueError(f"precision must be one of {PRECISIONS + ('auto',)}, got {precision!r}")
    if precision != "auto":
        return precision
    device = torch.device(device)
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if device.type == "cpu" and cpu_has_fast_bf16() else "fp32"


def cpu_has_fast_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices faster than float32 ones.

    On x86 that takes AMX (Sapphire Rapids and later, with the tiles enabled by the OS): there
    oneDNN's bf16 products about double the networks' speed. AVX-512 BF16 alone is not enough,
    though mkldnn calls bf16 "supported" there (and on any AVX-512 CPU): on a 2-core Xeon VM
    with AVX-512 BF16 and no AMX, a (8192 x 556) @ (556 x 256) product took 27.8 ms in bf16
    against 16.6 ms in fp32, and the default training run 19.5k steps/s against 27.9k. Other
    architectures (Arm's BF16 extension) keep mkldnn's own check."""
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
        return _amx_usable() and bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def _amx_usable() -> bool:
    """Whether the CPU has AMX tiles and the OS lets this process use them (torch's private
    helpers, as inductor uses them; a torch without them: no)."""
    init = getattr(torch.cpu, "_init_amx", None)  # asks Linux for the tile state: False without it
    if init is not None:
        return bool(init())
    supported = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(supported is not None and supported())


def autocast(device: torch.device | str, precision: str) -> contextlib.AbstractContextManager:
    """Matrix products in bfloat16 when ``precision == "bf16"`` (weights, optimizer state and
    everything after the last layer stay float32): on CPUs with AMX and on GPUs this about
    doubles the speed of the networks (see `cpu_has_fast_bf16`)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    device_type = torch.device(device).type
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16")


def entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked distribution, over legal cards only."""
    p = logp.exp()
    return -(p * logp).masked_fill(~mask, 0.0).sum(-1)
