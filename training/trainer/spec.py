"""The policy network's description, `NetworkSpec`: it lives in
`pisti_env.policies.spec` (playing a policy needs it, without the trainer); this module
re-exports it for code that imports it from here. [`TrainConfig.network_spec`][training.trainer.config.TrainConfig.network_spec] builds a run's spec.
"""

from pisti_env.policies.spec import (
    MAX_AVERAGE_HEADS, MAX_CAPTURE_VALUE, MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH, OPTIONAL, NetworkSpec, SpecError,
    check_hidden_sizes, is_capture_value,
)

__all__ = [
    "MAX_AVERAGE_HEADS", "MAX_CAPTURE_VALUE", "MAX_HIDDEN_LAYERS", "MAX_HIDDEN_WIDTH", "OPTIONAL", "NetworkSpec",
    "SpecError", "check_hidden_sizes", "is_capture_value",
]
