"""Fictitious play for R29's mixed decisions (``average_heads_every``,
`training.bluff.average`): the average of the answer and claim heads is the members'
mean probability, stays evenly spread over a run, plays the off-learner seats of self-play
games (whose claims and answers then do not train), is what the run ships and evaluates, and
survives checkpoints, resumes, warm starts and best responses."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pisti_env import make_settings  # noqa: E402
from pisti_env.rules.actions import BELIEVE, FACE_DOWN  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from training.bluff.average import HeadAverage  # noqa: E402
from training.trainer.checkpoint import CheckpointError, read_metadata  # noqa: E402
from pisti_env.policies.claim_heads import AveragedHead  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import log_probs, policy_network  # noqa: E402
from training.trainer.rollout import LEARNER  # noqa: E402
from training.trainer.runner import run  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from bluff_support import answering_positions, claim_chances  # noqa: E402
from helpers import tiny_config  # noqa: E402

BLUFF = make_settings(num_players=2, bluff=True, target=None)
HEADS = dict(answer_hidden_sizes=(8,), claim_hidden_sizes=(8,))


def _scrambled(network, seed: int):
    """``network`` with every weight redrawn (real-sized, unlike the near-zero initial heads)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in network.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.5)
    return network


def _average_of(count: int, capacity: int = 16) -> tuple[torch.nn.Module, HeadAverage]:
    network = _scrambled(policy_network(BLUFF, (32,), **HEADS), 0)
    average = HeadAverage(network, capacity)
    for seed in range(1, count):
        average.offer(_scrambled(network, seed))
    return network, average


def _positions():
    """(observations, masks) of real claim chances and answers (R29)."""
    found = [(obs, legal) for _g, obs, legal in claim_chances(6, seed=3)]
    found += [(obs, [BELIEVE, BELIEVE + 1]) for _g, obs in answering_positions(6, seed=3)]
    observations = torch.as_tensor(np.stack([obs for obs, _ in found]))
    masks = torch.zeros(len(found), 106, dtype=torch.bool)
    for row, (_obs, legal) in enumerate(found):
        masks[row, legal] = True
    return observations, masks


def test_r29_an_averaged_head_plays_the_members_mean_probability():
    network, average = _average_of(5)
    answer, claim = average.heads()
    assert isinstance(answer, AveragedHead) and answer.members == claim.members == 5
    x = torch.randn(9, network.extension.claim_view.size)
    y = torch.randn(9, network.extension.claim_chance_view.size)
    with torch.no_grad():
        mean_answer = torch.stack([torch.softmax(a(x), 1) for _o, a, _c in average.members]).mean(0)
        mean_claim = torch.stack([torch.sigmoid(c(y)) for _o, _a, c in average.members]).mean(0)
        assert torch.allclose(torch.softmax(answer(x), 1), mean_answer, atol=1e-6)
        assert torch.allclose(torch.sigmoid(claim(y)), mean_claim, atol=1e-6)
        # The whole policy: the probability of face down at a claim chance, and of each answer,
        # are the members' means; which card within a kind is the card logits' as before.
        observations, masks = _positions()
        shipped = average.policy(network)
        p = log_probs(shipped(observations), masks).exp()
        members = []
        for _offer, a, c in average.members:
            members.append(log_probs(network(observations, heads=(a, c)), masks).exp())
        down = torch.stack([m[:, FACE_DOWN:BELIEVE].sum(1) for m in members]).mean(0)
        challenge = torch.stack([m[:, BELIEVE + 1] for m in members]).mean(0)
        assert torch.allclose(p[:, FACE_DOWN:BELIEVE].sum(1), down, atol=1e-5)
        assert torch.allclose(p[:, BELIEVE + 1], challenge, atol=1e-5)
        within = p[:6, FACE_DOWN:BELIEVE] / p[:6, FACE_DOWN:BELIEVE].sum(1, keepdim=True)
        own = log_probs(network(observations), masks).exp()[:6, FACE_DOWN:BELIEVE]
        assert torch.allclose(within, own / own.sum(1, keepdim=True), atol=1e-5)


