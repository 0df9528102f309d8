"""``bluffer`` and its mirror ``challenger``: fixed players that stress the bluff variant (R29).

``bluffer`` plays face down whenever a claim is allowed (exactly one card on the table, played
by another side; R29, R16), with *any* card: by default the card it values least, so nearly
every claim is a bluff. How often it claims and how it answers a claim are options.
``challenger`` is the same player preset to the other extreme: it never claims and challenges
every claim. Both play like ``greedy`` otherwise (its choice is reused, not copied).

A policy that always believes loses to ``bluffer``; one that always challenges loses to true
claims and gains nothing from ``challenger``'s missing bluffs, so together they expose a
policy's answers at both ends.

Both have a batched form (`BlufferAgent.act_batch`), so the trainer's opponent pool can
train against them. It reads only the action mask to know when a claim is allowed or an answer
is due (the face-down ids ``FACE_DOWN + card``, ``BELIEVE``; `pisti_env.rules.actions`), and
greedy's batched form for everything else: no hidden information (R30, R31).
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from ..rules.cards import NUM_CARD_IDS, RANK
from ..rules.settings import Settings
from .greedy import GreedyAgent, greedy_card
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

ANSWERS = ("believe", "challenge")
CARD_CHOICES = ("cheapest", "random", "honest")


def _probability(value: object, what: str, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{what} must be {allowed}, got {type(value).__name__} {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{what} must be {allowed}, got {value!r}")
    return float(value)


class BlufferAgent(GreedyAgent):
    """Claims a pişti face down whenever it may (R29), bluffing with any card; otherwise greedy.

    Args:
        seed: seeds its generator (claims, answers and tie-breaks; see
            [`Agent`][pisti_env.agents.base.Agent]).
        settings: the game settings; needed only by the batched form (`act_batch`).
        claim: the probability of playing face down when a claim is allowed, in ``[0, 1]``.
            ``1`` (default) claims on every lone card it may, ``0`` never claims. When it does
            not claim it plays greedy's face-up card.
        answer: how it answers a claim against it: ``"believe"``, ``"challenge"`` or the
            probability of challenging, in ``[0, 1]`` (``0`` = always believe, ``1`` = always
            challenge). Default ``"believe"``: the answer that lets other bluffers' claims pass.
        card: which card it plays face down. ``"cheapest"`` (default): the card it values least,
            greedy's discard choice (fewest points, Jacks last; ties at random). It does not
            look for a card of the lone card's rank, so the claim is true only by chance.
            ``"random"``: any of its cards, uniformly. ``"honest"``: only a card of the lone
            card's rank (R29: a Jack on a lone non-Jack is not one), so every claim is true; it
            claims only when it holds one. This honest claimer is the opponent against which
            challenging every claim loses.

    Raises ``TypeError`` / ``ValueError`` for an option of the wrong type or value, naming the
    allowed ones.
    """

    name = "bluffer"

    def __init__(
        self,
        seed: int | None = None,
        settings: Settings | None = None,
        claim: float = 1.0,
        answer: str | float = "believe",
        card: str = "cheapest",
    ) -> None:
        super().__init__(seed, settings)
        self.claim = _probability(claim, "bluffer's claim", "a probability in [0, 1] (1 = always claim)")
        if isinstance(answer, str):
            if answer not in ANSWERS:
                raise ValueError(f"bluffer's answer must be one of {list(ANSWERS)} or a probability of challenging "
                                 f"in [0, 1], got {answer!r}")
            self.challenge = 1.0 if answer == "challenge" else 0.0
        else:
            self.challenge = _probability(answer, "bluffer's answer",
                                          f"one of {list(ANSWERS)} or a probability of challenging in [0, 1]")
        if card not in CARD_CHOICES:
            raise ValueError(f"bluffer's card must be one of {list(CARD_CHOICES)}, got {card!r}")
        self.card = card
        self.answer = answer

    def __repr__(self) -> str:
        return f"{type(self).__name__}(claim={self.claim}, answer={self.answer!r}, card={self.card!r})"

    def _draw(self, p: float) -> bool:
        """True with probability ``p`` (no draw at 0 or 1)."""
        return p >= 1.0 or (p > 0.0 and self.rng.random() < p)

    def choose(self, view: SeatView, legal: list[int]) -> int:
        if legal[0] >= BELIEVE:  # R29: answering a claim
            return CHALLENGE if self._draw(self.challenge) else BELIEVE
        down = [a - FACE_DOWN for a in legal if FACE_DOWN <= a < BELIEVE]
        if self.card == "honest" and down:
            down = [c for c in down if RANK[c] == RANK[view.pile_top]]
        if down and self._draw(self.claim):
            if self.card != "cheapest":
                return FACE_DOWN + down[self.rng.randrange(len(down))]
            # top=None: greedy's discard choice, the card it values least.
            return FACE_DOWN + greedy_card(down, None, 0, 0, view.settings, False, self.rng)
        return super().choose(view, legal)  # greedy's face-up card

    def act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """The same choices for a batch of the batched engine's observations and masks: greedy's
        batched choice (`GreedyAgent.act_batch`), replaced by a face-down card where the
        mask allows one and the claim draw says so, and by the answer where the mask asks for
        one (R29). Ties and draws come from ``generator``."""
        import torch

        choice = super().act_batch(observation, mask, generator)
        if mask.shape[1] == NUM_CARD_IDS:  # no bluff variant
            return choice
        rows, device = mask.shape[0], mask.device
        down = mask[:, FACE_DOWN:BELIEVE]
        if self.card == "honest":  # only cards of the lone card's rank (R29)
            batched = self._batched
            top_rank = batched.rank[observation[:, batched.layout["pile_top"]].argmax(1)]
            down = down & (batched.rank[None, :] == top_rank[:, None])
        claims = down.any(1)
        if 0.0 < self.claim < 1.0:
            claims &= torch.rand(rows, generator=generator, device=device) < self.claim
        elif self.claim <= 0.0:
            claims = torch.zeros_like(claims)
        noise = torch.rand(down.shape, generator=generator, device=device)
        if self.card == "cheapest":
            from .greedy_batched import TIE_NOISE

            # Discard costs are integers: doubled, the noise below 1 only reorders equal costs.
            noise = -(self._batched.discard_cost[None, :] * 2) + noise * TIE_NOISE
        card = noise.masked_fill(~down, -1e9).argmax(1) + FACE_DOWN
        choice = torch.where(claims, card, choice)
        answering = mask[:, BELIEVE]
        if 0.0 < self.challenge < 1.0:
            challenges = torch.rand(rows, generator=generator, device=device) < self.challenge
        else:
            challenges = torch.full((rows,), self.challenge >= 1.0, device=device)
        answer = torch.where(challenges, CHALLENGE, BELIEVE)
        return torch.where(answering, answer, choice)


def challenger(
    seed: int | None = None,
    settings: Settings | None = None,
    claim: float = 0.0,
    answer: str | float = "challenge",
    card: str = "cheapest",
) -> BlufferAgent:
    """``challenger``, the mirror of ``bluffer``: a `BlufferAgent` preset that never
    claims and challenges every claim (R29); greedy otherwise. The options are
    `BlufferAgent`'s, with these defaults."""
    player = BlufferAgent(seed, settings, claim=claim, answer=answer, card=card)
    player.name = "challenger"
    return player
