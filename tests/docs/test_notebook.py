"""The notebook quick start (``examples/quickstart.ipynb``) runs, and is saved as one clean run.

The notebook is kept with its outputs, so that the docs site (which shows it, not running it)
and a reader on a repository browser see what each cell gives. So two checks:

- it runs top to bottom, on a small budget (a few seconds of training, a few deals): executed
  where the ``notebook`` extra is installed (CI's documentation environment), skipped elsewhere;
- the saved copy is one run top to bottom (Restart & Run All, or
  ``python tests/docs/notebook_support.py``), with no error, no warning on stderr, no path of the
  machine that ran it, and small: this one needs no extra.
"""

from __future__ import annotations

import json
import re

import pytest

from notebook_support import QUICKSTART, parameters_index, run_notebook, with_parameters

SMALL = {"TRAIN_STEPS": 32_768, "EVAL_DEALS": 20}  # 4 updates of the training loop: about 2 s
MAX_BYTES = 150_000
MARGIN = re.compile(r"(?P<who>[\w-]+) vs (?P<baseline>\w+): (?P<mean>[+-]\d+\.\d\d) ± (?P<half>\d+\.\d\d) points a hand")


def outputs_text(cells: list) -> str:
    """The printed text of the code cells (a string when run, the saved file's list of lines)."""
    texts = [o.get("text", "") for cell in cells if cell["cell_type"] == "code" for o in cell["outputs"]]
    return "".join(t if isinstance(t, str) else "".join(t) for t in texts)


def test_the_notebook_runs_on_a_small_budget(tmp_path):
    for module in ("nbformat", "nbclient", "ipykernel"):
        pytest.importorskip(module, reason=f"the notebook extra is not installed (no {module}): pip install -e \".[notebook]\"")
    notebook = run_notebook(QUICKSTART, SMALL, cwd=tmp_path, timeout=300)
    text = outputs_text(notebook.cells)
    margins = {(m["who"], m["baseline"]): float(m["mean"]) for m in MARGIN.finditer(text)}
    assert set(margins) == {("pisti-2p", "greedy"), ("my-ppo", "random"), ("my-ppo", "greedy")}, text
    assert margins["pisti-2p", "greedy"] > 0, text  # the shipped policy beats greedy even on 20 deals (seed 0)
    assert f"{SMALL['TRAIN_STEPS']:,} decisions" in text, text  # the training cell kept the injected budget
    pictures = [o["data"] for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if "data" in o]
    svg = next(d["image/svg+xml"] for d in pictures if "image/svg+xml" in d)
    assert 'aria-label="Pişti' in svg and 'data-card="' in svg  # the table, its cards drawn
    assert any("image/png" in d for d in pictures)  # the learning curve


def test_the_saved_notebook_is_one_clean_run():
    raw = QUICKSTART.read_bytes()
    assert len(raw) < MAX_BYTES, f"{QUICKSTART.name} is {len(raw):,} bytes: keep its outputs small"
    notebook = json.loads(raw)
    assert notebook["nbformat"] == 4
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    counts = [cell["execution_count"] for cell in code]
    assert counts == list(range(1, len(code) + 1)), f"the outputs come from several runs or none: {counts}"
    outputs = [o for cell in code for o in cell["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error" or o.get("name") == "stderr"]
    assert not re.search(r"(/home/|/tmp/|/work/|/root/|/Users/|[A-Z]:\\\\)", json.dumps(outputs)), "a local path"
    assert "injected-parameters" not in raw.decode("utf-8"), "saved from a test's run, not with its own parameters"
    text = outputs_text(notebook["cells"])
    assert {(m["who"], m["baseline"]) for m in MARGIN.finditer(text)} == {
        ("pisti-2p", "greedy"), ("my-ppo", "random"), ("my-ppo", "greedy")}, text


def test_parameters_are_injected_after_the_parameters_cell_and_checked():
    nbformat = pytest.importorskip("nbformat", reason="the notebook extra is not installed")
    notebook = nbformat.read(QUICKSTART, as_version=4)
    index = parameters_index(notebook)
    with_parameters(notebook, {"EVAL_DEALS": 4})
    assert notebook.cells[index + 1].source == "EVAL_DEALS = 4"
    with pytest.raises(ValueError, match="NO_SUCH"):
        with_parameters(notebook, {"NO_SUCH": 1})
    notebook.cells[index].metadata["tags"] = []
    with pytest.raises(ValueError, match="tagged 'parameters'"):
        parameters_index(notebook)
