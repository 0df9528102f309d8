"""Checkpoints: weights in safetensors, everything else in JSON; nothing is ever unpickled.

The format's public names, gathered from the modules that each do one job:

* `.atomic`: files and directories written whole or not at all;
* `.run_layout`: a run directory's checkpoints (``OUT/checkpoints/update-N``, the
  ``OUT/checkpoint`` link) and its other files;
* `pisti_env.policies.metadata`: ``metadata.json``'s schema (read as untrusted input) and
  play modes; `.metadata`: what a resume checks beyond it (the ``trainer`` field);
* `pisti_env.policies.spec`: the network fields of the metadata (`NetworkSpec`);
* `pisti_env.policies.weights`: the tensor files, read after checking them;
  `.weights`: written with their hashes.

The readers live in `pisti_env.policies`, so that a policy loads without the trainer. Every
failure to read is a [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] (a ``ValueError``) naming the file and the field.
"""

from pisti_env.policies.metadata import (
    FORMAT, FORMAT_VERSION, GAME_DEFINING, LOG_FILE, MATCH_CONTEXT, MAX_METADATA_BYTES, METADATA_FILE, MODEL_FILE,
    PLAY_MODES, TRAINER_FILE, CheckpointError, check_hidden_sizes, check_play, play_mode, read_metadata,
    validate_metadata,
)
from pisti_env.policies.spec import MAX_HIDDEN_LAYERS, MAX_HIDDEN_WIDTH, NetworkSpec
from pisti_env.policies.weights import (
    check_settings, checked_file, load_policy_weights, load_tensors, network_shapes, tensor_shapes,
)

from .atomic import remove_strays, write_atomic
from .metadata import validate_trainer_metadata
from .run_layout import HISTORY, LATEST, RUN_FILES, latest_run_checkpoint, publish_run_checkpoint, run_checkpoints
from .weights import save_checkpoint, verify_checkpoint

__all__ = [
    "FORMAT", "FORMAT_VERSION", "GAME_DEFINING", "MATCH_CONTEXT", "MAX_METADATA_BYTES", "METADATA_FILE", "MODEL_FILE",
    "PLAY_MODES", "TRAINER_FILE", "CheckpointError", "check_hidden_sizes", "check_play", "play_mode", "read_metadata",
    "validate_metadata", "validate_trainer_metadata", "HISTORY", "LATEST", "LOG_FILE", "RUN_FILES",
    "latest_run_checkpoint", "publish_run_checkpoint", "run_checkpoints", "MAX_HIDDEN_LAYERS", "MAX_HIDDEN_WIDTH",
    "NetworkSpec", "check_settings", "checked_file", "load_policy_weights", "load_tensors", "network_shapes",
    "save_checkpoint", "tensor_shapes", "verify_checkpoint", "remove_strays", "write_atomic",
]
