"""Checkpoints are validated before anything is built from them (issue 16, part 3): a table of
corrupted ``metadata.json`` files and weight files, each refused with a
[`CheckpointError`][pisti_env.policies.metadata.CheckpointError] naming the file and the field, before any network is built (the
policy's constructor is replaced by one that fails the test if it is reached)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import load_file, save_file  # noqa: E402

from pisti_env.policies import loader as policy_module  # noqa: E402
from training.trainer.checkpoint import (  # noqa: E402
    MAX_HIDDEN_WIDTH, MAX_METADATA_BYTES, CheckpointError, read_metadata, verify_checkpoint,
)
from helpers import train_config  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small training checkpoint (weights, trainer state, metadata) after one update."""
    base = tmp_path_factory.mktemp("schema")
    config = train_config(**dict(
        num_envs=8, rollout_steps=4, total_steps=8 * 4 * 4, target=None, hidden_sizes=[8], value_hidden_sizes=[8],
        snapshot_every=1, eval_every=0, checkpoint_every=0, torch_threads=1, precision="fp32", out_dir=str(base / "run"),
    ))
    trainer = Trainer(config)
    trainer.train_update()
    return trainer.save(base / "checkpoint")


@pytest.fixture
def copy_of(saved, tmp_path):
    target = tmp_path / "ckpt"
    shutil.copytree(saved, target)
    return target


