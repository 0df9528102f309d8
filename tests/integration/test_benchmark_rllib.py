"""``pisti-benchmark`` takes an RLlib checkpoint (a directory written by ``algo.save_to_path()``,
as the recipes' ``--save`` writes it) holding the action-masked module of either RLlib door (the
batched single-agent one and the multi-agent one's shared module): it loads as a player that
chooses what the saved module chooses, and gets a report through the CLI, on the batched engine.
Needs the ``rllib`` extra (its own environment: ray pins gymnasium); CI installs it.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402
import torch  # noqa: E402

from pisti_env import make_settings  # noqa: E402
from pisti_env.integrations.rllib import (  # noqa: E402
    SHARED_MODULE,
    RLModulePlayer,
    ppo_config,
    single_agent_ppo_config,
    train,
)
from pisti_env.envs.vector import PistiVectorEnv  # noqa: E402
from training.benchmark.agents import agent_kind, load_agent  # noqa: E402
from training.harness import ray_backend  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GAME = {"num_players": 2, "target": None}


def _config(door: str):
    """A tiny PPO config of one of the two RLlib doors: the batched single-agent one
    (``examples/rllib_ppo_vector.py``) or the multi-agent one with one shared module for every
    seat (``examples/rllib_ppo.py``)."""
    if door == "vector":
        config = single_agent_ppo_config({"opponent": "random", **GAME}, num_envs_per_env_runner=8, hidden=(16,),
                                          seed=5)
    else:
        config = ppo_config(GAME, hidden=(16,), num_envs_per_env_runner=4, seed=5)
    # RLlib's env check (unmasked random actions, tests/integration/test_recipe_rllib.py) is off:
    # here an illegal-action warning could only come from the trained module
    return config.training(train_batch_size=256, minibatch_size=128, num_epochs=1).environment(
        disable_env_checking=True)


@pytest.fixture(scope="module", params=["vector", "multi-agent"])
def trained(request, tmp_path_factory):
    """A few PPO updates of a tiny module on a private loopback Ray instance, saved with
    ``algo.save_to_path()``; yields ``(checkpoint directory, the trained module as a player)``.
    Ray is shut down however the tests end."""
    ray.shutdown()
    ray_backend.start_local(ray, num_cpus=2, object_store_memory=200 * 1024**2, log_to_driver=False)
    algo = None
    try:
        algo = train(_config(request.param), steps=256)
        path = tmp_path_factory.mktemp("rllib") / "checkpoint"
        algo.save_to_path(str(path))  # as the recipes' --save
        module = algo.get_module() if request.param == "vector" else algo.get_module(SHARED_MODULE)
        yield path, RLModulePlayer(module)
    finally:
        if algo is not None:
            algo.stop()
        ray.shutdown()


def test_the_checkpoint_loads_as_the_trained_module(trained):
    path, trained_player = trained
    assert agent_kind(str(path)) == "rllib"
    kind, player = load_agent(str(path), make_settings(**GAME), trust_code=True)
    assert kind == "rllib" and isinstance(player, RLModulePlayer)
    env = PistiVectorEnv(num_envs=64, opponent="greedy", output="torch", **GAME)
    observations, _ = env.reset(seed=2)
    obs, mask = observations["observation"], observations["action_mask"].bool()
    for _ in range(4):  # positions of the first tricks: a saved module that lost weights would differ
        chosen = player.act_batch(obs, mask, None)
        assert torch.equal(chosen, trained_player.act_batch(obs, mask, None))
        assert bool(mask[torch.arange(64), chosen].all())  # legal everywhere
        observations, *_ = env.step(chosen)
        obs, mask = observations["observation"], observations["action_mask"].bool()


def test_the_checkpoint_gets_a_report_from_the_cli(trained, tmp_path):
    path, _ = trained
    out = tmp_path / "report"
    result = subprocess.run(
        [sys.executable, "-m", "training.benchmark.cli", str(path), "--task", "pisti-2p", "--deals", "16", "--quiet",
         "--out", str(out), "--trust-code"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    task = json.loads((out / "benchmark.json").read_text())["tasks"][0]
    assert task["agent_kind"] == "rllib" and task["comparable"] is False and task["rating"] is None
    assert [o["opponent"] for o in task["opponents"]] == ["random", "greedy", "expert", "pisti-2p"]
    # 16 deals, each played in both seatings, on the batched engine (the module has act_batch)
    assert all(o["engine"] == "batched" and o["hands"]["played"] == 32 for o in task["opponents"])
    assert all(math.isfinite(o["margin"]["mean"]) for o in task["opponents"])


def test_a_checkpoint_without_one_module_is_a_one_line_error(tmp_path):
    """A directory that looks like an RLlib checkpoint but holds no module: exit 2, one line."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "rllib_checkpoint.json").write_text("{}")
    result = subprocess.run(
        [sys.executable, "-m", "training.benchmark.cli", str(broken), "--task", "pisti-2p", "--deals", "4",
         "--quiet", "--out", str(tmp_path / "out"), "--trust-code"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pisti-benchmark: error:") and "one module" in lines[0]
