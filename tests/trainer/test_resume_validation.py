"""A resume reads its run as untrusted input and checks all of it before it changes anything
(issues 39 and 42): trainer metadata and state against their schema, random-generator states,
counters cross-checked, numbers finite, the device there, links never followed out of the
run, saved checkpoint paths never loaded unasked. Each refusal is one line on stderr with exit
status 2, and the run directory is left byte for byte as it was (hashed before and after)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import load_file, save_file  # noqa: E402

from helpers import TINY_BATCH, tiny_train_flags  # noqa: E402
from training.trainer.checkpoint import HISTORY, LATEST, CheckpointError  # noqa: E402
from training.trainer.cli import main  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402

BATCH = TINY_BATCH
UPDATES = 2


def flags(out: Path, *extra: str, steps: int = UPDATES * BATCH) -> list[str]:
    return tiny_train_flags(out, "--keep-checkpoints", "1", "--snapshot-every", "1", *extra, steps=steps)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A tiny finished run (one checkpoint kept, a snapshot in its pool)."""
    out = tmp_path_factory.mktemp("validation") / "run"
    assert main(flags(out)) == 0
    return out


@pytest.fixture
def run_dir(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out, symlinks=True)
    TRAINED_RUN[:] = [out]
    return out


def checkpoint(out: Path) -> Path:
    return out / HISTORY / f"update-{UPDATES:09d}"


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links not followed): a file's SHA-256, a link's target."""
    found = {}
    for parent, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(parent) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = "link -> " + os.readlink(path)
            elif path.is_dir():
                found[key] = "directory"
            else:
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def edit_metadata(out: Path, change) -> None:
    path = checkpoint(out) / "metadata.json"
    metadata = json.loads(path.read_text())
    change(metadata)
    path.write_text(json.dumps(metadata))


def edit_tensors(out: Path, name: str, change) -> None:
    """Change a tensor file of the checkpoint and record its new hash (a forged, self-consistent file)."""
    path = checkpoint(out) / name
    tensors = load_file(path)
    change(tensors)
    save_file(tensors, str(path))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    edit_metadata(out, lambda m: m["files"].__setitem__(name, digest))


def garbage_state(tensors, key):
    tensors[key] = torch.randint(0, 256, tensors[key].shape, generator=torch.Generator().manual_seed(1), dtype=torch.uint8)


def link_outside(out: Path, name: str) -> None:
    """``name`` (in the checkpoint) replaced by a link to a copy outside the run: same bytes, same hash."""
    target = out.parent / f"outside-{name}"
    shutil.copy(checkpoint(out) / name, target)
    (checkpoint(out) / name).unlink()
    (checkpoint(out) / name).symlink_to(target)


def run_file_link(out: Path, name: str, target: str | None = None) -> None:
    path = out / name
    if target is None:
        target = str(out.parent / f"outside-{name}")
        os.rename(path, target)
    else:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    path.symlink_to(target)


def replace_with(out: Path, name: str, kind: str) -> None:
    path = out / name
    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    path.mkdir() if kind == "directory" else path.write_text("not a directory\n")


def set_log_size(out: Path, change) -> None:
    """The checkpoint's recorded size of ``metrics.csv`` changed by ``change(size)``."""
    edit_metadata(out, lambda m: m["log_sizes"].__setitem__("metrics.csv", change(m["log_sizes"]["metrics.csv"])))


def rows_back(rows: int):
    """A size change: the recorded size cut back by ``rows`` whole rows (a row boundary, the wrong update)."""
    def change(size: int) -> int:
        text = (TRAINED_RUN[0] / "metrics.csv").read_bytes()[:size]
        for _ in range(rows):
            size = text.rindex(b"\n", 0, size - 1) + 1
        return size
    return change


TRAINED_RUN: list[Path] = []  # the run being damaged (set by the run_dir fixture)


def pool_path(out: Path) -> None:
    """A pool baseline saved as a path to a checkpoint outside the run."""
    other = out.parent / "elsewhere"
    shutil.copytree(checkpoint(out), other)
    edit_metadata(out, lambda m: m["trainer"]["pool"][0].__setitem__("name", str(other)))


