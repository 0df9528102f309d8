"""The GPU path end to end (issue 17, item 3), where a CUDA device is present; skipped elsewhere
(``tests/batched/test_batched_device.py`` checks what a CPU can of that path, by reading the source).

* The batched engine on the GPU against the CPU, bit for bit, step by step: every player
  count, partnerships, match play, the bluff variant (R29: the CPU computes claims and answers
  on their own games from ``moves.SUB_BATCH_FROM`` games up, a GPU on the whole batch; the CPU
  draws new decks in NumPy, a GPU in torch), both observation formats, and the final states.
* Batched evaluation on the GPU gives the CPU's records deal by deal (scripted players with
  batched forms: integer rules, so exactly; a network: the same argmax but where a float
  rounding differs between the devices, so on nearly every deal).
* The trainer on the GPU: a short ``run`` with its periodic evaluations and checkpoints, and
  the policy it writes loads and plays on a CPU.

``benchmarks/cuda_check.py`` runs these with the GPU benchmarks in one go.
"""

from __future__ import annotations

import csv
import dataclasses
import math

import pytest
import torch

import pisti_env
from pisti_env import make_settings
from pisti_env.agents import make_player
from pisti_env.batched import BatchedPisti
from pisti_env.batched.state import FIELDS

from helpers import network_player

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
GPU = "cuda"

ENGINE_CASES = {
    "2p": dict(num_players=2, target=None),
    "2p-match": dict(num_players=2, target=51),
    "3p": dict(num_players=3, target=None),
    "4p-partners-match": dict(num_players=4, partnerships=True, target=61),
    "2p-bluff": dict(num_players=2, bluff=True, target=None),
    "4p-bluff-match": dict(num_players=4, bluff=True, target=61),
}


def assert_same_step(cpu_out, gpu_out) -> None:
    """Every field of two ``BatchStep``s alike (``hand_result``: a dict of tensors)."""
    for f in dataclasses.fields(cpu_out):
        a, b = getattr(cpu_out, f.name), getattr(gpu_out, f.name)
        pairs = [(f"{f.name}[{k}]", a[k], b[k]) for k in sorted(a)] if isinstance(a, dict) else [(f.name, a, b)]
        if isinstance(a, dict):
            assert sorted(a) == sorted(b), f.name
        for name, x, y in pairs:
            assert y.device.type == GPU, name
            assert torch.equal(x, y.cpu()), name


@pytest.mark.parametrize("batch", [64, 1024])
@pytest.mark.parametrize("case", sorted(ENGINE_CASES))
def test_engine_on_the_gpu_matches_the_cpu_bit_for_bit_r1_r31(case, batch):
    from benchmarks.bench_batched import random_legal_actions  # (python -m pytest: the root is on the path)

    settings = ENGINE_CASES[case]
    cpu = BatchedPisti(batch, seed=11, **settings)
    gpu = BatchedPisti(batch, seed=11, device=GPU, **settings)
    packed = cpu.observation_buffer("uint8"), gpu.observation_buffer("uint8")
    a, b = cpu.reset(), gpu.reset()
    generator = torch.Generator().manual_seed(batch)
    episodes = 0
    for step in range(250):
        assert_same_step(a, b)
        actions = random_legal_actions(a.action_mask, generator)
        if step % 2:  # every other step in the packed format, into caller buffers
            a = cpu.step(actions, packed[0], observation_format="uint8")
            b = gpu.step(actions.to(GPU), packed[1], observation_format="uint8")
        else:
            a, b = cpu.step(actions), gpu.step(actions.to(GPU))
        episodes += int(a.done.sum())
    assert_same_step(a, b)
    for name in FIELDS:
        assert torch.equal(getattr(cpu.state, name), getattr(gpu.state, name).cpu()), name
    assert episodes > 0  # games ended and restarted on both devices


EVAL_CASES = {
    "2p": dict(num_players=2),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4, partnerships=True),
    "2p-bluff": dict(num_players=2, bluff=True),
}


