"""The docstrings' cross-references are Markdown, not Sphinx roles.

The API reference (docs/api.md) is rendered by mkdocstrings, which prints a Sphinx role (a
``:func:`` or ``:class:`` before a name in backticks) as raw text. A cross-reference is written
``[`shown`][full.dotted.path]`` when its target is rendered in the docs site (``mkdocs build
--strict`` fails on one that is not) and as a plain code span otherwise;
tests/docs/test_api_reference.py builds the site and checks the rendered page. This check is
the quick one: no role in the Python sources.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("pisti_env", "training", "benchmarks", "examples", "docs/hooks", "tests")
ROLES = ("func", "mod", "class", "meth", "attr", "data", "exc", "obj", "const", "ref", "any")
# the role, then its target in single backticks (``:func:`` alone, quoted as code, is not a role)
ROLE = re.compile(r":(?:py:)?(?:" + "|".join(ROLES) + r"):`[^`]")


def roles_in(text: str) -> list[str]:
    """Each line (1-based number and text) that holds a Sphinx role."""
    return [f"{number}: {line.strip()}" for number, line in enumerate(text.splitlines(), 1) if ROLE.search(line)]


def test_no_python_source_holds_a_sphinx_role():
    found = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = roles_in(path.read_text(encoding="utf-8"))
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}, (
        "Sphinx roles render as raw text in the API reference; write [`name`][full.dotted.path] "
        f"for an object rendered in docs/api.md, `name` otherwise: {found}"
    )


def test_the_check_finds_each_role_form():
    """The pattern can fail: it sees roles in docstrings and comments, the ``py:`` domain form,
    and leaves Markdown cross-references, Google-style section headers, double-backtick code
    and a role's name quoted as code alone."""
    tick = "`"
    assert roles_in(f'"""See :func:{tick}make_player{tick}."""') == [f'1: """See :func:{tick}make_player{tick}."""']
    assert len(roles_in(f"x = 1\n# :py:class:{tick}~pisti_env.game.Game{tick}\n")) == 1
    for role in ROLES:
        assert roles_in(f":{role}:{tick}x{tick}"), role
    assert roles_in(
        f'"""[{tick}Game{tick}][pisti_env.game.Game] and {tick}{tick}Settings{tick}{tick}.\n\n'
        f'    Raises:\n        ValueError: naming the field.\n"""'
    ) == []
    assert roles_in(f"a {tick}{tick}:func:{tick}{tick} role") == []