# (case id, how the run is damaged, words the one-line error must hold)
CASES = [
    ("no-step", lambda o: edit_metadata(o, lambda m: m.pop("step")), "field 'step': missing"),
    ("no-update", lambda o: edit_metadata(o, lambda m: m.pop("update")), "field 'update': missing"),
    ("step-string", lambda o: edit_metadata(o, lambda m: m.__setitem__("step", "64")), "field 'step'"),
    ("update-zero", lambda o: edit_metadata(o, lambda m: m.__setitem__("update", 0)), "is not 0 updates of 32"),
    ("update-huge", lambda o: edit_metadata(o, lambda m: m.__setitem__("update", 2**62)), "more than the run's budget"),
    ("step-other", lambda o: edit_metadata(o, lambda m: m.__setitem__("step", 3 * BATCH)), "field 'step'"),
    ("world-other", lambda o: edit_metadata(o, lambda m: m.__setitem__("world", 2)), "num_envs=8"),
    ("device-missing", lambda o: edit_metadata(o, lambda m: m["config"].__setitem__("device", "cuda:7")),
     "--resume --device cpu"),
    ("learning-rate-inf", lambda o: (checkpoint(o) / "metadata.json").write_text(
        (checkpoint(o) / "metadata.json").read_text().replace('"learning_rate": 0.001', '"learning_rate": 1e400')),
     "1e400 is beyond the range of a float"),
    ("optimizer-lr", lambda o: edit_metadata(o, lambda m: m["trainer"]["optimizer_param_groups"][0].__setitem__("lr", 5.0)),
     "optimizer_param_groups[0].lr"),
    ("pool-path", pool_path, "trainer.pool"),
    ("pool-too-many", lambda o: edit_metadata(o, lambda m: m["config"].__setitem__("pool_size", 0)), "pool_size"),
    ("rng-garbage", lambda o: edit_tensors(o, "trainer.safetensors", lambda t: garbage_state(t, "torch_rng")),
     "tensor torch_rng: not a state of torch's random generator"),
    ("generator-garbage", lambda o: edit_tensors(o, "trainer.safetensors", lambda t: garbage_state(t, "generator")),
     "tensor generator"),
    ("slot-huge", lambda o: edit_tensors(o, "trainer.safetensors", lambda t: t["engine.slot"].__setitem__(0, 2**40)),
     "engine.slot"),
    ("turn-range", lambda o: edit_tensors(o, "trainer.safetensors", lambda t: t["engine.turn"].fill_(9)), "engine.turn"),
    ("deck-not-a-deck", lambda o: edit_tensors(o, "trainer.safetensors", lambda t: t["engine.deck"].fill_(3)),
     "engine.deck"),
    ("controller-range", lambda o: edit_tensors(o, "trainer.safetensors",
                                                lambda t: t["collector.controller"].fill_(50)), "collector.controller"),
    ("adam-negative", lambda o: edit_tensors(o, "trainer.safetensors",
                                             lambda t: t["optimizer.0.exp_avg_sq"].fill_(-1.0)), "exp_avg_sq"),
    ("adam-steps", lambda o: edit_tensors(o, "trainer.safetensors",
                                          lambda t: t["optimizer.0.step"].fill_(1e9)), "optimizer.0.step"),
    ("weights-nan", lambda o: edit_tensors(o, "model.safetensors",
                                           lambda t: t["policy.card_head.weight"].fill_(float("nan"))), "NaN"),
    ("moments-inf", lambda o: edit_tensors(o, "trainer.safetensors",
                                           lambda t: t["optimizer.1.exp_avg"].fill_(float("inf"))), "infinity"),
    ("metadata-link-environ", lambda o: ((checkpoint(o) / "metadata.json").unlink(),
                                         (checkpoint(o) / "metadata.json").symlink_to("/proc/self/environ")),
     "metadata.json is a symbolic link"),
    ("weights-link-outside", lambda o: link_outside(o, "model.safetensors"), "model.safetensors is a symbolic link"),
    ("checkpoint-dir-loop", lambda o: (shutil.rmtree(checkpoint(o)), checkpoint(o).symlink_to(checkpoint(o).name)),
     "a symbolic link, not a checkpoint directory"),
    ("checkpoints-link-loop", lambda o: run_file_link(o, HISTORY, HISTORY), f"{HISTORY} is a symbolic link"),
    ("metrics-directory", lambda o: replace_with(o, "metrics.csv", "directory"), "metrics.csv is a directory"),
    ("tensorboard-file", lambda o: replace_with(o, "tensorboard", "file"), "tensorboard is a regular file"),
    ("config-directory", lambda o: replace_with(o, "config.json", "directory"), "config.json is a directory"),
    ("policy-file", lambda o: replace_with(o, "policy", "file"), "policy is a regular file"),
    ("metrics-link-outside", lambda o: run_file_link(o, "metrics.csv"), "metrics.csv is a symbolic link"),
    # issue 48: the logs' recorded sizes are checked against the files before a row is cut
    ("log-sizes-zero", lambda o: set_log_size(o, lambda size: 0), "field 'log_sizes.metrics.csv': cutting"),
    ("log-sizes-beyond", lambda o: set_log_size(o, lambda size: size + 10**6), "more than"),
    ("log-sizes-mid-row", lambda o: set_log_size(o, lambda size: size - 5), "part of a row"),
    ("log-sizes-one-row-short", lambda o: set_log_size(o, rows_back(1)), "leaves 1 rows"),
    # issue 48: a checkpoint's name the run will save to that holds a file, a link or a loop
    ("later-checkpoint-name-file", lambda o: (checkpoint(o).parent / f"update-{UPDATES + 1:09d}").write_text("x\n"),
     f"update-{UPDATES + 1:09d} is a regular file, not a checkpoint directory"),
    ("later-checkpoint-name-loop", lambda o: (checkpoint(o).parent / f"update-{UPDATES + 2:09d}").symlink_to(
        f"update-{UPDATES + 2:09d}"), f"update-{UPDATES + 2:09d} is a symbolic link, not a checkpoint directory"),
    ("later-checkpoint-name-link", lambda o: (checkpoint(o).parent / f"update-{UPDATES + 1:09d}").symlink_to(
        checkpoint(o).name), f"update-{UPDATES + 1:09d} is a symbolic link, not a checkpoint directory"),
]


