"""``pisti_env.game.deal.first_deal`` gives the dealer and deck ``Game(settings, seed=...)`` starts
with (R5-R7, R28), for every shape of deal: the batched evaluation starts its games from it."""

from __future__ import annotations

import pytest

from pisti_env import Game, make_settings
from pisti_env.game.deal import first_deal


@pytest.mark.parametrize("options", [
    {}, {"num_players": 3}, {"num_players": 4}, {"num_players": 5, "decks": 2},
    {"show_stock_bottom": True}, {"bluff": True, "num_players": 4, "partnerships": False},
])
def test_R5_R7_R28_first_deal_is_the_games_first_dealer_and_deck(options):
    settings = make_settings(target=None, **options)
    for seed in range(60):
        game = Game(settings, seed=seed)
        dealer, deck = first_deal(settings, seed)
        assert (dealer, deck) == (game.dealer, game.deck), seed
