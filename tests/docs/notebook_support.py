"""Running the notebooks of ``examples/`` (the ``notebook`` extra: nbformat, nbclient, ipykernel).

``run_notebook`` executes a notebook top to bottom in a fresh kernel of this interpreter, with
values of its own put in place of the notebook's parameters, as papermill does: a cell after
the one tagged ``parameters`` assigns them. tests/docs/test_notebook.py runs the quick start
this way on a small budget. Run as a script, it executes the quick start with its own
parameters and saves it with its outputs, which the docs site shows:

    python tests/docs/notebook_support.py          # about a minute on two idle cores
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Mapping

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.ipynb"
PARAMETERS_TAG = "parameters"


def parameters_index(notebook: Any) -> int:
    """The index of the notebook's one code cell tagged ``parameters``; ``ValueError`` if there
    is none or more than one."""
    found = [i for i, cell in enumerate(notebook.cells)
             if cell.cell_type == "code" and PARAMETERS_TAG in cell.metadata.get("tags", [])]
    if len(found) != 1:
        raise ValueError(f"a notebook run with parameters needs one code cell tagged {PARAMETERS_TAG!r}, "
                         f"found {len(found)}")
    return found[0]


def with_parameters(notebook: Any, values: Mapping[str, Any]) -> Any:
    """``notebook`` with a cell after its ``parameters`` cell that assigns ``values`` (each a
    name the parameters cell assigns, as a Python literal); ``ValueError`` for another name."""
    from nbformat.v4 import new_code_cell

    index = parameters_index(notebook)
    source = notebook.cells[index].source
    unknown = sorted(name for name in values if f"{name} =" not in source)
    if unknown:
        raise ValueError(f"{unknown} are not parameters of the notebook; its parameters cell reads:\n{source}")
    cell = new_code_cell("\n".join(f"{name} = {value!r}" for name, value in values.items()))
    cell.metadata["tags"] = ["injected-parameters"]
    notebook.cells.insert(index + 1, cell)
    return notebook


def run_notebook(path: Path, values: Mapping[str, Any] | None = None, cwd: Path | None = None,
                 timeout: int = 600) -> Any:
    """Execute the notebook at ``path`` (with ``values`` for its parameters, if given) in a new
    kernel of this Python, in ``cwd`` (default: the notebook's folder), importing this checkout;
    return it with its outputs. A cell that raises raises ``nbclient``'s ``CellExecutionError``
    naming the cell; a cell running past ``timeout`` seconds, a ``TimeoutError``."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    if values:
        with_parameters(notebook, values)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved]))  # the kernel's, too
    try:
        nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": str(cwd or path.parent)}}).execute()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    return notebook


def main() -> int:
    import nbformat

    notebook = run_notebook(QUICKSTART)
    nbformat.write(notebook, QUICKSTART)
    print(f"ran and saved {QUICKSTART.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
