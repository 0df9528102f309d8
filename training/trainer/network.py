"""The policy and value networks, and the masked categorical distribution over cards.

One policy network serves every seat (self-play shares parameters): the observation is
seat-relative (:mod:`pisti_env.observation`), so "me" is always the observer.

The value network is a separate MLP (as in CleanRL's ``ppo.py``: no shared trunk, so the value
loss never pulls on the policy's features) and may be *privileged*: during training it also
reads what the deciding seat cannot see, the other hands and the stock's contents
(:meth:`pisti_env.batched.BatchedPisti.hidden_information`). The value only ever serves as the
baseline of the advantages, never at play time, so no hidden information reaches a decision;
but a critic that knows the hands predicts a hand's outcome far better, which takes most of
the deal luck out of the advantages (the asymmetric actor-critic of card-game agents such as
Suphx and PerfectDou).
"""

from __future__ import annotations

import contextlib
import platform
from typing import Any, Sequence

import torch
from torch import nn

from pisti_env.actions import BELIEVE, NUM_BLUFF_ACTIONS, NUM_PLAIN_ACTIONS
from pisti_env.batched.draws import draw_bluffs
from pisti_env.cards import NUM_CARD_IDS, NUM_RANKS

from pisti_env.rules import Settings

from .spec import NetworkSpec

NUM_ACTIONS = NUM_PLAIN_ACTIONS  # card ids (R2): the action space without the bluff variant
NUM_SUITS = NUM_CARD_IDS // NUM_RANKS
PRECISIONS = ("fp32", "bf16")


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
    """Observation -> raw action logits (mask them with :func:`log_probs`): 52 cards, or 106
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
    claim head, solved claims: :class:`~training.trainer.spec.NetworkSpec`) gets
    :class:`training.bluff.heads.ClaimHeads` as ``self.extension``: its modules are registered
    here under their own names and it rescores the plays and answers
    (:meth:`~training.bluff.heads.ClaimHeads.logits`).

    Args:
        spec: the game and the sizes (:meth:`~training.trainer.spec.NetworkSpec.layout` gives
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
            from training.bluff.heads import ClaimHeads  # the research heads plug in here (see above)

            self.extension = ClaimHeads(spec)
            for name, module in self.extension.modules().items():
                setattr(self, name, module)

    def forward(self, observation: torch.Tensor, heads: tuple[nn.Module, ...] | None = None) -> torch.Tensor:
        """The raw logits (B, num_actions). ``heads``: modules the extension uses instead of
        the policy's own (:meth:`training.bluff.heads.ClaimHeads.logits`)."""
        batch, k = observation.shape[0], self.card_features
        context = torch.tanh(self.context(observation))
        logits = self.card_head(context).float()
        weights = self.feature_head(context).float().view(batch, self.plays, 1, 2 * k)
        cards = observation[:, : NUM_ACTIONS * k].reshape(batch, 1, NUM_ACTIONS, k)
        # (Products and sums rather than batched matrix products: these are tiny per row.)
        own = (cards * weights[..., :k]).sum(3)  # (B, plays, 52)
        # Card id = suit * 13 + rank (pisti_env.cards): summing over suits gives ranks.
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
    fields of :class:`~training.trainer.spec.NetworkSpec` (checked there)."""
    return PolicyNetwork(NetworkSpec(settings, tuple(hidden_sizes), **options))


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
    with :func:`cpu_has_fast_bf16`), else ``"fp32"``; ``"bf16"``/``"fp32"`` pass through. The
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
    doubles the speed of the networks (see :func:`cpu_has_fast_bf16`)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    device_type = torch.device(device).type
    return torch.autocast(device_type, dtype=torch.bfloat16, enabled=precision == "bf16")


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
    (:func:`pisti_env.batched.draws.draw_bluffs` on the masked log-probabilities, the rule an
    exported policy plays by too). Without the bluff variant (52 actions) the most likely card."""
    return draw_bluffs(log_probs(logits, mask), generator)


def entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked distribution, over legal cards only."""
    p = logp.exp()
    return -(p * logp).masked_fill(~mask, 0.0).sum(-1)


def _orthogonal(layer: nn.Linear, gain: float = 2**0.5) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer
