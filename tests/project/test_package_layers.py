"""``pisti_env``'s folders are its layers (docs/ARCHITECTURE.md, "Layers"): a module in one folder
imports another folder only if that folder is lower in ``LAYERS``, so no two folders import each
other, directly or round a longer loop. An AST scan of every module under ``pisti_env/``: import
statements anywhere in a module (inside functions and ``TYPE_CHECKING`` blocks too), relative ones
resolved, and ``importlib.import_module`` or ``__import__`` calls with a literal name."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "pisti_env"
FACE = "__init__"  # pisti_env/__init__.py, the package's face: what `import pisti_env` gives
# Lowest first; docs/ARCHITECTURE.md lists the same order.
LAYERS = (
    "util",  # arguments, atomic, regular_files: nothing of the game
    "rules",  # the rule facts: cards, actions, settings, scoring, locations, counters
    "game",  # the Python engine: Game and the modules of its rules
    "views",  # what a seat may know: observation, SeatView, counting
    "batched",  # the batched engine (writes the observation of views)
    "policies",  # a trained policy played, without the trainer
    "agents",  # the players and their registry
    "drawing",  # pictures of a table
    "envs",  # the AEC, Gymnasium and vector environments
    FACE,
    "tools",  # flags, demo, replay, versions
    "terminal",  # pisti-play, pisti-replay
    "integrations",  # the RL libraries' adapters
)
DYNAMIC = {"import_module", "__import__"}


def layer_of(module: str, root: Path = ROOT) -> str | None:
    """The layer of a dotted module name inside the package (``None`` outside it): its folder, or
    the face for the package itself and a name of it (``from pisti_env import __version__``)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) > 1 and ((root / PACKAGE / parts[1]).is_dir() or (root / PACKAGE / f"{parts[1]}.py").exists()):
        return parts[1]
    return FACE


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    """A file's dotted module name and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Each ``(line, dotted module)`` the module at ``path`` imports; ``from X import name`` counts
    as ``X.name`` (a submodule or a name of ``X``: both sit in ``X``'s layer or, for a package's
    folder, in the folder named)."""
    module, is_package = module_name(path, root)
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found += [(node.lineno, f"{target}.{alias.name}" if target else alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in DYNAMIC and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def upward_imports(root: Path = ROOT) -> list[str]:
    """Every import of a folder at or above the importing module's own layer (its own folder
    excepted), as ``"path:line: module imports target (layer A -> layer B)"``."""
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    bad = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        module, _ = module_name(path, root)
        own = layer_of(module, root)
        for line, target in imported_modules(path, root):
            other = layer_of(target, root)
            if other is None or other == own:
                continue
            if other not in rank or own not in rank:
                bad.append(f"{path.relative_to(root).as_posix()}:{line}: {target}: a folder not in LAYERS")
            elif rank[other] >= rank[own]:
                bad.append(f"{path.relative_to(root).as_posix()}:{line}: {module} imports {target} ({own} -> {other})")
    return bad


def test_every_folder_is_a_layer():
    """Every folder (and top-level module) of the package has its place in ``LAYERS``, and every
    layer exists."""
    entries = {p.stem if p.is_file() else p.name for p in (ROOT / PACKAGE).iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
    assert entries == set(LAYERS), "pisti_env/ holds a folder per layer and no loose module but __init__.py"


def test_no_folder_imports_a_higher_one():
    bad = upward_imports()
    assert bad == [], (
        "a module imports a folder at or above its own layer (docs/ARCHITECTURE.md, \"Layers\"):\n" + "\n".join(bad)
    )


def test_the_check_can_fail(tmp_path):
    """A probe package: a low folder importing a higher one, at the top, inside a function, in a
    ``TYPE_CHECKING`` block, relatively and by ``import_module``, is found every time; imports
    downward, within a folder and of other packages are not."""
    package = tmp_path / PACKAGE
    for folder in ("rules", "game", "envs"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from .envs import x\n__version__ = '0'\n")
    (package / "game" / "engine.py").write_text(
        "from ..rules import cards\n"  # down: fine
        "from . import deal\n"  # own folder: fine
        "import numpy\n"  # another package: fine
        "from ..envs.env import raw_env\n"  # up: line 4
        "def f():\n"
        "    from .. import __version__\n"  # the face, lazily: line 6
        "    import importlib\n"
        "    return importlib.import_module('pisti_env.envs.vector')\n"  # line 8
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import pisti_env.envs.spaces\n"  # line 11
    )
    (package / "rules" / "cards.py").write_text("from ..game import Game\n")  # up: line 1
    bad = upward_imports(tmp_path)
    found = sorted((path, int(line)) for path, line, _ in (entry.split(":", 2) for entry in bad))
    assert found == [
        ("pisti_env/game/engine.py", 4), ("pisti_env/game/engine.py", 6), ("pisti_env/game/engine.py", 8),
        ("pisti_env/game/engine.py", 11), ("pisti_env/rules/cards.py", 1),
    ], bad