def test_r29_an_average_of_one_member_is_the_policy_itself():
    network = _scrambled(policy_network(BLUFF, (32,), **HEADS), 0)
    observations, masks = _positions()
    with torch.no_grad():
        mine = log_probs(network(observations), masks)
        shipped = log_probs(HeadAverage(network, 4).policy(network)(observations), masks)
    assert torch.allclose(mine.exp(), shipped.exp(), atol=1e-6)


def test_the_average_keeps_its_members_evenly_spread_over_the_run():
    _network, average = _average_of(1, capacity=4)
    kept = []
    for _ in range(20):
        kept.append(average.offer(_network))
        assert len(average.members) <= 4
    offers = [m[0] for m in average.members]
    assert offers == list(range(0, 21, average.stride))[: len(offers)] and offers[0] == 0
    assert average.stride == 8 and offers == [0, 8, 16]
    assert sum(kept) < 20  # once thinned, only offers on the grid join
    with pytest.raises(ValueError, match="at least 2"):
        HeadAverage(_network, 1)
    with pytest.raises(ValueError, match="answer head and a claim head"):
        HeadAverage(policy_network(BLUFF, (32,), answer_hidden_sizes=(8,)), 4)


def test_r29_off_learner_seats_of_self_play_claim_and_answer_with_the_average(tmp_path):
    trainer = Trainer(tiny_config(tmp_path, precision="fp32", bluff=True, target=None, num_envs=64,
                                  self_play_share=0.5, baselines=("random",), average_heads_every=1, **HEADS))
    _scrambled(trainer.network.policy, 7)
    average_of(trainer).offer(_scrambled(trainer.network.policy, 8))  # the average: two other heads
    _scrambled(trainer.network.policy, 9)
    collector = trainer.collector
    seen_average = seen_current = 0
    for _ in range(4):
        rollout = collector.collect(trainer.network)
        for t in range(rollout.seat.shape[0]):
            obs, mask = rollout.observation[t], rollout.mask[t]
            decides = mask[:, BELIEVE] | mask[:, FACE_DOWN:BELIEVE].any(1)
            with torch.no_grad():
                current = log_probs(trainer.network.policy(obs), mask)
                averaged = log_probs(trainer.network.policy(obs, heads=average_of(trainer).heads()), mask)
            logp = rollout.logp[t]
            action = rollout.action[t][:, None]
            for row in range(64):
                if not decides[row]:
                    continue
                a = float(averaged[row].gather(0, action[row]))
                c = float(current[row].gather(0, action[row]))
                if abs(logp[row] - a) < 1e-4 and abs(a - c) > 1e-3:
                    seen_average += 1
                    assert not rollout.learner[t, row]  # the average's draws do not train
                elif abs(logp[row] - c) < 1e-4 and abs(a - c) > 1e-3 and rollout.learner[t, row]:
                    seen_current += 1
    assert seen_average > 10 and seen_current > 10
    # The averaged seats: only in self-play games, never on the learner's side.
    averaged_seats = collector.seats.averaged
    self_play = (collector.controller == LEARNER).all(1)
    assert not averaged_seats[~self_play].any()
    assert (averaged_seats[self_play].sum(1) == 1).all()  # two players: one side each


