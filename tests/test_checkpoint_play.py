"""How a checkpoint plays: its best action (``argmax``) or a sample of its distribution
(``sample``). A bluff-variant policy (R29) is saved to sample: believing or challenging a claim,
and bluffing, are mixed decisions, and any pure choice there is a best response's target."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import pisti_env  # noqa: E402
from pisti_env.agents import checkpoint_location, make_player  # noqa: E402
from pisti_env.flags import check_player_specs  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from training.trainer.checkpoint import CheckpointError  # noqa: E402
from training.trainer.policy import load_policy  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from test_trainer import tiny_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CKPT_2P = str(ROOT / "checkpoints" / "pisti-2p")
CKPT_BLUFF = str(ROOT / "checkpoints" / "pisti-bluff")


def _with_play(tmp_path: Path, source: str, play) -> str:
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    metadata["play"] = play
    (copy / "metadata.json").write_text(json.dumps(metadata))
    return str(copy)


def test_r29_the_shipped_bluff_policy_samples_and_the_others_play_their_best_action():
    assert not load_policy(CKPT_BLUFF).deterministic
    assert load_policy(CKPT_2P).deterministic
    assert load_policy(CKPT_BLUFF, deterministic=True).deterministic  # the caller decides over the metadata
    assert not load_policy(CKPT_2P, deterministic=False).deterministic


@pytest.mark.parametrize("bluff", [True, False])
def test_r29_the_trainer_saves_a_bluff_policy_to_sample(tmp_path, bluff):
    settings = dict(bluff=True, target=None) if bluff else {}
    trainer = Trainer(tiny_config(tmp_path, **settings))
    path = trainer.save(tmp_path / "ckpt", with_trainer_state=False)
    assert json.loads((path / "metadata.json").read_text())["play"] == ("sample" if bluff else "argmax")
    assert load_policy(path).deterministic is not bluff
    assert json.loads((trainer.save(tmp_path / "forced", with_trainer_state=False, play="argmax") / "metadata.json")
                      .read_text())["play"] == "argmax"
    with pytest.raises(ValueError, match=r"play must be one of \['argmax', 'sample'\], got 'best'"):
        trainer.save(tmp_path / "bad", play="best")
    assert not (tmp_path / "bad").exists()


def test_a_spec_option_overrides_the_metadata(tmp_path):
    assert make_player(f"{CKPT_BLUFF}:play=argmax").deterministic
    assert not make_player(f"{CKPT_2P}:play=sample").deterministic
    assert make_player(CKPT_BLUFF, play="argmax").deterministic  # as a keyword, like a scripted player's
    assert not make_player(CKPT_BLUFF).deterministic
    assert checkpoint_location(f"{CKPT_BLUFF}:play=argmax") == (CKPT_BLUFF, "play=argmax")
    assert checkpoint_location(CKPT_BLUFF) == (CKPT_BLUFF, "")
    assert checkpoint_location("greedy") is None and checkpoint_location(str(tmp_path / "nowhere")) is None


@pytest.mark.parametrize("spec, message", [
    (":play=best", r"play must be one of \['argmax', 'sample'\].*got 'best'"),
    (":depth=3", r"unknown option\(s\) \['depth'\].*allowed: \['play'\]"),
    (":play", r"bad option 'play'.*expected key=value"),
])
def test_a_bad_checkpoint_option_is_a_clear_error(spec, message):
    with pytest.raises(ValueError, match=message):
        make_player(CKPT_BLUFF + spec)
    with pytest.raises(ValueError, match=message):
        check_player_specs([CKPT_BLUFF + spec])


@pytest.mark.parametrize("play", ["best", 1, None])
def test_a_bad_play_field_is_refused_by_the_schema(tmp_path, play):
    with pytest.raises(CheckpointError, match="play"):
        load_policy(_with_play(tmp_path, CKPT_2P, play))


def test_r29_a_sampling_policy_mixes_its_answers_and_replays_with_its_seed():
    """Seeded alike, the sampling policy repeats its choices; over many answers to the same
    claim it both believes and challenges wherever its distribution gives each a real weight."""
    policy = make_player(CKPT_BLUFF, seed=5, settings=pisti_env.make_settings(bluff=True, target=None))
    env = pisti_env.env(bluff=True, target=None)
    found = 0
    for seed in range(60):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _r, termination, truncation, _i = env.last()
            if termination or truncation:
                env.step(None)
                continue
            probabilities = policy.action_probabilities(observation)
            if len(probabilities) == 2 and min(probabilities.values()) > 0.2:  # an answer, mixed
                policy.reset(7)
                first = [policy.act(observation) for _ in range(40)]
                policy.reset(7)
                assert [policy.act(observation) for _ in range(40)] == first
                assert set(first) == set(probabilities)
                found += 1
            env.step(policy.act(observation))
        if found >= 3:
            break
    assert found >= 3


def test_r29_the_exploit_target_keeps_its_game_and_budget_with_a_play_option(tmp_path):
    settings, train = resolve(ExploitConfig(target=f"{CKPT_BLUFF}:play=argmax", out_dir=str(tmp_path)))
    metadata = json.loads((Path(CKPT_BLUFF) / "metadata.json").read_text())
    assert settings.bluff and train.total_steps == metadata["step"]
    assert train.baselines == (f"{CKPT_BLUFF}:play=argmax",)
    _settings, warm = resolve(ExploitConfig(target=f"{CKPT_BLUFF}:play=argmax", warm_start=True, out_dir=str(tmp_path)))
    assert warm.init_from == CKPT_BLUFF
