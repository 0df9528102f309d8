"""``bluffer`` and ``challenger`` (issue 13): the fixed players that stress the bluff variant
(R29). bluffer claims face down whenever allowed, with any card; challenger never claims and
challenges every claim; both play greedy otherwise and have a batched form that decides alike."""

from __future__ import annotations

import random

import pytest

import pisti_env
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.agents import SeatView, has_batched_form, make_player
from pisti_env.agents.bluffer import BlufferAgent
from pisti_env.rules.cards import RANK


def _bluff(num_players: int = 2, **kw):
    return pisti_env.make_settings(num_players=num_players, target=None, bluff=True, **kw)


def _positions(settings, players, seeds, rng_seed=0):
    """Plays games (seat 0 = ``players[0]``, the others by the rest, cycling; ``None`` = a
    uniformly random legal action) and yields ``(game, seat, view, action)`` before each step."""
    rng = random.Random(rng_seed)
    for seed in seeds:
        game = pisti_env.Game(settings, seed=seed)
        while not game.done:
            seat = game.turn
            view = SeatView(game, seat)
            player = players[seat % len(players)]
            action = rng.choice(game.legal_actions()) if player is None else player.act(view)
            yield game, seat, view, action
            game.step(action)


def _is_down(action: int) -> bool:
    return FACE_DOWN <= action < BELIEVE


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_r29_bluffer_claims_on_every_allowed_lone_card_and_bluffs_with_any_card(num_players):
    settings = _bluff(num_players)
    bluffer = make_player("bluffer", seed=1, settings=settings)
    allowed = claims = bluffs = 0
    for game, seat, view, action in _positions(settings, [bluffer, None], range(30)):
        if seat % 2 or len(view.legal_actions) < 2:
            continue
        if any(_is_down(a) for a in view.legal_actions):
            allowed += 1
            assert _is_down(action), (game.history, action)
            claims += 1
            bluffs += RANK[action - FACE_DOWN] != RANK[view.pile_top]
        else:
            assert not _is_down(action)
    assert allowed > 50 and claims == allowed
    assert bluffs > claims // 2  # the card is any card: mostly a bluff


@pytest.mark.parametrize("num_players", [2, 4])
def test_r29_bluffer_card_true_claims_only_with_the_lone_cards_rank_and_always_then(num_players):
    """card=honest is the honest claimer: face down only with a card of the lone card's rank (a
    Jack on a lone non-Jack is a bluff, R29), and always when it holds one."""
    settings = _bluff(num_players)
    honest = make_player("bluffer:card=honest", seed=1, settings=settings)
    claims = declined = 0
    for game, seat, view, action in _positions(settings, [honest, None], range(40)):
        if seat % 2 or not any(_is_down(a) for a in view.legal_actions):
            continue
        holds_rank = any(RANK[c] == RANK[view.pile_top] for c in view.hand)
        assert _is_down(action) == holds_rank, (game.history, action)
        if _is_down(action):
            claims += 1
            assert RANK[action - FACE_DOWN] == RANK[view.pile_top]
        else:
            declined += 1
    assert claims > 10 and declined > 10


def test_r29_bluffer_with_claim_zero_never_claims_and_partial_rates_follow_the_option():
    settings = _bluff()
    never = make_player("bluffer:claim=0", seed=1, settings=settings)
    for _, seat, view, action in _positions(settings, [never, None], range(30)):
        if seat == 0:
            assert not _is_down(action)
    half = make_player("bluffer:claim=0.5", seed=1, settings=settings)
    allowed = claims = 0
    for _, seat, view, action in _positions(settings, [half, None], range(60)):
        if seat == 0 and any(_is_down(a) for a in view.legal_actions) and len(view.legal_actions) > 1:
            allowed += 1
            claims += _is_down(action)
    assert allowed > 100 and 0.35 < claims / allowed < 0.65


@pytest.mark.parametrize(
    "spec, low, high",
    [("bluffer", 0.0, 0.0), ("bluffer:answer=believe", 0.0, 0.0), ("bluffer:answer=challenge", 1.0, 1.0),
     ("bluffer:answer=0.3", 0.15, 0.45), ("challenger", 1.0, 1.0)],
)
def test_r29_answers_follow_the_option(spec, low, high):
    settings = _bluff()
    player = make_player(spec, seed=2, settings=settings)
    claimant = make_player("bluffer", seed=3, settings=settings)
    answers = challenges = 0
    for _, seat, view, action in _positions(settings, [player, claimant], range(80)):
        if seat == 0 and view.legal_actions[0] >= BELIEVE:
            answers += 1
            challenges += action == CHALLENGE
    assert answers > 50 and low <= challenges / answers <= high


def test_r29_challenger_never_claims_always_challenges_and_is_greedy_otherwise():
    settings = _bluff()
    challenger = make_player("challenger", seed=4, settings=settings)
    assert challenger.name == "challenger" and challenger.claim == 0.0 and challenger.challenge == 1.0
    greedy = make_player("greedy", seed=4, settings=settings)
    answers = 0
    claimant = make_player("bluffer", seed=5, settings=settings)
    for game, seat, view, action in _positions(settings, [challenger, claimant], range(30)):
        if seat:
            continue
        assert not _is_down(action)
        if view.legal_actions[0] >= BELIEVE:
            answers += 1
            assert action == CHALLENGE
        elif len(view.legal_actions) > 1:
            greedy.rng.seed(0)
            challenger.rng.seed(0)  # same tie-breaks: the very same face-up card as greedy
            assert challenger.act(view) == greedy.act(view)
    assert answers > 50


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_r29_never_illegal_in_many_bluff_games(num_players):
    settings = _bluff(num_players, bluff_jack_double=True)
    specs = ["bluffer", "challenger", "bluffer:claim=0.5,answer=0.5,card=random", "bluffer:answer=challenge"]
    players = [make_player(s, seed=i, settings=settings) for i, s in enumerate(specs)] + [None]
    rng = random.Random(num_players)
    for seed in range(20):
        seating = [rng.choice(players) for _ in range(num_players)]
        steps = 0
        for game, seat, view, action in _positions(settings, seating, [seed], rng_seed=seed):
            assert action in view.legal_actions, (seed, game.history, action)
            steps += 1
        assert game.done and steps > 0


