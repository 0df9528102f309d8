"""Opponents for self-play, in batched form: scripted baselines and frozen snapshots.

Every opponent maps a batch of observations and masks (exactly what ``BatchedPisti`` hands the
seat to move) to one card per game, so it reads nothing a seat may not know (R30–R31).
``batched_random`` and ``batched_greedy`` are the batched twins of the scripted ``random`` and
``greedy`` players of :mod:`pisti_env.agents` (same choices, ties broken at random).

:class:`OpponentPool` holds them with their record against the learner and draws the opponent
of each new game by how well it still does against the learner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from pisti_env.cards import JACK, NUM_CARD_IDS, RANK, TEN_DIAMONDS
from pisti_env.scoring import POINTS
from pisti_env.game import BELIEVE, CHALLENGE
from pisti_env.observation import CARDS_SCALE, HAND_SCALE, ObservationLayout
from pisti_env.rules import Settings

from .network import PolicyNetwork, sample

JACK_DISCARD_COST = 10  # as pisti_env.agents.greedy: Jacks are the last cards thrown away


def batched_random(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random legal card per game."""
    noise = torch.rand(mask.shape, generator=generator, device=mask.device)
    return noise.masked_fill(~mask, -1.0).argmax(1)


class BatchedGreedy:
    """``greedy`` for a batch of observations: the capture worth most (pile points it has seen
    plus any pişti, R10–R17; a rank match before a Jack on equal value), else the cheapest card
    (fewest points, Jacks last). With the bluff variant (R29) it never plays face down and
    believes every claim unless no card of the lone card's rank is left unseen (then the claim
    is surely false). (The Python ``greedy`` also challenges when the face-down card is the
    shown stock-bottom card of R28 and not of the rank; the observation cannot tell that card
    in a claim from one still in the stock, so here that rare case is believed.)"""

    def __init__(self, settings: Settings, device: torch.device | str = "cpu") -> None:
        self.settings = settings
        layout = ObservationLayout(settings)
        self.layout = layout
        self.rank = torch.tensor(RANK[:NUM_CARD_IDS], device=device)
        self.points = torch.tensor(POINTS[:NUM_CARD_IDS], dtype=torch.float32, device=device)
        self.is_jack = self.rank == JACK
        self.discard_cost = self.points + JACK_DISCARD_COST * self.is_jack

    def __call__(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        choice = self._play(observation, mask[:, :NUM_CARD_IDS], generator)
        if mask.shape[1] == NUM_CARD_IDS:
            return choice
        # R29: answering a claim (the only decision whose mask offers BELIEVE).
        top_rank = self.rank[observation[:, self.layout["pile_top"]].argmax(1)]
        unseen = observation[:, self.layout["unseen"]]
        unseen_of_rank = (unseen * (self.rank[None, :] == top_rank[:, None])).sum(1)
        answer = torch.where(unseen_of_rank == 0, CHALLENGE, BELIEVE)
        return torch.where(mask[:, BELIEVE], answer, choice)

    def _play(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The face-up card to play (``mask``: the 52 cards)."""
        layout, s = self.layout, self.settings
        top = observation[:, layout["pile_top"]]
        has_top = top.sum(1) > 0
        top_id = top.argmax(1)
        top_rank = self.rank[top_id]
        known_pile = observation[:, layout["pile_face_up"]] + observation[:, layout["pile_public_jack"]]
        pile_points = known_pile @ self.points  # (B,)
        pile_size = (observation[:, layout["pile_size"]][:, 0] * CARDS_SCALE).round()
        cards_left = (
            observation[:, layout["hand_sizes"]].sum(1) * HAND_SCALE + observation[:, layout["stock_size"]][:, 0] * CARDS_SCALE
        ).round()
        same_rank = self.rank[None, :] == top_rank[:, None]
        captures = mask & has_top[:, None] & (same_rank | self.is_jack[None, :])

        # Pişti value of each card on this pile (R13, R14, R16, R17).
        lone = (pile_size == 1)[:, None]
        plain = lone & same_rank & ~self.is_jack[None, :]
        jack_on_jack = lone & self.is_jack[None, :] & (top_rank == JACK)[:, None]
        pisti = plain * 10.0 + jack_on_jack * float(s.double_pisti)
        if not s.last_card_pisti:
            pisti = pisti * (cards_left != 1)[:, None]
        if s.ten_diamonds_pisti_bonus:
            with_ten = (torch.arange(NUM_CARD_IDS, device=mask.device) == TEN_DIAMONDS)[None, :] | (top_id == TEN_DIAMONDS)[:, None]
            pisti = pisti + (pisti > 0) * with_ten * float(s.ten_diamonds_pisti_bonus)

        noise = torch.rand(mask.shape, generator=generator, device=mask.device) * 0.5  # tie-breaks only
        capture_key = (pile_points[:, None] + pisti) * 2 + (~self.is_jack)[None, :] + noise
        capture_choice = capture_key.masked_fill(~captures, -1.0).argmax(1)
        discard_key = -(self.discard_cost[None, :] * 2) + noise
        discard_choice = discard_key.masked_fill(~mask, -1e9).argmax(1)
        return torch.where(captures.any(1), capture_choice, discard_choice)


@dataclass
class Opponent:
    """One entry of the pool: a baseline by name or a frozen snapshot of the policy."""

    name: str
    network: PolicyNetwork | None = None  # a snapshot's frozen weights; None for a baseline
    margin: float = 0.0  # the learner's recent mean score difference per episode against it
    games: int = 0

    def record(self, learner_margin: float, decay: float = 0.05) -> None:
        self.games += 1
        rate = max(decay, 1.0 / self.games)
        self.margin += rate * (learner_margin - self.margin)


@dataclass
class OpponentPool:
    """Baselines (always present) and the latest snapshots of the policy (at most ``size``).

    A new game meets pool entry ``i`` with probability
    ``(1 - uniform_share) * softmax(-margin / temperature)_i + uniform_share / len(entries)``:
    the opponents the learner beats by least (or that still beat it) come up most often, and
    every entry at least ``uniform_share / len(entries)`` of the time, so its record stays
    current.
    """

    settings: Settings
    baselines: tuple[str, ...]
    size: int
    temperature: float
    device: torch.device
    uniform_share: float = 0.0
    entries: list[Opponent] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 0.0 <= self.uniform_share <= 1.0:
            raise ValueError(f"uniform_share must be in [0, 1], got {self.uniform_share!r}")
        for name in self.baselines:
            if name not in ("random", "greedy"):
                raise ValueError(f"batched baselines are 'random' and 'greedy', got {name!r}")
            self.entries.append(Opponent(name))
        self._greedy = BatchedGreedy(self.settings, self.device)

    def frozen_copy(self, network: PolicyNetwork) -> PolicyNetwork:
        """A copy of ``network`` (same shape and weights) that no gradient reaches."""
        frozen = PolicyNetwork(network.observation_size, network.card_features, network.hidden_sizes, network.num_actions)
        frozen.load_state_dict(network.state_dict())
        return frozen.to(self.device).requires_grad_(False)

    def add_snapshot(self, network: PolicyNetwork, name: str) -> None:
        self.entries.append(Opponent(name, self.frozen_copy(network)))
        snapshots = [i for i, e in enumerate(self.entries) if e.network is not None]
        if len(snapshots) > self.size:
            del self.entries[snapshots[0]]

    def probabilities(self) -> torch.Tensor:
        margins = torch.tensor([e.margin for e in self.entries], dtype=torch.float64)
        prioritised = torch.softmax(-margins / self.temperature, 0)
        return (1.0 - self.uniform_share) * prioritised + self.uniform_share / len(self.entries)

    def draw(self, count: int, generator: torch.Generator) -> torch.Tensor:
        """Pool indices for ``count`` new games."""
        return torch.multinomial(self.probabilities(), count, replacement=True, generator=generator)

    @torch.no_grad()
    def act(
        self, index: int, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        entry = self.entries[index]
        if entry.network is not None:
            return sample(entry.network(observation), mask, generator)
        if entry.name == "random":
            return batched_random(mask, generator)
        return self._greedy(observation, mask, generator)