def test_r29_a_fictitious_play_run_ships_evaluates_resumes_and_is_exploited_with_its_average(tmp_path):
    config = tiny_config(tmp_path, precision="fp32", bluff=True, target=None, self_play_share=0.8,
                         average_heads_every=1, average_heads_size=3, checkpoint_every=2,
                         out_dir=str(tmp_path / "fp"), **HEADS)
    trainer = run(config, progress=False)
    assert len(average_of(trainer).members) >= 2 and average_of(trainer).stride > 1  # 6 offers into 3 places
    policy = tmp_path / "fp" / "policy"
    metadata = read_metadata(policy)
    assert metadata["average_heads"] == len(average_of(trainer).members)
    player = load_policy(policy)
    observations, masks = _positions()
    with torch.no_grad():
        shipped = trainer.shipped_policy().cpu()(observations)
        assert torch.equal(player.network(observations), shipped)
        assert not torch.allclose(log_probs(shipped, masks), log_probs(trainer.network.policy(observations), masks))
    # A resumed run has the same average and goes on adding to it.
    resumed = Trainer.resume(tmp_path / "fp" / "checkpoint")
    assert [m[0] for m in average_of(resumed).members] == [m[0] for m in average_of(trainer).members]
    assert (average_of(resumed).offers, average_of(resumed).stride) == (average_of(trainer).offers, average_of(trainer).stride)
    with torch.no_grad():
        assert torch.equal(resumed.shipped_policy()(observations), shipped)
    assert torch.equal(resumed.collector.seats.averaged, trainer.collector.seats.averaged)
    # A run started from the shipped policy: its heads are the newest member, its average the members.
    warm = Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=str(policy), average_heads_every=1, **HEADS))
    newest = average_of(trainer).members[-1]
    for key, value in newest[1].state_dict().items():
        assert torch.equal(warm.network.policy.answer_head.state_dict()[key], value)
    assert len(average_of(warm).members) == len(average_of(trainer).members)
    with torch.no_grad():
        assert torch.allclose(warm.shipped_policy()(observations), shipped, atol=1e-6)
    # A best response warm-started from it starts from the newest member too; a fresh one has no heads.
    _, from_target = resolve(ExploitConfig(target=str(policy), warm_start=True, out_dir=str(tmp_path / "x")))
    assert from_target.claim_hidden_sizes == (8,) and from_target.average_heads_every == 0
    Trainer(from_target)


def test_r29_fictitious_play_needs_both_heads_trainable(tmp_path):
    with pytest.raises(ValueError, match="answer head and a claim head"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, average_heads_every=1, answer_hidden_sizes=(8,)))
    with pytest.raises(ValueError, match="freeze_answer_head"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, average_heads_every=1, freeze_answer_head=True,
                            init_from="x", **HEADS))
    with pytest.raises(ValueError, match="average_heads_size"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, average_heads_every=1, average_heads_size=1, **HEADS))
    with pytest.raises(ValueError, match="average_heads needs both"):
        policy_network(BLUFF, (32,), answer_hidden_sizes=(8,), average_heads=3)


def test_r29_a_checkpoint_names_its_average_as_the_schema_allows(tmp_path):
    config = tiny_config(tmp_path, precision="fp32", bluff=True, target=None, average_heads_every=1,
                         out_dir=str(tmp_path / "fp"), **HEADS)
    run(config, progress=False)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "fp" / "policy", copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    for bad in (0, "3", 10**6, True):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "average_heads": bad}))
        with pytest.raises(CheckpointError, match="average_heads"):
            read_metadata(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "average_heads": metadata["average_heads"] + 1}))
    with pytest.raises(CheckpointError):  # the weights hold another number of members
        load_policy(copy)
    without = {k: v for k, v in metadata.items() if k != "claim_hidden_sizes"}
    (copy / "metadata.json").write_text(json.dumps(without))
    with pytest.raises(CheckpointError, match="average_heads"):
        read_metadata(copy)


def test_r29_the_average_as_the_magnets_heads_pulls_the_learners_heads_toward_it(tmp_path):
    with pytest.raises(ValueError, match="average_heads_magnet needs"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, average_heads_every=1, average_heads_magnet=True, **HEADS))

    def magnet_heads(toward_average: bool) -> list:
        """The heads the magnet scored each minibatch of one update with."""
        trainer = Trainer(tiny_config(tmp_path, precision="fp32", bluff=True, target=None, average_heads_every=1,
                                      average_heads_magnet=toward_average, magnet_coef=0.5, **HEADS))
        seen = []
        forward = trainer.magnet.forward

        def spy(observation, heads=None):
            seen.append(heads)
            return forward(observation, heads=heads)

        trainer.magnet.forward = spy
        trainer.train_update()
        return seen

    # With the flag every minibatch's magnet claims and answers with the average (at the first
    # update: the run's starting heads alone); without it, with the magnet's own heads.
    with_average = magnet_heads(True)
    assert with_average and all(isinstance(answer, AveragedHead) and isinstance(claim, AveragedHead)
                                and answer.members == claim.members == 1 for answer, claim in with_average)
    without = magnet_heads(False)
    assert without and all(heads is None for heads in without)


def average_of(trainer: Trainer) -> HeadAverage:
    """The head average of a fictitious-play run (its bluff extension's)."""
    return next(e.average for e in trainer.extensions if getattr(e, "average", None) is not None)