@pytest.mark.parametrize("num_players", [2, 4])
def test_r29_batched_form_decides_like_the_python_one(num_players):
    """On many positions of random bluff games: where the choice is deterministic up to
    tie-breaks (claim 0 or 1, a fixed answer), the batched choice is one the Python form makes
    with some tie-break; with card=random or rates in between, it is a legal choice of the same
    kind (R29). The batched form reads only the observation and the mask (R30, R31)."""
    import torch

    settings = _bluff(num_players)
    encoder = pisti_env.ObservationEncoder(settings)
    gen = torch.Generator().manual_seed(0)
    specs = ["bluffer", "challenger", "bluffer:answer=challenge", "bluffer:card=honest",
             "bluffer:card=random,claim=0.5,answer=0.5"]
    players = {s: make_player(s, seed=0, settings=settings) for s in specs}
    assert all(has_batched_form(p) for p in players.values())
    checked = claims = answers = 0
    for game, seat, view, _ in _positions(settings, [None], range(25)):
        legal = view.legal_actions
        obs = torch.from_numpy(encoder.encode(game, seat))[None]
        mask = torch.zeros(1, settings.num_actions, dtype=torch.bool)
        mask[0, legal] = True
        for spec, player in players.items():
            choice = int(player.act_batch(obs, mask, gen))
            assert choice in legal, (spec, game.history, choice)
            if "card=random" in spec:
                continue
            possible = set()
            for k in range(12):
                player.rng.seed(k)
                possible.add(player.act(view))
            assert choice in possible, (spec, game.history, choice, possible)
        checked += 1
        claims += any(_is_down(a) for a in legal)
        answers += legal[0] >= BELIEVE
    assert checked > 500 and claims > 50 and answers > 20


def test_batched_form_in_the_trainer_pool():
    import torch

    from training.trainer.pool import OpponentPool

    settings = _bluff()
    OpponentPool(settings, ("bluffer", "challenger", "bluffer:claim=0.5,answer=0.25"), 4, 5.0, torch.device("cpu"))
    with pytest.raises(ValueError, match="settings"):
        make_player("bluffer").act_batch(torch.zeros(1, 1), torch.ones(1, 106, dtype=torch.bool), torch.Generator())


@pytest.mark.parametrize(
    "spec, error, match",
    [
        ("bluffer:claim=2", ValueError, r"claim must be a probability in \[0, 1\]"),
        ("bluffer:claim=-0.1", ValueError, "claim must be"),
        ("bluffer:claim=often", TypeError, "claim must be"),
        ("bluffer:claim=true", TypeError, "claim must be"),
        ("bluffer:answer=maybe", ValueError, r"answer must be one of \['believe', 'challenge'\]"),
        ("bluffer:answer=1.5", ValueError, "probability of challenging"),
        ("bluffer:answer=false", TypeError, "answer must be"),
        ("bluffer:card=best", ValueError, r"card must be one of \['cheapest', 'random', 'honest'\]"),
        ("challenger:colour=red", ValueError, "unknown option"),
    ],
)
def test_bad_options_are_refused_naming_the_allowed_values(spec, error, match):
    with pytest.raises(error, match=match):
        make_player(spec)


def test_reproducible_with_a_seed():
    settings = _bluff(3)

    def play(seed):
        players = [make_player("bluffer:claim=0.5,answer=0.5,card=random", seed=seed, settings=settings),
                   make_player("challenger", seed=seed + 1, settings=settings), None]
        return [a for *_, a in _positions(settings, players, range(5), rng_seed=9)]

    assert play(1) == play(1)
    assert play(1) != play(2)
    assert repr(make_player("bluffer:answer=0.25")) == "BlufferAgent(claim=1.0, answer=0.25, card='cheapest')"
    assert isinstance(make_player("challenger"), BlufferAgent)


def test_the_trainer_trains_against_them_on_the_batched_engine(tmp_path):
    """A couple of PPO updates with only bluffer and challenger in the opponent pool (the
    batched engine, bluff variant): their batched forms act legally there (R29)."""
    import torch

    from helpers import train_config
    from training.trainer.train import Trainer

    config = train_config(**dict(
        num_envs=32, rollout_steps=32, total_steps=32 * 32 * 2, target=None, bluff=True, self_play_share=0.0,
        baselines=("bluffer", "challenger:answer=0.5"), eval_every=0, checkpoint_every=0, torch_threads=1,
        out_dir=str(tmp_path / "run"),
    ))
    torch.manual_seed(0)
    trainer = Trainer(config)
    for _ in range(trainer.num_updates):
        trainer.train_update()
    bluffer, challenger = trainer.pool.entries[:2]
    assert (bluffer.name, challenger.name) == ("bluffer", "challenger:answer=0.5")
    assert bluffer.games > 0 and challenger.games > 0
