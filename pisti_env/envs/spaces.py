"""The observation and action spaces of a Pişti environment, built in one place.

``pisti_v0`` (every agent) and the single-agent Gymnasium env (the learner) share them: the
observation is ``{"observation": Box(float32, layout bounds), "action_mask": Box(0, 1, int8)}``
(`pisti_env.views.observation` gives the layout) and the action space is ``Discrete(52)``, or
``Discrete(106)`` with the bluff variant (R29).

With ``observation_format="flat"`` (`OBSERVATION_FORMATS`) the observation space is that
Dict's ``"observation"`` Box alone, the space for wrappers that only take a Box (SuperSuit's);
the envs then give the legal-action mask in the info (``info["action_mask"]``), as PettingZoo
documents for envs whose observation is not a Dict.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..views.observation import ObservationLayout
from ..rules.settings import Settings

# "dict": {"observation": vector, "action_mask": mask} (PettingZoo's classic games, the default);
# "flat": the vector alone, the mask in the info.
OBSERVATION_FORMATS = ("dict", "flat")


def check_observation_format(observation_format: Any) -> str:
    """``observation_format`` checked: one of `OBSERVATION_FORMATS`, else a ``ValueError``
    naming the allowed values."""
    if not (isinstance(observation_format, str) and observation_format in OBSERVATION_FORMATS):
        raise ValueError(f"observation_format must be one of {OBSERVATION_FORMATS}, got {observation_format!r}")
    return observation_format


def vector_space(layout: ObservationLayout) -> spaces.Box:
    """The Box of one seat's observation vector (the encoder's layout and bounds)."""
    return spaces.Box(0.0, layout.high, shape=(layout.size,), dtype=np.float32)


def mask_space(settings: Settings) -> spaces.Box:
    """The Box of one seat's legal-action mask: ``int8`` 0/1, one entry per action."""
    return spaces.Box(0, 1, shape=(settings.num_actions,), dtype=np.int8)


def observation_space(settings: Settings, layout: ObservationLayout, observation_format: str = "dict") -> spaces.Space:
    """One seat's observation space.

    Args:
        settings: the game settings (the mask's length: the number of actions).
        layout: the encoder's layout (the vector's size and bounds).
        observation_format: ``"dict"`` (default): the Dict of the encoder's vector and the
            legal-action mask; ``"flat"``: the vector's Box alone.
    """
    if check_observation_format(observation_format) == "flat":
        return vector_space(layout)
    return spaces.Dict({"observation": vector_space(layout), "action_mask": mask_space(settings)})


def action_space(settings: Settings) -> spaces.Discrete:
    """``Discrete(settings.num_actions)``: card ids, and with bluff (R29) face-down plays and answers."""
    return spaces.Discrete(settings.num_actions)
