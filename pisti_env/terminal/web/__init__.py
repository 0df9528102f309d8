"""Play Pişti in a browser: ``pisti-play --web`` (issue 51).

* ``pisti_env.terminal.web.views``: what one answer holds, from the person's
  ``pisti_env.agents.view.SeatView`` only (R30–R31), the table drawn as SVG by
  ``pisti_env.drawing`` (the replay page's drawing);
* ``pisti_env.terminal.web.session``: one game (``pisti_env.terminal.web.session.WebGame``: the
  person's move checked by the engine, the other seats played on the server, the replay written)
  and the games by token with their expiry (``pisti_env.terminal.web.session.Sessions``);
* ``pisti_env.terminal.web.server``: the Starlette app and its safety measures (why Starlette on
  uvicorn: see its docstring);
* ``pisti_env.terminal.web.cli``: ``pisti-play --web`` itself;
* ``static/``: the page (HTML, one script, one style sheet), package data.

Importing this package imports neither Starlette nor uvicorn (the optional ``web`` extra):
only ``pisti_env.terminal.web.server`` and ``pisti_env.terminal.web.cli.main_web`` do.
"""
