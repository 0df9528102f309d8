"""R29's research heads, plugged into the core policy network (``pisti_env.policies.network.PolicyNetwork``).

The core network scores the bluff variant's plays and answers from its context like any other
action. ``ClaimHeads`` (the network-heads extension point) changes how two mixed
decisions are scored, as the ``pisti_env.policies.spec.NetworkSpec`` asks:

* ``answer_hidden_sizes``: believe or challenge from an *answer head* of its own, a small MLP
  reading only ``ClaimView``'s facts;
* ``claim_hidden_sizes``: face down or face up on a lone card from a *claim head* of its own,
  a small MLP reading only ``ClaimChanceView``'s facts; the policy is then factored as
  P(face down) = sigmoid(claim head) and, within each kind, the softmax of the card logits over
  the cards held. Where no claim is allowed the face-down actions are masked, and the factoring
  shifts every face-up logit of a row by one constant: the distribution there is the card
  logits' own;
* ``average_heads``: both heads are ``AveragedHead`` s, the fictitious-play average of
  ``training.bluff.average``;
* ``solved_claims``: the claims and answers from the claim game's equilibrium
  (``pisti_env.policies.claim_game.SolvedClaims``), no head at all.

The heads are registered on the policy under their own names (state-dict keys
``answer_head.*``, ``claim_head.*``), built right after the core heads, so a run's
initialisation and parameter order do not depend on where this code lives. A checkpoint with
these options loads and plays without the trainer; how they are trained (warm starts, the
average, the solved claims' command) is ``training.bluff``'s.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import torch
from torch import nn

from ..rules.actions import BELIEVE, CHALLENGE
from ..rules.cards import NUM_CARD_IDS, NUM_RANKS
from ..views.observation import ObservationLayout
from .network import mlp
from .spec import NetworkSpec

from .claim_game import SolvedClaims

CLAIM_HEADS = ("answer_head.", "claim_head.")  # state-dict prefixes of R29's two small heads


def without_claim_heads(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A policy network's ``state`` (state dict) without R29's answer and claim heads
    (``CLAIM_HEADS``): what a network with other heads, or none, takes from it."""
    return {k: v for k, v in state.items() if not k.startswith(CLAIM_HEADS)}


def lone_rank(of_rank: torch.Tensor, top: int) -> tuple[torch.Tensor, torch.Tensor]:
    """R29's lone card as both claim views read it, from the card block summed over suits
    ``of_rank`` (B, 13, K) and the pile-top feature's index ``top``: its rank (B, 13), one-hot
    where the pile has a top card (a claim waits, or may be made, on a lone card), and the
    rank's sum of every card feature (B, K): where its four cards are as the observer knows."""
    lone = of_rank[:, :, top]
    return lone, (of_rank * lone[:, :, None]).sum(1)


class ClaimView:
    """What the answer to a claim (R29) reads when it has a head of its own: the facts that bear
    on whether the claim is true, picked out of the answerer's observation, and nothing else.

    * the lone card's rank (one-hot, 13): it is the pile's top card while a claim waits;
    * where the four cards of that rank are, as the answerer knows them: the rank's sum of
      every card feature (in its own hand, captured, played, the shown stock bottom, unseen...),
      so how many could be in the claimant's hand;
    * the claimant's cards in hand (the more it holds, the likelier it holds the rank) and the
      stock's size (scaled as in the observation).

    The rest of the state (scores, who captured last, the dealer, the other cards) stays out:
    a best response finds and uses every way in which the answer depends on such things (the
    shipped context-reading answers believed 73% of a best response's bluffs yet challenged 49%
    of its true claims). With the answers reading only these, a best response to the policy
    stopped bluffing altogether (docs/research/bluff-exploitability.md: it then took its edge from the
    policy's own bluffs instead).
    """

    def __init__(self, layout: ObservationLayout) -> None:
        if not layout.settings.bluff:
            raise ValueError("a claim view needs the bluff variant (R29)")
        self.card_features = layout.num_card_features
        self.top = layout.feature_index["pile_top"]
        self.hand_sizes = layout.by_name["hand_sizes"].slice
        self.claimant = layout.by_name["claimant"].slice
        self.stock = layout.by_name["stock_size"].slice
        self.size = NUM_RANKS + self.card_features + 2

    def __call__(self, observation: torch.Tensor, of_rank: torch.Tensor) -> torch.Tensor:
        """(B, size) from the observations (B, observation_size) and their card block summed
        over suits, ``of_rank`` (B, 13, K)."""
        lone, where = lone_rank(of_rank, self.top)
        claimant_hand = (observation[:, self.claimant] * observation[:, self.hand_sizes]).sum(1, keepdim=True)
        return torch.cat([lone, where, claimant_hand, observation[:, self.stock]], 1)


