"""Any player on the batched engine, through the Python engine (issue 13): the batched form of
the players that have no native one (``pimc``, ``ismcts``, ``expert`` with bluffs or the shown
stock-bottom card, any player object).

`PythonPlayerBatched` wraps a [`Player`][pisti_env.agents.base.Player] and gives it
``act_state(state, rows, generator)`` (`StatePlayer`): each game
``rows`` of the batched engine's ``state`` becomes a Python [`Game`][pisti_env.game.Game]
(`pisti_env.batched.to_game.to_games`, the one converter), and the player chooses for its
seat to move from that seat's [`SeatView`][pisti_env.SeatView], so it knows exactly
what the seat may know (R30–R31), as at the Python table. It runs at the player's Python speed,
one game after another: a batched player (``act_batch``) is far faster where there is one.

It reads the engine state, not the observations, so only the engine's users that hand it the
state can seat it: the trainer's opponent pool (`training.trainer.pool.OpponentPool`, so
``pisti-train --bluff --baselines expert`` and ``pisti-exploit pimc``).

This module imports torch only when a batch is played.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..rules.settings import Settings
from .base import Player
from ..views.view import SeatView

if TYPE_CHECKING:
    import torch

# Seeds drawn from the caller's generator lie below this (a non-negative int64).
SEED_BOUND = 2**62


class PythonPlayerBatched:
    """``player`` for games of the batched engine, through the Python engine (see the module
    docstring). Still a [`Player`][pisti_env.agents.base.Player] itself: ``act(view)`` is the wrapped player's.

    Args:
        player: any player (``act(view)``, ``reset(seed)``); one object chooses for every game
            of a batch in turn, so a player that remembered one game between its decisions
            (none of the registry's do) would mix the games up.
        settings: the game the batched engine plays (its ``settings``).

    Raises ``TypeError`` for a ``player`` that is not a [`Player`][pisti_env.agents.base.Player] or ``settings`` that are
    not [`Settings`][pisti_env.rules.Settings], and ``ValueError`` for settings the batched engine does not play
    (two decks).
    """

    def __init__(self, player: Player, settings: Settings) -> None:
        if not isinstance(player, Player):
            raise TypeError(f"player must be a pisti_env.agents.Player (name, act, reset), got {type(player).__name__}")
        if not isinstance(settings, Settings):
            raise TypeError(f"settings must be a pisti_env.Settings, got {type(settings).__name__}")
        if settings.decks != 1:
            raise ValueError(f"the batched engine plays one deck (2, 3 or 4 players), got {settings.num_players} players")
        self.player = player
        self.settings = settings
        self.name = getattr(player, "name", type(player).__name__)

    def reset(self, seed: int | None = None) -> None:
        """Reseed the wrapped player (`act_state` reseeds it from its generator anyway)."""
        self.player.reset(seed)

    def act(self, view: SeatView) -> int:
        """The wrapped player's choice at the Python table."""
        return self.player.act(view)

    def act_state(self, state: Any, rows: "torch.Tensor", generator: "torch.Generator | None") -> "torch.Tensor":
        """The wrapped player's action for the seat to move in each game ``rows`` of ``state``.

        Args:
            state: the batched engine's [`BatchState`][pisti_env.batched.state.BatchState].
            rows: (k,) indices of the games to choose for, in the batch.
            generator: the player is reseeded from one draw of it before the games are played
                in the order of ``rows``, so the caller's seed makes the choices reproducible;
                ``None`` keeps the player's own random stream.

        Returns a (k,) int64 tensor on the state's device.
        """
        import torch

        from ..batched.to_game import to_games

        if generator is not None:
            self.player.reset(int(torch.randint(0, SEED_BOUND, (1,), generator=generator, device=generator.device)))
        games = to_games(state, rows, self.settings)
        actions = [self.player.act(SeatView(game, game.turn)) for game in games]
        return torch.tensor(actions, dtype=torch.int64, device=state.code.device)

    def __repr__(self) -> str:
        return f"PythonPlayerBatched({self.player!r})"
