"""The versions of what produced a result (a report, a replay, a results file), so a figure can
be traced to its code: one function, `versions`, shared by ``pisti-play``'s replays and
``training``'s reports."""

from __future__ import annotations

import os
import platform
import sys

import numpy as np


def versions() -> dict[str, str]:
    """Versions of what produced a report (so a figure can be traced to its code): the package,
    the observation encoding, Python, NumPy, the platform, and the checkout's commit where there
    is one."""
    from .. import OBS_VERSION, __version__  # the package's own, set once in pisti_env/__init__.py

    out = {
        "pisti": __version__,
        "obs_version": str(OBS_VERSION),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
    }
    commit = _git_commit()
    if commit:
        out["git_commit"] = commit
    return out


def _git_commit() -> str | None:
    """The checkout's HEAD commit, read from ``.git`` beside the package without running git
    (``None`` if absent, as in an installed wheel)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # pisti_env/tools/..
    head = os.path.join(here, ".git", "HEAD")
    try:
        with open(head) as f:
            ref = f.read().strip()
        if ref.startswith("ref: "):
            with open(os.path.join(here, ".git", ref[5:])) as f:
                return f.read().strip()
        return ref
    except OSError:
        return None