class ClaimChanceView:
    """What the choice to claim (R29: face down or face up on a lone card) reads when it has a
    head of its own: the facts the answerer can weigh too, seen from the claimant's side.

    * the lone card's rank (one-hot, 13);
    * where the four cards of that rank are, as the claimant knows them (the rank's sum of
      every card feature): above all whether it holds one (a true claim), and how many the
      answerer could hold;
    * every seat's cards in hand and the stock's size (scaled as in the observation).

    Nothing else reaches the choice, so its bluff rate is one function of these few facts in
    every game: a best response cannot steer the policy into states unlike its training where
    it bluffs far more (the shipped A4 made 77% of its claims bluffs against a challenging best
    response, docs/research/bluff-exploitability.md), and the answer head reads the same kind of facts.
    """

    def __init__(self, layout: ObservationLayout) -> None:
        if not layout.settings.bluff:
            raise ValueError("a claim chance view needs the bluff variant (R29)")
        self.card_features = layout.num_card_features
        self.top = layout.feature_index["pile_top"]
        self.hand = layout.feature_index["hand"]
        self.hand_sizes = layout.by_name["hand_sizes"].slice
        self.stock = layout.by_name["stock_size"].slice
        self.size = NUM_RANKS + self.card_features + layout.num_players + 1

    def __call__(self, observation: torch.Tensor, of_rank: torch.Tensor) -> torch.Tensor:
        """(B, size) from the observations (B, observation_size) and their card block summed
        over suits, ``of_rank`` (B, 13, K)."""
        lone, where = lone_rank(of_rank, self.top)
        return torch.cat([lone, where, observation[:, self.hand_sizes], observation[:, self.stock]], 1)



