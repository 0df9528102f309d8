"""Scripted players behind one interface: ``act(view) -> action id`` (plus ``reset(seed)``);
an action is a card id, or with the bluff variant (R29) a face-down play or an answer.

* :class:`SeatView` — what one seat may know (R30–R31), the input of every player;
  :func:`view_for_agent` builds one inside the PettingZoo environment.
* ``random``, ``greedy``, ``expert``, ``pimc`` — the baselines; :func:`make_agent` builds one
  from a name or spec such as ``"pimc:n=32,rollout=random"``. Each also plays the bluff
  variant (R29); :mod:`~pisti_env.agents.bluffing` holds the card-counting estimates.

Nothing here imports torch.
"""

from .base import Agent, Player
from .expert import ExpertAgent
from .greedy import GreedyAgent, greedy_card
from .pimc import PimcAgent
from .random_agent import RandomAgent
from .registry import AGENTS, agent_names, make_agent, parse_agent_spec
from .view import SeatView, view_for_agent

__all__ = [
    "Agent", "Player", "SeatView", "view_for_agent", "RandomAgent", "GreedyAgent", "ExpertAgent", "PimcAgent",
    "greedy_card", "AGENTS", "agent_names", "make_agent", "parse_agent_spec",
]
