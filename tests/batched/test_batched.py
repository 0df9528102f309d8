"""The batched torch engine against the pure-Python engine and AEC env, game for game.

The differential tests run thousands of random games: each slot of the batch is mirrored by a
``pisti_env.raw_env`` dealt the same deck by the same dealer and fed the same random legal
actions (with the bluff variant, R29, face-down plays, believes and challenges too); at every
step the seat to move, the action mask, the observation (byte for byte), every seat's reward,
the done flags, the hand results and the engine states (``where``/``played_by``, the pending
claim) must agree.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import numpy as np
import pytest
import torch

import pisti_env
from pisti_env.batched import BatchedPisti, BatchState, BatchStep
from pisti_env.rules.cards import JACK
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.rules import locations
from helpers import ScriptedShuffle

SETTINGS = [
    pytest.param(dict(num_players=2, target=None), 400, id="2p-hand"),
    pytest.param(dict(num_players=3, target=None), 250, id="3p-hand"),
    pytest.param(dict(num_players=4, target=None), 250, id="4p-partners-hand"),
    pytest.param(dict(num_players=4, partnerships=False, target=None), 200, id="4p-solo-hand"),
    pytest.param(
        dict(num_players=2, target=None, double_pisti=10, last_card_pisti=False, ten_diamonds_pisti_bonus=3),
        300,
        id="2p-variants-a",
    ),
    pytest.param(dict(num_players=2, target=None, double_pisti=0, show_stock_bottom=True), 300, id="2p-variants-b"),
    pytest.param(dict(num_players=3, target=None, show_stock_bottom=True, last_card_pisti=False), 200, id="3p-variants"),
    pytest.param(dict(num_players=2, target=51), 80, id="2p-match-51"),
    pytest.param(dict(num_players=4, target=61, win_margin=2), 40, id="4p-match-margin"),
    pytest.param(dict(num_players=3, target=41, reward="win"), 60, id="3p-match-win-reward"),
    pytest.param(dict(num_players=2, target=None, reward="win"), 200, id="2p-hand-win-reward"),
]

# The bluff variant (R29), under the same differential test; random legal play makes face-down
# plays, believes and challenges (``test_batched_engine_matches_python_engine_with_bluffs``
# checks that each happened, and that claims were found both true and false).
BLUFF_SETTINGS = [
    pytest.param(dict(num_players=2, target=None, bluff=True), 300, id="2p-bluff-hand"),
    pytest.param(dict(num_players=3, target=None, bluff=True, bluff_jack_double=True), 200, id="3p-bluff-jack-double"),
    pytest.param(dict(num_players=4, target=None, bluff=True), 200, id="4p-partners-bluff"),
    pytest.param(
        dict(num_players=4, partnerships=False, target=None, bluff=True, bluff_jack_double=True),
        150,
        id="4p-solo-bluff-jack-double",
    ),
    pytest.param(
        dict(num_players=2, target=None, bluff=True, bluff_jack_double=True, last_card_pisti=False,
             show_stock_bottom=True, double_pisti=10, ten_diamonds_pisti_bonus=3),
        300,
        id="2p-bluff-variants",
    ),
    pytest.param(
        dict(num_players=3, target=None, bluff=True, show_stock_bottom=True, last_card_pisti=False, double_pisti=0),
        200,
        id="3p-bluff-variants",
    ),
    pytest.param(dict(num_players=4, target=None, bluff=True, show_stock_bottom=True), 150, id="4p-bluff-stock-bottom"),
    pytest.param(dict(num_players=2, target=51, bluff=True, bluff_jack_double=True), 60, id="2p-bluff-match-51"),
    pytest.param(dict(num_players=4, target=61, win_margin=2, bluff=True), 30, id="4p-bluff-match-margin"),
    pytest.param(dict(num_players=3, target=41, reward="win", bluff=True), 40, id="3p-bluff-match-win-reward"),
]


def mirror_env(engine: BatchedPisti, b: int, settings: dict) -> pisti_env.raw_env:
    env = pisti_env.raw_env(**settings)
    env.reset(options={"deck": engine.state.deck[b].tolist(), "dealer": int(engine.state.dealer[b])})
    return env


def check_same(engine: BatchedPisti, out, envs: list, step: int) -> None:
    state = engine.state
    for b, env in enumerate(envs):
        game = env.unwrapped.game
        where = np.frombuffer(game.where, dtype=np.uint8)
        played_by = np.frombuffer(game.played_by, dtype=np.uint8)
        assert int(out.seat[b]) == game.turn, (step, b)
        assert np.array_equal(state.where[b].numpy(), where), (step, b)
        assert np.array_equal(state.played_by[b].numpy(), played_by), (step, b)
        assert (int(state.claimant[b]), int(state.claim_card[b])) == (game.claimant, game.claim_card), (step, b)
        obs = env.observe(env.agent_selection)
        assert np.array_equal(obs["action_mask"].astype(bool), out.action_mask[b].numpy()), (step, b)
        assert obs["observation"].tobytes() == out.observation[b].numpy().tobytes(), (step, b)


def run_differential(settings: dict, episodes: int, batch: int = 24, seed: int = 0, seen: Counter | None = None) -> int:
    """Plays until ``episodes`` episodes finished; returns how many did. ``seen`` (optional)
    counts what random play met: actions by kind, claim outcomes, the R28 card face down."""
    kw = dict(settings)
    engine = BatchedPisti(batch, seed=seed, **kw)
    out = engine.reset()
    envs = [mirror_env(engine, b, kw) for b in range(batch)]
    rng = np.random.default_rng(seed)
    seen = Counter() if seen is None else seen
    finished = 0
    step = 0
    while finished < episodes:
        check_same(engine, out, envs, step)
        actions = [int(rng.choice(np.flatnonzero(out.action_mask[b].numpy()))) for b in range(batch)]
        count_what_is_played(engine.state, actions, seen)
        out = engine.step(torch.tensor(actions))
        for b, env in enumerate(envs):
            if bool(out.hand_over[b]) and not bool(out.done[b]):
                env.unwrapped.game.rng = ScriptedShuffle(engine.state.deck[b].tolist())
            hands_before = env.unwrapped.game.hands_completed
            env.step(actions[b])
            game = env.unwrapped.game
            rewards = [env.rewards[a] for a in env.possible_agents]
            assert np.allclose(rewards, out.rewards[b].numpy(), atol=1e-5), (step, b, rewards, out.rewards[b])
            assert bool(out.done[b]) == game.done, (step, b)
            assert bool(out.hand_over[b]) == (game.hands_completed > hands_before), (step, b)
            if bool(out.hand_over[b]):
                result = game.last_hand_result
                assert set(result[0]) == set(out.hand_result), (step, b)
                for key in result[0]:
                    assert [r[key] for r in result] == out.hand_result[key][b].tolist(), (step, b, key)
                    if key.startswith("bluff_challenged"):
                        seen[key] += sum(r[key] for r in result)
            if bool(out.done[b]):
                assert out.match_scores[b].tolist() == game.match_scores
                assert int(out.winner[b]) == (-1 if game.winner is None else game.winner)
                finished += 1
                envs[b] = mirror_env(engine, b, kw)
        step += 1
    return finished


def action_kind(action: int) -> str:
    if action < FACE_DOWN:
        return "face up"
    return {BELIEVE: "believe", CHALLENGE: "challenge"}.get(action, "face down")


def count_what_is_played(state: BatchState, actions: list[int], seen: Counter) -> None:
    seen.update(action_kind(a) for a in actions)
    seen["stock bottom face down"] += int((state.where == locations.PILE_DOWN_SHOWN).sum())
    for b, a in enumerate(actions):
        if action_kind(a) == "face down":
            seen["claim on a lone Jack"] += int(state.top[b]) % 13 == JACK
            seen["claim with the hand's last card"] += int(state.in_hands[b]) == 1 and int(state.stock_pos[b]) == 52


@pytest.mark.parametrize("settings, episodes", SETTINGS)
def test_batched_engine_matches_python_engine(settings, episodes):
    seen = Counter()
    assert run_differential(settings, episodes, seen=seen) >= episodes
    assert set(seen) - {"stock bottom face down"} == {"face up"}


@pytest.fixture(params=["whole batch", "sub-batches"])
def claims_computed_for(request, monkeypatch):
    """R29's claims and answers computed for the whole batch (as small batches and GPUs do)
    or for their games only (as large CPU batches do): ``moves.SUB_BATCH_FROM`` set so that
    the test's batch takes that path."""
    from pisti_env.batched import moves

    monkeypatch.setattr(moves, "SUB_BATCH_FROM", 1 if request.param == "sub-batches" else 10**9)
    return request.param


