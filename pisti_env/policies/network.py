"""The policy network and the masked categorical distribution over its actions: what playing a
policy needs (the loader builds it, ``pisti_env.policies.loader``; the trainer trains it with
its value network, ``training.trainer.network``).

One policy network serves every seat (self-play shares parameters): the observation is
seat-relative (``pisti_env.views.observation``), so "me" is always the observer.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from ..rules.actions import BELIEVE, NUM_BLUFF_ACTIONS, NUM_PLAIN_ACTIONS
from ..batched.draws import draw_bluffs
from ..rules.cards import NUM_CARD_IDS, NUM_RANKS
from ..rules.settings import Settings
from .spec import NetworkSpec

NUM_ACTIONS = NUM_PLAIN_ACTIONS  # card ids (R2): the action space without the bluff variant
NUM_SUITS = NUM_CARD_IDS // NUM_RANKS


def mlp(input_size: int, hidden_sizes: Sequence[int], output_size: int, output_gain: float) -> nn.Sequential:
    """Linear layers with tanh between them; orthogonal initialisation as in CleanRL."""
    layers: list[nn.Module] = []
    width = input_size
    for hidden in hidden_sizes:
        layers += [_orthogonal(nn.Linear(width, hidden)), nn.Tanh()]
        width = hidden
    layers.append(_orthogonal(nn.Linear(width, output_size), gain=output_gain))
    return nn.Sequential(*layers)


class PolicyNetwork(nn.Module):
    """Observation -> raw action logits (mask them with ``log_probs``): 52 cards, or 106
    actions with the bluff variant (R29: 52 face up, 52 face down, believe, challenge).

    An MLP reads the whole observation into a context vector; from it, each card play's logit
    is the sum of two heads:

    * an *action head*, one output per action id (a flat policy head): what is special about
      this very card (the 2♣, the 10♦, a Jack) in this situation; the answers to a claim have
      this head only;
    * a *feature head*, shared by all 52 cards: the context sets one weight per card feature
      (one set per way of playing a card), and a card's score is its features (its own ``K``
      features, and the same ``K`` summed over the four cards of its rank: how many of this
      rank I hold, have seen played or captured, whether one tops the pile...) weighted by them.
      "A card of a rank that is mostly gone is a safe discard" is learned once for all cards
      instead of 52 times over.

    Extension point (network heads): a ``spec`` with R29's research options (an answer head, a
    claim head, solved claims: ``pisti_env.policies.spec.NetworkSpec``) gets
    ``pisti_env.policies.claim_heads.ClaimHeads`` as ``self.extension``: its modules are
    registered here under their own names and it rescores the plays and answers
    (``pisti_env.policies.claim_heads.ClaimHeads.logits``).

    Args:
        spec: the game and the sizes (``pisti_env.policies.spec.NetworkSpec.layout`` gives
            the observation size and the card features, ``K``).
    """

    def __init__(self, spec: NetworkSpec) -> None:
        super().__init__()
        layout = spec.layout
        self.spec = spec
        self.observation_size = layout.size
        self.card_features = k = layout.num_card_features
        self.hidden_sizes = spec.hidden_sizes
        self.num_actions = spec.settings.num_actions
        if self.num_actions not in (NUM_ACTIONS, NUM_BLUFF_ACTIONS):  # pragma: no cover - Settings' own
            raise ValueError(f"num_actions must be {NUM_ACTIONS} or {NUM_BLUFF_ACTIONS} (bluff, R29), got {self.num_actions!r}")
        self.plays = 2 if self.num_actions == NUM_BLUFF_ACTIONS else 1  # face up (and face down)
        self.context = mlp(self.observation_size, spec.hidden_sizes[:-1], spec.hidden_sizes[-1], output_gain=2**0.5)
        # Small-gain heads: the policy starts near uniform over the legal actions.
        self.card_head = _orthogonal(nn.Linear(spec.hidden_sizes[-1], self.num_actions), gain=0.01)
        self.feature_head = _orthogonal(nn.Linear(spec.hidden_sizes[-1], self.plays * 2 * k), gain=0.01)
        self.extension = None
        if spec.has_heads:
            from .claim_heads import ClaimHeads  # the research heads plug in here (see above); it imports mlp

            self.extension = ClaimHeads(spec)
            for name, module in self.extension.modules().items():
                setattr(self, name, module)

    def forward(self, observation: torch.Tensor, heads: tuple[nn.Module, ...] | None = None) -> torch.Tensor:
        """The raw logits (B, num_actions). ``heads``: modules the extension uses instead of
        the policy's own (``pisti_env.policies.claim_heads.ClaimHeads.logits``)."""
        batch, k = observation.shape[0], self.card_features
        context = torch.tanh(self.context(observation))
        logits = self.card_head(context).float()
        weights = self.feature_head(context).float().view(batch, self.plays, 1, 2 * k)
        cards = observation[:, : NUM_ACTIONS * k].reshape(batch, 1, NUM_ACTIONS, k)
        # (Products and sums rather than batched matrix products: these are tiny per row.)
        own = (cards * weights[..., :k]).sum(3)  # (B, plays, 52)
        # Card id = suit * 13 + rank (pisti_env.rules.cards): summing over suits gives ranks.
        of_rank = cards.view(batch, 1, NUM_SUITS, NUM_RANKS, k).sum(2)
        by_rank = (of_rank * weights[..., k:]).sum(3)  # (B, plays, 13)
        per_card = (own + by_rank.repeat(1, 1, NUM_SUITS)).view(batch, self.plays * NUM_ACTIONS)
        if self.plays == 1:
            return logits + per_card
        plays, answers = logits[:, :BELIEVE] + per_card, logits[:, BELIEVE:]  # answers: no card term
        if self.extension is not None:
            return self.extension.logits(self, observation, cards[:, 0], of_rank.view(batch, NUM_RANKS, k), plays,
                                         answers, heads)
        return torch.cat([plays, answers], 1)


def policy_network(settings: Settings, hidden_sizes: Sequence[int] = (256, 256), **options: Any) -> PolicyNetwork:
    """The (untrained) policy network for the game ``settings``: ``options`` are the other
    fields of ``pisti_env.policies.spec.NetworkSpec`` (checked there)."""
    return PolicyNetwork(NetworkSpec(settings, tuple(hidden_sizes), **options))


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


def sample_bluffs(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row: R29's mixed decisions drawn, the card chosen
    (``pisti_env.batched.draws.draw_bluffs`` on the masked log-probabilities, the rule an
    exported policy plays by too). Without the bluff variant (52 actions) the most likely card."""
    return draw_bluffs(log_probs(logits, mask), generator)


def _orthogonal(layer: nn.Linear, gain: float = 2**0.5) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer
