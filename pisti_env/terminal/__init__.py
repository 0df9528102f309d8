"""A person at the table: ``pisti-play`` (play against checkpoints or baselines in the
terminal) and ``pisti-replay`` (step through a recorded game).

* `.commands` — what the person types, parsed and checked against the seat's view;
* `.screen` — the table as the seat may know it (R30–R31), from its
  [`SeatView`][pisti_env.SeatView] only;
* `.events` — each move told (who played what, what it took, piştis, claims) and each
  hand's score breakdown;
* `.hint` — what the shipped policy would play, with its probabilities;
* `.session` — the game loop of one seat against players from the registry;
* `.play_cli`, `.replay_cli` — the two command lines.

``rich`` draws the screen; it is imported by these modules only, never by ``import pisti_env``.
"""
