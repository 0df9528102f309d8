"""How a checkpoint plays: its best action (``argmax``), a draw from its distribution
(``sample``), or R29's mixed decisions drawn and the card chosen (``sample_bluffs``). A
bluff-variant policy is saved with ``sample_bluffs``: claiming face down or not, believing or
challenging, are mixed decisions, and any pure choice there is a best response's target."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import pisti_env  # noqa: E402
from pisti_env.agents import checkpoint_location, make_player  # noqa: E402
from pisti_env.tools.flags import check_player_specs  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN  # noqa: E402
from training.trainer.checkpoint import CheckpointError  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import sample_bluffs  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from helpers import tiny_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CKPT_2P = str(ROOT / "checkpoints" / "pisti-2p")
CKPT_BLUFF = str(ROOT / "checkpoints" / "pisti-bluff")


def _with_play(tmp_path: Path, source: str, play) -> str:
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    metadata["play"] = play
    (copy / "metadata.json").write_text(json.dumps(metadata))
    return str(copy)


def test_r29_the_shipped_bluff_policy_draws_its_bluffs_and_the_others_play_their_best_action():
    assert load_policy(CKPT_BLUFF).play == "sample_bluffs" and not load_policy(CKPT_BLUFF).deterministic
    assert load_policy(CKPT_2P).play == "argmax" and load_policy(CKPT_2P).deterministic
    assert load_policy(CKPT_BLUFF, deterministic=True).deterministic  # the caller decides over the metadata
    assert load_policy(CKPT_2P, deterministic=False).play == "sample"
    assert load_policy(CKPT_2P, play="sample_bluffs").play == "sample_bluffs"
    with pytest.raises(ValueError, match="deterministic or play, not both"):
        load_policy(CKPT_2P, deterministic=True, play="argmax")
    with pytest.raises(ValueError, match=r"play must be one of \['argmax', 'sample', 'sample_bluffs'\]"):
        load_policy(CKPT_2P, play="best")


def _frequencies(actions: torch.Tensor) -> dict[int, float]:
    values, counts = torch.unique(actions, return_counts=True)
    return {int(v): float(c) / len(actions) for v, c in zip(values, counts)}


def test_r29_sample_bluffs_draws_the_kind_with_its_mass_and_plays_the_kinds_best_card():
    """Face up 0.7 (cards 3: 0.4, 9: 0.3), face down 0.3 (cards 5: 0.2, 7: 0.1): only the face-up 3
    and the face-down 5 come out, about 70/30; an answer 0.6/0.4 comes out about so; without
    the bluff variant it is the most likely card. Same generator seed, same draws."""
    rows = 20_000
    probs = torch.zeros(106)
    probs[[3, 9, FACE_DOWN + 5, FACE_DOWN + 7]] = torch.tensor([0.4, 0.3, 0.2, 0.1])
    mask = probs > 0
    logits = probs.clamp_min(1e-9).log().expand(rows, -1)
    drawn = sample_bluffs(logits, mask.expand(rows, -1), torch.Generator().manual_seed(1))
    frequencies = _frequencies(drawn)
    assert set(frequencies) == {3, FACE_DOWN + 5} and abs(frequencies[3] - 0.7) < 0.02
    again = sample_bluffs(logits, mask.expand(rows, -1), torch.Generator().manual_seed(1))
    assert torch.equal(drawn, again)
    answer = torch.full((106,), -30.0)
    answer[BELIEVE], answer[CHALLENGE] = torch.tensor(0.6).log(), torch.tensor(0.4).log()
    answer_mask = torch.zeros(106, dtype=torch.bool)
    answer_mask[[BELIEVE, CHALLENGE]] = True
    frequencies = _frequencies(sample_bluffs(answer.expand(rows, -1), answer_mask.expand(rows, -1), torch.Generator()))
    assert set(frequencies) == {BELIEVE, CHALLENGE} and abs(frequencies[BELIEVE] - 0.6) < 0.02
    plain = torch.randn(64, 52)
    plain_mask = torch.rand(64, 52) < 0.5
    plain_mask[:, 0] = True
    expected = plain.masked_fill(~plain_mask, float("-inf")).argmax(1)
    assert torch.equal(sample_bluffs(plain, plain_mask, torch.Generator()), expected)


@pytest.mark.parametrize("bluff", [True, False])
def test_r29_the_trainer_saves_a_bluff_policy_to_draw_its_bluffs(tmp_path, bluff):
    settings = dict(bluff=True, target=None) if bluff else {}
    trainer = Trainer(tiny_config(tmp_path, **settings))
    path = trainer.save(tmp_path / "ckpt", with_trainer_state=False)
    assert json.loads((path / "metadata.json").read_text())["play"] == ("sample_bluffs" if bluff else "argmax")
    assert load_policy(path).deterministic is not bluff
    assert json.loads((trainer.save(tmp_path / "forced", with_trainer_state=False, play="argmax") / "metadata.json")
                      .read_text())["play"] == "argmax"
    with pytest.raises(ValueError, match=r"play must be one of \['argmax', 'sample', 'sample_bluffs'\], got 'best'"):
        trainer.save(tmp_path / "bad", play="best")
    assert not (tmp_path / "bad").exists()


def test_a_spec_option_overrides_the_metadata(tmp_path):
    assert make_player(f"{CKPT_BLUFF}:play=argmax").play == "argmax"
    assert make_player(f"{CKPT_2P}:play=sample").play == "sample"
    assert make_player(f"{CKPT_2P}:play=sample_bluffs").play == "sample_bluffs"
    assert make_player(CKPT_BLUFF, play="argmax").play == "argmax"  # as a keyword, like a scripted player's
    assert make_player(CKPT_BLUFF).play == "sample_bluffs"
    assert checkpoint_location(f"{CKPT_BLUFF}:play=argmax") == (CKPT_BLUFF, "play=argmax")
    assert checkpoint_location(CKPT_BLUFF) == (CKPT_BLUFF, "")
    assert checkpoint_location("greedy") is None and checkpoint_location(str(tmp_path / "nowhere")) is None


@pytest.mark.parametrize("spec, message", [
    (":play=best", r"play must be one of \['argmax', 'sample', 'sample_bluffs'\].*got 'best'"),
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


@pytest.mark.long  # minutes: thousands of the shipped bluff policy's decisions; CI runs it in the long step
def test_r29_the_shipped_bluff_policy_mixes_claims_and_answers_and_replays_with_its_seed():
    """In pisti_v0 (AEC), ``sample_bluffs``: a decision without a claim chance is the most
    likely card; an answer, and the choice between face up and face down, are drawn: over
    many draws on one observation both ways come out wherever each has a real weight, a claim
    chance gives only the best face-up card and the best face-down one, and the same seed
    repeats the draws."""
    policy = make_player(CKPT_BLUFF, seed=5, settings=pisti_env.make_settings(bluff=True, target=None))
    env = pisti_env.env(bluff=True, target=None)
    mixed = {"answer": 0, "claim": 0}
    plain = 0
    for seed in range(400):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _r, termination, truncation, _i = env.last()
            if termination or truncation:
                env.step(None)
                continue
            probabilities = policy.action_probabilities(observation)
            up = {a: p for a, p in probabilities.items() if a < FACE_DOWN}
            down = {a: p for a, p in probabilities.items() if FACE_DOWN <= a < BELIEVE}
            if not down and BELIEVE not in probabilities:
                assert policy.act(observation) == max(probabilities, key=probabilities.get)
                plain += 1
            else:
                answers = [{a: probabilities[a]} for a in (BELIEVE, CHALLENGE) if a in probabilities]
                kinds = [kind for kind in (up, down, *answers) if kind]
                best = {max(kind, key=kind.get) for kind in kinds}
                if min(sum(kind.values()) for kind in kinds) > 0.2 and len(kinds) == 2:
                    policy.reset(7)
                    first = [policy.act(observation) for _ in range(40)]
                    policy.reset(7)
                    assert [policy.act(observation) for _ in range(40)] == first
                    assert set(first) == best
                    mixed["answer" if BELIEVE in probabilities else "claim"] += 1
            env.step(policy.act(observation))
        if min(mixed.values()) >= 3:
            break
    assert min(mixed.values()) >= 3 and plain > 100, (mixed, plain)


def test_r29_the_exploit_target_keeps_its_game_and_budget_with_a_play_option(tmp_path):
    settings, train = resolve(ExploitConfig(target=f"{CKPT_BLUFF}:play=argmax", out_dir=str(tmp_path)))
    # Its whole chain's budget (lineage.json), the play option notwithstanding.
    lineage = json.loads((Path(CKPT_BLUFF) / "lineage.json").read_text())
    assert settings.bluff and train.total_steps == lineage["total_training_steps"]
    assert train.baselines == (f"{CKPT_BLUFF}:play=argmax",)
    _settings, warm = resolve(ExploitConfig(target=f"{CKPT_BLUFF}:play=argmax", warm_start=True, out_dir=str(tmp_path)))
    assert warm.init_from == CKPT_BLUFF


def test_r29_the_training_evaluations_play_the_learner_as_it_is_saved(tmp_path):
    """``evaluate_against_baselines`` gives the figures of the saved policy (``sample_bluffs``
    in the bluff variant) on the same deals, not those of another play mode."""
    from training.harness.evaluate import evaluate
    from training.trainer.evaluation import evaluate_against_baselines

    trainer = Trainer(tiny_config(tmp_path, bluff=True, target=None, eval_baselines=("random",)))
    trainer.train_update()
    path = str(trainer.save(tmp_path / "saved", with_trainer_state=False))
    during = evaluate_against_baselines(trainer, deals=40, seed=3)["eval/random_margin"]

    def margin(spec: str) -> float:
        report = evaluate([spec, "random"], deals=40, matches=0, seed=3, bootstrap=0, bluff=True, progress=False)
        return report["tables"][0]["pairs"][0]["score_diff"]["mean"]

    assert during == pytest.approx(margin(path))
    assert margin(path) != margin(f"{path}:play=sample")  # the check tells the modes apart
