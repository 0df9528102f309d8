"""The evaluation harness (``pisti-eval``, ``pisti-bluff-stats``): players from the registry
([`pisti_env.agents.make_player`][pisti_env.agents.make_player]) meet on duplicate deals of the Python engine.

* `.duplicate` — seatings, seeded duplicate games, chunks on worker processes (the
  first N games recorded as replays);
* `.ray_backend` — the same chunks as Ray tasks (``--ray``; ray imported only then);
* `.stats` — confidence intervals, Bradley–Terry; `.analysis` — the figures of a
  table and the ladder;
* `.report` — the terminal table and ``report.json``; `.plots` — the figures;
* `.evaluate` — `evaluate` and the ``pisti-eval`` command line;
* `.bluff_stats` — ``pisti-bluff-stats``, bluffing and answering in the bluff variant (R29).

Nothing here imports torch unless a checkpoint player is built (or matplotlib, unless plots
are drawn).
"""
