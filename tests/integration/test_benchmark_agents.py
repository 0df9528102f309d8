"""``pisti-benchmark`` takes an agent in every form a user may have it in, each through the CLI
with a short deal set: a ``module:function`` factory, an sb3-contrib ``MaskablePPO`` zip (both
with ``--trust-code``: their loading runs code), and a policy exported by ``pisti-export`` as
TorchScript and as ONNX (the ONNX and SB3 cases skip when their extra is not installed; CI
installs both).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DEALS = "16"


def make_agent(settings=None):
    """The factory the test names as ``test_benchmark_agents:make_agent``: any Player object."""
    from pisti_env.agents import make_player

    player = make_player("greedy", settings=settings)
    player.name = "my-greedy"
    return player


def benchmark(agent: str, out: Path, task: str = "pisti-2p", *flags: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "training.benchmark.cli", agent, "--task", task, "--deals", DEALS, "--quiet",
         "--out", str(out), *flags], capture_output=True, text=True, cwd=out.parent, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((out / "benchmark.json").read_text())
    assert [o["opponent"] for o in report["tasks"][0]["opponents"]] == ["random", "greedy", "expert", "pisti-2p"]
    return report


def test_a_factory_agent_gets_a_report(tmp_path):
    report = benchmark("test_benchmark_agents:make_agent", tmp_path / "factory", "pisti-2p", "--trust-code")
    task = report["tasks"][0]
    # named by the spec given, never by what the agent calls itself ("my-greedy")
    assert task["agent_kind"] == "factory" and task["agent_name"] == "test_benchmark_agents:make_agent"
    assert task["command"] == "pisti-benchmark test_benchmark_agents:make_agent --task pisti-2p --trust-code"
    # greedy with a batched form: the same figures as the registry's greedy
    direct = benchmark("greedy", tmp_path / "greedy")["tasks"][0]
    assert [o["margin"]["mean"] for o in task["opponents"]] == [o["margin"]["mean"] for o in direct["opponents"]]


@pytest.mark.parametrize("fmt", ["torchscript", "onnx"])
def test_an_exported_policy_gets_the_checkpoints_figures(fmt, tmp_path):
    if fmt == "onnx":
        pytest.importorskip("onnx")
        pytest.importorskip("onnxruntime")
    from training.benchmark.export import export_policy

    path = export_policy("pisti-2p", fmt, str(tmp_path / "exports"))
    exported = benchmark(path, tmp_path / "exported")["tasks"][0]
    shipped = benchmark("pisti-2p", tmp_path / "shipped")["tasks"][0]
    assert exported["agent_kind"] == "spec"
    assert all(o["engine"] == "batched" for o in exported["opponents"])
    for a, b in zip(exported["opponents"], shipped["opponents"]):
        assert a["margin"]["mean"] == b["margin"]["mean"]  # argmax of the same log-probabilities


def test_an_sb3_maskable_ppo_zip_gets_a_report(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from pisti_env.integrations.sb3 import PistiSB3VecEnv

    env = PistiSB3VecEnv(8, opponent="random", num_players=2, target=None)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs=dict(net_arch=[16]))
    model.learn(total_timesteps=128)
    model.save(str(tmp_path / "model.zip"))
    report = benchmark(str(tmp_path / "model.zip"), tmp_path / "sb3", "pisti-2p", "--trust-code")
    task = report["tasks"][0]
    assert task["agent_kind"] == "sb3"
    assert all(o["engine"] == "batched" for o in task["opponents"])
    assert all(o["hands"]["played"] == 2 * int(DEALS) for o in task["opponents"])
