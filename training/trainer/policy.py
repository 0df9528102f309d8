"""A trained checkpoint as a player (:class:`CheckpointPlayer`) for any seat: the one player
protocol of :mod:`pisti_env.agents.base`, single decisions and batches.

``load_policy(path)`` reads a checkpoint directory; ``make_player(path)`` of the registry calls
it for a spec that is a path.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np
import torch

from pisti_env.agents.view import SeatView
from pisti_env.rules import Settings

from .metadata import GAME_DEFINING, MATCH_CONTEXT, check_play
from .network import PolicyNetwork, log_probs, sample, sample_bluffs
from .spec import NetworkSpec
from .weights import load_policy_weights

__all__ = ["CheckpointPlayer", "load_policy", "GAME_DEFINING", "MATCH_CONTEXT"]


class CheckpointPlayer:
    """A policy network as a player.

    ``act(view)`` takes a :class:`~pisti_env.agents.SeatView` (or the environment's observation
    dict, ``"observation"`` and ``"action_mask"``, as in an AEC loop) and returns an action id;
    ``act_batch(observation, mask, generator)`` chooses for a batch of the batched engine's
    tensors. How it chooses is its ``play`` mode; draws come from the player's own generator
    (reseeded by ``reset(seed)``) or the one ``act_batch`` is given.

    Args:
        network: the policy network (put in eval mode).
        metadata: the checkpoint's metadata; ``settings`` (a dict) are the game it was trained
            for, ``name`` its label.
        deterministic: ``True``: play ``"argmax"``, ``False``: ``"sample"`` (when ``play`` is
            not given).
        play: ``"argmax"`` the most likely legal action; ``"sample"`` a draw from the whole
            distribution; ``"sample_bluffs"`` the bluff variant's mixed decisions drawn (face
            up or face down, believe or challenge, R29, each kind with its total probability)
            and the most likely card of the drawn kind (:func:`~training.trainer.network.sample_bluffs`).
    """

    def __init__(
        self, network: PolicyNetwork, metadata: Mapping[str, Any], deterministic: bool = True, play: str | None = None
    ) -> None:
        if play is None:
            play = "argmax" if deterministic else "sample"
        self.play = check_play(play)  # before the network is touched
        self.network = network.eval()
        self.metadata = dict(metadata)
        self.settings: dict[str, Any] = self.metadata.get("settings", {})
        self.generator = torch.Generator().manual_seed(0)
        self.name = self.metadata.get("name", "policy")

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
        probability}`` (the masked distribution it samples from; :meth:`act` with
        ``play="argmax"`` plays the most likely one). Same argument and errors as :meth:`act`."""
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


def load_policy(
    path: str | os.PathLike,
    deterministic: bool | None = None,
    settings: Settings | Mapping[str, Any] | None = None,
    device: str = "cpu",
    play: str | None = None,
) -> CheckpointPlayer:
    """Load a checkpoint directory's policy as a player.

    Args:
        path: the checkpoint directory (a training checkpoint or a shipped policy).
        deterministic: ``True``: play the most likely legal action, ``False``: sample.
        play: how it chooses (see :class:`CheckpointPlayer`); not with ``deterministic``.
            Neither given: as the checkpoint's metadata ``play`` says (``"argmax"`` when
            absent; a bluff-variant policy is saved to draw its mixed decisions).
        settings: if given (a :class:`Settings` or its keyword dict), the game it will play; a
            checkpoint trained for another game (any setting but the match context: players,
            partnerships, decks, scoring variants, bluff) raises :class:`CheckpointError`.
        device: where the network lives.

    Raises :class:`~training.trainer.checkpoint.CheckpointError` (naming the file and the field)
    for a missing, corrupt or mismatched checkpoint: the metadata is checked against its schema
    and the weights' shapes against the network it describes before the network is built
    (:func:`~training.trainer.weights.load_policy_weights`).
    """
    if deterministic is not None and play is not None:
        raise ValueError("give deterministic or play, not both")
    if play is not None:
        check_play(play, f" for checkpoint {str(path)!r}")  # before the files are read
    metadata, weights = load_policy_weights(path, settings)  # validated before anything is built
    network = PolicyNetwork(NetworkSpec.from_metadata(metadata))  # the spec the metadata stores
    network.load_state_dict(weights)  # the shapes were checked against the file's header
    if deterministic is not None:
        play = "argmax" if deterministic else "sample"
    return CheckpointPlayer(network.to(device), metadata, play=play or metadata.get("play", "argmax"))
