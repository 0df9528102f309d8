"""A trained checkpoint as a player: [`CheckpointPlayer`][pisti_env.policies.player.CheckpointPlayer] and [`load_policy`][pisti_env.policies.loader.load_policy] live in
`pisti_env.policies` (``player``, ``loader``), so that ``pisti_env`` plays a policy without
the trainer; this module re-exports them for code that imports them from here.
"""

from pisti_env.policies.loader import load_policy
from pisti_env.policies.metadata import GAME_DEFINING, MATCH_CONTEXT
from pisti_env.policies.player import CheckpointPlayer

__all__ = ["CheckpointPlayer", "load_policy", "GAME_DEFINING", "MATCH_CONTEXT"]
