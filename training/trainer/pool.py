"""The opponent pool of self-play: scripted baselines and frozen snapshots of the policy, each a
player with a batched form (`pisti_env.agents.has_batched_form`) or played through the
Python engine.

Every opponent maps a batch of observations and masks (exactly what ``BatchedPisti`` hands the
seat to move) to one action per game, so it reads nothing a seat may not know (R30–R31). The
baselines are built by the registry ([`pisti_env.agents.make_player`][pisti_env.agents.make_player]); a snapshot is a
sampling [`CheckpointPlayer`][pisti_env.policies.player.CheckpointPlayer]. A baseline without a batched form
(``pimc``, ``expert`` with bluffs, ...) is a `PythonPlayerBatched`:
it reads the engine's state instead (converted to Python games, each seat's view only), at
Python speed.

`OpponentPool` holds them with their record against the learner and draws the opponent
of each new game by how well it still does against the learner. `OpponentPool.act_all`
chooses for every opponent of a batch step; the snapshots, networks of one shape, act in ONE
call (`SnapshotStack`: their weights stacked, the network's own ``forward`` mapped over
them with ``torch.func.vmap``, one sample for all their rows) instead of one call each.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Sequence

import torch

from pisti_env.agents import BatchedPlayer, as_batched_player
from pisti_env.agents.base import StatePlayer, needs_engine_state
from pisti_env.batched import BatchState
from pisti_env.policies.network import PolicyNetwork, sample
from pisti_env.policies.player import CheckpointPlayer
from pisti_env.rules.settings import Settings



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


class SnapshotStack:
    """Frozen policy networks of one shape acting as one: their parameters stacked on a
    leading dimension, and `PolicyNetwork.forward` mapped over it (``torch.func``), so
    ``S`` snapshots choose for their rows in one network call instead of ``S``.

    Args:
        networks: the snapshots' networks (same shapes, on one device, no gradients). Their
            weights are copied when the stack is built: snapshots are frozen, and the pool
            builds a new stack whenever its snapshots change (`matches`).
    """

    def __init__(self, networks: Sequence[PolicyNetwork]) -> None:
        from torch.func import functional_call, stack_module_state, vmap

        self.networks = tuple(networks)
        params, buffers = stack_module_state(list(self.networks))
        base = self.networks[0]

        def forward(p: dict, b: dict, x: torch.Tensor) -> torch.Tensor:
            return functional_call(base, (p, b), (x,))

        self._params, self._buffers = params, buffers
        self._cast: tuple[torch.dtype, dict] | None = None  # the parameters in autocast's dtype
        self._forward = vmap(forward)

    def matches(self, networks: Sequence[PolicyNetwork]) -> bool:
        """Whether this stack holds exactly ``networks`` (the same objects, in order)."""
        return len(networks) == len(self.networks) and all(a is b for a, b in zip(networks, self.networks))

    @torch.no_grad()
    def logits(self, observations: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Each network's logits for its own observation rows (``observations[i]`` for network
        ``i``, any number of rows each): one call on rows padded to the longest."""
        longest = max(x.shape[0] for x in observations)
        padded = torch.stack([torch.nn.functional.pad(x, (0, 0, 0, longest - x.shape[0])) for x in observations])
        out = self._forward(self._autocast_params(padded.device), self._buffers, padded)
        return [out[i, : x.shape[0]] for i, x in enumerate(observations)]

    def _autocast_params(self, device: torch.device) -> dict:
        """The parameters; under autocast, cast once to its dtype (what autocast would do to
        them in every call anyway: the same products, without re-casting every weight)."""
        if not torch.is_autocast_enabled(device.type):
            return self._params
        dtype = torch.get_autocast_dtype(device.type)
        if self._cast is None or self._cast[0] != dtype:
            self._cast = (dtype, {k: v.to(dtype) for k, v in self._params.items()})
        return self._cast[1]


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
    _stack: SnapshotStack | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.uniform_share <= 1.0:
            raise ValueError(f"uniform_share must be in [0, 1], got {self.uniform_share!r}")
        if not 0.0 < self.margin_decay <= 1.0:
            raise ValueError(f"margin_decay must be in (0, 1], got {self.margin_decay!r}")
        for spec in self.baselines:
            self.entries.append(Opponent(spec, self.baseline(spec)))

    def baseline(self, spec: str) -> BatchedPlayer | StatePlayer:
        """The registry's player for ``spec``: its batched form, else played through the Python
        engine (`pisti_env.agents.as_batched_player` with ``python_engine=True``)."""
        return as_batched_player(spec, "pool opponent", python_engine=True, settings=self.settings, device=str(self.device))

    def record(self, index: int, learner_margin: float) -> None:
        """Record an episode of the learner against entry ``index``."""
        self.entries[index].record(learner_margin, self.margin_decay)

    def frozen_copy(self, network: PolicyNetwork) -> PolicyNetwork:
        """A copy of ``network`` (same shape and weights) that no gradient reaches."""
        return copy.deepcopy(network).to(self.device).requires_grad_(False)

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

    @torch.no_grad()
    def act_all(
        self,
        controller: torch.Tensor,
        action: torch.Tensor,
        observation: torch.Tensor,
        mask: torch.Tensor,
        generator: torch.Generator,
        state: BatchState | None = None,
    ) -> None:
        """Every opponent's actions for one batch step, written into ``action`` where
        ``controller`` (B,) holds a pool index (other rows, the learner's, are left alone).

        The baselines act as in `act`, one call each in pool order; then the snapshots
        act together in one call (`SnapshotStack`) and one sample from ``generator``
        for all their rows (the stream differs from one sample per snapshot: a run is
        reproducible with its seed, not bit-identical to one before this change). ``state``:
        the engine's state, for a baseline played through the Python engine."""
        present = set(controller.unique().tolist())
        snapshots: list[tuple[PolicyNetwork, torch.Tensor]] = []
        for index, entry in enumerate(self.entries):
            rows = (controller == index).nonzero().squeeze(1) if index in present else None
            if entry.snapshot:  # every snapshot joins the stack, with or without rows
                snapshots.append((entry.player.network, controller.new_empty(0) if rows is None else rows))
            elif rows is not None:
                action[rows] = self.act(index, observation[rows], mask[rows], generator, state, rows)
        if not any(rows.numel() for _, rows in snapshots):
            return
        networks = [network for network, _ in snapshots]
        if self._stack is None or not self._stack.matches(networks):
            self._stack = SnapshotStack(networks)  # rebuilt only when a snapshot joins or leaves
        rows = torch.cat([r for _, r in snapshots])
        # A row with one legal action samples it whatever the logits: the network reads only
        # the others (a quarter of the decisions are the last card of a round).
        choice = mask[rows].sum(1) > 1
        picks = choice.split([r.numel() for _, r in snapshots])
        chosen = self._stack.logits([observation[r[keep]] for (_, r), keep in zip(snapshots, picks)])
        logits = torch.zeros(rows.numel(), mask.shape[1], dtype=torch.float32, device=mask.device)
        logits[choice] = torch.cat(chosen).float()
        action[rows] = sample(logits, mask[rows], generator)
