"""Search targets and their fit (issue 49, item 3: learning from the search)."""

import pytest
import torch

from pisti_env import make_settings
from pisti_env.agents import make_player
from pisti_env.batched import BatchedPisti
from pisti_env.rules.cards import HAND_SIZE
from training.distill.fit import centred_loss, decision_gain
from training.distill.targets import FIELDS, SearchTargets, generate, side_value

SETTINGS = make_settings(num_players=2, target=None)


@pytest.fixture(scope="module")
def policy():
    return make_player("pisti-2p", settings=SETTINGS, play="argmax")


@pytest.fixture(scope="module")
def targets(policy):
    return generate(policy, SETTINGS, games=6, seed=3)


def test_targets_cover_every_decision_with_a_choice(targets):
    # 2 players: 6 rounds of 4 cards each (R8-R9), a choice at 3 of every 4 plays of a seat.
    per_game = 36
    assert len(targets) == 6 * per_game
    held = (targets.cards >= 0).sum(1)
    assert set(held.tolist()) <= set(range(2, HAND_SIZE + 1))
    assert bool((targets.q[targets.cards < 0] == 0).all())
    assert bool(((targets.cards == targets.policy_card[:, None]).sum(1) == 1).all())  # the policy's card is listed


def test_the_policy_cards_value_is_the_self_play_hands_result(policy, targets):
    """The rollout after the policy's own card is the self-play game itself: at every decision
    its value is the mover's side's score difference (R22) in the hand the policy really plays
    out from the same deals."""
    engine = BatchedPisti(6, seed=3, **SETTINGS.to_dict())
    out = engine.reset()
    generator = torch.Generator().manual_seed(0)
    while True:
        out = engine.step(policy.act_batch(out.observation, out.action_mask, generator))
        if bool(out.done.all()):
            totals = out.hand_result["total"]
            break
    own = (targets.cards == targets.policy_card[:, None]).float().argmax(1)
    q_own = targets.q.gather(1, own[:, None])[:, 0]
    game = torch.arange(len(targets)) % 6
    expected = side_value(totals[game], engine.side_of[targets.seat])
    assert torch.equal(q_own, expected)
    assert bool((expected != 0).any())


def test_generation_is_reproducible(policy, targets):
    again = generate(policy, SETTINGS, games=6, seed=3)
    for field in FIELDS:
        assert torch.equal(getattr(again, field), getattr(targets, field))


def test_bluff_variant_and_matches_are_refused(policy):
    with pytest.raises(ValueError, match="single hands"):
        generate(policy, make_settings(num_players=2, target=151), games=2, seed=0)


def test_centred_loss_ignores_a_constant_per_position():
    q = torch.tensor([[1.0, 3.0, 0.0, 0.0]])
    valid = torch.tensor([[True, True, False, False]])
    assert float(centred_loss(q + 7.0, q, valid)) == pytest.approx(0.0)
    assert float(centred_loss(torch.zeros_like(q), q, valid)) == pytest.approx(1.0)  # centred targets -1, +1


def test_decision_gain_is_the_chosen_cards_advantage():
    t = SearchTargets(observation=torch.zeros(2, 1, dtype=torch.uint8),
                      cards=torch.tensor([[5, 9, -1, -1], [1, 2, 3, -1]]),
                      q=torch.tensor([[0.0, 4.0, 0.0, 0.0], [2.0, -1.0, 5.0, 0.0]]),
                      policy_card=torch.tensor([5, 3]), seat=torch.tensor([0, 1]))
    pred = torch.tensor([[0.0, 1.0, 9.0, 9.0], [3.0, 0.0, 1.0, 9.0]])  # padding never chosen
    assert decision_gain(pred, t, torch.arange(2)).tolist() == [4.0, -3.0]