@pytest.mark.parametrize("settings, episodes", BLUFF_SETTINGS)
def test_batched_engine_matches_python_engine_with_bluffs(settings, episodes, claims_computed_for):
    """R29: the same game for game comparison, face-down plays and answers included, claims and
    answers computed either way (``claims_computed_for``)."""
    seen = Counter()
    assert run_differential(settings, episodes, seen=seen) >= episodes
    for kind in ("face up", "face down", "believe", "challenge", "bluff_challenged_true", "bluff_challenged_false"):
        assert seen[kind] > 0, (kind, seen)
    # Every claim is answered (some may still wait when the run stops: at most one per game).
    assert 0 <= seen["face down"] - seen["believe"] - seen["challenge"] <= 24
    assert seen["claim on a lone Jack"] > 0, seen  # bluff_jack_double's stakes (R29)
    if settings.get("show_stock_bottom"):  # R28: the shown card played face down stays known
        assert seen["stock bottom face down"] > 0, seen
    if settings.get("last_card_pisti", True):  # a last-card claim is answered before the hand ends
        assert seen["claim with the hand's last card"] > 0, seen
    else:  # R16, R29: never with last_card_pisti=False
        assert seen["claim with the hand's last card"] == 0, seen


def test_hand_over_flags_every_hand_end_in_match_play():
    engine = BatchedPisti(8, seed=3, num_players=2, target=51)
    out = engine.reset()
    g = torch.Generator().manual_seed(0)
    hands = done = 0
    for _ in range(48 * 12):
        mask = out.action_mask
        k = (torch.rand(8, generator=g) * mask.sum(1)).long()
        out = engine.step((mask.cumsum(1) > k[:, None]).int().argmax(1))
        hands += int(out.hand_over.sum())
        done += int(out.done.sum())
        assert not (out.done & ~out.hand_over).any()  # an episode only ends with a hand
        totals = out.hand_result["total"]
        assert (totals[~out.hand_over] == 0).all()
    # 2 players: a hand is exactly 48 moves, so 8 games played 12 hands each.
    assert hands == 8 * 12
    assert 0 < done < hands


