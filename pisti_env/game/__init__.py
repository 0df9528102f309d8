"""The Python engine: one game, pure Python.

`engine` holds [`Game`][pisti_env.game.Game], the state and the engine's public face; the rules
that change the state are functions of a game in their own modules: `deal` (a hand's start and
the deal rounds), `play` (a face-up play's capture and pişti), `claims` (the bluff variant,
R29), `hand_end` (the sweep, the scores, the match's end), `action_checks` (an action checked),
`determinize` (what a seat cannot see, dealt again) and `rewards` (the reward conventions every
environment shares).

`pisti_env.game` was the engine's module before the engine got its folder; the package keeps
its names (`Game`, `new_game`), so `from pisti_env.game import Game` still works.
"""

from .engine import Game, new_game

__all__ = ["Game", "new_game"]
