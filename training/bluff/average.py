"""Fictitious play for R29's two mixed decisions: the average of the answer and claim heads.

Self-play PPO on the claim (bluff or not) and the answer (believe or challenge) circles the
equilibrium: each head becomes a best response to the other's current form, then the other
answers that (docs/research/bluff-exploitability.md). Fictitious play converges instead, in the *average*: each
side plays a best response to the other's average strategy so far, and the average of those best
responses tends to an equilibrium in a two-player zero-sum game.

A run with ``average_heads_every`` does that for the two small heads
(`ClaimView`, `ClaimChanceView`):

* the run's own heads are the *current* ones, trained by PPO as usual;
* `HeadAverage` keeps frozen copies of them, one every ``average_heads_every`` updates
  (at most ``average_heads_size``: when full, every other copy goes and copies are taken half as
  often, so the members stay evenly spread over the whole run, the uniform average of fictitious
  play);
* in self-play games one side decides its claims and answers with the current heads and the
  other sides with the average (`HeadAverage.heads`, an
  `AveragedHead` each: the members' mean probability); only the
  current side's claim and answer decisions train the heads (the average side's are not the
  policy's own draws), while every seat's card plays train the rest as before;
* the policy the run ships is the network with the average heads (`HeadAverage.policy`):
  the average strategy, not the last best response.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from pisti_env.policies.claim_heads import AveragedHead, without_claim_heads
from pisti_env.policies.network import PolicyNetwork


class HeadAverage:
    """Frozen copies of a policy's answer and claim heads, evenly spread over a run.

    Args:
        network: the run's policy network (a bluff-variant network with both heads, plain or
            averaged); its heads are the first member (for an averaged network, its members).
        capacity: the most members kept (>= 2).
    """

    def __init__(self, network: PolicyNetwork, capacity: int) -> None:
        if capacity < 2:
            raise ValueError(f"the head average keeps at least 2 members, got capacity {capacity!r}")
        if getattr(network, "answer_head", None) is None or getattr(network, "claim_head", None) is None:
            raise ValueError("a head average needs a policy with an answer head and a claim head")
        self.capacity = int(capacity)
        self.stride = 1  # offers between members
        self.offers = 0  # offers so far (the first member is offer 0)
        self.members: list[tuple[int, nn.Sequential, nn.Sequential]] = []  # (offer, answer head, claim head)
        self._template = network
        self._heads: tuple[AveragedHead, AveragedHead] | None = None
        if isinstance(network.answer_head, AveragedHead):
            for i in range(network.answer_head.members):
                self.members.append((i, *self.member_heads(network, i)))
            self.offers = len(self.members) - 1
            while len(self.members) > self.capacity:
                self._thin()
        else:
            self.members.append((0, *self._copies(network)))

    @classmethod
    def member_heads(cls, network: PolicyNetwork, index: int) -> tuple[nn.Sequential, nn.Sequential]:
        """Member ``index`` of an averaged network (``average_heads``), as a pair of plain heads."""
        answer, claim = cls.blank_heads(network)
        network.answer_head.member(index, answer)
        network.claim_head.member(index, claim)
        return answer, claim

    @staticmethod
    def blank_heads(network: PolicyNetwork) -> tuple[nn.Sequential, nn.Sequential]:
        """A pair of plain (untrained) heads of ``network``'s shapes, frozen."""
        return network.extension.blank_heads(next(network.parameters()).device)

    @staticmethod
    def _copies(network: PolicyNetwork) -> tuple[nn.Sequential, nn.Sequential]:
        return (copy.deepcopy(network.answer_head).requires_grad_(False),
                copy.deepcopy(network.claim_head).requires_grad_(False))

    def _thin(self) -> None:
        """Keep every other member (on the doubled grid of offers) and take copies half as often."""
        self.stride *= 2
        self.members = [m for m in self.members if m[0] % self.stride == 0]

    def offer(self, network: PolicyNetwork) -> bool:
        """The schedule's next copy of ``network``'s current heads: kept when it falls on the
        grid (every ``stride``-th offer); returns whether it was."""
        self.offers += 1
        if self.offers % self.stride:
            return False
        self.members.append((self.offers, *self._copies(network)))
        if len(self.members) > self.capacity:
            self._thin()
        self._heads = None
        return True

    def heads(self) -> tuple[AveragedHead, AveragedHead]:
        """The average as an (answer head, claim head) pair for
        `forward`'s ``heads``."""
        if self._heads is None:
            n, views = self._template, self._template.extension
            answer = AveragedHead(views.claim_view.size, n.spec.answer_hidden_sizes, 2, len(self.members))
            claim = AveragedHead(views.claim_chance_view.size, n.spec.claim_hidden_sizes, 1, len(self.members))
            answer.load_members([m[1] for m in self.members])
            claim.load_members([m[2] for m in self.members])
            device = next(n.parameters()).device
            self._heads = (answer.to(device), claim.to(device))
        return self._heads

    def policy(self, network: PolicyNetwork) -> PolicyNetwork:
        """``network`` with the average heads in place of its own: the policy the run ships
        (a new, frozen module; ``network`` is left as it is)."""
        averaged = PolicyNetwork(network.spec.replace(average_heads=len(self.members)))
        averaged = averaged.to(next(network.parameters()).device)
        own = without_claim_heads(network.state_dict())
        answer, claim = self.heads()
        state = {**own, **{f"answer_head.{k}": v for k, v in answer.state_dict().items()},
                 **{f"claim_head.{k}": v for k, v in claim.state_dict().items()}}
        averaged.load_state_dict(state)
        return averaged.eval().requires_grad_(False)

    # -------------------------------------------------------------- checkpoints
    def state(self) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """(tensors, plain values) for a training checkpoint: every member's weights
        (``average.{i}.answer.*``, ``average.{i}.claim.*``) and the schedule."""
        tensors: dict[str, torch.Tensor] = {}
        for i, (_offer, answer, claim) in enumerate(self.members):
            tensors.update({f"average.{i}.answer.{k}": v for k, v in answer.state_dict().items()})
            tensors.update({f"average.{i}.claim.{k}": v for k, v in claim.state_dict().items()})
        return tensors, {"offers": self.offers, "stride": self.stride, "member_offers": [m[0] for m in self.members]}

    def layout(self, extra: dict[str, Any]) -> dict[str, tuple[int, ...]]:
        """The tensor shapes `state` writes for a schedule ``extra`` (its plain values)."""
        answer, claim = self.blank_heads(self._template)
        shapes = {}
        for i in range(len(extra["member_offers"])):
            shapes.update({f"average.{i}.answer.{k}": tuple(v.shape) for k, v in answer.state_dict().items()})
            shapes.update({f"average.{i}.claim.{k}": tuple(v.shape) for k, v in claim.state_dict().items()})
        return shapes

    def restore(self, tensors: dict[str, torch.Tensor], extra: dict[str, Any]) -> None:
        """Back to a checkpoint's `state`."""
        self.members = []
        for i, offer in enumerate(extra["member_offers"]):
            answer, claim = self.blank_heads(self._template)
            answer.load_state_dict({k.split(".", 3)[3]: v for k, v in tensors.items() if k.startswith(f"average.{i}.answer.")})
            claim.load_state_dict({k.split(".", 3)[3]: v for k, v in tensors.items() if k.startswith(f"average.{i}.claim.")})
            self.members.append((int(offer), answer, claim))
        self.offers, self.stride = int(extra["offers"]), int(extra["stride"])
        self._heads = None
