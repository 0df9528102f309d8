"""A warm start (``TrainConfig.init_from``): a run's networks start from a checkpoint's weights.

The checkpoint's policy weights start the policy (read and checked by the one policy-weights
reader, `load_policy_weights`, as ``load_policy`` reads them);
its value weights start the value network only where they have exactly this run's shape (a
policy-only checkpoint has none: the value network then starts fresh). The checkpoint must be
for the same game (every setting but the match context) and the same ``hidden_sizes``, else a
[`CheckpointError`][pisti_env.policies.metadata.CheckpointError]. Extensions adapt the policy weights to
their heads (`warm_start_weights`).
Optimizer, pool and counters start fresh (resuming is `training.trainer.resume`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pisti_env.policies.metadata import MODEL_FILE, CheckpointError
from pisti_env.policies.weights import load_policy_weights, load_tensors, tensor_shapes

if TYPE_CHECKING:  # pragma: no cover
    from .train import Trainer


def warm_start(trainer: "Trainer", directory: str | os.PathLike) -> None:
    """Load ``directory``'s weights into ``trainer``'s networks (see the module docstring)."""
    metadata, policy = load_policy_weights(directory, trainer.settings)
    loose: tuple[str, ...] = ()  # state-dict prefixes that may start fresh
    for extension in trainer.extensions:
        policy, fresh = extension.warm_start_weights(str(directory), metadata, policy, trainer.device)
        loose += fresh
    hidden = list(metadata["hidden_sizes"])
    wanted = list(trainer.config.hidden_sizes)
    if hidden != wanted:
        raise CheckpointError(
            f"{directory}: its policy has hidden_sizes {hidden}, this run builds {wanted} "
            f"(pass --hidden-sizes {' '.join(map(str, hidden))} to warm-start from it)"
        )
    extra = sorted({key.split(".")[0] for key in set(policy) - set(trainer.network.policy.state_dict())})
    if extra:
        fields = [f for f in ("answer_hidden_sizes", "claim_hidden_sizes") if metadata.get(f)]
        raise CheckpointError(f"{directory}: its policy has parts this run does not build ({', '.join(extra)}; its "
                              f"metadata: {', '.join(f'{f} {metadata[f]}' for f in fields) or 'none'})")
    try:
        missing, _ = trainer.network.policy.load_state_dict(policy, strict=not loose)
    except RuntimeError:  # pragma: no cover - same game and widths give the same shapes
        raise CheckpointError(f"{directory}: its policy weights do not fit this run's policy network") from None
    if any(not key.startswith(loose) for key in missing):  # pragma: no cover - checked shapes
        raise CheckpointError(f"{directory}: its policy lacks {sorted(missing)[:3]}")
    for extension in trainer.extensions:
        extension.check_warm_start(str(directory), list(missing))
    # Value weights: only of exactly this run's value network.
    value = {f"value.{k}": tuple(v.shape) for k, v in trainer.network.value.state_dict().items()}
    stored = {k: shape for k, (shape, _dtype) in tensor_shapes(Path(directory) / MODEL_FILE).items()
              if k.startswith("value.")}
    if stored == value:
        weights = load_tensors(directory, MODEL_FILE, metadata, value, exact=False)
        trainer.network.value.load_state_dict({k.removeprefix("value."): v for k, v in weights.items()})
