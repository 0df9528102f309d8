"""``pisti_env`` never imports ``training`` (docs/ARCHITECTURE.md, "Layers"): the environment a
benchmark user loads plays trained policies without the trainer (``pisti_env.policies``), and
the two packages share no import cycle. An AST scan of every module under ``pisti_env/``: import
statements anywhere in a module (inside functions too) and ``importlib.import_module`` or
``__import__`` calls with a literal name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = "training"
DYNAMIC = {"import_module", "__import__"}  # importlib.import_module(name), __import__(name)


def _forbidden(name: str) -> bool:
    return name == FORBIDDEN or name.startswith(FORBIDDEN + ".")


def training_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Each import of ``training`` or a submodule of it in the module at ``path``, as
    ``"path:line: statement"``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module] if node.level == 0 and node.module else []  # relative: inside the package
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            names = [node.args[0].value] if called in DYNAMIC and isinstance(node.args[0].value, str) else []
        else:
            continue
        if any(_forbidden(name) for name in names):
            found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_of_pisti_env_imports_training():
    modules = sorted((ROOT / "pisti_env").rglob("*.py"))
    assert len(modules) > 50, "pisti_env's modules not found"
    found = [line for path in modules for line in training_imports(path)]
    assert found == [], "pisti_env must not import training (move what it needs into pisti_env):\n" + "\n".join(found)


def test_the_scan_sees_every_form_of_import(tmp_path):
    """The check above can fail: top-level, nested and dynamic imports are all found; names that
    only start alike (``trainingwheels``) and relative imports are not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import training\n"
        "import os, training.trainer.policy as p\n"
        "from training.harness.report import versions\n"
        "import trainingwheels\n"
        "from . import training\n"
        "def f():\n"
        "    from training.trainer import policy\n"
        "    class C:\n"
        "        def g(self):\n"
        "            import importlib\n"
        "            return importlib.import_module('training.bluff'), __import__('training')\n"
    )
    lines = sorted(int(entry.split(":")[1]) for entry in training_imports(probe, tmp_path))
    assert lines == [1, 2, 3, 7, 11, 11]
