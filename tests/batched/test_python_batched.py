"""Players without a batched form on the batched engine, through the Python engine (issue 13):
`pisti_env.agents.python_batched.PythonPlayerBatched` and the trainer's pool.

* The wrapper chooses, game for game, what the Python player chooses at a Python table dealt
  the same deck (an independent ``Game``, not the converter's), seeded alike, on every table
  and with bluffs (R29): converting a batched game loses nothing a seat's view holds (R30).
* The pool seats such a player (``expert`` with bluffs, R29: its batched form covers the games
  without them) and hands it the engine state; a rollout against it is reproducible from the
  trainer's seed.
* The registry wraps only when asked (``python_engine=True``); the vector env, which has no
  state to hand over, still refuses.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.agents import SeatView, as_batched_player, make_player  # noqa: E402
from pisti_env.agents.base import has_batched_form, needs_engine_state  # noqa: E402
from pisti_env.agents.python_batched import SEED_BOUND, PythonPlayerBatched  # noqa: E402
from pisti_env.batched import BatchedPisti  # noqa: E402
from training.trainer.pool import OpponentPool  # noqa: E402

TABLES = [
    pytest.param(dict(num_players=2, target=None), "expert", id="2p-expert"),
    pytest.param(dict(num_players=3, target=None, show_stock_bottom=True), "expert", id="3p-expert"),
    pytest.param(dict(num_players=4, target=None, bluff=True), "expert", id="4p-partners-bluff-expert"),
    pytest.param(dict(num_players=2, target=None, bluff=True), "pimc:n=2,rollout=random", id="2p-bluff-pimc"),
]


def seed_of(k: int) -> int:
    """The seed the wrapper draws from a generator seeded with ``k``."""
    return int(torch.randint(0, SEED_BOUND, (1,), generator=torch.Generator().manual_seed(k)))


@pytest.mark.parametrize("kw, spec", TABLES)
def test_wrapper_chooses_as_the_python_player_on_a_python_table_dealt_alike(kw, spec):
    settings = make_settings(**kw)
    batch = 6
    engine = BatchedPisti(batch, seed=3, **kw)
    out = engine.reset()
    tables = [Game(settings, deck=engine.state.deck[b].tolist(), dealer=int(engine.state.dealer[b])) for b in range(batch)]
    # A player built without the settings has no batched form (expert's covers the plain game):
    # the wrapper plays it through the Python engine on every table.
    wrapped = as_batched_player(make_player(spec), "test", python_engine=True, settings=settings)
    reference = make_player(spec, settings=settings)
    assert isinstance(wrapped, PythonPlayerBatched) and needs_engine_state(wrapped) and not has_batched_form(wrapped)
    k = 0
    while not all(g.done for g in tables):
        live = [b for b, g in enumerate(tables) if not g.done]
        actions = out.action_mask.int().argmax(1)  # finished tables' rows: any legal action
        for b in live:
            k += 1
            (chosen,) = wrapped.act_state(engine.state, torch.tensor([b]), torch.Generator().manual_seed(k)).tolist()
            reference.reset(seed_of(k))
            assert chosen == reference.act(SeatView(tables[b], tables[b].turn)), (b, k)
            actions[b] = chosen
        out = engine.step(actions)
        for b in live:
            tables[b].step(int(actions[b]))
            assert tables[b].done == bool(out.hand_over[b])
    if settings.bluff:  # the players claimed and answered
        assert sum(sum(g.bluff_claims) for g in tables) > 0


def test_pool_plays_expert_from_the_engine_state_reproducibly():
    """Two collectors seeded alike play the same rollout against ``expert`` (4 players in
    partnerships, bluffs): its seed stream is the trainer's generator."""
    from pisti_env.policies.spec import NetworkSpec
    from training.trainer.network import ActorCritic
    from training.trainer.rollout import LEARNER, SelfPlayCollector

    settings = make_settings(num_players=4, bluff=True)

    def rollout() -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        engine = BatchedPisti(8, seed=5, **settings.to_dict())
        pool = OpponentPool(settings, ("expert",), 0, 1.0, torch.device("cpu"))
        collector = SelfPlayCollector(engine, pool, 0.0, 12, torch.Generator().manual_seed(9))
        networks = ActorCritic(NetworkSpec(settings, (16,)), value_hidden_sizes=(16,))
        st = collector.collect(networks)
        return st.action.clone(), st.learner.clone()

    actions, learner = rollout()
    assert bool((~learner).any()) and bool(learner.any())
    again, _ = rollout()
    assert torch.equal(actions, again)


def test_pool_needs_the_state_for_a_python_player_and_registry_wraps_only_when_asked():
    plain = make_settings(num_players=2)
    pool = OpponentPool(plain, ("random", "expert"), 4, 5.0, torch.device("cpu"))
    assert [type(e.player).__name__ for e in pool.entries] == ["RandomAgent", "ExpertAgent"]  # batched form
    settings = make_settings(num_players=2, bluff=True)  # R29: expert's claims and answers, in Python only
    pool = OpponentPool(settings, ("random", "expert"), 4, 5.0, torch.device("cpu"))
    assert [type(e.player).__name__ for e in pool.entries] == ["RandomAgent", "PythonPlayerBatched"]
    engine = BatchedPisti(4, seed=0, num_players=2, bluff=True)
    out = engine.reset()
    with pytest.raises(ValueError, match="'expert' plays through the Python engine: pass the engine's state"):
        pool.act(1, out.observation, out.action_mask, torch.Generator())
    rows = torch.tensor([0, 2])
    chosen = pool.act(1, out.observation[rows], out.action_mask[rows], torch.Generator(), engine.state, rows)
    assert bool(out.action_mask[rows, chosen].all())
    with pytest.raises(ValueError, match="no batched form"):
        as_batched_player("expert", "opponent", settings=settings)
    greedy = make_player("greedy", settings=settings)
    assert as_batched_player(greedy, "x", python_engine=True) is greedy  # a batched form is kept
    wrapped = as_batched_player("expert", "x", python_engine=True, settings=settings)
    assert as_batched_player(wrapped, "x", python_engine=True) is wrapped  # never wrapped twice
    with pytest.raises(TypeError, match="settings must be a pisti_env.Settings"):
        PythonPlayerBatched(make_player("expert"), {"num_players": 2})
    with pytest.raises(ValueError, match="one deck"):
        PythonPlayerBatched(make_player("expert"), make_settings(num_players=6, decks=2))
    with pytest.raises(TypeError, match="must be a pisti_env.agents.Player"):
        PythonPlayerBatched(object(), settings)
    from pisti_env.envs.vector import PistiVectorEnv

    with pytest.raises(ValueError, match="no batched form"):
        PistiVectorEnv(2, opponent="expert", bluff=True)
    with pytest.raises(ValueError, match="no batched form"):
        PistiVectorEnv(2, opponent="pimc")
