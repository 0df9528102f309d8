"""Players behind one protocol ([`Player`][pisti_env.agents.base.Player]): ``name``, ``act(view) -> action id`` and
``reset(seed)``; an action is a card id, or with the bluff variant (R29) a face-down play or an
answer. Some also choose for a batch at once (`BatchedPlayer`, `has_batched_form`).

* [`SeatView`][pisti_env.SeatView] — what one seat may know (R30–R31), the input of every player;
  `view_for_agent` builds one inside the PettingZoo environment.
* ``random``, ``greedy``, ``expert``, ``pimc`` — the baselines; `make_agent` builds one
  from a name or spec such as ``"pimc:n=32,rollout=random"``, or a trained checkpoint from its
  path ([`make_player`][pisti_env.agents.make_player] is the one registry; ``make_agent`` its older name). Each also
  plays the bluff variant (R29); `bluffing` holds the card-counting
  estimates.

Importing this package imports no torch; the batched forms and checkpoints import it on use.
"""

from .base import Agent, BatchedPlayer, Player, has_batched_form
from .expert import ExpertAgent
from .greedy import GreedyAgent, greedy_card
from .pimc import PimcAgent
from .random_agent import RandomAgent
from .registry import (
    AGENTS, agent_names, as_batched_player, as_player, checkpoint_location, make_agent, make_player, parse_agent_spec,
)
from ..views.view import SeatView, view_for_agent

__all__ = [
    "Agent", "Player", "BatchedPlayer", "has_batched_form", "SeatView", "view_for_agent", "RandomAgent", "GreedyAgent", "ExpertAgent", "PimcAgent",
    "greedy_card", "AGENTS", "agent_names", "make_agent", "make_player", "as_player", "as_batched_player", "parse_agent_spec",
    "checkpoint_location",
]
