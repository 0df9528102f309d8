"""The opponent pool of self-play: scripted baselines and frozen snapshots of the policy, each a
player with a batched form (:func:`pisti_env.agents.has_batched_form`) or played through the
Python engine.

Every opponent maps a batch of observations and masks (exactly what ``BatchedPisti`` hands the
seat to move) to one action per game, so it reads nothing a seat may not know (R30–R31). The
baselines are built by the registry (:func:`pisti_env.agents.make_player`); a snapshot is a
sampling :class:`~training.trainer.policy.CheckpointPlayer`. A baseline without a batched form
(``expert``, ``pimc``, ...) is a :class:`~pisti_env.agents.python_batched.PythonPlayerBatched`:
it reads the engine's state instead (converted to Python games, each seat's view only), at
Python speed.

:class:`OpponentPool` holds them with their record against the learner and draws the opponent
of each new game by how well it still does against the learner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from pisti_env.agents import BatchedPlayer, as_batched_player
from pisti_env.agents.base import StatePlayer, needs_engine_state
from pisti_env.batched import BatchState
from pisti_env.rules import Settings

from .network import PolicyNetwork
from .policy import CheckpointPlayer


@dataclass
class Opponent:
    """One entry of the pool: a baseline or a frozen snapshot of the policy."""

    name: str
    player: BatchedPlayer | StatePlayer
    margin: float = 0.0  # the learner's recent mean score difference per episode against it
    games: int = 0
    snapshot: bool = False  # a frozen copy of the learner (saved with training checkpoints)

    @property
    def network(self) -> PolicyNetwork | None:
        """A snapshot's frozen weights; ``None`` for a baseline (even a checkpoint: it is
        rebuilt from its spec on resume)."""
        return self.player.network if self.snapshot else None

    def record(self, learner_margin: float, decay: float) -> None:
        """Fold one episode's margin into the running record (the plain mean over the first
        ``1 / decay`` games, then an exponential average with weight ``decay``)."""
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
    margin_decay: float = 0.05
    entries: list[Opponent] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 0.0 <= self.uniform_share <= 1.0:
            raise ValueError(f"uniform_share must be in [0, 1], got {self.uniform_share!r}")
        if not 0.0 < self.margin_decay <= 1.0:
            raise ValueError(f"margin_decay must be in (0, 1], got {self.margin_decay!r}")
        for spec in self.baselines:
            self.entries.append(Opponent(spec, self.baseline(spec)))

    def baseline(self, spec: str) -> BatchedPlayer | StatePlayer:
        """The registry's player for ``spec``: its batched form, else played through the Python
        engine (:func:`pisti_env.agents.as_batched_player` with ``python_engine=True``)."""
        return as_batched_player(spec, "pool opponent", python_engine=True, settings=self.settings, device=str(self.device))

    def record(self, index: int, learner_margin: float) -> None:
        """Record an episode of the learner against entry ``index``."""
        self.entries[index].record(learner_margin, self.margin_decay)

    def frozen_copy(self, network: PolicyNetwork) -> PolicyNetwork:
        """A copy of ``network`` (same shape and weights) that no gradient reaches."""
        frozen = PolicyNetwork(network.observation_size, network.card_features, network.hidden_sizes, network.num_actions)
        frozen.load_state_dict(network.state_dict())
        return frozen.to(self.device).requires_grad_(False)

    def snapshot_player(self, network: PolicyNetwork, name: str) -> CheckpointPlayer:
        """A sampling player of (a frozen copy of) ``network``."""
        return CheckpointPlayer(self.frozen_copy(network), {"name": name}, deterministic=False)

    def add_snapshot(self, network: PolicyNetwork, name: str) -> None:
        self.entries.append(Opponent(name, self.snapshot_player(network, name), snapshot=True))
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
        self,
        index: int,
        observation: torch.Tensor,
        mask: torch.Tensor,
        generator: torch.Generator,
        state: BatchState | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Entry ``index``'s actions for a batch: from the ``observation`` and ``mask`` rows, or,
        for a player through the Python engine, from games ``rows`` of the engine's ``state``
        (which the caller must then give)."""
        player = self.entries[index].player
        if needs_engine_state(player):
            if state is None or rows is None:
                raise ValueError(
                    f"pool opponent {self.entries[index].name!r} plays through the Python engine: "
                    "pass the engine's state and the rows of the games"
                )
            return player.act_state(state, rows, generator)
        return player.act_batch(observation, mask, generator)
