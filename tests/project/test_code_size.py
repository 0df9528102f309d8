"""The size limits the developers' guide sets, measured on the whole tree: no class longer than
300 lines anywhere, no module of ``training/`` longer than 400 (a longer one holds more than
one job: split it). Every Python file git tracks or would track (untracked, not ignored)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_CLASS_LINES = 300
MAX_TRAINING_MODULE_LINES = 400


def python_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file below
        return sorted(ROOT.rglob("*.py"))
    return sorted(ROOT / name for name in listed if (ROOT / name).is_file())


def longest_classes(paths: list[Path], root: Path = ROOT) -> list[tuple[int, str]]:
    """(lines, "path:Class") of every class, longest first (decorators included)."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found.append((node.end_lineno - start + 1, f"{path.relative_to(root)}:{node.name}"))
    return sorted(found, reverse=True)


def test_no_class_is_longer_than_300_lines():
    classes = longest_classes(python_files())
    assert classes, "no Python file found"
    too_long = [entry for entry in classes if entry[0] > MAX_CLASS_LINES]
    assert not too_long, too_long


def test_no_training_module_is_longer_than_400_lines():
    sizes = [(len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(ROOT)))
             for p in python_files() if p.relative_to(ROOT).parts[0] == "training"]
    assert sizes
    assert not [s for s in sizes if s[0] > MAX_TRAINING_MODULE_LINES], sorted(sizes, reverse=True)[:5]


def test_the_measure_counts_a_class_from_its_decorators_to_its_last_line(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("import dataclasses\n\n@dataclasses.dataclass\nclass A:\n    x: int = 0\n\n"
                      "    def f(self):\n        return 1\n\n\nclass B:\n    pass\n")
    assert longest_classes([source], tmp_path) == [(6, "example.py:A"), (2, "example.py:B")]