@pytest.mark.parametrize("specs", [("greedy", "random"), ("expert", "greedy")])
@pytest.mark.parametrize("case", sorted(EVAL_CASES))
def test_batched_evaluation_on_the_gpu_gives_the_cpu_records(case, specs):
    from training.harness.batched_play import play_batched
    from training.harness.duplicate import Table, make_seatings

    settings = make_settings(target=None, **EVAL_CASES[case])
    if "expert" in specs and settings.bluff:
        pytest.skip("expert has no batched form with the bluff variant")
    table = Table(specs, make_seatings([p % 2 for p in range(settings.num_players)], settings), settings)
    players = [make_player(s, settings=settings) for s in specs]
    on_cpu = play_batched(table, players, 300, 5, device="cpu")
    on_gpu = play_batched(table, players, 300, 5, device=GPU)
    assert on_gpu == on_cpu


def test_a_network_evaluates_on_the_gpu_as_on_the_cpu():
    from training.harness.batched_play import play_batched
    from training.harness.duplicate import Table, make_seatings

    settings = make_settings(num_players=2, target=None)
    table = Table(("A", "greedy"), make_seatings([0, 1], settings), settings)
    greedy = make_player("greedy", settings=settings)
    on_cpu = play_batched(table, [network_player(settings, 1, "A", "cpu"), greedy], 1000, 5, device="cpu")
    on_gpu = play_batched(table, [network_player(settings, 1, "A", GPU), greedy], 1000, 5, device=GPU)
    same = sum(a == b for a, b in zip(on_cpu, on_gpu))
    assert same >= 0.99 * len(on_cpu), f"{same} of {len(on_cpu)} deals alike"


def test_training_on_the_gpu_evaluates_checkpoints_and_ships_a_policy_a_cpu_plays(tmp_path):
    from helpers import train_config
    from pisti_env.policies.loader import load_policy
    from training.trainer.network import resolve_precision
    from training.trainer.runner import run

    out = tmp_path / "run"
    config = train_config(**dict(
        num_envs=512, rollout_steps=16, total_steps=512 * 16 * 4, target=None, hidden_sizes=(64, 64),
        snapshot_every=1, eval_every=2, eval_deals=64, checkpoint_every=2, device=GPU, out_dir=str(out),
    ))
    trainer = run(config, progress=False)
    assert trainer.device.type == GPU and trainer.update == 4
    assert trainer.config.precision == resolve_precision("auto", GPU)
    assert all(p.device.type == GPU for p in trainer.network.parameters())
    with open(out / "metrics.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for row in rows:
        for key in ("losses/policy", "losses/value", "losses/entropy"):
            assert math.isfinite(float(row[key])), (key, row[key])
    assert any(row.get("eval/greedy_margin") not in (None, "") for row in rows)
    policy = load_policy(out / "policy")  # a CPU by default
    assert all(p.device.type == "cpu" for p in policy.network.parameters())
    env = pisti_env.env(num_players=2, target=None)
    env.reset(seed=2)
    for _agent in env.agent_iter():
        obs, _r, term, trunc, _i = env.last()
        env.step(None if term or trunc else policy.act(obs))


def test_pisti_eval_loads_a_checkpoint_on_the_gpu_for_the_batched_deals():
    """``evaluate(device=...)`` without a loader puts a checkpoint given by path on that device
    for the batched deals: the shipped 2-player policy against greedy, as on the CPU."""
    from pathlib import Path

    from training.harness.evaluate import evaluate

    checkpoint = str(Path(__file__).resolve().parents[2] / "checkpoints" / "pisti-2p")
    kw = dict(deals=300, matches=0, seed=4, bootstrap=0, workers=1, engine="batched")
    on_gpu = evaluate([checkpoint, "greedy"], device=GPU, **kw)["tables"][0]["pairs"][0]["score_diff"]
    on_cpu = evaluate([checkpoint, "greedy"], device="cpu", **kw)["tables"][0]["pairs"][0]["score_diff"]
    # The same argmax but where a float rounding differs between the devices: nearly the same figure.
    assert abs(on_gpu["mean"] - on_cpu["mean"]) <= 0.25 * on_cpu["half_width"], (on_gpu, on_cpu)
