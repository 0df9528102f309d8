"""The observation and action spaces of a Pişti environment, built in one place.

``pisti_v0`` (every agent) and the single-agent Gymnasium env (the learner) share them: the
observation is ``{"observation": Box(float32, layout bounds), "action_mask": Box(0, 1, int8)}``
(:mod:`pisti_env.observation` gives the layout) and the action space is ``Discrete(52)``, or
``Discrete(106)`` with the bluff variant (R29).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .observation import ObservationLayout
from .rules import Settings


def observation_space(settings: Settings, layout: ObservationLayout) -> spaces.Dict:
    """The Dict space of one seat's observation: the encoder's vector and the legal-action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, layout.high, shape=(layout.size,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(settings.num_actions,), dtype=np.int8),
        }
    )


def action_space(settings: Settings) -> spaces.Discrete:
    """``Discrete(settings.num_actions)``: card ids, and with bluff (R29) face-down plays and answers."""
    return spaces.Discrete(settings.num_actions)
