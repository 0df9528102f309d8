"""One command-line grammar for every ``pisti-*`` command (docs/reliability.md): one spelling
for one meaning, the same everywhere. The test walks the parser of every entry point in
pyproject.toml's ``[project.scripts]`` (each module has a ``build_parser()``) and fails on:

* a spelling from the table of known synonyms (``--no-progress`` where the grammar says
  ``--quiet``, ``--output`` for ``--out``, ``--capture-value`` for ``--claim-capture-value``…);
* a flag with two spellings in one parser (``--x/--no-x`` of a boolean is one flag);
* a grammar word used with another meaning: ``--out`` is a directory (checked by
  ``flags.writable_dir``), ``--seed`` and ``--threads`` whole numbers, ``--quiet`` a switch,
  ``--device`` a torch device.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import pytest

from pisti_env.tools import flags

ROOT = Path(__file__).resolve().parents[2]

# The grammar's word for a meaning, and the other spellings of that meaning seen in the wild.
SYNONYMS = {
    "--quiet": ("--no-progress", "--no-progress-bar", "--silent"),
    "--out": ("--output", "--output-dir", "--out-dir", "--outdir", "--out-file"),
    "--seed": ("--random-seed", "--rng-seed"),
    "--threads": ("--torch-threads", "--num-threads", "--nthreads"),
    "--device": ("--torch-device",),
    "--players": ("--num-players",),
    "--ten-diamonds-bonus": ("--ten-diamonds-pisti-bonus",),
    "--steps": ("--total-steps",),
    "--envs": ("--num-envs",),
    "--claim-capture-value": ("--capture-value",),
    "--claim-capture-value-last-deal": ("--capture-value-last-deal",),
}


def _whole_number(action: argparse.Action) -> bool:
    """A flag whose value parses as an int (its range may be checked by the config it fills)."""
    try:
        return action.type is not None and action.type("3") == 3 and isinstance(action.type("3"), int)
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False


# What the grammar's words must be wherever they appear.
MEANINGS = {
    "--out": lambda a: getattr(a.type, "__name__", None) == "writable_dir",  # a directory, checked up front
    "--seed": _whole_number,
    "--threads": _whole_number,
    "--quiet": lambda a: isinstance(a, argparse._StoreTrueAction),
    "--device": lambda a: getattr(a.type, "__name__", None) == "torch_device",
}

def scripts() -> dict[str, str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return dict(tomllib.load(f)["project"]["scripts"])


def grammar_errors(command: str, target: str) -> list[str]:
    """What in ``command``'s parser breaks the grammar (empty: nothing)."""
    module = importlib.import_module(target.split(":")[0])
    build = getattr(module, "build_parser", None)
    assert build is not None, f"{command}: {module.__name__} has no build_parser() to check"
    parser = build()
    errors = []
    synonym_of = {other: word for word, others in SYNONYMS.items() for other in others}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        spellings = [s for s in action.option_strings
                     if not (isinstance(action, argparse.BooleanOptionalAction) and s.startswith("--no-"))]
        if len(spellings) > 1:
            errors.append(f"{command}: {' and '.join(spellings)} spell one flag twice")
        for spelling in action.option_strings:
            if spelling in synonym_of:
                errors.append(f"{command}: {spelling} where the grammar says {synonym_of[spelling]}")
            if spelling in MEANINGS and not MEANINGS[spelling](action):
                errors.append(f"{command}: {spelling} means something else here than in the grammar")
    return errors


def test_every_command_is_walked():
    assert {"pisti-eval", "pisti-play", "pisti-replay", "pisti-demo", "pisti-bluff-stats", "pisti-exploit",
            "pisti-train"} <= set(scripts())


@pytest.mark.parametrize("command", sorted(scripts()))
def test_one_spelling_for_one_meaning(command):
    assert grammar_errors(command, scripts()[command]) == []


def test_the_checker_finds_synonyms_and_double_spellings():
    """The walk itself can fail: a parser with the old spellings is caught."""
    parser = flags.ArgumentParser(prog="pisti-old")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--steps", "--total-steps", type=int)
    parser.add_argument("--out", type=str)
    module = type(sys)("old_cli")
    module.build_parser = lambda: parser
    sys.modules["old_cli"] = module
    try:
        errors = grammar_errors("pisti-old", "old_cli:main")
    finally:
        del sys.modules["old_cli"]
    assert any("--no-progress where the grammar says --quiet" in e for e in errors)
    assert any("--steps and --total-steps" in e for e in errors)
    assert any("--out means something else" in e for e in errors)


@pytest.mark.parametrize("command", sorted(scripts()))
def test_help_shows_docstring_links_as_text(command):
    """The descriptions come from docstrings, whose cross-references are Markdown links for the
    docs site (``[`Settings`][pisti_env.rules.Settings]``): ``--help`` shows their text alone."""
    module = importlib.import_module(scripts()[command].split(":")[0])
    text = module.build_parser().format_help()
    assert "][" not in text and "](" not in text, text


def test_terminal_text_keeps_a_links_text():
    assert flags.terminal_text("see [`Settings`][pisti_env.rules.Settings] and [RULES](RULES.md) [R3]") == \
        "see `Settings` and RULES [R3]"
