"""Masked Double DQN (training/algorithms/dqn.py) on a tiny budget: its snapshots come at the
asked step counts and play only legal cards, the same seed gives the same snapshots and another
seed other ones, the Double DQN target, the replay's n-step rewards and the epsilon schedule on
hand-made numbers, and bad flags are argparse errors (exit 2)."""

from __future__ import annotations

import math

import pytest
import torch

from pisti_env.agents import make_player
from pisti_env.agents.exported import load_exported
from pisti_env.batched import BatchedPisti
from training.algorithms import dqn
from training.algorithms.hands import HAND_DECISIONS, HandBatch, HandPlayer

# A few hands of 64 games (3,072 steps each): seconds on one thread.
TINY = ["--steps", "12000", "--threads", "1", "--deals", "0", "--quiet", "--num-games", "64", "--batch-size", "64",
        "--replay-ratio", "0.25", "--buffer-size", "7000", "--learning-starts", "3000", "--hidden-sizes", "16", "16",
        "--target-every", "3"]
SNAPSHOTS = (6000, 12000)
WRITTEN = (6144, 12288)  # the ends of the hands (of 3,072 steps) that reach them


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """main sets torch's thread count; put it back."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def run(tmp_path, name: str, seed: int, *extra: str):
    folder = tmp_path / name
    dqn.main(TINY + ["--seed", str(seed), "--snapshot-steps", *map(str, SNAPSHOTS), "--snapshot-dir", str(folder),
                     *extra])
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Seed 1000 twice (once with --export), seed 1001 once."""
    tmp = tmp_path_factory.mktemp("dqn")
    threads = torch.get_num_threads()
    try:
        return {"a": run(tmp, "a", 1000, "--export", str(tmp / "final.pt")), "b": run(tmp, "b", 1000),
                "other": run(tmp, "other", 1001), "export": tmp / "final.pt"}
    finally:
        torch.set_num_threads(threads)


def outputs(path) -> torch.Tensor:
    """The exported policy's log-probabilities on fixed observations of a fresh engine."""
    engine = BatchedPisti(32, seed=7, num_players=2, target=None)
    out = engine.reset()
    return load_exported(path).action_log_probs(out.observation, out.action_mask)


def test_snapshots_come_at_the_asked_steps_and_play_legal_cards(runs):
    names = sorted(p.name for p in runs["a"].iterdir())
    assert names == [f"step-{s:012d}.pt" for s in WRITTEN]
    assert runs["export"].is_file()
    player = make_player(str(runs["a"] / names[-1]))
    engine = BatchedPisti(16, seed=3, num_players=2, target=None)
    out = engine.reset()
    for _ in range(HAND_DECISIONS):  # one whole hand, every seat played by the snapshot
        action = player.act_batch(out.observation, out.action_mask, torch.Generator().manual_seed(0))
        assert bool(out.action_mask.gather(1, action[:, None]).all())
        out = engine.step(action)
    assert bool(out.done.all())


def test_the_same_seed_gives_the_same_snapshots_and_another_seed_others(runs):
    for name in (f"step-{s:012d}.pt" for s in WRITTEN):
        assert torch.equal(outputs(runs["a"] / name), outputs(runs["b"] / name))
        assert not torch.equal(outputs(runs["a"] / name), outputs(runs["other"] / name))
    assert torch.equal(outputs(runs["export"]), outputs(runs["a"] / f"step-{WRITTEN[-1]:012d}.pt"))


def test_four_players_in_partnerships_train(tmp_path):
    folder = run(tmp_path, "p4", 1002, "--players", "4", "--partnerships", "--n-step", "2", "--dueling")
    assert len(list(folder.iterdir())) == len(SNAPSHOTS)


def test_double_dqn_target_picks_with_the_online_net_among_legal_actions_and_values_with_the_target():
    online = torch.tensor([[5.0, 1.0, 2.0], [0.0, 3.0, 9.0], [7.0, 7.0, 7.0]])
    target = torch.tensor([[100.0, 10.0, 20.0], [1.0, 30.0, 90.0], [4.0, 4.0, 4.0]])
    mask = torch.tensor([[False, True, True], [True, True, False], [False, False, False]])
    reward = torch.tensor([1.0, -1.0, 2.0])
    done = torch.tensor([False, False, True])
    y = dqn.double_dqn_target(reward, done, online, target, mask, discount=0.5)
    # row 0: online's best legal is action 2 (2 > 1; action 0 is illegal), valued 20 by the target
    # row 1: online's best legal is action 1 (action 2 illegal), valued 30; row 2: done, just r
    assert torch.equal(y, torch.tensor([1.0 + 0.5 * 20.0, -1.0 + 0.5 * 30.0, 2.0]))


