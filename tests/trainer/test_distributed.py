"""Distributed training (issue 14): ``pisti-train --nproc 2`` runs two CPU ranks through
``torchrun`` (gloo); their first update is the update one process makes from the union of the
two ranks' rollouts (the same global batch of games, the same global minibatches), within
float tolerance; rank 0 alone writes; ``--resume`` continues the run on two ranks.

Each rank plays its own games with its own seed stream, so the one-process reference is built
from the ranks' own rollouts (collected here the same way as the ranks do) and learns from
their union with the minibatch generator the ranks share. The ranks rendezvous on 127.0.0.1
on a free port and are killed with their process group however the test ends.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from training.trainer.checkpoint import MODEL_FILE, load_tensors, read_metadata
from training.trainer.cli import main as train_main
from training.trainer.config import TrainConfig
from training.trainer.distributed import DistributedShard, torchrun_command
from training.trainer.rollout import Rollout
from training.trainer.train import Trainer

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ["--envs", "8", "--rollout", "12", "--target", "51", "--hidden-sizes", "32", "--value-hidden-sizes", "16",
         "--eval-every", "0", "--snapshot-every", "0", "--checkpoint-every", "0", "--threads", "1",
         "--precision", "fp32", "--num-minibatches", "3", "--update-epochs", "2", "--seed", "5", "--quiet"]
ONE_UPDATE = 8 * 12


def _train_on_two_ranks(out: Path, *extra: str) -> None:
    """``pisti-train --nproc 2`` (which starts torchrun) in its own process group."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
               OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "training.trainer", "--nproc", "2", *FLAGS, "--out", str(out), *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = proc.communicate(timeout=240)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # torchrun and both ranks, whatever happened
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == 0, output[-6000:]


def _union(parts: list[Rollout]) -> Rollout:
    """The rollouts of the ranks' games as one rollout of all the games (rank order)."""
    fields = {}
    for f in dataclasses.fields(Rollout):
        dim = 0 if f.name == "end_values" else 1
        fields[f.name] = torch.cat([getattr(p, f.name).clone() for p in parts], dim=dim)
    return Rollout(**fields)


@pytest.mark.slow  # two torchrun launches (~20 s idle); benchmarks/bench_scale.py train runs --nproc 2 too
def test_two_ranks_make_the_update_one_process_makes_from_their_games(tmp_path):
    out = tmp_path / "run"
    _train_on_two_ranks(out, "--steps", str(ONE_UPDATE))

    from training.trainer.cli import build_parser, config_from_args

    config = config_from_args(build_parser().parse_args(FLAGS + ["--steps", str(ONE_UPDATE), "--out", str(out)]))
    parts = []
    for rank in range(2):  # each rank's games, seed stream and first rollout
        shard_trainer = Trainer(config, shard=DistributedShard(rank, 2))
        assert shard_trainer.engine.batch_size == 4
        parts.append(shard_trainer.collector.collect(shard_trainer.network))
    assert not torch.equal(parts[0].action, parts[1].action)  # two seed streams, two sets of games
    reference = Trainer(config)
    union = _union(parts)
    reference.collector.collect = lambda network, average=None: union
    reference.generator = DistributedShard(0, 2).learn_generator(reference)  # the permutations the ranks drew
    expected = reference.train_update()

    checkpoint = out / "checkpoint"
    metadata = read_metadata(checkpoint)
    assert metadata["step"] == ONE_UPDATE and metadata["update"] == 1 and metadata["config"]["num_envs"] == 8
    weights = load_tensors(checkpoint, MODEL_FILE, metadata)
    start = Trainer(config).network.state_dict()
    moved = 0
    for name, value in reference.network.state_dict().items():
        torch.testing.assert_close(weights[name], value, rtol=1e-4, atol=1e-5, msg=name)
        moved += not torch.equal(value, start[name])
    assert moved > 0  # the update did change the weights
    with open(out / "metrics.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1  # rank 0 alone wrote
    assert float(rows[0]["global_step"]) == ONE_UPDATE
    assert float(rows[0]["charts/learner_decisions"]) == expected["charts/learner_decisions"]
    for key in ("losses/policy", "losses/value", "losses/entropy", "losses/approx_kl"):
        assert float(rows[0][key]) == pytest.approx(expected[key], rel=1e-4, abs=1e-6), key

    _train_on_two_ranks(out, "--resume", "--steps", str(2 * ONE_UPDATE))  # --resume on two ranks
    metadata = read_metadata(checkpoint)
    assert metadata["step"] == 2 * ONE_UPDATE and metadata["update"] == 2
    with open(out / "metrics.csv", newline="", encoding="utf-8") as f:
        assert [row["update"] for row in csv.DictReader(f)] == ["1", "2"]


def test_ranks_split_the_games_and_keep_rank_zero_as_one_process(tmp_path):
    config = TrainConfig(num_envs=6, rollout_steps=4, torch_threads=1, out_dir=str(tmp_path))
    assert DistributedShard(0, 3).games(6, 9) == (2, 9)  # rank 0 of a new run: one process's seed
    seeds = {DistributedShard(r, 3).games(6, 9)[1] for r in range(3)} | {DistributedShard(1, 3, epoch=4).games(6, 9)[1]}
    assert len(seeds) == 4  # every rank, and a resumed rank, its own stream
    with pytest.raises(ValueError, match="--envs 6 must be a multiple of the number of processes"):
        Trainer(config, shard=DistributedShard(0, 4))


def test_nproc_launches_torchrun_on_the_loopback_address(capsys):
    cmd = torchrun_command(2, ["--steps", "10"], 29555, "python")
    assert cmd[:3] == ["python", "-m", "torch.distributed.run"]
    assert ["--master-addr", "127.0.0.1"] == cmd[cmd.index("--master-addr"):cmd.index("--master-addr") + 2]
    assert cmd[-4:] == ["-m", "training.trainer", "--steps", "10"]
    with pytest.raises(SystemExit) as exit_info:  # refused as it is parsed: one line, status 2
        train_main(["--nproc", "0"])
    assert exit_info.value.code == 2
    assert "argument --nproc: must be >= 1, got '0'" in capsys.readouterr().err
