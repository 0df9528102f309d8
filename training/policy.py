"""A trained policy that plays any seat of ``pisti_v0``: ``load_policy(path).act(observation)``."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from pisti_env.rules import make_settings

from .checkpoint import MODEL_FILE, CheckpointError, check_settings, load_tensors, read_metadata
from .network import PolicyNetwork, log_probs, sample

# Settings that change the game a policy was trained for; the match target and win margin only
# change the match context, which the policy sees in its observation.
GAME_DEFINING = (
    "num_players", "partnerships", "decks", "double_pisti", "last_card_pisti",
    "ten_diamonds_pisti_bonus", "show_stock_bottom", "bluff", "bluff_jack_double",
)


class TrainedPolicy:
    """A policy network behind the harness's small interface.

    ``act(observation)`` takes the environment's observation dict (``"observation"``,
    ``"action_mask"``) and returns a card id: the most likely legal card when
    ``deterministic``, else a sample (seeded by ``reset(seed)``).
    """

    def __init__(self, network: PolicyNetwork, metadata: dict[str, Any], deterministic: bool = True) -> None:
        self.network = network.eval()
        self.metadata = metadata
        self.settings = metadata.get("settings", {})
        self.deterministic = deterministic
        self.generator = torch.Generator().manual_seed(0)
        self.name = metadata.get("name", "policy")

    def reset(self, seed: int | None = None) -> None:
        self.generator.manual_seed(0 if seed is None else int(seed))

    @torch.no_grad()
    def act(self, observation: dict[str, Any]) -> int:
        vector = np.asarray(observation["observation"], dtype=np.float32)
        if vector.shape != (self.network.observation_size,):
            raise ValueError(
                f"policy {self.name!r} expects observations of size {self.network.observation_size} "
                f"(game settings {self.settings}), got shape {vector.shape}: other game settings?"
            )
        mask = torch.as_tensor(np.asarray(observation["action_mask"]) > 0)[None]
        logits = self.network(torch.from_numpy(vector)[None])
        if self.deterministic:
            return int(log_probs(logits, mask).argmax(1))
        return int(sample(logits, mask, self.generator))

    @torch.no_grad()
    def act_batch(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Cards for a batch of observations (the batched engine's tensors)."""
        logits = self.network(observation)
        if self.deterministic:
            return log_probs(logits, mask).argmax(1)
        return sample(logits, mask, self.generator)


def load_policy(
    path: str | os.PathLike, deterministic: bool = True, settings: dict[str, Any] | None = None, device: str = "cpu"
) -> TrainedPolicy:
    """Load a checkpoint directory's policy.

    Args:
        path: the checkpoint directory (a training checkpoint or a shipped policy).
        deterministic: play the most likely legal card (else sample).
        settings: if given, the game settings it will play; a checkpoint trained for another
            game (players, partnerships, scoring variants) raises :class:`CheckpointError`.
        device: where the network lives.
    """
    metadata = read_metadata(path)
    try:
        observation_size = int(metadata["observation_size"])
        card_features = int(metadata["card_features"])
        hidden_sizes = [int(h) for h in metadata["hidden_sizes"]]
        num_actions = make_settings(**metadata["settings"]).num_actions  # 52, or 106 with bluff
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(
            f"{path}: metadata lacks the game settings or the network shape "
            "(settings, observation_size, card_features, hidden_sizes)"
        ) from None
    if settings is not None:
        wanted = make_settings(**settings).to_dict()
        check_settings(metadata, {k: wanted[k] for k in GAME_DEFINING}, path)
    network = PolicyNetwork(observation_size, card_features, hidden_sizes, num_actions)
    weights = load_tensors(path, MODEL_FILE, metadata)
    state = {k.removeprefix("policy."): v for k, v in weights.items() if k.startswith("policy.")}
    try:
        network.load_state_dict(state)
    except RuntimeError as error:
        raise CheckpointError(f"{path}: weights do not fit the recorded network shape: {error}") from None
    return TrainedPolicy(network.to(device), metadata, deterministic)
