"""pisti_env: the Pişti rules engine and the PettingZoo AEC environment ``pisti_v0``.

``pisti_env.env(**settings)`` is the wrapped environment, ``pisti_env.raw_env`` the bare one,
:class:`Game` the rules engine on its own. Importing this package never imports torch.
"""

from .cards import card_to_symbol, card_to_text, parse_card, parse_cards
from .env import env, raw_env
from .game import Game, new_game
from .observation import OBS_VERSION, ObservationEncoder, ObservationLayout
from .rules import Settings, make_settings

__all__ = [
    "Game", "new_game", "Settings", "make_settings", "env", "raw_env", "OBS_VERSION",
    "ObservationEncoder", "ObservationLayout", "card_to_text", "card_to_symbol", "parse_card", "parse_cards",
]
__version__ = "0.1.0"
