"""NFSP ([training.algorithms.nfsp][]): a tiny run end to end, its snapshots as players, the
same seed giving the same snapshots, the update math on hand-made numbers, bad flags."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from pisti_env.agents.exported import load_exported
from pisti_env.batched import BatchedPisti
from training.algorithms import nfsp
from training.algorithms.recipe import snapshot_name

HAND = 16 * 48  # steps in one hand of --num-games 16
TINY = ["--steps", "3000", "--num-games", "16", "--batch-size", "32", "--hidden-sizes", "16",
        "--replay-capacity", "2000", "--reservoir-capacity", "500", "--min-reservoir", "10", "--quiet"]


def run(tmp: Path, seed: int, *extra: str) -> Path:
    directory = tmp / f"seed-{seed}"
    nfsp.main(["--seed", str(seed), *TINY, "--snapshot-steps", str(HAND), "3000", "--snapshot-dir", str(directory),
               "--deals", "0", *extra])
    return directory


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("nfsp")
    return {"a": run(tmp / "a", 1000), "again": run(tmp / "again", 1000), "other": run(tmp / "other", 1001)}


def outputs(path: Path) -> torch.Tensor:
    """The exported policy's log-probabilities on fixed observations (the first decisions of 8 deals)."""
    start = BatchedPisti(8, seed=5, num_players=2, target=None).reset()
    return load_exported(path).action_log_probs(start.observation, start.action_mask)


def test_snapshots_at_the_asked_steps_play_legal_cards(runs: dict[str, Path]) -> None:
    # 768 is reached by the first hand; 3000 by the fourth (3072 steps), the run's last.
    names = sorted(p.name for p in runs["a"].iterdir())
    assert names == [snapshot_name(HAND), snapshot_name(4 * HAND)]
    player = load_exported(runs["a"] / snapshot_name(4 * HAND), settings={"num_players": 2, "target": None})
    engine = BatchedPisti(32, seed=7, num_players=2, target=None)
    out = engine.reset()
    for _ in range(48):  # a whole hand: the engine refuses any illegal card (ValueError)
        action = player.act_batch(out.observation, out.action_mask)
        assert bool(out.action_mask.gather(1, action[:, None]).all())
        out = engine.step(action)
    assert bool(out.done.all())


def test_same_seed_same_snapshots_other_seed_differs(runs: dict[str, Path]) -> None:
    for name in (snapshot_name(HAND), snapshot_name(4 * HAND)):
        assert torch.equal(outputs(runs["a"] / name), outputs(runs["again"] / name))
        assert not torch.equal(outputs(runs["a"] / name), outputs(runs["other"] / name))


def test_export_and_evaluation_with_four_players_in_partnerships(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    export = tmp_path / "final.pt"
    nfsp.main(["--seed", "1002", "--steps", "1", "--num-games", "16", "--batch-size", "32", "--hidden-sizes", "16",
               "--replay-capacity", "2000", "--players", "4", "--partnerships", "--export", str(export),
               "--deals", "4", "--quiet"])
    text = capsys.readouterr().out
    assert "vs greedy" in text and "best response" in text
    player = load_exported(export, settings={"num_players": 4, "partnerships": True, "target": None})
    assert player.contract["settings"]["num_players"] == 4


def test_q_targets_mask_illegal_actions_and_stop_at_the_hand_end() -> None:
    next_q = torch.tensor([[1.0, 5.0, 2.0], [3.0, -1.0, 0.5], [9.0, 9.0, 9.0]])
    next_mask = torch.tensor([[True, False, True], [False, True, True], [False, False, False]])
    reward = torch.tensor([0.5, -1.0, 2.0])
    done = torch.tensor([False, False, True])
    # row 0: the illegal 5 is not the max, 2 is; row 1: max of -1 and 0.5; row 2: the seat's last decision.
    target = nfsp.q_targets(next_q, next_mask, reward, done, gamma=0.5)
    assert torch.allclose(target, torch.tensor([0.5 + 0.5 * 2.0, -1.0 + 0.5 * 0.5, 2.0]))


def test_policy_loss_is_cross_entropy_over_the_legal_actions() -> None:
    logits = torch.tensor([[0.0, math.log(3.0), 100.0]])
    mask = torch.tensor([[True, True, False]])  # the third action is illegal: its large logit must not count
    loss = nfsp.policy_loss(logits, mask, torch.tensor([1]))
    assert math.isclose(float(loss), -math.log(3.0 / 4.0), rel_tol=1e-6)


def test_reservoir_keeps_all_until_full_then_a_uniform_sample() -> None:
    g = torch.Generator().manual_seed(0)
    item, slot = nfsp.reservoir_slots(0, 5, 10, g)
    assert item.tolist() == slot.tolist() == [0, 1, 2, 3, 4]
    item, slot = nfsp.reservoir_slots(8, 5, 10, g)  # items 0, 1 fill slots 8, 9; the rest replace at random
    placed = dict(zip(item.tolist(), slot.tolist()))
    assert placed[0] == 8 and placed[1] == 9
    assert bool((slot < 10).all()) and len(set(slot.tolist())) == len(slot)
    # Offer 0..9999 in batches to a reservoir of 500: what stays is spread over the whole stream.
    kept, seen = torch.empty(500, dtype=torch.long), 0
    for _ in range(20):
        item, slot = nfsp.reservoir_slots(seen, 500, 500, g)
        kept[slot] = seen + item
        seen += 500
    assert 4000 < float(kept.float().mean()) < 6000  # a uniform sample's mean: 5000 (s.d. about 130)


def test_epsilon_decays_as_the_inverse_square_root() -> None:
    hp = nfsp.Hyperparameters()
    assert nfsp.epsilon_at(0, hp) == hp.epsilon_start
    assert math.isclose(nfsp.epsilon_at(3 * hp.epsilon_decay, hp), hp.epsilon_start / 2)


@pytest.mark.parametrize("flags", [
    ["--eta", "2"], ["--eta", "0"], ["--optimizer", "rmsprop"], ["--batch-size", "0"], ["--rl-lr", "nan"],
    ["--num-games", "64", "--replay-capacity", "1000"],  # one hand (3,072 transitions) does not fit
    ["--players", "3", "--partnerships"],
    ["--snapshot-steps", "100", "200", "--snapshot-dir", "x"],  # closer than one hand
])
def test_bad_flags_are_argparse_errors(flags: list[str]) -> None:
    with pytest.raises(SystemExit) as error:
        nfsp.parse_args(flags)
    assert error.value.code == 2