def random_legal(mask: torch.Tensor, slot_seeds: list[random.Random]) -> torch.Tensor:
    """One random legal card per game, each game from its own generator."""
    return torch.tensor([rng.choice(np.flatnonzero(m.numpy()).tolist()) for rng, m in zip(slot_seeds, mask)])


def trajectory(batch: int, slots: int, steps: int, seed: int = 11, **settings) -> list:
    engine = BatchedPisti(batch, seed=seed, **settings)
    out = engine.reset()
    rngs = [random.Random(1000 + i) for i in range(batch)]
    record = []
    for _ in range(steps):
        record.append([(out.observation[i].clone(), out.rewards[i].clone(), bool(out.done[i])) for i in range(slots)])
        out = engine.step(random_legal(out.action_mask, rngs))
    return record


def test_batch_independence_game_i_does_not_depend_on_batch_size_or_neighbours():
    small = trajectory(batch=3, slots=3, steps=150, num_players=3, target=None)
    large = trajectory(batch=17, slots=3, steps=150, num_players=3, target=None)
    for t, (a, b) in enumerate(zip(small, large)):
        for i in range(3):
            assert torch.equal(a[i][0], b[i][0]), (t, i)
            assert torch.equal(a[i][1], b[i][1]), (t, i)
            assert a[i][2] == b[i][2]


def test_same_seed_same_games_different_seed_different_games():
    a = trajectory(batch=4, slots=4, steps=60, seed=5, num_players=2, target=51)
    b = trajectory(batch=4, slots=4, steps=60, seed=5, num_players=2, target=51)
    c = trajectory(batch=4, slots=4, steps=60, seed=6, num_players=2, target=51)
    assert all(torch.equal(x[i][0], y[i][0]) for x, y in zip(a, b) for i in range(4))
    assert not all(torch.equal(x[i][0], y[i][0]) for x, y in zip(a, c) for i in range(4))


