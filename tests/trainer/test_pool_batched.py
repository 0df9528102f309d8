"""The trainer's opponent pool chooses for a whole batch step at once (issue 17 item 5):
``OpponentPool.act_all`` plays the baselines as ``act`` does and every snapshot in ONE stacked
network call (``SnapshotStack``), with one sample for all their rows.

Checked: the stacked logits are each network's own (to float rounding: a batched matrix
product may sum in another order than one network's); ``act_all`` gives exactly the
actions of the reference (each snapshot's logits for its rows, one Gumbel sample over all
snapshot rows from the same generator), leaves the learner's rows alone, takes a forced (single
legal) action as it is, is reproducible with the seed, and follows the pool as snapshots join
and leave; and with bf16 autocast (the trainer's precision) the cast parameters give autocast's
own results.
"""

from __future__ import annotations

import torch

from pisti_env.batched import BatchedPisti
from pisti_env.rules.settings import make_settings
from pisti_env.policies.network import PolicyNetwork, policy_network, sample
from training.trainer.pool import OpponentPool, SnapshotStack
from training.trainer.rollout import LEARNER


def _network(engine: BatchedPisti, seed: int) -> PolicyNetwork:
    torch.manual_seed(seed)
    return policy_network(engine.settings, (32, 16))


def _batch(steps: int = 7):
    """A batch step of 64 two-player games some way in (so a few rows have one legal card)."""
    settings = make_settings(num_players=2, target=None)
    engine = BatchedPisti(64, seed=3, **settings.to_dict())
    out = engine.reset()
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        noise = torch.rand(out.action_mask.shape, generator=g)
        out = engine.step(noise.masked_fill(~out.action_mask, -1).argmax(1))
    return settings, engine, out


def test_stacked_logits_are_each_networks_own():
    settings, engine, out = _batch()
    nets = [_network(engine, s).requires_grad_(False) for s in range(3)]
    stack = SnapshotStack(nets)
    parts = [out.observation[:10], out.observation[10:10], out.observation[20:45]]  # one snapshot without rows
    for net, x, y in zip(nets, parts, stack.logits(parts)):
        assert y.shape == (x.shape[0], engine.num_actions)
        assert torch.allclose(y, net(x), rtol=1e-5, atol=1e-6)
    assert stack.matches(nets) and not stack.matches(nets[:2]) and not stack.matches(nets[::-1])
    with torch.autocast("cpu", dtype=torch.bfloat16):  # pre-cast parameters: autocast's own products
        expected = [net(x) for net, x in zip(nets, parts)]
        for e, y in zip(expected, stack.logits(parts)):
            assert e.dtype == y.dtype and torch.allclose(e.float(), y.float(), rtol=1e-2, atol=1e-3)


def _pool(settings, engine) -> OpponentPool:
    pool = OpponentPool(settings, ("greedy",), 3, 5.0, torch.device("cpu"))
    for s in range(3):
        pool.add_snapshot(_network(engine, 10 + s), f"snap{s}")
    return pool


def test_act_all_is_the_reference_and_reproducible():
    settings, engine, out = _batch(3)
    obs, mask = out.observation, out.action_mask.clone()
    first_legal = mask.float().argmax(1)
    mask[::3] = False  # every third row: one legal action (as the last card of a round)
    mask[torch.arange(0, 64, 3), first_legal[::3]] = True
    forced = mask.sum(1) == 1
    assert forced.any() and not forced.all()
    pool = _pool(settings, engine)
    B = obs.shape[0]
    controller = torch.arange(B) % 5 - 1  # learner (-1), greedy (0), the snapshots (1, 2, 3)
    learner_action = torch.full((B,), 999)

    def run(seed: int) -> torch.Tensor:
        action = learner_action.clone()
        pool.act_all(controller, action, obs, mask, torch.Generator().manual_seed(seed), engine.state)
        return action

    got = run(7)
    assert (got[controller == LEARNER] == 999).all()
    played = controller != LEARNER
    assert mask[played.nonzero().squeeze(1), got[played]].all()  # every opponent action legal
    assert torch.equal(run(7), got) and not torch.equal(run(8), got)

    # The reference: greedy first, then one sample over the snapshots' rows in pool order.
    g = torch.Generator().manual_seed(7)
    ref = learner_action.clone()
    rows = (controller == 0).nonzero().squeeze(1)
    ref[rows] = pool.entries[0].player.act_batch(obs[rows], mask[rows], g)
    snap_rows = [(controller == i).nonzero().squeeze(1) for i in (1, 2, 3)]
    with torch.no_grad():
        logits = torch.cat([pool.entries[i].player.network(obs[r]) for i, r in zip((1, 2, 3), snap_rows)])
    all_rows = torch.cat(snap_rows)
    ref[all_rows] = sample(logits, mask[all_rows], g)
    assert torch.equal(got, ref)  # (the logits agree to rounding; no sampled row is that close to a tie)
    assert torch.equal(got[forced & played], mask[forced & played].float().argmax(1))


def test_act_all_follows_snapshots_joining_and_leaving():
    settings, engine, out = _batch()
    pool = _pool(settings, engine)
    controller = torch.full((64,), 3)  # every row: the newest snapshot
    action = torch.zeros(64, dtype=torch.long)
    pool.act_all(controller, action, out.observation, out.action_mask, torch.Generator().manual_seed(1))
    first = pool._stack
    pool.add_snapshot(_network(engine, 99), "snap-new")  # the oldest snapshot leaves (size 3)
    newest = pool.entries[3].player.network
    pool.act_all(controller, action, out.observation, out.action_mask, torch.Generator().manual_seed(1))
    assert pool._stack is not first and pool._stack.networks[-1] is newest
    with torch.no_grad():
        logits = newest(out.observation)
    assert torch.equal(action, sample(logits, out.action_mask, torch.Generator().manual_seed(1)))
