"""A trained checkpoint as a player: :class:`CheckpointPlayer` and :func:`load_policy` live in
:mod:`pisti_env.policies` (``player``, ``loader``), so that ``pisti_env`` plays a policy without
the trainer; this module re-exports them for code that imports them from here.
"""

from pisti_env.policies.loader import load_policy
from pisti_env.policies.metadata import GAME_DEFINING, MATCH_CONTEXT
from pisti_env.policies.player import CheckpointPlayer

__all__ = ["CheckpointPlayer", "load_policy", "GAME_DEFINING", "MATCH_CONTEXT"]