@pytest.mark.parametrize("damage, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_refused_resume_is_one_line_and_changes_no_file(run_dir, damage, words, capsys):
    damage(run_dir)
    before = tree(run_dir.parent)  # the run and anything a link points at beside it
    assert main(flags(run_dir, "--resume", steps=4 * BATCH)) == 2
    error = capsys.readouterr().err
    assert error.startswith("pisti-train: error: ") and error.count("\n") == 1 and "Traceback" not in error, error
    assert words in error, error
    assert tree(run_dir.parent) == before


def test_a_checkpoint_saved_for_a_gpu_resumes_on_the_cpu_with_device(run_dir, capsys):
    """A run moves between devices: ``--resume --device cpu`` continues a run saved on a GPU
    (its metadata says ``cuda``); without ``--device`` on a machine without one, a clean error."""
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the saved 'cuda' would be there")
    edit_metadata(run_dir, lambda m: m["config"].__setitem__("device", "cuda"))
    assert main(flags(run_dir, "--resume", steps=3 * BATCH)) == 2
    assert "field 'config.device'" in capsys.readouterr().err
    assert main(flags(run_dir, "--resume", "--device", "cpu", steps=3 * BATCH)) == 0
    assert json.loads((run_dir / "config.json").read_text())["device"] == "cpu"
    assert json.loads((checkpoint(run_dir).parent / f"update-{3:09d}" / "metadata.json").read_text())["update"] == 3


def test_a_checkpoint_path_saved_among_the_baselines_is_loaded_only_when_named_again(run_dir, capsys):
    other = run_dir.parent / "opponent"
    shutil.copytree(checkpoint(run_dir), other)
    specs = ["random", "greedy", str(other)]

    def add_baseline(m):
        m["config"]["baselines"] = specs
        m["trainer"]["pool"].append({"name": str(other), "margin": 0.0, "games": 0, "snapshot": False})

    edit_metadata(run_dir, add_baseline)
    before = tree(run_dir)
    assert main(flags(run_dir, "--resume", steps=3 * BATCH)) == 2
    error = capsys.readouterr().err
    assert "is a checkpoint path saved in the run" in error and f"--baselines random greedy {other}" in error
    assert tree(run_dir) == before
    assert main(flags(run_dir, "--resume", "--baselines", *specs, steps=3 * BATCH)) == 0


def test_links_are_never_followed_out_of_a_checkpoint(run_dir):
    """``metadata.json`` linked to ``/proc/self/environ`` (this process's environment) is
    refused as a link, never read; a loop at ``OUT/checkpoint`` (the run's own link, never
    followed on resume) is replaced by the resume."""
    (checkpoint(run_dir) / "metadata.json").unlink()
    (checkpoint(run_dir) / "metadata.json").symlink_to("/proc/self/environ")
    with pytest.raises(CheckpointError, match="is a symbolic link") as error:
        load_policy(checkpoint(run_dir))
    assert "PATH" not in str(error.value)
    fresh = run_dir.parent / "fresh"
    assert main(flags(fresh)) == 0
    (fresh / LATEST).unlink()
    (fresh / LATEST).symlink_to(LATEST)  # a loop
    assert main(flags(fresh, "--resume", steps=3 * BATCH)) == 0
    assert os.readlink(fresh / LATEST) == f"{HISTORY}/update-{3:09d}"


def test_a_nan_policy_is_refused_on_load_not_met_as_an_illegal_action(run_dir, capsys):
    from training.harness.evaluate import main as evaluate

    policy = run_dir / "policy"
    tensors = load_file(policy / "model.safetensors")
    tensors["policy.card_head.weight"].fill_(float("nan"))
    save_file(tensors, str(policy / "model.safetensors"))
    metadata = json.loads((policy / "metadata.json").read_text())
    metadata["files"]["model.safetensors"] = hashlib.sha256((policy / "model.safetensors").read_bytes()).hexdigest()
    (policy / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(CheckpointError, match="policy.card_head.weight holds NaN or infinity"):
        load_policy(policy)
    assert evaluate([str(policy), "greedy", "--deals", "2"]) == 2
    error = capsys.readouterr().err
    assert "holds NaN or infinity" in error and "illegal action" not in error and error.count("\n") == 1
