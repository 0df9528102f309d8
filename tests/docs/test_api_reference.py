"""The API reference as a reader sees it: the site built in strict mode, its cross-references
rendered as links and no Sphinx role left as raw text.

mkdocstrings (``docstring_style: google``) prints a Sphinx role (``:mod:`` and the like) verbatim,
so the docstrings write Markdown cross-references, ``[`shown`][full.dotted.path]``, which
mkdocs-autorefs turns into links (tests/project/test_no_sphinx_roles.py keeps roles out of the
sources). A cross-reference to an object the site does not render fails the strict build, so
the build passing is itself part of the check. Skipped where the ``docs`` extra
(mkdocs, mkdocs-material, mkdocstrings[python]) is not installed; CI installs it.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from site_support import built_site  # noqa: F401  (the fixture: one build per session, skipped without the docs extra)

ROOT = Path(__file__).resolve().parents[2]
# A role as Markdown renders it: the role's text, then its target as code (or still in backticks).
# A role's name quoted as code (the changelog's <code>:func:</code>) is not one.
RAW_ROLE = re.compile(r":(?:py:)?(?:func|mod|class|meth|attr|data|exc|obj|const|ref|any):(?:<code>|`[^`])")
LINK = re.compile(r'<a class="autorefs autorefs-internal"[^>]*\bhref="(?P<href>[^"]*)"[^>]*>(?P<text>.*?)</a>', re.S)


def page_text(page: str) -> str:
    """The text a reader sees on an HTML page: tags dropped, entities decoded."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def raw_roles(page: str) -> list[str]:
    """The places on an HTML page where a Sphinx role shows as text, with some context."""
    return [page_text(page[max(0, m.start() - 80):m.end() + 80]) for m in RAW_ROLE.finditer(page)]


def test_no_page_shows_a_raw_sphinx_role(built_site):
    found = {str(p.relative_to(built_site)): raw_roles(p.read_text(encoding="utf-8")) for p in sorted(built_site.rglob("*.html"))}
    assert {page: roles for page, roles in found.items() if roles} == {}


def test_the_api_pages_cross_references_are_links_to_its_entries(built_site):
    page = (built_site / "api.html").read_text(encoding="utf-8")
    links = [(m.group("href"), page_text(m.group("text"))) for m in LINK.finditer(page)]
    # Every docstring cross-reference on the page points at an entry rendered on it.
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    local = [href[1:] for href, _ in links if href.startswith("#")]
    assert len(local) >= 30, links
    assert sorted(set(local) - ids) == []
    # Written in docstrings as [`raw_env`][pisti_env.raw_env] (pisti_env.env's) and
    # [`Settings`][pisti_env.rules.Settings] (Game's and others').
    assert ("#pisti_env.raw_env", "raw_env") in links
    assert ("#pisti_env.rules.Settings", "Settings") in links


def test_the_role_check_sees_a_role_rendered_as_text():
    """The check can fail: a role that mkdocstrings printed verbatim, its target in a code tag."""
    tick = "`"
    rendered = f"<p>Reads :mod:<code>pisti_env.observation</code> and :func:{tick}x{tick}.</p>"
    assert len(raw_roles(rendered)) == 2
    assert raw_roles('<p>See <a class="autorefs autorefs-internal" href="#a.b"><code>b</code></a>: '
                     "its args: x; roles such as <code>:func:</code>, <code>:class:</code>.</p>") == []
