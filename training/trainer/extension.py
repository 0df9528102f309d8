"""The trainer's extension points: how research plugs into the core PPO loop without changing it.

The core (`Trainer`) is plain self-play PPO. An extension is a
`TrainerExtension` whose hooks the core calls at fixed places; each hook's default does
nothing, so an extension overrides only what it needs. The points:

* **network heads**: the `NetworkSpec` a config builds may ask for
  extra heads; `PolicyNetwork` builds them through
  ``spec``'s options (`training.bluff.heads.ClaimHeads`), not through a hook here;
* **warm start**: `TrainerExtension.warm_start_weights` adapts the policy weights an
  ``init_from`` checkpoint holds to this run's network (heads dropped, taken, or left fresh);
* **trainable parameters**: `TrainerExtension.trains` (a frozen part has no optimizer
  state);
* **seat controllers**: `TrainerExtension.seat_controller` gives the rollout collector a
  `SeatController` that decides some seats' moves with other weights;
* **extra loss terms**: `TrainerExtension.extra_loss`, added to each minibatch's PPO loss;
  `TrainerExtension.magnet_heads` for the magnet's reference;
* **after an update**: `TrainerExtension.after_update`;
* **the shipped policy**: `TrainerExtension.shipped_policy` (what ``OUT/policy`` holds);
* **extra state**: `TrainerExtension.state`, `TrainerExtension.state_layout` and
  `TrainerExtension.restore`, under the key `TrainerExtension.state_key` of the
  checkpoint's ``trainer`` metadata (`training.trainer.state`);
* **metadata**: a policy's spec fields (`NetworkSpec.to_metadata`) carry what a loader
  needs to rebuild it.

`extensions_for` picks the extensions a config asks for; today one: the bluff variant's
research (`training.bluff.extension.BluffExtension`, for R29's claim and answer heads,
their fictitious-play average and the answers' entropy weight).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import torch

if TYPE_CHECKING:  # pragma: no cover
    from .config import TrainConfig
    from pisti_env.policies.network import PolicyNetwork
    from .train import Trainer


class SeatController:
    """Decides some seats' moves in the rollout with other weights than the learner's; those
    decisions are not the learner's (they do not train it). State tensors: `state`."""

    def assign(self, games: torch.Tensor, self_play: torch.Tensor, on_learner_side: torch.Tensor) -> None:
        """New games ``games`` (indices) started: ``self_play`` (k,) and ``on_learner_side`` (k, n)."""

    def override(self, network: torch.nn.Module, observation: torch.Tensor, mask: torch.Tensor,
                 seat: torch.Tensor, logits: torch.Tensor) -> torch.Tensor | None:
        """Rewrite the rows of ``logits`` this controller decides (in place); returns a (B,)
        bool mask of them (not the learner's decisions), or ``None``."""
        return None

    def state(self) -> dict[str, torch.Tensor]:
        """Tensors to save with the collector (key -> tensor)."""
        return {}

    def restore(self, tensors: Mapping[str, torch.Tensor]) -> None:
        """Back to `state`'s tensors."""


class TrainerExtension:
    """Hooks with do-nothing defaults; see the module docstring for where the core calls each."""

    state_key: str | None = None  # the key of the extension's plain state in the `trainer` metadata

    def warm_start_weights(self, directory: str, metadata: Mapping[str, Any], policy: dict[str, torch.Tensor],
                           device: torch.device) -> tuple[dict[str, torch.Tensor], tuple[str, ...]]:
        """The ``init_from`` policy weights (of checkpoint ``directory``) as this run's network takes them, and the state-dict
        prefixes that may be missing from them (those parts start fresh)."""
        return policy, ()

    def check_warm_start(self, directory: str, missing: list[str]) -> None:
        """Refuse a warm start whose weights lacked ``missing`` keys this extension needs."""

    def trains(self, name: str) -> bool:
        """Whether the optimizer updates the parameter ``name`` (an ActorCritic parameter name)."""
        return True

    def setup(self, trainer: "Trainer") -> None:
        """Called once the trainer's networks exist (before the collector is built)."""

    def seat_controller(self, trainer: "Trainer") -> SeatController | None:
        """The rollout's seat controller, or ``None``."""
        return None

    def extra_loss(self, trainer: "Trainer", logp: torch.Tensor, entropy: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        """A term added to a minibatch's loss (``logp``: masked log-probabilities, ``entropy``
        per row, ``mask`` the legal actions), or ``None``."""
        return None

    def magnet_heads(self) -> tuple[torch.nn.Module, ...] | None:
        """Heads the magnet's policy uses instead of its own (``PolicyNetwork.forward``'s ``heads``)."""
        return None

    def after_update(self, trainer: "Trainer") -> None:
        """Called after each update's counters moved on (snapshots, averages)."""

    def shipped_policy(self, policy: "PolicyNetwork") -> "PolicyNetwork":
        """The policy the run ships and evaluates, from the network's own."""
        return policy

    def state(self) -> tuple[dict[str, torch.Tensor], Any]:
        """(tensors, plain JSON value) saved in a training checkpoint; the plain value goes to
        ``trainer[state_key]`` in the metadata."""
        return {}, None

    def state_layout(self, extra: Any) -> dict[str, tuple[int, ...]]:
        """The shapes of the tensors `state` wrote for the saved plain value ``extra``
        (float32), checked before they are read."""
        return {}

    def check_state(self, extra: Any, path: Any) -> None:
        """Check the saved plain value ``extra`` (untrusted; ``path`` the metadata file):
        raise [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the field."""

    def restore(self, tensors: Mapping[str, torch.Tensor], extra: Any) -> None:
        """Back to a checkpoint's `state`."""


def extensions_for(config: "TrainConfig") -> list[TrainerExtension]:
    """The extensions ``config`` asks for (none for a run without R29's research options)."""
    if not config.uses_bluff_research:
        return []
    from training.bluff.extension import BluffExtension  # the research package plugs in here only

    return [BluffExtension(config)]
