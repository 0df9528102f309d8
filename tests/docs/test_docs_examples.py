"""Every code block of README.md and docs/ runs, so the documentation cannot drift from the code.

- ``python`` blocks are executed, a page's blocks in order in one namespace (as a reader runs
  them), in a scratch directory where ``checkpoints/`` and ``examples/`` are the repository's.
- ``bash`` blocks: every ``pisti-*`` command, ``python -m MODULE`` and ``python FILE.py`` line is
  run up to the end of its argument parsing, with the real parser of that command: a flag that
  no longer exists, a value its checker refuses or a missing command fails the test. (Running
  them whole would train for hours; the CLIs' behaviour has its own tests.)
- Other languages (``text`` output, ``json``) are illustration and are not run.
- A block that cannot run here says so on the line before it: ``<!-- docs-test: skip (why) -->``
  (installing packages, a cluster, a GPU, files a long run leaves behind).
- A page about an optional library names it once: ``<!-- docs-test: requires ray.rllib -->``;
  its blocks run where the module imports (CI runs ``tests/docs`` again in each library's
  environment) and are skipped elsewhere.

Generated sections (``<!-- pisti:... -->`` markers, docs/hooks/generate.py) are rendered by
``test_generated_sections_render``, so a marker naming a bad setting or command fails here too.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import runpy
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
REQUIRES = re.compile(r"<!--\s*docs-test:\s*requires\s+(?P<modules>[\w., ]+?)\s*-->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    files = [ROOT / "README.md"]
    files += sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)
    return files


def blocks_of(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the skip marker before each, if any."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group("indent"), m.group("lang"), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.search(before)
        found.append(Block(path, start + 1, lang, "\n".join(body) + "\n", marker.group("why") if marker else None))
        i += 1
    return found


ALL_BLOCKS = [b for f in doc_files() for b in blocks_of(f)]
PYTHON_PAGES = sorted({b.path for b in ALL_BLOCKS if b.lang == "python"})
SHELL_BLOCKS = [b for b in ALL_BLOCKS if b.lang in ("bash", "sh", "shell", "console")]


def require_modules(page: Path) -> None:
    """Skip the calling test unless the modules the page names (``requires``) import."""
    marker = REQUIRES.search(page.read_text(encoding="utf-8"))
    if marker:
        for module in marker.group("modules").replace(",", " ").split():
            pytest.importorskip(module)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working directory holding links to the repository's checkpoints and examples."""
    for name in ("checkpoints", "examples"):
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_block_is_found_and_labelled():
    assert len(ALL_BLOCKS) >= 10, "the documentation should hold code blocks"
    for block in ALL_BLOCKS:
        assert block.lang, f"{block.id}: a code block names its language (python, bash, text …)"


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_run(page, scratch):
    require_modules(page)
    import torch

    torch.set_num_threads(1)
    namespace: dict = {"__name__": "__docs__"}
    for block in (b for b in ALL_BLOCKS if b.path == page and b.lang == "python"):
        if block.skip:
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(block.code, block.id, "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - say which block failed
                raise AssertionError(f"{block.id} failed: {type(exc).__name__}: {exc}") from exc


# --------------------------------------------------------------------------- shell commands
def scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return dict(tomllib.load(f)["project"]["scripts"])


class Parsed(Exception):
    """Raised when the outermost parse succeeded: the command line is valid."""


def commands_of(code: str) -> list[list[str]]:
    """The command lines of a shell block: continuations joined, comments cut, `&&` split."""
    joined = re.sub(r"\\\n", " ", code)
    out = []
    for line in joined.split("\n"):
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return [c for c in out if c]


def runnable(argv: list[str]) -> tuple[str, str, list[str]] | None:
    """(kind, target, args) for a line this test checks, None for pip, ray, torchrun, pytest …"""
    table = scripts()
    if argv[0] in table:
        return "entry", table[argv[0]], argv[1:]
    if argv[0] in ("python", "python3") and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2 and argv[2] not in ("pytest", "pip", "venv"):
            return "module", argv[2], argv[3:]
        if argv[1].endswith(".py"):
            return "file", argv[1], argv[2:]
    return None


def parse_only(kind: str, target: str, args: list[str]) -> str | None:
    """Run a command up to its argument parsing; the parser's error message, or None if valid."""
    original = argparse.ArgumentParser.parse_known_args
    depth = 0

    def parse_known_args(self, *a, **k):
        nonlocal depth
        depth += 1
        try:
            result = original(self, *a, **k)
        finally:
            depth -= 1
        if depth == 0:
            raise Parsed
        return result

    err = io.StringIO()
    argv0 = target
    saved_argv = sys.argv
    argparse.ArgumentParser.parse_known_args = parse_known_args
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if kind == "entry":
                module_name, function = target.split(":")
                getattr(importlib.import_module(module_name), function)(args)
            elif kind == "module":
                sys.argv = [argv0, *args]
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                sys.argv = [str(ROOT / target), *args]
                runpy.run_path(str(ROOT / target), run_name="__main__")
    except Parsed:
        return None
    except SystemExit as exc:
        if exc.code in (0, None):
            return None  # --help
        return err.getvalue().strip() or f"exit {exc.code}"
    finally:
        argparse.ArgumentParser.parse_known_args = original
        sys.argv = saved_argv
    return "the command never parsed its arguments"


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_shell_commands_parse(block, scratch):
    if block.skip:
        pytest.skip(block.skip)
    require_modules(block.path)
    failures = []
    for argv in commands_of(block.code):
        found = runnable(argv)
        if found is None:
            continue
        problem = parse_only(*found)
        if problem:
            failures.append(f"{shlex.join(argv)}\n    {problem}")
    assert not failures, f"{block.id}: commands the current CLIs refuse:\n" + "\n".join(failures)


def test_generated_sections_render():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        generate = importlib.import_module("generate")
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    for page in doc_files():
        text = page.read_text(encoding="utf-8")
        rendered = generate.render(text)
        assert "<!-- pisti:" not in rendered, f"{page}: a marker was left unrendered"


def test_skip_markers_give_a_reason():
    for page in doc_files():
        for line in page.read_text(encoding="utf-8").split("\n"):
            if "docs-test:" in line:
                assert SKIP.search(line) or REQUIRES.search(line), (
                    f"{page}: a docs-test marker reads <!-- docs-test: skip (why) --> or "
                    f"<!-- docs-test: requires MODULE -->: {line!r}")


def test_scratch_directory_is_clean_of_repo_state(scratch):
    # the blocks run away from the checkout: writing runs/ there must not touch the repository
    assert Path.cwd() != ROOT and not (Path.cwd() / "runs").exists()
    assert os.path.islink("checkpoints") or not (ROOT / "checkpoints").exists()