class AveragedHead(nn.Module):
    """The average policy of ``members`` copies of one of R29's small heads (an answer head or a
    claim head), as one module: the fictitious-play average that a run with
    ``average_heads_every`` ships (``training.bluff.average``).

    Each member is an MLP of the same shape as the head it averages (tanh between layers); their
    weights are stacked on a leading dimension (buffers ``weight{l}`` (M, out, in) and ``bias{l}``
    (M, out): frozen, never trained). The output is the head's own kind of logits for the *mean
    probability* of the members, so a draw from it is a draw from a uniformly drawn member:

    * ``outputs == 2`` (the answers, believe and challenge): log of the members' mean softmax;
    * ``outputs == 1`` (the claim's log-odds of face down): logit of the members' mean sigmoid.

    Args:
        input_size: the view's size (``ClaimView`` or ``ClaimChanceView``).
        hidden_sizes: the averaged head's hidden widths.
        outputs: 2 (answers) or 1 (claim).
        members: how many heads are averaged (M >= 1).
    """

    def __init__(self, input_size: int, hidden_sizes: Sequence[int], outputs: int, members: int) -> None:
        super().__init__()
        if outputs not in (1, 2):
            raise ValueError(f"an averaged head has 1 (claim) or 2 (answer) outputs, got {outputs!r}")
        if members < 1:
            raise ValueError(f"an averaged head needs at least one member, got {members!r}")
        self.members = members
        self.outputs = outputs
        widths = [input_size, *hidden_sizes, outputs]
        self.layers = len(widths) - 1
        for l, (width_in, width_out) in enumerate(zip(widths, widths[1:])):
            self.register_buffer(f"weight{l}", torch.zeros(members, width_out, width_in))
            self.register_buffer(f"bias{l}", torch.zeros(members, width_out))

    def load_members(self, heads: Sequence[nn.Sequential]) -> None:
        """Copy the weights of ``heads`` (plain heads from ``mlp``, ``members`` of them)."""
        if len(heads) != self.members:
            raise ValueError(f"this averaged head holds {self.members} members, got {len(heads)} heads")
        linears = [[m for m in head if isinstance(m, nn.Linear)] for head in heads]
        for l in range(self.layers):
            getattr(self, f"weight{l}").copy_(torch.stack([layers[l].weight.detach() for layers in linears]))
            getattr(self, f"bias{l}").copy_(torch.stack([layers[l].bias.detach() for layers in linears]))

    def member(self, index: int, head: nn.Sequential) -> None:
        """Copy member ``index``'s weights into ``head`` (a plain head of the same shape)."""
        linears = [m for m in head if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for l, linear in enumerate(linears):
                linear.weight.copy_(getattr(self, f"weight{l}")[index])
                linear.bias.copy_(getattr(self, f"bias{l}")[index])

    def forward(self, view: torch.Tensor) -> torch.Tensor:
        x = view.float()[None].expand(self.members, -1, -1)  # (M, B, in)
        for l in range(self.layers):
            x = torch.baddbmm(getattr(self, f"bias{l}")[:, None, :], x, getattr(self, f"weight{l}").transpose(1, 2))
            if l < self.layers - 1:
                x = torch.tanh(x)
        # x: (M, B, outputs), each member's logits; the mean probability over the members.
        log_members = torch.log(torch.tensor(float(self.members), device=x.device))
        if self.outputs == 2:
            return torch.logsumexp(torch.log_softmax(x, 2), 0) - log_members
        log_up = torch.logsumexp(nn.functional.logsigmoid(-x), 0) - log_members  # log mean P(face up)
        log_down = torch.logsumexp(nn.functional.logsigmoid(x), 0) - log_members
        return log_down - log_up


def _factored_plays(
    plays: torch.Tensor, held: torch.Tensor, odds: torch.Tensor, face_down: torch.Tensor | None = None
) -> torch.Tensor:
    """(B, 104) face-up then face-down logits whose softmax over the cards ``held`` (B, 52)
    is P(face down) = sigmoid(``odds`` (B, 1)) times the softmax of the face-down logits over
    ``held``, and the same for face up with 1 - sigmoid. ``face_down`` (B, 52), a subset of
    ``held``: the only cards played face down (the rest get the most negative logit there),
    where a row has any. A row without a held card (an answer with an empty hand: its plays
    are all masked) is left as it is."""
    floor = torch.finfo(plays.dtype).min
    kinds = plays.view(-1, 2, NUM_CARD_IDS)
    allowed = held[:, None, :].expand(-1, 2, -1)
    if face_down is not None:
        allowed = torch.stack([held, torch.where(face_down.any(1, keepdim=True), face_down, held)], 1)
    norm = torch.logsumexp(kinds.masked_fill(~allowed, floor), 2, keepdim=True)  # (B, 2, 1)
    norm = torch.where(held.any(1)[:, None, None], norm, 0.0)
    kind = torch.stack([nn.functional.logsigmoid(-odds), nn.functional.logsigmoid(odds)], 1)  # (B, 2, 1)
    out = kinds - norm + kind
    if face_down is not None:
        out = out.masked_fill(held[:, None, :] & ~allowed, floor)
    return out.view_as(plays)



class ClaimHeads:
    """The network-heads extension of R29's research (see the module docstring): what a
    ``pisti_env.policies.network.PolicyNetwork`` of a ``spec`` with an answer head, a claim
    head or solved claims adds to the core scoring. Holds no parameters itself: its heads are
    registered on the policy (``modules``) and read from there (``logits``), so copies
    and state dicts of the policy carry them."""

    def __init__(self, spec: NetworkSpec) -> None:
        layout = ObservationLayout(spec.settings)
        self.spec = spec
        self.claim_view = ClaimView(layout) if spec.answer_hidden_sizes else None
        self.claim_chance_view = ClaimChanceView(layout) if spec.claim_hidden_sizes else None
        self.solved_claims = (SolvedClaims(layout, spec.claim_capture_value, spec.claim_capture_value_last_deal)
                              if spec.solved_claims else None)

    def modules(self) -> dict[str, nn.Module | None]:
        """The policy's extra modules by name, built in this order (the answer head first)."""
        answer = self._head(self.spec.answer_hidden_sizes, self.claim_view, CHALLENGE - BELIEVE + 1)
        # One logit: the log-odds of face down (it starts near 0: even odds).
        claim = self._head(self.spec.claim_hidden_sizes, self.claim_chance_view, 1)
        return {"answer_head": answer, "claim_head": claim}

    def _head(self, sizes: tuple[int, ...], view: ClaimView | ClaimChanceView | None, outputs: int) -> nn.Module | None:
        if not sizes:
            return None
        if self.spec.average_heads:
            return AveragedHead(view.size, sizes, outputs, self.spec.average_heads)
        return mlp(view.size, sizes, outputs, output_gain=0.01)

    def blank_heads(self, device: torch.device | str) -> tuple[nn.Sequential, nn.Sequential]:
        """A pair of plain (untrained, frozen) answer and claim heads of this spec's shapes."""
        answer = mlp(self.claim_view.size, self.spec.answer_hidden_sizes, 2, output_gain=0.01)
        claim = mlp(self.claim_chance_view.size, self.spec.claim_hidden_sizes, 1, output_gain=0.01)
        return answer.to(device).requires_grad_(False), claim.to(device).requires_grad_(False)

    def logits(
        self, policy: nn.Module, observation: torch.Tensor, cards: torch.Tensor, of_rank: torch.Tensor,
        plays: torch.Tensor, answers: torch.Tensor, heads: tuple[nn.Module, nn.Module] | None = None,
    ) -> torch.Tensor:
        """The (B, 106) logits from the core's ``plays`` (B, 104) and ``answers`` (B, 2), the
        observations, their card block ``cards`` (B, 52, K) and its sum over suits ``of_rank``
        (B, 13, K). ``heads``: an (answer head, claim head) pair used instead of the policy's
        own (the opponents' average heads in a fictitious-play run)."""
        answer_head, claim_head = (policy.answer_head, policy.claim_head) if heads is None else heads
        if answer_head is not None:
            answers = answer_head(self.claim_view(observation, of_rank)).float()
        if self.solved_claims is not None:
            odds, face_down, answers = self.solved_claims(observation, cards)
            held = cards[:, :, self.solved_claims.hand] > 0
            return torch.cat([_factored_plays(plays, held, odds, face_down), answers], 1)
        if claim_head is not None:
            odds = claim_head(self.claim_chance_view(observation, of_rank)).float()
            plays = _factored_plays(plays, cards[:, :, self.claim_chance_view.hand] > 0, odds)
        return torch.cat([plays, answers], 1)
