"""The documentation site, built once per test session for the tests that read the built pages.

``built_site`` (a fixture: import it into a test module) runs ``mkdocs build --strict`` from the
repository into a temporary folder the first time any test asks for it, and hands every later
test the same folder; it is deleted when the session ends. A test that uses it is skipped where
the ``docs`` extra is missing (``pip install -e ".[docs]"``); a build that fails fails the test,
with the end of the build's log.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# what mkdocs.yml needs: MkDocs, the Material theme, mkdocstrings' Python handler, mkdocs-jupyter
DOCS_MODULES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_jupyter")
BUILD_TIMEOUT_S = 600  # about 20 s on two idle cores; a busy CI machine takes a few times that


def missing_docs_module() -> str | None:
    """The first module of the ``docs`` extra that is not installed, or None."""
    for name in DOCS_MODULES:
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # a missing parent package of a dotted name
            found = None
        if found is None:
            return name
    return None


@functools.cache
def _build() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pisti-site-"))
    atexit.register(shutil.rmtree, folder, True)
    site = folder / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if done.returncode != 0:
        raise AssertionError(f"mkdocs build --strict failed (status {done.returncode}); its log ends:\n"
                             f"{(done.stdout + done.stderr)[-4000:]}")
    return site


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The folder of the built site (``index.html`` and the rest), one build per session."""
    missing = missing_docs_module()
    if missing:
        pytest.skip(f"the docs extra is not installed (no module {missing}): pip install -e \".[docs]\"")
    return _build()
