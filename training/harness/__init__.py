"""The evaluation harness (``pisti-eval``, ``pisti-bluff-stats``): players from the registry
(:func:`pisti_env.agents.make_player`) meet on duplicate deals of the Python engine.

* :mod:`.duplicate` — seatings, seeded duplicate games, chunks on worker processes (the
  first N games recorded as replays);
* :mod:`.ray_backend` — the same chunks as Ray tasks (``--ray``; ray imported only then);
* :mod:`.stats` — confidence intervals, Bradley–Terry; :mod:`.analysis` — the figures of a
  table and the ladder;
* :mod:`.report` — the terminal table and ``report.json``; :mod:`.plots` — the figures;
* :mod:`.evaluate` — :func:`evaluate` and the ``pisti-eval`` command line;
* :mod:`.bluff_stats` — ``pisti-bluff-stats``, bluffing and answering in the bluff variant (R29).

Nothing here imports torch unless a checkpoint player is built (or matplotlib, unless plots
are drawn).
"""