def test_decks_are_uniform_enough_and_dealers_vary():
    """The counter-based shuffle: each card lands on each deck position about equally often."""
    engine = BatchedPisti(2000, seed=1, num_players=2, target=None)
    engine.reset()
    deck = engine.state.deck
    assert all(sorted(row) == list(range(52)) for row in deck.tolist()[:50])
    counts = torch.zeros(52, 52)
    counts.index_put_((deck.flatten(), torch.arange(52).repeat(2000)), torch.ones(2000 * 52), accumulate=True)
    expected = 2000 / 52
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    dof = 51 * 51
    assert chi2 < dof + 6 * (2 * dof) ** 0.5  # far inside a 6-sigma band
    dealers = engine.state.dealer.bincount(minlength=2)
    assert abs(int(dealers[0]) - 1000) < 150


def test_deck_order_is_the_same_in_numpy_and_torch():
    """The CPU's NumPy deck draw and the torch one (every other device) give the same decks,
    at the corners of the 32-bit keys and for random ones."""
    from pisti_env.batched import decks

    keys = torch.cat([torch.tensor([0, 1, 2**31 - 1, 2**31, 2**32 - 1]), torch.randint(0, 2**32, (3000,))])
    numpy_decks, torch_decks = decks._deck_order_numpy(keys), decks._deck_order_torch(keys)
    assert numpy_decks.dtype == torch_decks.dtype == torch.int64
    assert torch.equal(numpy_decks, torch_decks)
    assert torch.equal(numpy_decks.sort(1).values, torch.arange(52).expand(len(keys), 52))


def test_hash_key_is_the_same_in_numpy_and_torch():
    """The CPU's NumPy hash of (seed, parts) and the torch one (every other device) agree: seeds
    at the corners of 32 and 64 bits and beyond, negative and large int parts, tensor parts."""
    from pisti_env.batched import decks

    generator = torch.Generator().manual_seed(3)
    slots = torch.cat([torch.tensor([0, 1, 2**31 - 1, 2**32 - 1]), torch.randint(0, 2**31, (2000,), generator=generator)])
    episodes = torch.randint(0, 2**31, slots.shape, generator=generator)
    for seed in (0, 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**70 + 5):
        for parts in ((slots, episodes, -1, 0), (slots, 7), (3, -1)):
            numpy_key = decks._hash_key_numpy(seed, parts)
            torch_key = decks._hash_key_torch(seed, parts, torch.device("cpu"))
            assert numpy_key.dtype == torch_key.dtype == torch.int64
            assert numpy_key.shape == torch_key.shape
            assert torch.equal(numpy_key, torch_key), (seed, len(parts))


def check_pure_step(engine: BatchedPisti, state: BatchState, actions: torch.Tensor) -> None:
    before = {f.name: getattr(state, f.name).clone() for f in dataclasses.fields(BatchState)}
    new_state, _ = engine.step_state(state, actions)
    for f in dataclasses.fields(BatchState):
        assert torch.equal(getattr(state, f.name), before[f.name]), f.name
    # Stepping the same state twice gives the same result.
    again, _ = engine.step_state(state, actions)
    for f in dataclasses.fields(BatchState):
        assert torch.equal(getattr(new_state, f.name), getattr(again, f.name)), f.name


def test_step_state_is_pure():
    engine = BatchedPisti(6, seed=2, num_players=4, target=61)
    out = engine.reset()
    check_pure_step(engine, engine.state, random_legal(out.action_mask, [random.Random(i) for i in range(6)]))


def test_R29_step_state_is_pure_with_face_down_plays_and_answers(claims_computed_for):
    """Steps that mix face-up plays, face-down plays and answers, and end hands, leave their
    input state untouched (claims and answers computed either way)."""
    engine = BatchedPisti(32, seed=2, num_players=2, target=51, bluff=True, show_stock_bottom=True)
    out = engine.reset()
    rngs = [random.Random(i) for i in range(32)]
    kinds = set()
    for _ in range(200):
        actions = random_legal(out.action_mask, rngs)
        kinds.update(action_kind(int(a)) for a in actions)
        check_pure_step(engine, engine.state, actions)
        out = engine.step(actions)
    assert kinds == {"face up", "face down", "believe", "challenge"}


