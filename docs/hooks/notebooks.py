"""MkDocs hook: the notebooks of ``examples/`` as pages of the site.

The notebooks live beside the other examples, where a reader of the repository finds them, not
under ``docs/``. This hook adds each one listed in ``NOTEBOOKS`` to the site's files under its
own name (``examples/quickstart.ipynb`` is the page ``quickstart.ipynb`` of the nav), before
mkdocs-jupyter turns ``.ipynb`` files into pages: hence the priority above the plugins' default.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ("examples/quickstart.ipynb",)


@event_priority(100)  # before mkdocs-jupyter's on_files (priority 0) wraps the notebooks
def on_files(files: Files, config) -> Files:  # MkDocs hook
    for relative in NOTEBOOKS:
        path = ROOT / relative
        if not path.is_file():
            raise FileNotFoundError(f"docs/hooks/notebooks.py lists {relative}, which does not exist")
        files.append(File(path.name, src_dir=str(path.parent), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files
