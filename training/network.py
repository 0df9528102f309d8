"""The actor-critic network and the masked categorical distribution over cards.

One network serves every seat (self-play shares parameters): the observation is seat-relative
(:mod:`pisti_env.observation`), so "me" is always the observer.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

NUM_ACTIONS = 52


class ActorCritic(nn.Module):
    """An MLP trunk with a policy head (52 card logits) and a value head.

    Args:
        observation_size: length of the observation vector.
        hidden_sizes: widths of the trunk's hidden layers (tanh activations, orthogonal
            initialisation as in CleanRL; a small-gain policy head starts near uniform).
    """

    def __init__(self, observation_size: int, hidden_sizes: Sequence[int] = (256, 256)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = observation_size
        for hidden in hidden_sizes:
            layers += [_orthogonal(nn.Linear(width, hidden)), nn.Tanh()]
            width = hidden
        self.trunk = nn.Sequential(*layers)
        self.policy_head = _orthogonal(nn.Linear(width, NUM_ACTIONS), gain=0.01)
        self.value_head = _orthogonal(nn.Linear(width, 1), gain=1.0)
        self.observation_size = observation_size
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw (unmasked) logits (N, 52) and values (N,)."""
        features = self.trunk(observation)
        return self.policy_head(features), self.value_head(features).squeeze(-1)

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.trunk(observation)).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal cards get the most negative float, so they have probability exactly 0 and never
    produce NaNs (unlike -inf times a zero probability in the entropy)."""
    return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)


def log_probs(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over cards with the illegal ones masked out (rows sum to 1 in prob)."""
    return torch.log_softmax(masked_logits(logits, mask), dim=-1)


def sample(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One card per row from the masked distribution (Gumbel-max, reproducible with
    ``generator``)."""
    uniform = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(1e-10, 1.0)
    return (masked_logits(logits, mask) - torch.log(-torch.log(uniform))).argmax(-1)


def entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked distribution, over legal cards only."""
    p = logp.exp()
    return -(p * logp).masked_fill(~mask, 0.0).sum(-1)


def _orthogonal(layer: nn.Linear, gain: float = 2**0.5) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer
