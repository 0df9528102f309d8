"""The built documentation site works opened from disk and loads nothing from another host.

Opened as files (``site/index.html`` in a browser, no server), a page's links must name files:
a link to a folder (``training/``, what ``use_directory_urls: true`` writes) shows a directory
listing there. So every relative link and every resource of every page must resolve to a file
of the site, and no link may start at the root (``/assets/...`` means the disk's root there).
And a page must load nothing from another host (issue 52): no stylesheet, script, font, image
or frame from an ``http(s)://`` or ``//`` address, in the HTML or in the site's CSS
(``@import``, ``url()``), which Material's default Google Fonts would be.

Two loads sit inside scripts, where this test does not parse: Material's bundle and the
notebook page's template each fetch Mermaid from a CDN, but only for a page that holds a
Mermaid diagram; so the test asserts that no page holds one. (Material's bundle also fetches a
``ResizeObserver`` polyfill in browsers that lack it; every current browser has it.)
Hyperlinks to other sites (``<a href="https://...">``) are fine: they are not loaded.

Search is the one feature that needs a server (its index is read by a web worker, which
browsers refuse to start from a file): docs/getting-started.md says how to serve the site.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from site_support import built_site  # noqa: F401  (the fixture: one build per session)

# the attributes through which a tag makes the browser load something
LOADS = {"link": ("href",), "script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "frame": ("src",),
         "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
         "embed": ("src",), "object": ("data",), "image": ("href", "xlink:href"), "use": ("href", "xlink:href"),
         "input": ("src",)}
CSS_URL = re.compile(r"""@import\s+['"]([^'"]+)['"]|url\(\s*['"]?([^'")\s]+)""")
MERMAID = re.compile(r"""class=["'][^"']*\b(mermaid|jp-Mermaid)\b""")


class References(HTMLParser):
    """A page's references: ``loads`` (tag, attribute, URL) and ``links`` (``<a href>``), and the
    CSS of its ``<style>`` elements and ``style`` attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[tuple[str, str, str]] = []
        self.links: list[str] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in attrs if value is not None}
        for name in LOADS.get(tag, ()):
            if name in values:
                urls = [part.split()[0] for part in values[name].split(",") if part.strip()] if name == "srcset" \
                    else [values[name]]
                self.loads += [(tag, name, url) for url in urls]
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if "style" in values:
            self.css.append(values["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


def off_site(url: str) -> bool:
    """Whether loading ``url`` asks another host (``https://``, ``http://``, ``//host``)."""
    return urlsplit(url.strip()).scheme in ("http", "https") or url.strip().startswith("//")


def css_urls(css: str) -> list[str]:
    return [a or b for a, b in CSS_URL.findall(css)]


def local_target(page: Path, url: str, site: Path) -> tuple[Path | None, str | None]:
    """Where a reference of ``page`` points in the site, or why it cannot work from disk;
    ``(None, None)`` for what is not a file of the site (a fragment, ``mailto:``, ``data:``).

    ``404.html`` may start at the root: only a server shows it, for any missing address at any
    depth, so its references must not be relative (MkDocs writes them from the root)."""
    parts = urlsplit(url.strip())
    if parts.scheme or parts.netloc or not parts.path:
        return None, None
    if parts.path.startswith("/"):
        if page.parent == site and page.name == "404.html":
            return None, None
        return None, "starts at the root: from disk that is the disk's root"
    target = (page.parent / unquote(parts.path)).resolve()
    if site.resolve() not in target.parents:
        return None, "leaves the site"
    if target.is_dir():
        return None, "names a folder: from disk a directory listing, not a page"
    if not target.is_file():
        return None, "names no file of the site"
    return target, None


def problems(site: Path) -> list[str]:
    """Everything in the built ``site`` that fails from disk or loads from another host."""
    found = []
    for page in sorted(site.rglob("*.html")):
        name = page.relative_to(site).as_posix()
        text = page.read_text(encoding="utf-8")
        refs = References()
        refs.feed(text)
        for tag, attribute, url in refs.loads:
            if off_site(url):
                found.append(f"{name}: <{tag} {attribute}={url!r}> loads from another host")
            elif (why := local_target(page, url, site)[1]):
                found.append(f"{name}: <{tag} {attribute}={url!r}> {why}")
        for url in (u for css in refs.css for u in css_urls(css)):
            if off_site(url):
                found.append(f"{name}: its CSS loads {url!r} from another host")
        for url in refs.links:
            if (why := local_target(page, url, site)[1]):
                found.append(f"{name}: <a href={url!r}> {why}")
        if MERMAID.search(text):
            found.append(f"{name}: holds a Mermaid diagram, which the theme's scripts load Mermaid from a CDN for")
    for sheet in sorted(site.rglob("*.css")):
        for url in css_urls(sheet.read_text(encoding="utf-8")):
            if off_site(url):
                found.append(f"{sheet.relative_to(site).as_posix()}: loads {url!r} from another host")
            elif (why := local_target(sheet, url, site)[1]) and why != "names no file of the site":
                found.append(f"{sheet.relative_to(site).as_posix()}: url({url!r}) {why}")
    return found


def test_the_built_site_works_from_disk_and_loads_nothing_from_another_host(built_site):
    pages = list(built_site.rglob("*.html"))
    assert (built_site / "index.html").is_file() and len(pages) > 30, "the build made too few pages"
    found = problems(built_site)
    assert not found, f"{len(found)} problems:\n" + "\n".join(found[:40])


def test_the_notebook_is_a_page_of_the_site(built_site):
    page = (built_site / "quickstart.html").read_text(encoding="utf-8")
    assert "Pişti in a notebook" in page and "baseline_margins" in page  # its markdown and its code
    # its saved outputs: the printed margins, the table's SVG and the learning curve's PNG
    assert "my-ppo vs greedy:" in page
    assert 'src="data:image/svg+xml;base64,' in page and 'src="data:image/png;base64,' in page
    assert 'href="quickstart.html"' in (built_site / "getting-started.html").read_text(encoding="utf-8")


def test_the_check_finds_each_kind_of_problem(tmp_path):
    """The checks above can fail: a page with one problem of each kind, beside one without."""
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "index.html").write_text("<p>a guide</p>")
    (tmp_path / "ok.html").write_text('<a href="#top">top</a><a href="mailto:x@example.org">mail</a>'
                                      '<a href="https://example.org">elsewhere</a><img src="data:image/png;base64,AA">')
    (tmp_path / "style.css").write_text("@font-face{src:url(https://fonts.example/x.woff2)}"
                                        "a{background:url('data:image/svg+xml;utf8,<svg/>')}")
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '<link rel="stylesheet" href="style.css"><script src="//cdn.example/x.js"></script>'
        '<img srcset="small.png 1x, https://img.example/big.png 2x">'
        '<style>@import "https://cdn.example/more.css";</style><div style="background:url(http://x.example/a.png)">'
        '<a href="ok.html#top">fine</a><a href="guide/">folder</a><a href="gone.html">missing</a>'
        '<a href="/assets/x.js">root</a><pre class="mermaid">graph LR</pre>')
    (tmp_path / "404.html").write_text('<a href="/index.html">home</a><script src="https://cdn.example/404.js"></script>')
    found = problems(tmp_path)
    expected = ["googleapis", "//cdn.example/x.js", "img.example", "more.css", "x.example/a.png", "'guide/'",
                "'gone.html'", "'/assets/x.js'", "Mermaid", "small.png", "fonts.example", "404.js"]
    for needle in expected:
        assert any(needle in problem for problem in found), (needle, found)
    assert not any(problem.startswith("ok.html") or "/index.html" in problem for problem in found), found
    assert len(found) == len(expected), found
