"""``expert``'s batched form (pisti_env.agents.expert_batched): the same tie set of best cards
as the Python player, decision by decision, read from the seat's observation only (R30–R31).

The decisions come from games played partly by ``expert`` itself (so its own kind of positions)
and partly at random (so every kind of position), on 2, 3 and 4 players, partnerships (R4),
match play and the pişti variants (R14, R16, R17); the two-player endgames (R18, R19, R21) that
the Python player solves exactly are among them and are checked to be.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, has_batched_form, make_player
from pisti_env.agents.expert import ExpertAgent
from pisti_env.agents.expert_batched import BatchedExpert
from pisti_env.rules.cards import NUM_CARD_IDS
from pisti_env.views.observation import ObservationEncoder

CASES = {
    "2p hand": dict(num_players=2, target=None),
    "2p match": dict(num_players=2, target=151),
    "2p variants": dict(num_players=2, target=None, double_pisti=10, last_card_pisti=False, ten_diamonds_pisti_bonus=3),
    "3p": dict(num_players=3, target=None),
    "4p partners": dict(num_players=4, partnerships=True, target=None),
    "4p solo": dict(num_players=4, partnerships=False, target=None, ten_diamonds_pisti_bonus=3),
}


def decisions(settings, games: int, seed: int) -> list[tuple[Game, int, list[int]]]:
    """(game copy, seat, legal) at every decision of ``games`` hands, half of the moves by an
    expert and half at random."""
    rng = random.Random(seed)
    expert = ExpertAgent(seed=seed)
    found = []
    for g in range(games):
        game = Game(settings, seed=seed * 1000 + g)
        hands = 0
        while not game.done and hands < 2:
            seat, legal = game.turn, game.legal_actions()
            found.append((game.clone(), seat, legal))
            before = game.hands_completed
            game.step(expert.act(SeatView(game, seat)) if rng.random() < 0.5 else rng.choice(legal))
            hands += game.hands_completed != before
    return found


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_expert_lists_the_python_experts_best_cards(name):
    settings = make_settings(**CASES[name])
    found = decisions(settings, games=40, seed=len(name))
    python = ExpertAgent(seed=0)
    encoder = ObservationEncoder(settings)
    observation = torch.from_numpy(np.stack([encoder.encode(game, seat) for game, seat, _ in found]))
    mask = torch.zeros(len(found), NUM_CARD_IDS, dtype=torch.bool)
    for i, (_, _, legal) in enumerate(found):
        mask[i, legal] = True
    best = BatchedExpert(settings).best_cards(observation, mask)
    endgames = ties = 0
    for i, (game, seat, legal) in enumerate(found):
        view = SeatView(game, seat)
        want = python.best_actions(view, legal)
        assert best[i].nonzero().squeeze(1).tolist() == want, (name, i, legal)
        ties += len(want) > 1
        endgames += settings.num_players == 2 and view.stock_size == 0 and view.pile_hidden == 0
    assert len(found) > 1500 and ties > 40
    if settings.num_players == 2:
        assert endgames > 100  # the exact endgame's rows are among them


def test_batched_expert_draws_among_its_best_cards_reproducibly():
    settings = make_settings(num_players=2, target=None)
    found = decisions(settings, games=4, seed=3)
    encoder = ObservationEncoder(settings)
    observation = torch.from_numpy(np.stack([encoder.encode(game, seat) for game, seat, _ in found]))
    mask = torch.zeros(len(found), NUM_CARD_IDS, dtype=torch.bool)
    for i, (_, _, legal) in enumerate(found):
        mask[i, legal] = True
    player = make_player("expert", settings=settings)
    assert has_batched_form(player)
    first = player.act_batch(observation, mask, torch.Generator().manual_seed(1))
    best = player.batched_form().best_cards(observation, mask)
    assert bool(best[torch.arange(len(found)), first].all())
    assert torch.equal(player.act_batch(observation, mask, torch.Generator().manual_seed(1)), first)
    tied = best.sum(1) > 1
    draws = torch.stack([player.act_batch(observation, mask, torch.Generator().manual_seed(s)) for s in range(8)])
    assert bool((draws[:, tied] != draws[:1, tied]).any())  # ties are drawn, not always the first card


@pytest.mark.parametrize("kwargs", [dict(bluff=True), dict(show_stock_bottom=True), dict(num_players=5, decks=2)])
def test_expert_has_a_batched_form_only_in_the_games_it_covers(kwargs):
    settings = make_settings(target=None, **{"num_players": 2, **kwargs})
    player = make_player("expert", settings=settings)
    assert not has_batched_form(player)
    assert player.act(SeatView(Game(settings, seed=0), Game(settings, seed=0).turn)) is not None  # still plays
    with pytest.raises(ValueError, match="batched form"):
        player.batched_form()
    with pytest.raises(ValueError, match="bluff"):
        BatchedExpert(settings)
    assert not has_batched_form(make_player("expert"))  # no settings, no batched form
