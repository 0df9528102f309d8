"""pisti_env: the Pişti rules engine, the PettingZoo AEC environment ``pisti_v0`` and the
single-agent Gymnasium env ``pisti/Pisti-v0``.

``pisti_env.env(**settings)`` is the wrapped environment, ``pisti_env.raw_env`` the bare one,
[`Game`][pisti_env.game.Game] the rules engine on its own. The players' names are here too:
``pisti_env.make_player("pisti-2p")`` (a shipped policy, a scripted player or a checkpoint,
[`make_player`][pisti_env.agents.registry.make_player]), the
[`Player`][pisti_env.agents.base.Player] protocol and the
[`SeatView`][pisti_env.views.view.SeatView] it acts on. Importing this package registers
``gymnasium.make("pisti/Pisti-v0", opponent=..., **settings)`` ([`PistiEnv`][pisti_env.envs.single_agent.PistiEnv]) and
``gymnasium.make_vec("pisti/Pisti-v0", num_envs=N, ...)`` ([`pisti_env.envs.vector.PistiVectorEnv`][pisti_env.envs.vector.PistiVectorEnv],
on the batched engine) and never imports torch.
"""

import gymnasium as _gymnasium

from .rules.cards import card_to_symbol, card_to_text, parse_card, parse_cards
from .envs import pisti_v0  # PettingZoo's convention: from pisti_env import pisti_v0
from .envs.env import env, raw_env
from .game.engine import Game, new_game
from .views.observation import OBS_VERSION, ObservationEncoder, ObservationLayout
from .rules.settings import Settings, make_settings
from .envs.single_agent import PistiEnv
from .agents import BatchedPlayer, Player, SeatView, agent_names, make_player, view_for_agent
from .policies import SHIPPED_POLICIES

GYM_ENV_ID = "pisti/Pisti-v0"
if GYM_ENV_ID not in _gymnasium.registry:  # importing twice (or reloading) registers once
    _gymnasium.register(
        GYM_ENV_ID,
        entry_point="pisti_env.envs.single_agent:PistiEnv",
        vector_entry_point="pisti_env.envs.vector:PistiVectorEnv",  # a string: torch is imported only by make_vec
    )

__all__ = [
    "Game", "new_game", "Settings", "make_settings", "env", "raw_env", "OBS_VERSION",
    "ObservationEncoder", "ObservationLayout", "PistiEnv", "GYM_ENV_ID", "card_to_text", "card_to_symbol", "parse_card", "parse_cards",
    "make_player", "agent_names", "SHIPPED_POLICIES", "Player", "BatchedPlayer", "SeatView", "view_for_agent",
]
__version__ = "0.1.0"