@pytest.fixture
def nothing_built(monkeypatch):
    """Fail the test if load_policy ever builds its network (it must refuse first)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a network was built from an unchecked checkpoint")

    monkeypatch.setattr(policy_module, "PolicyNetwork", refuse)


def rewrite(directory: Path, change) -> None:
    path = directory / "metadata.json"
    metadata = json.loads(path.read_text())
    change(metadata)
    path.write_text(json.dumps(metadata))


def setter(*keys, value):
    def change(metadata):
        target = metadata
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


def deleter(key):
    return lambda metadata: metadata.pop(key)


# (case id, change to metadata.json, the field the error must name)
METADATA_CASES = [
    ("hidden-huge", setter("hidden_sizes", value=[20000, 20000]), "hidden_sizes"),
    ("hidden-many", setter("hidden_sizes", value=[8] * 100), "hidden_sizes"),
    ("hidden-zero", setter("hidden_sizes", value=[0]), "hidden_sizes"),
    ("hidden-empty", setter("hidden_sizes", value=[]), "hidden_sizes"),
    ("hidden-string", setter("hidden_sizes", value="256"), "hidden_sizes"),
    ("hidden-float", setter("hidden_sizes", value=[8.0]), "hidden_sizes"),
    ("hidden-bool", setter("hidden_sizes", value=[True]), "hidden_sizes"),
    ("hidden-nested", setter("hidden_sizes", value=[[8]]), "hidden_sizes"),
    ("hidden-other-width", setter("hidden_sizes", value=[16]), "policy.context.0.weight"),
    ("obs-string", setter("observation_size", value="556"), "observation_size"),
    ("obs-wrong", setter("observation_size", value=555), "observation_size"),
    ("obs-huge", setter("observation_size", value=10**12), "observation_size"),
    ("obs-negative", setter("observation_size", value=-1), "observation_size"),
    ("card-features", setter("card_features", value=11), "card_features"),
    ("settings-list", setter("settings", value=[2]), "settings"),
    ("settings-players-string", setter("settings", "num_players", value="2"), "settings.num_players"),
    ("settings-players-7", setter("settings", "num_players", value=7), "settings"),
    ("settings-unknown", setter("settings", "players", value=2), "settings"),
    ("settings-nested", setter("settings", "bluff", value={"a": [[[]]]}), "settings.bluff"),
    ("settings-other-game", setter("settings", "num_players", value=4), "observation_size"),
    ("format", setter("format", value="other"), "format"),
    ("format-version", setter("format_version", value=3), "format_version"),
    ("format-version-string", setter("format_version", value="2"), "format_version"),
    ("obs-version", setter("obs_version", value=99), "obs_version"),
    ("files-list", setter("files", value=["model.safetensors"]), "files"),
    ("files-bad-hash", setter("files", "model.safetensors", value="x" * 64), "files.model.safetensors"),
    ("files-unknown", setter("files", "evil.bin", value="0" * 64), "files"),
    ("step-negative", setter("step", value=-1), "step"),
    ("update-float", setter("update", value=1.5), "update"),
    ("name-dict", setter("name", value={"a": 1}), "name"),
    ("config-nested", setter("config", "seed", value={"deep": [{"deeper": []}]}), "config.seed"),
    ("config-list", setter("config", value=[1, 2]), "config"),
    ("trainer-list", setter("trainer", value=[]), "trainer"),
    ("log-sizes-escape", setter("log_sizes", value={"../../etc/passwd": 0}), "log_sizes"),
    ("unknown-field", setter("surprise", value=1), "surprise"),
    ("top-level-list", lambda m: (m.clear(), m.update({"format": "pisti-checkpoint"})), "format_version"),
]
for required in ("settings", "observation_size", "card_features", "hidden_sizes", "files"):
    METADATA_CASES.append((f"missing-{required}", deleter(required), required))


@pytest.mark.parametrize("change, field", [c[1:] for c in METADATA_CASES], ids=[c[0] for c in METADATA_CASES])
def test_corrupt_metadata_is_refused_naming_the_file_and_field_before_anything_is_built(copy_of, nothing_built, change, field):
    rewrite(copy_of, change)
    with pytest.raises(CheckpointError) as error:
        load_policy(copy_of)
    message = str(error.value)
    assert str(copy_of) in message and field in message, message


@pytest.mark.parametrize("text, problem", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # a recursion bomb
    ('{"a":' * 50_000 + "1" + "}" * 50_000, "nested too deeply"),
    ("{not json", "corrupt"),
    ('{"format": "pisti-checkpoint", "observation_size": NaN}', "NaN"),
    ('{"format": "pisti-checkpoint", "step": ' + "9" * 5000 + "}", "corrupt"),
    ("\udcff", "corrupt"),
    ("[]", "must be an object"),
    ("null", "must be an object"),
    ('"pisti-checkpoint"', "must be an object"),
])
def test_unparseable_metadata_is_refused(copy_of, nothing_built, text, problem):
    (copy_of / "metadata.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(CheckpointError, match=problem) as error:
        load_policy(copy_of)
    assert str(copy_of / "metadata.json") in str(error.value)


def test_oversized_metadata_is_refused_without_parsing(copy_of, nothing_built):
    (copy_of / "metadata.json").write_bytes(b" " * (MAX_METADATA_BYTES + 1))
    with pytest.raises(CheckpointError, match="more than"):
        load_policy(copy_of)


def forge_weights(directory: Path, tensors: dict) -> None:
    """Replace model.safetensors and record its true hash (a forged, self-consistent file)."""
    path = directory / "model.safetensors"
    save_file(tensors, str(path))
    rewrite(directory, setter("files", "model.safetensors", value=hashlib.sha256(path.read_bytes()).hexdigest()))


def test_weights_are_checked_against_the_described_network_from_the_header(copy_of, nothing_built):
    weights = load_file(copy_of / "model.safetensors")
    original = copy.deepcopy(weights)
    # A truncated file: refused by its hash.
    (copy_of / "model.safetensors").write_bytes((copy_of / "model.safetensors").read_bytes()[:100])
    with pytest.raises(CheckpointError, match="does not match its recorded hash"):
        load_policy(copy_of)
    # Garbage with a matching hash: not a safetensors file.
    (copy_of / "model.safetensors").write_bytes(b"\xff" * 64)
    rewrite(copy_of, setter("files", "model.safetensors", value=hashlib.sha256(b"\xff" * 64).hexdigest()))
    with pytest.raises(CheckpointError, match="model.safetensors is corrupt"):
        load_policy(copy_of)
    # Wider layers than the metadata says, a missing tensor, integer weights: named.
    forge_weights(copy_of, {**original, "policy.context.0.weight": torch.zeros(8 * 4, original["policy.context.0.weight"].shape[1])})
    with pytest.raises(CheckpointError, match=r"policy.context.0.weight has shape \[32, .*\], the network needs \[8, "):
        load_policy(copy_of)
    forge_weights(copy_of, {k: v for k, v in original.items() if k != "policy.card_head.bias"})
    with pytest.raises(CheckpointError, match="policy.card_head.bias missing"):
        load_policy(copy_of)
    forge_weights(copy_of, {**original, "policy.card_head.bias": original["policy.card_head.bias"].long()})
    with pytest.raises(CheckpointError, match="policy.card_head.bias has dtype I64"):
        load_policy(copy_of)
    # Back to the true weights: it loads (and only then is a network built).
    forge_weights(copy_of, original)
    verify_checkpoint(copy_of, trainer_state=True)


@pytest.mark.parametrize("change, field", [
    (setter("config", "value_hidden_sizes", value=[20000, 20000]), "config.value_hidden_sizes"),
    (setter("config", "hidden_sizes", value=[16]), "config.hidden_sizes"),
    (setter("config", "num_players", value=4), "config"),
    (setter("config", "no_such_field", value=1), "config"),
    (setter("config", "settings", value={"num_players": 3}), "config.settings"),
    (setter("trainer", "pool", value=[{"name": "random"}]), "trainer.pool[0]"),
    (setter("trainer", "pool", value=[{"name": 5, "margin": 0.0, "games": 0, "snapshot": False}]), "trainer.pool[0].name"),
    (setter("trainer", "pool", value="random"), "trainer.pool"),
    (setter("trainer", "optimizer_param_groups", value=[{"params": [0, 1, 2], "lr": 0.001}]), "params"),
    (setter("trainer", "optimizer_param_groups", 0, "lr", value=[[[]]]), "optimizer_param_groups[0].lr"),
    (setter("trainer", "optimizer_param_groups", 0, "betas", value=["a", 1]), "optimizer_param_groups[0].betas"),
    (deleter("trainer"), "policy-only"),
    (setter("config", "num_envs", value=10**9), "num_envs"),
])
def test_resume_checks_the_trainer_metadata_and_state_before_building(copy_of, change, field, monkeypatch):
    built = []
    monkeypatch.setattr(Trainer, "__init__", lambda self, config: built.append(config) or (_ for _ in ()).throw(
        AssertionError("a trainer was built from an unchecked checkpoint")))
    rewrite(copy_of, change)
    with pytest.raises(CheckpointError) as error:
        Trainer.resume(copy_of)
    assert field in str(error.value) and str(copy_of) in str(error.value), str(error.value)
    assert not built


def test_the_shipped_checkpoints_pass_the_schema_unchanged():
    shipped = sorted(p.parent for p in (ROOT / "checkpoints").glob("*/metadata.json"))
    assert len(shipped) >= 3
    for path in shipped:
        metadata = verify_checkpoint(path)
        assert metadata["format_version"] == 2
        assert load_policy(path).network.hidden_sizes == tuple(metadata["hidden_sizes"])
    assert read_metadata(shipped[0])["hidden_sizes"][0] <= MAX_HIDDEN_WIDTH
