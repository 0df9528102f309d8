"""``pisti-export`` (training.benchmark.export) and exported policies as players
(pisti_env.agents.exported): the file plays as the checkpoint does, carries its observation
contract, and is refused for another game or observation layout (R30: the same observation the
checkpoint reads, nothing more).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.agents import SeatView, has_batched_form, make_player  # noqa: E402
from pisti_env.agents.exported import CONTRACT_KEY, ExportError, read_contract  # noqa: E402
from training.benchmark.export import export_policy  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CASES = {
    "pisti-2p": dict(num_players=2, target=None),
    "pisti-4p": dict(num_players=4, partnerships=True, target=None),
    "pisti-bluff": dict(num_players=2, bluff=True, target=None),  # R29: 106 actions, mixed play
}


def observations(settings, count=200, seed=0):
    """Observations and masks of every seat to move in random games (R30-R31)."""
    rng = random.Random(seed)
    game, out = Game(settings, seed=seed), []
    while len(out) < count:
        if game.done:
            game = Game(settings, seed=rng.randrange(1 << 30))
        view = SeatView(game, game.turn)
        out.append(view.observation())
        game.step(rng.choice(view.legal_actions))
    obs = torch.tensor(np.stack([o["observation"] for o in out]))
    mask = torch.tensor(np.stack([o["action_mask"] for o in out]) > 0)
    return out, obs, mask


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = tmp_path_factory.mktemp("exports")
    return {name: export_policy(name, "torchscript", str(out)) for name in CASES}


@pytest.mark.parametrize("name", list(CASES))
def test_torchscript_export_plays_as_the_checkpoint(name, exports):
    settings = make_settings(**CASES[name])
    checkpoint = load_policy(str(ROOT / "checkpoints" / name))
    exported = make_player(exports[name], settings=settings)
    assert has_batched_form(exported) and exported.play == checkpoint.play
    single, obs, mask = observations(settings)
    with torch.no_grad():
        want = torch.log_softmax(checkpoint.network(obs).float().masked_fill(~mask, torch.finfo(torch.float32).min), -1)
    got = exported.action_log_probs(obs, mask)
    legal = mask
    assert torch.allclose(got[legal], want[legal], atol=1e-5)
    assert (got[~legal] < -1e30).all()  # illegal actions: never chosen
    same = [torch.Generator().manual_seed(7) for _ in range(2)]
    assert torch.equal(checkpoint.act_batch(obs, mask, same[0]), exported.act_batch(obs, mask, same[1]))
    if exported.play == "argmax":  # one decision at a time = the batch's row
        assert [exported.act(o) for o in single[:40]] == exported.act_batch(obs[:40], mask[:40]).tolist()


def test_the_file_carries_the_observation_contract(exports):
    contract = read_contract(exports["pisti-bluff"])
    assert contract["obs_version"] == 1 and contract["num_actions"] == 106
    assert contract["observation_size"] == load_policy(str(ROOT / "checkpoints" / "pisti-bluff")).network.observation_size
    assert contract["settings"]["bluff"] is True and contract["play"] == "sample_bluffs"


def test_an_export_for_another_game_or_layout_is_refused(exports, tmp_path):
    with pytest.raises(ExportError, match="another game"):
        make_player(exports["pisti-2p"], settings=make_settings(num_players=3))
    # The same module with a contract of another observation layout version.
    files = {CONTRACT_KEY: ""}
    module = torch.jit.load(exports["pisti-2p"], _extra_files=files)
    contract = json.loads(files[CONTRACT_KEY])
    contract["obs_version"] = 0
    stale = tmp_path / "stale.pt"
    torch.jit.save(module, str(stale), _extra_files={CONTRACT_KEY: json.dumps(contract)})
    with pytest.raises(ExportError, match="observation layout v0"):
        make_player(str(stale))
    plain = tmp_path / "plain.pt"
    torch.jit.save(module, str(plain))
    with pytest.raises(ExportError, match="no 'pisti_contract'"):
        make_player(str(plain))


def test_onnx_export_plays_as_the_checkpoint(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    settings = make_settings(**CASES["pisti-2p"])
    path = export_policy("pisti-2p", "onnx", str(tmp_path))
    exported = make_player(path, settings=settings)
    checkpoint = load_policy(str(ROOT / "checkpoints" / "pisti-2p"))
    _, obs, mask = observations(settings, seed=3)
    assert torch.equal(exported.act_batch(obs, mask), checkpoint.act_batch(obs, mask))
    assert read_contract(path)["observation_size"] == obs.shape[1]


def test_onnx_refuses_the_bluff_policy_in_one_line(tmp_path):
    pytest.importorskip("onnx")
    result = subprocess.run([sys.executable, "-m", "training.benchmark.export", "pisti-bluff", "--format", "onnx",
                             "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("pisti-export: error:") and "--format torchscript" in lines[-1]
    assert len(result.stdout.strip()) == 0 and not list(tmp_path.iterdir())  # nothing half-written
