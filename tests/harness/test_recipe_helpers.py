"""What every recipe in examples/ shares (training.harness.recipes), without the RL libraries:
its ``--help`` text is its docstring's whole first paragraph and its example commands (it was
the first line, cut mid-sentence), and its progress lines say how far, how fast and how long is
left, as pisti-train does. The recipes' own runs print those lines in
tests/integration/test_recipe_progress.py."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from training.harness import recipes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RECIPES = sorted(EXAMPLES.glob("*.py"))


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)


@pytest.mark.parametrize("path", RECIPES, ids=[p.stem for p in RECIPES])
def test_a_recipes_help_holds_its_whole_first_paragraph_and_its_commands(path):
    source = path.read_text(encoding="utf-8")
    assert "recipes.recipe_parser(__doc__)" in source and "splitlines()[0]" not in source
    doc = docstring(path)
    help_text = recipes.recipe_parser(doc, prog=path.name).format_help()
    described = " ".join(help_text.split("options:")[0].split())
    first = " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "")
    assert first.endswith(".") and first.split(":")[0] in described
    assert described.split(" examples: ")[0].endswith(".")  # the paragraph whole, to its full stop
    assert f"python examples/{path.name}" in help_text  # its example commands, one a line
    assert ":class:" not in described and ":func:" not in described and "``" not in described


def test_recipe_parser_shows_cross_references_as_names():
    doc = ("Train on [`PistiSB3VecEnv`][pisti_env.integrations.sb3.PistiSB3VecEnv] and [`margins`][a.b.margins],\n"
           "then ``evaluate``.\n\n    python examples/x.py --minutes 1   # a run\n\nMore.\n")
    parser = recipes.recipe_parser(doc, prog="x.py")
    assert parser.description == ("Train on `PistiSB3VecEnv` and `margins`, then evaluate.\n\nexamples:\n"
                                  "  python examples/x.py --minutes 1   # a run")
    with pytest.raises(TypeError, match="no description"):
        recipes.recipe_parser(doc, description="other")


def test_progress_prints_after_the_first_update_then_every_interval_with_the_time_left(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(recipes.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = recipes.Progress("recipe", steps=100_000, seconds=600.0, every=20.0, stream=out)
    assert progress.update(0) is None  # nothing trained yet
    now[0] += 5.0
    first = progress.update(5_000)  # 1,000 steps/s: 95 s to 100,000 steps, before the budget's 595 s
    assert first == "recipe: 5,000 steps in 5 s (1,000 steps/s); about 1 min 35 s left (to 100,000 steps)"
    now[0] += 10.0
    assert progress.update(15_000) is None  # within the interval
    now[0] += 10.0
    second = progress.update(20_000)  # 800 steps/s: 100 s to go
    assert second == "recipe: 20,000 steps in 25 s (800 steps/s); about 1 min 40 s left (to 100,000 steps)"
    assert out.getvalue().splitlines() == [first, second]


def test_progress_counts_down_the_budget_when_it_ends_first_and_takes_other_units(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(recipes.time, "monotonic", lambda: now[0])
    out = io.StringIO()
    progress = recipes.Progress("torchrl_selfplay", steps=None, seconds=600.0, unit="plays", stream=out)
    now[0] = 60.0
    assert progress.update(120_000) == ("torchrl_selfplay: 120,000 plays in 1 min 00 s (2,000 plays/s); "
                                        "about 9 min 00 s left (the 10 min 00 s budget)")
    bare = recipes.Progress("r", stream=out)  # no bound: how far and how fast only
    now[0] = 70.0
    assert bare.update(100) == "r: 100 steps in 10 s (10 steps/s)"
    for bad in (dict(steps=0), dict(steps=1.5), dict(steps=True), dict(seconds=-1.0), dict(every=-1.0)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            recipes.Progress("r", **bad)