@pytest.mark.parametrize(
    "settings",
    [
        dict(num_players=2, target=None),
        dict(num_players=4, target=41, win_margin=2, show_stock_bottom=True, ten_diamonds_pisti_bonus=3),
        dict(num_players=3, target=None, bluff=True, bluff_jack_double=True, show_stock_bottom=True),
        dict(num_players=2, target=41, bluff=True, reward="win"),
    ],
    ids=["2p-hand", "4p-match", "3p-bluff-hand", "2p-bluff-match-win"],
)
def test_step_state_is_pure_through_deals_hand_ends_restarts_and_given_decks(settings):
    """Purity by construction: along whole games started from given decks and dealers, every
    step (face-up and face-down plays, answers, deals, hand ends, new hands, episode restarts)
    leaves every tensor of its input state bit for bit unchanged, also when its successor is
    stepped in turn, and leaves ``engine.state`` alone; stepping the same state twice gives
    identical states and outputs."""
    batch = 8
    engine = BatchedPisti(batch, seed=7, **settings)
    rng = random.Random(3)
    decks = []
    for _ in range(batch):
        deck = list(range(52))
        rng.shuffle(deck)
        while all(c % 13 == JACK for c in deck[:4]):  # not a void deal (R7)
            rng.shuffle(deck)
        decks.append(deck)
    out = engine.reset(decks=decks, dealers=[b % settings["num_players"] for b in range(batch)])
    state = engine.state
    rngs = [random.Random(i) for i in range(batch)]
    seen = Counter()
    previous = None
    for _ in range(300):
        actions = random_legal(out.action_mask, rngs)
        seen.update(action_kind(int(a)) for a in actions)
        before = {f.name: getattr(state, f.name).clone() for f in dataclasses.fields(BatchState)}
        new, out = engine.step_state(state, actions)
        again, out_again = engine.step_state(state, actions)
        assert engine.state is not new and engine.state is not again
        for f in dataclasses.fields(BatchState):
            assert torch.equal(getattr(state, f.name), before[f.name]), f.name
            assert torch.equal(getattr(new, f.name), getattr(again, f.name)), f.name
        if previous is not None:  # stepping a state's successor leaves the state alone too
            for f in dataclasses.fields(BatchState):
                assert torch.equal(getattr(previous[0], f.name), previous[1][f.name]), f.name
        for f in dataclasses.fields(BatchStep):
            x, y = getattr(out, f.name), getattr(out_again, f.name)
            if isinstance(x, dict):
                assert x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x), f.name
            else:
                assert torch.equal(x, y), f.name
        seen["deal"] += int(((new.stock_pos > state.stock_pos) & (new.hands_completed == state.hands_completed)).sum())
        seen["hand over"] += int(out.hand_over.sum())
        seen["next hand of a match"] += int((out.hand_over & ~out.done).sum())
        seen["episode restart"] += int(out.done.sum())
        previous = (state, before)
        state = new
    assert seen["deal"] > 0 and seen["hand over"] > 0, seen
    if settings["target"] is None:
        assert seen["episode restart"] > 0, seen
    else:
        assert seen["next hand of a match"] > 0, seen
    if settings.get("bluff"):
        assert {"face down", "believe", "challenge"} <= set(seen), seen


def test_given_decks_and_dealers_are_dealt_as_in_the_python_engine():
    rng = random.Random(4)
    decks = []
    for _ in range(3):
        d = list(range(52))
        rng.shuffle(d)
        decks.append([pisti_env.card_to_text(c) for c in d])
    engine = BatchedPisti(3, seed=0, num_players=3, target=None)
    out = engine.reset(decks=decks, dealers=[0, 1, 2])
    for b in range(3):
        env = pisti_env.raw_env(num_players=3, target=None)
        env.reset(options={"deck": decks[b], "dealer": b})
        assert engine.state.deck[b].tolist() == env.unwrapped.game.deck
        assert env.observe(env.agent_selection)["observation"].tobytes() == out.observation[b].numpy().tobytes()


def test_observation_out_is_written_in_place():
    engine = BatchedPisti(5, seed=0, num_players=2, target=None)
    buf = torch.full((5, engine.observation_size), -1.0)
    out = engine.reset(observation_out=buf)
    assert out.observation.data_ptr() == buf.data_ptr()
    plain = BatchedPisti(5, seed=0, num_players=2, target=None).reset()
    assert torch.equal(buf, plain.observation)
    with pytest.raises(ValueError, match=r"observation_out must be a float32 tensor of shape \(5, 556\)"):
        engine.step(out.action_mask.int().argmax(1), observation_out=torch.zeros(5, 10))


# --------------------------------------------------------------------------- bad input


