"""The one player protocol: scripted baselines, trained checkpoints, search rollouts and the
trainer's pool opponents all implement it.

A [`Player`][pisti_env.agents.base.Player] has a ``name``, ``reset(seed)`` and ``act(view) -> action id`` (a card id,
R2; with the bluff variant also a face-down play or an answer, R29): the harness, the AEC loop,
search rollouts and the tests never care which kind they hold. ``view`` is a
[`SeatView`][pisti_env.SeatView]: everything the seat may know and nothing else
(R30–R31). A player that wants the environment's observation vector calls
``view.observation()``.

Some players also have a batched form (`BatchedPlayer`, see `has_batched_form`):
``act_batch(observation, mask, generator)`` chooses for a whole batch of the batched engine's
observations and masks at once (the trainer's pool opponents are these). ``random``, ``greedy``
and trained checkpoints have one; torch is imported only when it is used.

Every scripted player draws its random choices from its own ``random.Random``, reseeded by
[`Agent.reset`][pisti_env.agents.base.Agent.reset], so the same seed gives the same play.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..views.view import SeatView

if TYPE_CHECKING:  # torch is only needed by the batched forms, and imported there
    import torch


@runtime_checkable
class Player(Protocol):
    """What the harness, the AEC loop, search and `pisti-benchmark` need from any player: a
    `name`, `reset(seed)` before each game and `act(view)` for each decision. It is a protocol:
    any object with these three is a player, no base class needed
    (`pisti_env.agents.Agent` is only the scripted players' base).

    Attributes:
        name: what the player calls itself (reports name a player by the spec it was given).
    """

    name: str

    def act(self, view: SeatView) -> int:
        """The action to take, one of `view.legal_actions`: a card id (R2) played face up, or
        with the bluff variant (R29) `52 + card id` face down, `104` believe, `105` challenge.

        Args:
            view: what the seat to move may know ([`SeatView`][pisti_env.views.view.SeatView]),
                built for this decision.
        """
        ...

    def reset(self, seed: int | None = None) -> None:
        """Prepare for a new game; reseed the player's randomness when ``seed`` is given."""
        ...


@runtime_checkable
class BatchedPlayer(Player, Protocol):
    """A player that also chooses for a batch of games at once, on the batched engine's
    tensors: the harness and `pisti-benchmark` play a player with `act_batch` on the batched
    engine (its single hands; matches and search still call `act`), so both forms should
    choose alike."""

    def act_batch(self, observation: "torch.Tensor", mask: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """One legal action per row.

        Args:
            observation: float32, `(B, observation size)`: per game, the seat to move's
                observation vector (the layout of
                [`ObservationLayout`][pisti_env.views.observation.ObservationLayout], the one
                `pisti_v0` gives).
            mask: bool, `(B, actions)`: per game, the legal actions (52, or 106 with the bluff
                variant, R29).
            generator: the `torch.Generator` to draw any random choice from (tie-breaks,
                sampling), so a seeded evaluation replays alike.

        Returns:
            An integer tensor of shape `(B,)`, a legal action id per row, on `mask`'s device.
        """
        ...


@runtime_checkable
class StatePlayer(Player, Protocol):
    """A player that chooses for games of the batched engine from the engine's state (through
    the Python engine, `PythonPlayerBatched`)."""

    def act_state(self, state: Any, rows: "torch.Tensor", generator: "torch.Generator") -> "torch.Tensor":
        """One legal action for the seat to move in each game ``rows`` of ``state`` (a
        [`BatchState`][pisti_env.batched.state.BatchState]); ``generator`` seeds the random choices."""
        ...


def has_batched_form(player: Any) -> bool:
    """Whether ``player`` has a batched form (`BatchedPlayer.act_batch`)."""
    return callable(getattr(player, "act_batch", None))


def needs_engine_state(player: Any) -> bool:
    """Whether ``player`` acts on the batched engine's state (`StatePlayer.act_state`)
    rather than on its observations."""
    return callable(getattr(player, "act_state", None))


class Agent:
    """Base class of the scripted players.

    Args:
        seed: seeds the player's own ``random.Random`` (tie-breaks, sampling). ``None`` draws
            fresh entropy, so pass a seed for reproducible play.

    Subclasses implement [`choose`][pisti_env.agents.base.Agent.choose]; [`act`][pisti_env.agents.base.Agent.act] checks the view first.
    """

    name = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the player's generator with ``seed`` (``None`` leaves it as it is)."""
        if seed is not None:
            self.rng.seed(seed)

    def act(self, view: SeatView) -> int:
        """The action this player takes, always one of ``view.legal_actions``.

        Raises ``TypeError`` if ``view`` is not a [`SeatView`][pisti_env.SeatView] (inside the AEC env use
        `view_for_agent`) and ``ValueError`` if it is not the
        view's seat's turn.
        """
        if not isinstance(view, SeatView):
            raise TypeError(
                f"{type(self).__name__}.act expects a pisti_env.agents.SeatView, got {type(view).__name__}; "
                "build one with SeatView(game, seat) or view_for_agent(env, agent)"
            )
        legal = view.legal_actions
        if not legal:
            raise ValueError(
                f"seat {view.seat} has no legal action: it is seat {view.current_seat}'s turn"
                + (" and the game is over" if view.done else "")
            )
        if len(legal) == 1:
            return legal[0]
        return self.choose(view, legal)

    def choose(self, view: SeatView, legal: list[int]) -> int:
        """Pick one of ``legal`` (two or more action ids) for the seat of ``view``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
