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
from typing import Mapping, Sequence

import torch
from torch import nn

from pisti_env.actions import BELIEVE, CHALLENGE, FACE_DOWN, NUM_BLUFF_ACTIONS, NUM_PLAIN_ACTIONS
from pisti_env.cards import NUM_CARD_IDS, NUM_RANKS
from pisti_env.observation import ObservationLayout
from pisti_env.rules import Settings

from .claim_game import SolvedClaims

NUM_ACTIONS = NUM_PLAIN_ACTIONS  # card ids (R2): the action space without the bluff variant
CLAIM_HEADS = ("answer_head.", "claim_head.")  # state-dict prefixes of R29's two small heads
NUM_SUITS = NUM_CARD_IDS // NUM_RANKS
PRECISIONS = ("fp32", "bf16")


def without_claim_heads(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A policy network's ``state`` (state dict) without R29's answer and claim heads
    (:data:`CLAIM_HEADS`): what a network with other heads, or none, takes from it."""
    return {k: v for k, v in state.items() if not k.startswith(CLAIM_HEADS)}


def mlp(input_size: int, hidden_sizes: Sequence[int], output_size: int, output_gain: float) -> nn.Sequential:
    """Linear layers with tanh between them; orthogonal initialisation as in CleanRL."""
    layers: list[nn.Module] = []
    width = input_size
    for hidden in hidden_sizes:
        layers += [_orthogonal(nn.Linear(width, hidden)), nn.Tanh()]
        width = hidden
    layers.append(_orthogonal(nn.Linear(width, output_size), gain=output_gain))
    return nn.Sequential(*layers)


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
    stopped bluffing altogether (README, Exploitability: it then took its edge from the
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
    response, README Exploitability), and the answer head reads the same kind of facts.
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

    The two answers to a claim (believe, challenge) come from the action head, or with
    ``answer_hidden_sizes`` from an *answer head* of their own: a small MLP reading only
    :class:`ClaimView`'s facts, not the context.

    With ``claim_hidden_sizes`` the choice between playing face down (a claim) and face up
    comes from a *claim head* of its own, a small MLP reading only :class:`ClaimChanceView`'s
    facts: the policy is then factored as P(face down) = sigmoid(claim head) and, within each
    kind, the softmax of the card logits over the cards held (the face-down and face-up cards
    a seat may play at a claim chance are the same: its hand). Where no claim is allowed the
    face-down actions are masked, and the factoring shifts every face-up logit of a row by one
    constant: the distribution there is the card logits' own.

    Args:
        observation_size: length of the observation vector (card block first, see
            :class:`pisti_env.observation.ObservationLayout`).
        card_features: features per card in the card block (``layout.num_card_features``).
        hidden_sizes: widths of the context MLP's hidden layers (tanh).
        num_actions: 52, or 106 for the bluff variant.
        answer_hidden_sizes: widths of the answer head's hidden layers (tanh); empty: the
            answers come from the action head. Only with the bluff variant.
        claim_view: the answer head's input (:class:`ClaimView` of the observation layout);
            required with ``answer_hidden_sizes``. :func:`policy_network` builds both.
        claim_hidden_sizes: widths of the claim head's hidden layers (tanh); empty: face down
            and face up are scored by the card logits alone. Only with the bluff variant.
        claim_chance_view: the claim head's input (:class:`ClaimChanceView`); required with
            ``claim_hidden_sizes``.
        average_heads: 0 (default), or the number of members M of a fictitious-play average:
            the answer head and the claim head (both required) are then each an
            :class:`AveragedHead` of M frozen copies (the policy a run with
            ``average_heads_every`` ships, :mod:`training.trainer.average`).
        solved_claims: R29's claims and answers from the claim game's equilibrium
            (:class:`~training.trainer.claim_game.SolvedClaims` of the observation layout;
            :func:`policy_network` builds it) instead of learned: holding the lone rank a true
            claim, else a bluff with the equilibrium's probability (the card to bluff with by
            the card logits), and the answers' challenge probability. Not with an answer or a
            claim head.
    """

    def __init__(
        self,
        observation_size: int,
        card_features: int,
        hidden_sizes: Sequence[int] = (256, 256),
        num_actions: int = NUM_ACTIONS,
        answer_hidden_sizes: Sequence[int] = (),
        claim_view: ClaimView | None = None,
        claim_hidden_sizes: Sequence[int] = (),
        claim_chance_view: ClaimChanceView | None = None,
        average_heads: int = 0,
        solved_claims: SolvedClaims | None = None,
    ) -> None:
        super().__init__()
        if solved_claims is not None and (answer_hidden_sizes or claim_hidden_sizes):
            raise ValueError("solved_claims plays R29's claims and answers itself: not with an answer head or a claim "
                             "head (answer_hidden_sizes, claim_hidden_sizes)")
        if average_heads and not (answer_hidden_sizes and claim_hidden_sizes):
            raise ValueError("average_heads needs both an answer head and a claim head (answer_hidden_sizes, "
                             "claim_hidden_sizes)")
        self.average_heads = int(average_heads)
        if observation_size < NUM_ACTIONS * card_features:
            raise ValueError(
                f"an observation of {observation_size} entries cannot hold {NUM_CARD_IDS} cards of {card_features} features"
            )
        if num_actions not in (NUM_ACTIONS, NUM_BLUFF_ACTIONS):
            raise ValueError(f"num_actions must be {NUM_ACTIONS} or {NUM_BLUFF_ACTIONS} (bluff, R29), got {num_actions!r}")
        self.observation_size = observation_size
        self.card_features = card_features
        self.hidden_sizes = tuple(int(h) for h in hidden_sizes)
        self.num_actions = num_actions
        self.plays = 2 if num_actions == NUM_BLUFF_ACTIONS else 1  # face up (and face down)
        self.context = mlp(observation_size, hidden_sizes[:-1], hidden_sizes[-1], output_gain=2**0.5)
        # Small-gain heads: the policy starts near uniform over the legal actions.
        self.card_head = _orthogonal(nn.Linear(hidden_sizes[-1], num_actions), gain=0.01)
        self.feature_head = _orthogonal(nn.Linear(hidden_sizes[-1], self.plays * 2 * card_features), gain=0.01)
        self.answer_hidden_sizes = tuple(int(h) for h in answer_hidden_sizes)
        self.claim_view = claim_view
        self.answer_head = self._view_head(self.answer_hidden_sizes, claim_view, CHALLENGE - BELIEVE + 1,
                                           "answer_hidden_sizes", "nothing is answered", "an answer head", "claim view")
        self.claim_hidden_sizes = tuple(int(h) for h in claim_hidden_sizes)
        self.claim_chance_view = claim_chance_view
        # One logit: the log-odds of face down (it starts near 0: even odds).
        self.claim_head = self._view_head(self.claim_hidden_sizes, claim_chance_view, 1,
                                          "claim_hidden_sizes", "nothing is claimed", "a claim head", "claim chance view")
        if solved_claims is not None and (self.num_actions != NUM_BLUFF_ACTIONS
                                          or solved_claims.card_features != card_features):
            raise ValueError("solved_claims needs the bluff variant (R29) and the solved claims of this observation "
                             "layout (see policy_network)")
        self.solved_claims = solved_claims

    def _view_head(
        self, sizes: tuple[int, ...], view: ClaimView | ClaimChanceView | None, outputs: int, field: str,
        without: str, head: str, view_name: str,
    ) -> nn.Sequential | None:
        """A small MLP reading ``view`` (R29's answer or claim head), or ``None`` without ``sizes``;
        ``ValueError`` outside the bluff variant or without this layout's view."""
        if not sizes:
            return None
        if self.num_actions != NUM_BLUFF_ACTIONS:
            raise ValueError(f"{field} needs the bluff variant (R29): without it {without}")
        if view is None or view.card_features != self.card_features:
            raise ValueError(f"{head} needs the {view_name} of this observation layout (see policy_network)")
        if self.average_heads:
            return AveragedHead(view.size, sizes, outputs, self.average_heads)
        return mlp(view.size, sizes, outputs, output_gain=0.01)

    def forward(
        self, observation: torch.Tensor, heads: tuple[nn.Module, nn.Module] | None = None
    ) -> torch.Tensor:
        """The raw logits (B, num_actions). ``heads``: an (answer head, claim head) pair used
        instead of the network's own (the opponents' average heads in a fictitious-play run,
        :mod:`training.trainer.average`)."""
        answer_head, claim_head = (self.answer_head, self.claim_head) if heads is None else heads
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
        if answer_head is None:
            answers = logits[:, BELIEVE:]  # from the context; no card term
        else:
            answers = answer_head(self.claim_view(observation, of_rank.view(batch, NUM_RANKS, k))).float()
        plays = logits[:, :BELIEVE] + per_card
        if self.solved_claims is not None:
            odds, face_down, answers = self.solved_claims(observation, cards[:, 0])
            held = cards[:, 0, :, self.solved_claims.hand] > 0
            return torch.cat([_factored_plays(plays, held, odds, face_down), answers], 1)
        if claim_head is not None:
            odds = claim_head(self.claim_chance_view(observation, of_rank.view(batch, NUM_RANKS, k))).float()
            plays = _factored_plays(plays, cards[:, 0, :, self.claim_chance_view.hand] > 0, odds)
        return torch.cat([plays, answers], 1)


class AveragedHead(nn.Module):
    """The average policy of ``members`` copies of one of R29's small heads (an answer head or a
    claim head), as one module: the fictitious-play average that a run with
    ``average_heads_every`` ships (:mod:`training.trainer.average`).

    Each member is an MLP of the same shape as the head it averages (tanh between layers); their
    weights are stacked on a leading dimension (buffers ``weight{l}`` (M, out, in) and ``bias{l}``
    (M, out): frozen, never trained). The output is the head's own kind of logits for the *mean
    probability* of the members, so a draw from it is a draw from a uniformly drawn member:

    * ``outputs == 2`` (the answers, believe and challenge): log of the members' mean softmax;
    * ``outputs == 1`` (the claim's log-odds of face down): logit of the members' mean sigmoid.

    Args:
        input_size: the view's size (:class:`ClaimView` or :class:`ClaimChanceView`).
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
        """Copy the weights of ``heads`` (plain heads from :func:`mlp`, ``members`` of them)."""
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


def policy_network(
    settings: Settings,
    hidden_sizes: Sequence[int] = (256, 256),
    answer_hidden_sizes: Sequence[int] = (),
    claim_hidden_sizes: Sequence[int] = (),
    average_heads: int = 0,
    solved_claims: bool = False,
    claim_capture_value: float = 0.0,
    claim_capture_value_last_deal: float | None = None,
) -> PolicyNetwork:
    """The policy network for the game ``settings`` (its observation layout and action space);
    ``average_heads``, ``solved_claims``: see :class:`PolicyNetwork`; ``claim_capture_value``,
    ``claim_capture_value_last_deal``: the solved claims' capture values in points, the second
    on the hand's last deal (None: the first) (:class:`~training.trainer.claim_game.SolvedClaims`)."""
    size, card_features, view, chance_view, solved = _game_inputs(
        settings, answer_hidden_sizes, claim_hidden_sizes, solved_claims, claim_capture_value,
        claim_capture_value_last_deal)
    return PolicyNetwork(size, card_features, hidden_sizes, settings.num_actions, answer_hidden_sizes, view,
                         claim_hidden_sizes, chance_view, average_heads, solved)


def _game_inputs(
    settings: Settings, answer_hidden_sizes: Sequence[int], claim_hidden_sizes: Sequence[int] = (),
    solved_claims: bool = False, claim_capture_value: float = 0.0, claim_capture_value_last_deal: float | None = None,
) -> tuple[int, int, ClaimView | None, ClaimChanceView | None, SolvedClaims | None]:
    """The observation size, the card features and (with an answer head, a claim head, solved
    claims) the views and the solved claims of the game ``settings``, from its one observation
    layout."""
    layout = ObservationLayout(settings)
    return (
        layout.size,
        layout.num_card_features,
        ClaimView(layout) if answer_hidden_sizes else None,
        ClaimChanceView(layout) if claim_hidden_sizes else None,
        SolvedClaims(layout, claim_capture_value, claim_capture_value_last_deal) if solved_claims else None,
    )


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
    policy keeps only ``policy.*``."""

    def __init__(
        self,
        observation_size: int,
        card_features: int,
        hidden_sizes: Sequence[int] = (256, 256),
        hidden_information_size: int = 0,
        value_hidden_sizes: Sequence[int] = (128, 128),
        num_actions: int = NUM_ACTIONS,
        answer_hidden_sizes: Sequence[int] = (),
        claim_view: ClaimView | None = None,
        claim_hidden_sizes: Sequence[int] = (),
        claim_chance_view: ClaimChanceView | None = None,
        solved_claims: SolvedClaims | None = None,
    ) -> None:
        super().__init__()
        self.policy = PolicyNetwork(observation_size, card_features, hidden_sizes, num_actions, answer_hidden_sizes,
                                    claim_view, claim_hidden_sizes, claim_chance_view, solved_claims=solved_claims)
        self.value = ValueNetwork(observation_size, hidden_information_size, value_hidden_sizes)


def actor_critic(
    settings: Settings,
    hidden_sizes: Sequence[int] = (256, 256),
    hidden_information_size: int = 0,
    value_hidden_sizes: Sequence[int] = (128, 128),
    answer_hidden_sizes: Sequence[int] = (),
    claim_hidden_sizes: Sequence[int] = (),
    solved_claims: bool = False,
    claim_capture_value: float = 0.0,
    claim_capture_value_last_deal: float | None = None,
) -> ActorCritic:
    """The two networks of a run for the game ``settings``; the arguments as :class:`ActorCritic`'s
    (``solved_claims`` and the capture values as :func:`policy_network`'s)."""
    size, card_features, view, chance_view, solved = _game_inputs(
        settings, answer_hidden_sizes, claim_hidden_sizes, solved_claims, claim_capture_value,
        claim_capture_value_last_deal)
    return ActorCritic(size, card_features, hidden_sizes, hidden_information_size, value_hidden_sizes,
                       settings.num_actions, answer_hidden_sizes, view, claim_hidden_sizes, chance_view, solved)


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
    """One action per row: R29's mixed decisions drawn, the card chosen. The kind of action
    (face up, face down, believe, challenge) is drawn with its total probability (Gumbel-max,
    reproducible with ``generator``), then the most likely legal card of that kind is played.
    Without the bluff variant (52 actions) this is the most likely card."""
    logp = log_probs(logits, mask)
    if logits.shape[-1] == NUM_PLAIN_ACTIONS:
        return logp.argmax(-1)
    p = logp.exp()
    kinds = torch.stack([p[:, :FACE_DOWN].sum(1), p[:, FACE_DOWN:BELIEVE].sum(1), p[:, BELIEVE], p[:, CHALLENGE]], 1)
    uniform = torch.rand(kinds.shape, generator=generator, device=logits.device).clamp_(1e-10, 1.0)
    kind = (torch.log(kinds) - torch.log(-torch.log(uniform))).argmax(1)  # a kind of mass 0: log 0 = -inf, never
    up = logp[:, :FACE_DOWN].argmax(1)
    down = logp[:, FACE_DOWN:BELIEVE].argmax(1) + FACE_DOWN
    answers = torch.tensor([BELIEVE, CHALLENGE], device=logits.device).expand(len(kind), 2)
    return torch.cat([up[:, None], down[:, None], answers], 1).gather(1, kind[:, None]).squeeze(1)


def entropy(logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Entropy of the masked distribution, over legal cards only."""
    p = logp.exp()
    return -(p * logp).masked_fill(~mask, 0.0).sum(-1)


def _orthogonal(layer: nn.Linear, gain: float = 2**0.5) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer
