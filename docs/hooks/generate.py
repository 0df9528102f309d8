"""MkDocs hook: pages say what to generate, the code supplies it, so nothing is typed twice.

A page holds a marker comment on a line of its own; at build time it is replaced by text made
from the code itself:

- ``<!-- pisti:observation-layout SETTINGS -->``: ``ObservationLayout(settings).markdown_table()``
  for the settings given as ``key=value`` words (``num_players=2 bluff=true``).
- ``<!-- pisti:observation-sizes -->``: the observation size of every table.
- ``<!-- pisti:settings-table -->``: every game setting of ``pisti_env.rules.Settings``: its
  keyword, its command-line flag, its default and its docstring.
- ``<!-- pisti:cli-help COMMAND -->``: the ``--help`` text of a ``pisti-*`` command, read from
  its entry point in ``pyproject.toml``.
- ``<!-- pisti:include PATH -->``: a file of the repository (e.g. ``CHANGELOG.md``), verbatim.

``tests/docs/test_docs_examples.py`` renders every marker of every page, so a marker that
names a missing command or a bad setting fails the tests as well as the strict build.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- pisti:(?P<kind>[a-z-]+)(?P<args>[^>]*)-->\s*$", re.MULTILINE)


def _parse_value(text: str):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    try:
        return int(text)
    except ValueError:
        return text


def observation_layout(args: str) -> str:
    from pisti_env import ObservationLayout, make_settings

    settings = dict(word.split("=", 1) for word in args.split())
    layout = ObservationLayout(make_settings(**{k: _parse_value(v) for k, v in settings.items()}))
    return layout.markdown_table()


def observation_sizes(args: str) -> str:
    """The observation size of every table, with and without the bluff variant (R29)."""
    from pisti_env import ObservationLayout, make_settings

    tables = [
        ("2 players", dict(num_players=2)),
        ("3 players", dict(num_players=3)),
        ("4 players, partnerships", dict(num_players=4, partnerships=True)),
        ("4 players, each for themselves", dict(num_players=4, partnerships=False)),
        ("5 players, two decks", dict(num_players=5, decks=2)),
        ("6 players, two decks", dict(num_players=6, decks=2)),
    ]
    rows = ["| table | size | with `bluff=True` |", "|---|---|---|"]
    for name, kwargs in tables:
        plain = ObservationLayout(make_settings(**kwargs)).size
        bluff = ObservationLayout(make_settings(bluff=True, **kwargs)).size
        rows.append(f"| {name} | {plain} | {bluff} |")
    return "\n".join(rows)


def _markdown(text: str) -> str:
    """reStructuredText's ``literal`` as Markdown's `literal`."""
    return text.replace("``", "`")


def settings_table(args: str) -> str:
    """The game settings: keyword, flag, default and meaning, from ``Settings`` and its docstring."""
    import dataclasses

    from pisti_env.tools.flags import SETTINGS_FLAGS, field_docs
    from pisti_env.rules import Settings

    docs = field_docs(Settings)
    rows = ["| keyword | flag | default | meaning |", "|---|---|---|---|"]
    for f in dataclasses.fields(Settings):
        flag = SETTINGS_FLAGS.get(f.name, ("--" + f.name.replace("_", "-"),))[0]
        rows.append(f"| `{f.name}` | `{flag}` | `{f.default!r}` | {_markdown(docs[f.name][1])} |")
    return "\n".join(rows)


def entry_points() -> dict[str, str]:
    """``pisti-*`` command name -> ``module:function``, from pyproject.toml."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return dict(tomllib.load(f)["project"]["scripts"])


def cli_help(args: str) -> str:
    command = args.strip()
    scripts = entry_points()
    if command not in scripts:
        raise ValueError(f"pisti:cli-help names {command!r}, not a command of pyproject.toml: {sorted(scripts)}")
    module_name, function = scripts[command].split(":")
    main = getattr(importlib.import_module(module_name), function)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(["--help"])
    text = out.getvalue().rstrip()
    if not text:
        raise ValueError(f"{command} --help printed nothing")
    return f"```text\n{text}\n```"


def include(args: str) -> str:
    path = (ROOT / args.strip()).resolve()
    if ROOT not in path.parents:
        raise ValueError(f"pisti:include {args.strip()!r} is outside the repository")
    return path.read_text(encoding="utf-8")


GENERATORS = {
    "observation-layout": observation_layout,
    "observation-sizes": observation_sizes,
    "settings-table": settings_table,
    "cli-help": cli_help,
    "include": include,
}


def render(markdown: str) -> str:
    """Every marker of a page replaced by what it names."""

    def replace(match: re.Match) -> str:
        kind = match.group("kind")
        if kind not in GENERATORS:
            raise ValueError(f"unknown marker pisti:{kind}; known: {sorted(GENERATORS)}")
        return GENERATORS[kind](match.group("args"))

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:  # MkDocs hook
    return render(markdown)
