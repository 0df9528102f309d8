"""The policy network, its spec, the checkpoint readers and the checkpoint player moved to
``pisti_env.policies`` (and the untrusted-file readers to ``pisti_env.util.regular_files``, the
versions of a report to ``pisti_env.tools.versions``); the old import paths, which running jobs and
outside code use, still give the very same objects: one implementation, re-exported."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("torch")

# old module -> (new module, the names it re-exports)
MOVED = {
    "training.trainer.policy": ("pisti_env.policies.loader", ["load_policy"]),
    "training.trainer": ("pisti_env.policies.player", ["CheckpointPlayer"]),
    "training.trainer.spec": ("pisti_env.policies.spec", [
        "NetworkSpec", "SpecError", "check_hidden_sizes", "is_capture_value", "OPTIONAL", "MAX_HIDDEN_LAYERS",
        "MAX_HIDDEN_WIDTH", "MAX_AVERAGE_HEADS", "MAX_CAPTURE_VALUE"]),
    "training.trainer.network": ("pisti_env.policies.network", [
        "PolicyNetwork", "policy_network", "mlp", "masked_logits", "log_probs", "sample", "sample_bluffs",
        "NUM_ACTIONS", "NUM_SUITS"]),
    "training.trainer.metadata": ("pisti_env.policies.metadata", [
        "CheckpointError", "read_metadata", "read_json", "validate_metadata", "check_play", "play_mode",
        "PLAY_MODES", "GAME_DEFINING", "MATCH_CONTEXT", "FORMAT", "FORMAT_VERSION", "METADATA_FILE", "MODEL_FILE",
        "TRAINER_FILE", "MAX_METADATA_BYTES", "MAX_COUNT", "LOG_FILE", "check_hidden_sizes",
        "_fail", "_integer", "_mapping", "_sequence"]),
    "training.trainer.weights": ("pisti_env.policies.weights", [
        "load_policy_weights", "load_tensors", "checked_file", "tensor_shapes", "check_settings", "network_shapes",
        "non_finite", "FLOAT_DTYPES"]),
    "training.trainer.checkpoint": ("pisti_env.policies.weights", ["load_policy_weights", "load_tensors"]),
    "training.trainer.failures": ("pisti_env.policies.weights", ["non_finite"]),
    "training.trainer.run_layout": ("pisti_env.policies.metadata", ["LOG_FILE"]),
    "training.trainer.paths": ("pisti_env.util.regular_files", [
        "read_regular", "regular_file", "entry_kind", "describe"]),
    "training.trainer.atomic": ("pisti_env.util.regular_files", ["sha256"]),
    "training.bluff.heads": ("pisti_env.policies.claim_heads", [
        "ClaimHeads", "ClaimView", "ClaimChanceView", "AveragedHead", "without_claim_heads", "lone_rank",
        "CLAIM_HEADS"]),
    "training.bluff.claim_game": ("pisti_env.policies.claim_game", [
        "SolvedClaims", "solve", "hypergeometric", "thresholds"]),
    "training.harness.report": ("pisti_env.tools.versions", ["versions"]),
    "pisti_env.agents.registry": ("pisti_env.policies", ["SHIPPED_POLICIES", "POLICY_DIR", "shipped_policy_path"]),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_import_path_gives_the_moved_object(old):
    new, names = MOVED[old]
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    assert [name for name in names if getattr(old_module, name) is not getattr(new_module, name)] == []


def test_training_load_policy_loads_through_the_moved_loader():
    import training
    from pisti_env.policies import shipped_policy_path

    player = training.load_policy(shipped_policy_path("pisti-2p"))
    assert type(player).__module__ == "pisti_env.policies.player"