def test_illegal_action_raises_and_changes_nothing():
    engine = BatchedPisti(4, seed=0, num_players=2, target=None)
    out = engine.reset()
    before = engine.state
    actions = out.action_mask.int().argmax(1)
    bad = actions.clone()
    bad[2] = int(torch.nonzero(~out.action_mask[2])[0])
    with pytest.raises(ValueError, match=r"illegal action \d+ in game 2: seat \d may play only \[\d+, \d+, \d+, \d+\]"):
        engine.step(bad)
    assert engine.state is before
    with pytest.raises(ValueError, match="illegal action 52 in game 0"):
        engine.step(torch.tensor([52, 0, 0, 0]))
    with pytest.raises(ValueError, match="illegal action -1 in game 1"):
        engine.step(torch.cat([actions[:1], torch.tensor([-1]), actions[2:]]))
    with pytest.raises(ValueError, match=r"actions must have shape \(4,\)"):
        engine.step(actions[:3])
    with pytest.raises(TypeError, match="integer tensor of card ids"):
        engine.step(actions.float())
    assert engine.state is before
    engine.step(actions)  # and the engine still plays


def claim_pending(engine: BatchedPisti, seed: int = 0) -> BatchStep:
    """Random legal play, game 0 claiming a pişti as soon as it may, until game 0 has a claim
    waiting for its answer."""
    rng = random.Random(seed)
    out = engine.reset()
    for _ in range(2000):
        if int(engine.state.claimant[0]) >= 0:
            return out
        choice = [rng.choice(np.flatnonzero(m.numpy()).tolist()) for m in out.action_mask]
        if out.action_mask[0, FACE_DOWN:BELIEVE].any():
            choice[0] = FACE_DOWN + int(np.flatnonzero(out.action_mask[0, FACE_DOWN:BELIEVE].numpy())[0])
        out = engine.step(torch.tensor(choice))
    raise AssertionError("no claim in 2000 steps")


def test_R29_illegal_bluff_actions_raise_and_change_nothing():
    engine = BatchedPisti(3, seed=1, num_players=2, target=None, bluff=True)
    out = engine.reset()
    assert out.action_mask.shape == (3, 106)
    assert not out.action_mask[:, FACE_DOWN:].any()  # four cards on the table: no claim (R29)
    before = engine.state
    good = random_legal(out.action_mask, [random.Random(i) for i in range(3)])
    for bad, message in [
        (FACE_DOWN + int(good[1]), r"illegal action \d+ in game 1: seat \d may take only \[\d+, \d+, \d+, \d+\] \(R29"),
        (BELIEVE, "illegal action 104 in game 1"),
        (CHALLENGE, "illegal action 105 in game 1"),
        (106, "illegal action 106 in game 1"),
        (-1, "illegal action -1 in game 1"),
    ]:
        actions = good.clone()
        actions[1] = bad
        with pytest.raises(ValueError, match=message):
            engine.step(actions)
        assert engine.state is before
    with pytest.raises(TypeError, match="integer tensor of action ids"):
        engine.step(good.float())

    out = claim_pending(engine)  # game 0 must answer: only 104 and 105
    assert torch.nonzero(out.action_mask[0]).squeeze(1).tolist() == [BELIEVE, CHALLENGE]
    before = engine.state
    seat = int(engine.state.turn[0])
    in_hand = (engine.state.where[0] == locations.HAND + seat).nonzero().squeeze(1).tolist()
    held = in_hand[0] if in_hand else 0  # a card it holds (none left after a claim on the last card)
    actions = random_legal(out.action_mask, [random.Random(i) for i in range(3)])
    for bad in (held, FACE_DOWN + held):
        actions[0] = bad
        with pytest.raises(ValueError, match=rf"illegal action {bad} in game 0: seat \d may take only \[104, 105\]"):
            engine.step(actions)
        assert engine.state is before
    actions[0] = CHALLENGE
    engine.step(actions)  # and the engine still plays
    assert int(engine.state.claimant[0]) == -1


