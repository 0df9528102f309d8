"""The test suite's own layout (docs/ARCHITECTURE.md, "Tests"): tests sit in one folder per
layer of the code, and no test module imports another, so a test file can be read, moved or
deleted on its own. Shared code lives in support modules that are not test files
(``tests/helpers.py``, ``tests/referee.py``, ``tests/<layer>/<name>_support.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
LAYERS = {"engine", "env", "batched", "agents", "harness", "trainer", "learning", "bluff", "cli", "project",
          "integration", "docs", "browser", "web"}


def all_test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if p.name.startswith("test_") and "data" not in p.parts)


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_imports_another():
    stems = {p.stem for p in all_test_files()}
    offenders = {str(p.relative_to(TESTS)): sorted(imported_modules(p) & stems) for p in all_test_files()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_every_test_module_sits_in_a_layer_folder_and_its_name_is_unique():
    """Unique names because pytest imports these folders (no ``__init__.py``) by file name."""
    files = all_test_files()
    assert all(p.parent.parent == TESTS and p.parent.name in LAYERS for p in files), \
        [str(p.relative_to(TESTS)) for p in files if p.parent.parent != TESTS or p.parent.name not in LAYERS]
    stems = [p.stem for p in files]
    assert len(stems) == len(set(stems)), sorted(s for s in stems if stems.count(s) > 1)


def test_the_layout_check_sees_an_import_of_another_test_module(tmp_path):
    """The check above can fail: it finds both import forms."""
    probe = tmp_path / "test_probe.py"
    probe.write_text("import test_env\nfrom test_trainer import tiny_config\nfrom helpers import rank\n")
    assert imported_modules(probe) & {"test_env", "test_trainer", "test_probe"} == {"test_env", "test_trainer"}
