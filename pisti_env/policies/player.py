"""A trained checkpoint as a player (``CheckpointPlayer``) for any seat: the one player
protocol of ``pisti_env.agents.base``, single decisions and batches.

``pisti_env.policies.loader.load_policy`` builds one from a checkpoint directory;
``make_player(path)`` of the registry calls it for a spec that is a path or a shipped policy's
name.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import torch

from ..views.view import SeatView
from .metadata import check_play
from .network import PolicyNetwork, log_probs, sample, sample_bluffs

__all__ = ["CheckpointPlayer"]


class CheckpointPlayer:
    """A policy network as a player.

    ``act(view)`` takes a ``pisti_env.agents.SeatView`` (or the environment's observation
    dict, ``"observation"`` and ``"action_mask"``, as in an AEC loop) and returns an action id;
    ``act_batch(observation, mask, generator)`` chooses for a batch of the batched engine's
    tensors. How it chooses is its ``play`` mode; draws come from the player's own generator
    (reseeded by ``reset(seed)``) or the one ``act_batch`` is given.

    Args:
        network: the policy network (put in eval mode).
        metadata: the checkpoint's metadata; ``settings`` (a dict) are the game it was trained
            for, ``name`` its label when ``name`` is not given.
        deterministic: ``True``: play ``"argmax"``, ``False``: ``"sample"`` (when ``play`` is
            not given).
        play: ``"argmax"`` the most likely legal action; ``"sample"`` a draw from the whole
            distribution; ``"sample_bluffs"`` the bluff variant's mixed decisions drawn (face
            up or face down, believe or challenge, R29, each kind with its total probability)
            and the most likely card of the drawn kind (``pisti_env.policies.network.sample_bluffs``).
        name: the player's name; a loaded checkpoint is named after its directory
            ([`load_policy`][pisti_env.policies.loader.load_policy]: `pisti-2p` for the shipped
            policy, whatever name its metadata kept from where it was saved).
    """

    def __init__(
        self, network: PolicyNetwork, metadata: Mapping[str, Any], deterministic: bool = True, play: str | None = None,
        name: str | None = None,
    ) -> None:
        if play is None:
            play = "argmax" if deterministic else "sample"
        self.play = check_play(play)  # before the network is touched
        self.network = network.eval()
        self.metadata = dict(metadata)
        self.settings: dict[str, Any] = self.metadata.get("settings", {})
        self.generator = torch.Generator().manual_seed(0)
        self.name = str(name) if name is not None else self.metadata.get("name", "policy")

    @property
    def deterministic(self) -> bool:
        """Whether it always plays the most likely legal action (``play == "argmax"``)."""
        return self.play == "argmax"

    def reset(self, seed: int | None = None) -> None:
        """Reseed the sampling generator (``None``: seed 0)."""
        self.generator.manual_seed(0 if seed is None else int(seed))

    @torch.no_grad()
    def act(self, view: SeatView | Mapping[str, Any]) -> int:
        """The action for one decision; raises ``ValueError`` for an observation of another
        size than the network's (a checkpoint of other game settings)."""
        observation = view.observation() if isinstance(view, SeatView) else view
        vector = self._vector(observation)
        mask = torch.as_tensor(np.asarray(observation["action_mask"]) > 0)[None]
        return int(self.act_batch(torch.from_numpy(vector)[None], mask, self.generator))

    @torch.no_grad()
    def action_probabilities(self, view: SeatView | Mapping[str, Any]) -> dict[int, float]:
        """The policy's probability of each legal action for one decision, ``{action id:
        probability}`` (the masked distribution it samples from; ``act`` with
        ``play="argmax"`` plays the most likely one). Same argument and errors as ``act``."""
        observation = view.observation() if isinstance(view, SeatView) else view
        vector = self._vector(observation)
        mask = torch.as_tensor(np.asarray(observation["action_mask"]) > 0)[None]
        probs = log_probs(self.network(torch.from_numpy(vector)[None]), mask)[0].exp()
        return {int(a): float(probs[a]) for a in torch.nonzero(mask[0]).flatten().tolist()}

    def _vector(self, observation: Mapping[str, Any]) -> np.ndarray:
        """The observation vector, checked against the network's input size."""
        vector = np.asarray(observation["observation"], dtype=np.float32)
        if vector.shape != (self.network.observation_size,):
            raise ValueError(
                f"policy {self.name!r} expects observations of size {self.network.observation_size} "
                f"(game settings {self.settings}), got shape {vector.shape}: other game settings?"
            )
        if not np.any(np.asarray(observation["action_mask"]) > 0):
            raise ValueError(f"policy {self.name!r} was asked to act with no legal action")
        return vector

    @torch.no_grad()
    def act_batch(
        self, observation: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """One legal action per row (``generator``, default the player's own, draws samples)."""
        logits = self.network(observation)
        if self.play == "argmax":
            return log_probs(logits, mask).argmax(1)
        draw = sample if self.play == "sample" else sample_bluffs
        return draw(logits, mask, self.generator if generator is None else generator)

    def __repr__(self) -> str:
        return f"CheckpointPlayer({self.name!r}, play={self.play!r})"