def test_R29_hidden_information_covers_what_the_seat_cannot_see_face_down_cards_included():
    """R30–R31 with the bluff variant: n + 2 categories; together they mark exactly the cards
    the seat's observation marks unseen (another seat's face-down cards in the last category,
    a partner's believed ones too); the sizes without the variant stay 52 * (n + 1)."""
    engine = BatchedPisti(48, seed=5, num_players=4, target=None, bluff=True)
    n = engine.num_players
    assert engine.hidden_information_size == 52 * (n + 2)
    assert BatchedPisti(2, num_players=4).hidden_information_size == 52 * (n + 1)
    unseen_feature = engine.encoder.layout["unseen"]
    out = engine.reset()
    rngs = [random.Random(i) for i in range(48)]
    face_down_hidden = 0
    for _ in range(120):
        state = engine.state
        for seat in range(n):
            seats = torch.full((48,), seat)
            hidden = engine.hidden_information(state, seats).view(48, 52, n + 2)
            unseen = engine.observe(state, seats)[:, unseen_feature]
            assert torch.equal(hidden.sum(2), unseen), seat
            where = state.where
            face_down = ((where >= locations.PILE_DOWN) & (where < locations.PILE_DOWN + 6)) | (
                (where >= locations.CAPT_DOWN) & (where < locations.CAPT_DOWN + 6)
            )
            own = (where == locations.PILE_DOWN + seat) | (where == locations.CAPT_DOWN + seat)
            others_face_down = (face_down & ~own).float()
            assert torch.equal(hidden[:, :, n + 1], others_face_down), seat
            face_down_hidden += int(others_face_down.sum())
        out = engine.step(random_legal(out.action_mask, rngs))
    assert face_down_hidden > 0


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(num_players=5, decks=2), ValueError, "supports one deck"),
        (dict(bluff_jack_double=True), ValueError, "needs bluff=True"),
        (dict(num_players=7), ValueError, "num_players"),
        (dict(reward="score"), ValueError, "reward must be 'diff' or 'win'"),
        (dict(seed=-1), ValueError, r"seed must be an int >= 0, got -1"),
        (dict(colour="red"), ValueError, "unknown setting"),
    ],
)
def test_bad_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        BatchedPisti(4, **kwargs)


def test_bad_batch_size_decks_and_dealers():
    with pytest.raises(ValueError, match=r"batch_size must be an int >= 1, got 0"):
        BatchedPisti(0)
    engine = BatchedPisti(2, num_players=2)
    good = [list(range(52)), list(range(51, -1, -1))]
    with pytest.raises(ValueError, match="one deck per game"):
        engine.reset(decks=good[:1])
    with pytest.raises(ValueError, match="deck of game 1 must hold 52 cards"):
        engine.reset(decks=[good[0], good[1][:51]])
    with pytest.raises(ValueError, match="deck of game 0 must hold every card exactly once"):
        engine.reset(decks=[[0] * 52, good[1]])
    jacks_first = ["JC", "JD", "JH", "JS"] + [pisti_env.card_to_text(c) for c in range(52) if c % 13 != 10]
    with pytest.raises(ValueError, match="four Jacks to the table"):
        engine.reset(decks=[good[0], jacks_first])
    with pytest.raises(ValueError, match="dealer of game 1 must be a seat 0..1"):
        engine.reset(decks=good, dealers=[0, 2])
    with pytest.raises(ValueError, match="call reset"):
        BatchedPisti(2).step(torch.zeros(2, dtype=torch.int64))


def test_python_engine_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, pisti_env; pisti_env.env(); assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
@pytest.mark.parametrize("bluff", [False, True])
def test_cuda_matches_cpu(bluff):
    cpu = BatchedPisti(64, seed=9, num_players=4, target=61, bluff=bluff)
    gpu = BatchedPisti(64, seed=9, num_players=4, target=61, bluff=bluff, device="cuda")
    a, b = cpu.reset(), gpu.reset()
    for _ in range(300):
        assert torch.equal(a.observation, b.observation.cpu())
        assert torch.equal(a.rewards, b.rewards.cpu())
        actions = a.action_mask.int().argmax(1)
        a, b = cpu.step(actions), gpu.step(actions.cuda())


def test_batch_state_replace_copies_and_refuses_unknown_fields():
    """``BatchState.replace`` (its own fast copy) behaves as ``dataclasses.replace``: a new state
    with the changed fields, the rest shared, the original untouched; an unknown name raises."""
    engine = BatchedPisti(4, seed=1, num_players=2, target=None)
    engine.reset()
    state = engine.state
    turn = state.turn + 1
    copy = state.replace(turn=turn)
    assert copy is not state and type(copy) is BatchState
    assert copy.turn is turn and state.turn is not turn
    assert all(getattr(copy, f.name) is getattr(state, f.name) for f in dataclasses.fields(BatchState) if f.name != "turn")
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.turn = state.turn
    with pytest.raises(TypeError, match="no field 'turns'"):
        state.replace(turns=turn)