def test_loss_is_huber_of_the_taken_q_against_the_target():
    net = torch.nn.Linear(2, 3, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    batch = dqn.Sample(observation=torch.tensor([[1.0, 2.0]]), action=torch.tensor([2]), reward=torch.tensor([0.5]),
                       next_observation=torch.tensor([[3.0, 1.0]]), next_mask=torch.tensor([[False, True, True]]),
                       done=torch.tensor([False]))
    loss, q = dqn.dqn_loss(net, net, batch, discount=1.0)
    # Q(s, 2) = 3; next: legal 1 (1) and 2 (4) -> 2, valued 4: y = 4.5; |3 - 4.5| = 1.5 > 1: Huber 1.5 - 0.5
    assert float(q.detach()) == 3.0 and math.isclose(float(loss.detach()), 1.0)


def test_replay_sums_n_step_rewards_and_bootstraps_from_the_seats_later_decision():
    T, B, n = HAND_DECISIONS, 2, 2
    step = torch.arange(T, dtype=torch.float32)
    rewards = torch.zeros(T, B, n)
    rewards[torch.arange(T), :, torch.arange(T) % n] = step[:, None]  # the mover gets t at step t
    hand = HandBatch(observation=step[:, None, None].expand(T, B, 3).clone(), mask=torch.ones(T, B, 4, dtype=torch.bool),
                     action=torch.zeros(T, B, dtype=torch.long), seat=(torch.arange(T) % n)[:, None].expand(T, B),
                     rewards=rewards)
    replay = dqn.HandReplay(slots=2, games=B, observation_size=3, num_actions=4, num_players=n, n_step=2, gamma=0.5,
                            reward_scale=0.1, device=torch.device("cpu"))
    replay.add(hand)
    assert len(replay) == T * B and replay.discount == 0.25
    batch = replay.sample(500, torch.Generator().manual_seed(0))
    t = batch.observation[:, 0]
    later = t + 2 * n
    expected = torch.where(t + n < T, t + 0.5 * (t + n), t) * 0.1
    assert torch.allclose(batch.reward, expected)
    assert torch.equal(batch.done, later >= T)
    assert torch.equal(batch.next_observation[~batch.done, 0], later[~batch.done])
    assert not bool(batch.next_mask[batch.done].any()) and bool(batch.next_mask[~batch.done].all())


def test_epsilon_decays_linearly_then_stays():
    hp = dqn.Hyperparameters(start_e=1.0, end_e=0.1, exploration_fraction=0.5)
    assert [dqn.epsilon_at(hp, s, 100) for s in (0, 25, 50, 90)] == pytest.approx([1.0, 0.55, 0.1, 0.1])


def test_an_n_step_spanning_the_hand_gives_the_monte_carlo_returns():
    engine = BatchedPisti(4, seed=1, num_players=3, target=None)
    hand = HandPlayer(engine).play(lambda o, m, s: dqn.masked_argmax(torch.zeros(m.shape), m))
    replay = dqn.HandReplay(1, 4, engine.observation_size, engine.num_actions, num_players=3,
                            n_step=HAND_DECISIONS // 3, gamma=1.0, reward_scale=1.0, device=torch.device("cpu"))
    replay.add(hand)
    assert torch.allclose(replay.reward[0], hand.returns())
    assert bool(replay.done.all())


@pytest.mark.parametrize("flags", [
    ["--replay-ratio", "0"], ["--end-e", "1.5"], ["--n-step", "30"], ["--hidden-sizes", "0"],
    ["--snapshot-steps", "100"], ["--partnerships"], ["--start-e", "0.1", "--end-e", "0.5"],
    ["--replay-ratio", "0.001", "--num-games", "8"],
])
def test_bad_flags_are_argparse_errors(flags):
    with pytest.raises(SystemExit) as exit_info:
        dqn.parse(flags)
    assert exit_info.value.code == 2
