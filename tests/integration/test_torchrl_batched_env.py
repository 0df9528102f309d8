"""The TorchRL doors on the batched engine (``pisti_env.integrations.torchrl_batched``): TorchRL's
spec check, the single-agent env equal to the vector env game for game, the autoreset, seeding
and illegal-action conventions, and the self-play group form's rewards (R30) and masks. Needs
the ``torchrl`` extra."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

from pisti_env.integrations.torchrl_batched import GROUP, PistiSelfPlayTorchRLEnv, PistiTorchRLEnv  # noqa: E402
from pisti_env.game.rewards import side_difference  # noqa: E402
from pisti_env.envs.vector import PistiVectorEnv  # noqa: E402

SETTINGS = {
    "2p": dict(),
    "3p": dict(num_players=3),
    "4p-partners": dict(num_players=4, partnerships=True),
    "bluff": dict(bluff=True),  # R29: answers are turns of their own
    "match": dict(target=151),  # several hands, rewards on the way
}


def first_legal(mask: torch.Tensor) -> torch.Tensor:
    return mask.to(torch.uint8).argmax(-1)


def random_legal(mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return torch.multinomial(mask.float().reshape(-1, mask.shape[-1]), 1, generator=generator).reshape(mask.shape[:-1])


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_torchrl_check_env_specs_passes(settings):
    torch.set_num_threads(1)
    check_env_specs(PistiTorchRLEnv(4, seed=1, **settings), seed=2)
    check_env_specs(PistiSelfPlayTorchRLEnv(4, seed=1, **settings), seed=2)


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_single_agent_door_is_the_vector_env_game_for_game(settings):
    """Observations, masks, rewards and dones are ``PistiVectorEnv``'s (``pisti/Pisti-v0``'s),
    so its reward timing holds: what the learner received since its previous decision."""
    env, vector = PistiTorchRLEnv(6, seed=7, **settings), PistiVectorEnv(6, output="torch", **{"num_players": 2, "target": None, **settings})
    data = env.reset()
    obs, _ = vector.reset(seed=7)
    generator = torch.Generator().manual_seed(0)
    ends = 0
    for _ in range(150):
        assert torch.equal(data["observation"], obs["observation"])
        assert torch.equal(data["action_mask"], obs["action_mask"].bool())
        data["action"] = random_legal(data["action_mask"], generator)
        data, following = env.step_and_maybe_reset(data)
        obs, reward, terminated, truncated, _ = vector.step(data["action"])
        assert torch.equal(data["next", "reward"].squeeze(-1), reward)
        assert torch.equal(data["next", "terminated"].squeeze(-1), terminated)
        assert torch.equal(data["next", "done"].squeeze(-1), terminated | truncated)
        assert not data["next", "truncated"].any()
        ends += int(terminated.sum())
        data = following
    assert ends > 0


def test_autoreset_hands_over_the_next_episode_and_refuses_mid_episode_partial_resets():
    env = PistiTorchRLEnv(5, seed=3)
    data = env.reset()
    while True:
        data["action"] = first_legal(data["action_mask"])
        data = env.step(data)
        done = data["next", "done"].squeeze(-1)
        if done.any():
            break
        data = env.step_mdp(data)
    assert not done.all() or True  # all 2-player hands have 24 learner turns: they end together
    following = env.step_mdp(data)
    following["_reset"] = data["next", "done"].clone()
    after = env.reset(following)  # the collector's partial reset: the engine restarted those games
    assert torch.equal(after["observation"], data["next", "observation"])
    assert torch.equal(after["action_mask"], data["next", "action_mask"])
    assert not after["done"].any()
    # The new episodes have begun: their first actions are legal against the handed-over masks.
    after["action"] = first_legal(after["action_mask"])
    stepped = env.step(after)
    partial = env.step_mdp(stepped)
    partial["_reset"] = torch.zeros(5, 1, dtype=torch.bool)
    partial["_reset"][0] = True
    if not stepped["next", "done"][0]:
        with pytest.raises(ValueError, match="partial reset"):
            env.reset(partial)
    # A full reset (no "_reset") restarts every game.
    fresh = env.reset()
    assert fresh["observation"].shape == (5, env.observation_spec["observation"].shape[-1])


def test_seeding_repeats_the_games_and_different_seeds_differ():
    def rollout(seed):
        env = PistiTorchRLEnv(4)
        env.set_seed(seed)
        return env.rollout(60, policy=lambda td: td.set("action", first_legal(td["action_mask"])), break_when_any_done=False)

    first = rollout(11)
    assert torch.equal(first["observation"], rollout(11)["observation"])
    assert torch.equal(first["next", "reward"], rollout(11)["next", "reward"])
    assert not torch.equal(first["observation"], rollout(12)["observation"])


def test_illegal_action_raises_and_changes_nothing():
    env = PistiTorchRLEnv(3, seed=0)
    data = env.reset()
    illegal = (~data["action_mask"]).to(torch.uint8).argmax(-1)
    with pytest.raises(ValueError, match="illegal action"):
        env.step(data.clone().set("action", illegal))
    data["action"] = first_legal(data["action_mask"])
    assert not env.step(data)["next", "done"].any()  # the legal step goes ahead as if nothing happened


def test_rand_action_samples_only_legal_actions():
    env = PistiTorchRLEnv(64, seed=0)
    data = env.reset()
    for _ in range(30):
        env.rand_action(data)
        assert data["action_mask"].gather(-1, data["action"][:, None]).all()
        data = env.step_and_maybe_reset(data)[1]


@pytest.mark.parametrize("settings", SETTINGS.values(), ids=SETTINGS.keys())
def test_self_play_group_rewards_add_up_to_every_seats_score_difference_R30(settings):
    """Random legal play through the group form (TorchRL's masked ``rand_action``): one seat
    moves per game and step, its action is legal against the mask it was shown, and each seat's
    rewards add up over an episode to its side's final score difference (as the engine scored it)."""
    torch.set_num_threads(1)
    env = PistiSelfPlayTorchRLEnv(4, seed=5, **settings)
    data = env.reset()
    engine = env.engine
    side_of = engine.side_of.tolist()
    seats = engine.num_players
    finals = [[] for _ in range(4)]
    step = engine.step

    def refereed(actions, *args, **kwargs):
        out = step(actions, *args, **kwargs)
        for game in out.done.nonzero().squeeze(1).tolist():
            scores = out.match_scores[game].tolist()
            finals[game].append([side_difference(scores, side_of[s]) for s in range(seats)])
        return out

    engine.step = refereed
    rollout = env.rollout(400 if settings.get("target") is None else 1500, auto_reset=False, tensordict=data, break_when_any_done=False)
    group = rollout[GROUP]
    assert bool((group["mask"].sum(-1) == 1).all())  # turn-based: one mover
    mover = group["mask"].float().argmax(-1)
    shown = group["action_mask"].gather(2, mover[..., None, None].expand(-1, -1, 1, group["action_mask"].shape[-1])).squeeze(2)
    played = group["action"].gather(2, mover[..., None]).squeeze(2)
    assert shown.gather(-1, played[..., None]).all()
    rewards = rollout["next", GROUP, "reward"].squeeze(-1).double()
    done = rollout["next", "done"].squeeze(-1)
    for game in range(4):
        running, seen = torch.zeros(seats, dtype=torch.float64), []
        for t in range(rollout.shape[1]):
            running += rewards[game, t]
            if done[game, t]:
                seen.append(running.tolist())
                running.zero_()
        assert seen and seen == [pytest.approx(f, abs=1e-4) for f in finals[game]]


def test_self_play_seats_see_their_own_views():
    """The mover's row is the engine's observation of the seat to move; the other rows are the
    other seats' own views (each differs: a seat sees its own hand only, R30)."""
    env = PistiSelfPlayTorchRLEnv(3, seed=2)
    data = env.reset()
    state = env.engine.state
    for seat in range(2):
        assert torch.equal(data[GROUP, "observation"][:, seat], env.engine.observe(state, torch.full((3,), seat)))
    mover = state.turn
    assert torch.equal(data[GROUP, "observation"][torch.arange(3), mover], env.engine.peek().observation)
    assert not torch.equal(data[GROUP, "observation"][:, 0], data[GROUP, "observation"][:, 1])


def test_collector_batches_chain_each_next_observation_to_the_following_step():
    """What the recipe's GAE relies on (it shifts the collected values by one step): in a
    collector's batch, step t's next observation and mask are step t + 1's, across episode ends
    too (the engine restarted the game; the partial reset changes nothing)."""
    from torchrl.collectors import Collector

    env = PistiTorchRLEnv(4, seed=9)
    generator = torch.Generator().manual_seed(0)

    def policy(data):
        return data.set("action", random_legal(data["action_mask"], generator))

    collector = Collector(env, policy, frames_per_batch=4 * 60, total_frames=4 * 120, trust_policy=True)
    ends = 0
    for batch in collector:
        assert torch.equal(batch["next", "observation"][:, :-1], batch["observation"][:, 1:])
        assert torch.equal(batch["next", "action_mask"][:, :-1], batch["action_mask"][:, 1:])
        assert batch["action_mask"].gather(-1, batch["action"][..., None]).all()
        ends += int(batch["next", "done"].sum())
    collector.shutdown()
    assert ends >= 4
