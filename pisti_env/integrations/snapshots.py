"""Self-play opponents for the batched doors: frozen copies of the learner's policy, and a pool of them.

    from pisti_env.integrations.snapshots import ModuleSnapshot, SnapshotPool

    pool = SnapshotPool(first="random", size=5)     # the opponent of every game
    env = PistiVectorEnv(1024, opponent=pool)        # or the SB3, Tianshou or TorchRL door
    ...
    pool.add(ModuleSnapshot(net, logits=lambda net, obs, mask: net(obs)))   # every so often

Torch only: no RL library is imported, so the SB3, Tianshou and TorchRL doors share these
classes (each library's module adds the snapshot of its own policy object:
``sb3.PolicySnapshot``, ``tianshou_batched.actor_snapshot``). A snapshot is a player with a
batched form (``act_batch``), which is what every batched door takes as ``opponent``, and a
harness form (``act``), so the same object plays ``pisti-eval``'s deals.

The step-by-step self-play env (`pisti_env.integrations.selfplay`) has its own pool, which
draws one snapshot per episode of a single game.
"""

from __future__ import annotations

import copy
import random
from typing import Any, Callable

import numpy as np
import torch

from ..agents import Player, SeatView, as_batched_player


class FrozenPolicy:
    """A frozen policy as a batched player (``act_batch``) and a harness player (``act``).

    Subclasses give `logits`, the policy's scores of the actions for a batch of
    observations; illegal actions are never chosen whatever their score.

    Args:
        deterministic: play the most likely legal action, or (default) sample one, which keeps
            self-play opponents varied.
        name: the player's name (harness tables).
        device: where `logits` runs (inputs are moved there, actions moved back).

    Sampling draws from the ``generator`` it is given (the env's, seeded by its ``reset``), or
    in `act` from its own, reseeded by `reset`.
    """

    def __init__(self, deterministic: bool = False, name: str = "snapshot", device: str | torch.device = "cpu") -> None:
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be True or False, got {deterministic!r}")
        self.deterministic = deterministic
        self.name = name
        self.device = torch.device(device)
        self._generator = torch.Generator(device=self.device)

    def logits(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, actions) scores for ``observation`` (B, size) float and ``mask`` (B, actions) bool."""
        raise NotImplementedError

    @torch.no_grad()
    def act_batch(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """One legal action per row (``observation`` (B, size) float, ``mask`` (B, actions) bool)."""
        mask = mask.to(self.device, torch.bool)
        logits = self.logits(observation.to(self.device), mask)
        logits = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
        if self.deterministic:
            actions = logits.argmax(1)
        else:
            actions = torch.multinomial(logits.softmax(1), 1, generator=generator).squeeze(1)
        return actions.to(observation.device)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._generator.manual_seed(seed)

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        obs = torch.as_tensor(observation["observation"])[None]
        mask = torch.as_tensor(observation["action_mask"]).bool()[None]
        return int(self.act_batch(obs, mask, self._generator)[0])


class ModuleSnapshot(FrozenPolicy):
    """A frozen copy of a torch module that scores actions.

    Args:
        module: the learner's network; it is deep-copied (evaluation mode, no gradients), so
            the snapshot keeps these weights while the learner trains on.
        logits: ``logits(module, observation, mask) -> (B, actions)``: how to call the copy
            (``None``: ``module(observation)``).
        deterministic, name: as `FrozenPolicy`.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        logits: Callable[[torch.nn.Module, torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
        deterministic: bool = False,
        name: str = "snapshot",
    ) -> None:
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
        parameter = next(module.parameters(), None)
        super().__init__(deterministic, name, "cpu" if parameter is None else parameter.device)
        self.module = copy.deepcopy(module).eval().requires_grad_(False)
        self._call = logits if logits is not None else (lambda net, observation, mask: net(observation))

    def logits(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self._call(self.module, observation, mask)


class SnapshotPool:
    """A batched player made of the learner's last ``size`` snapshots: each game's opponent
    seats are played by one of them, drawn per game (uniformly, from the env's generator) when
    the pool changes. Until the first snapshot arrives, ``first`` plays.

    Args:
        first: a player with a batched form (spec or object; default ``"random"``); it leaves
            the pool when the first snapshot arrives.
        size: how many of the newest snapshots to keep (1 = always the latest). More give more
            varied, older opponents and less chasing of the learner's latest habits.
        settings: the game settings, for a spec ``first``.

    Each call runs each snapshot once, on its own games' rows (one batched forward pass per
    snapshot and step of the other seats).
    """

    name = "snapshot-pool"

    def __init__(self, first: str | Player = "random", size: int = 5, settings: Any = None) -> None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be an int >= 1 (how many snapshots to keep), got {size!r}")
        self.size = int(size)
        kwargs = {} if settings is None else {"settings": settings}
        self.members: list[Any] = [as_batched_player(first, "first", **kwargs)]
        self._first = True
        self.added = 0
        self._assignment: torch.Tensor | None = None  # (B,) which member plays each game

    def add(self, snapshot: Any) -> None:
        """Keep ``snapshot`` (an object with ``act_batch``, e.g. a `ModuleSnapshot`) and
        drop the oldest beyond ``size``; every game draws its player again at the next move."""
        if not callable(getattr(snapshot, "act_batch", None)):
            raise TypeError(f"snapshot must have act_batch (a batched player), got {type(snapshot).__name__}")
        self.members = ([] if self._first else self.members) + [snapshot]
        self.members, self._first = self.members[-self.size:], False
        self.added += 1
        self._assignment = None

    def act_batch(self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if len(self.members) == 1:
            return self.members[0].act_batch(observation, mask, generator)
        B = observation.shape[0]
        if self._assignment is None or self._assignment.shape[0] != B:
            self._assignment = torch.randint(len(self.members), (B,), generator=generator, device=generator.device)
        actions = torch.zeros(B, dtype=torch.int64, device=observation.device)
        for k, member in enumerate(self.members):
            rows = (self._assignment == k).nonzero().squeeze(1).to(observation.device)
            if rows.numel():
                actions[rows] = member.act_batch(observation[rows], mask[rows], generator).to(torch.int64)
        return actions

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reseed: the draws come from the env's generator."""

    def act(self, view: SeatView) -> int:
        """The harness's single-game form: a member drawn per call (the first member only
        before any snapshot)."""
        return random.choice(self.members).act(view)

    def __repr__(self) -> str:
        return f"SnapshotPool(size={self.size}, holding={len(self.members)}, added={self.added})"


__all__ = ["FrozenPolicy", "ModuleSnapshot", "SnapshotPool"]
