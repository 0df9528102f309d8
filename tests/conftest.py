"""Shared fixtures. The settings matrix itself (tables × variant words × bluff) and every other
helper live in ``helpers.py``, which test modules import; this file only turns the matrix into
the ``settings_case`` fixture.

The run also guards against leftover processes: pytest becomes a child subreaper (Linux), so
whatever a test starts (torchrun ranks, Ray workers, pexpect children, forkserver workers) stays
its descendant even if the process in between dies, and at the end of the run, Ctrl-C and
SIGTERM included, every descendant still alive is stopped (SIGTERM, then SIGKILL).
``tests/project/test_process_cleanup.py`` interrupts a run and looks for survivors.

Tests marked ``long`` (training runs, soaks) are left out of a plain ``python -m pytest``;
``python -m pytest -m long`` runs them (CI does, in a step of its own), as does any ``-m``
expression that names ``long``.

``settings_case`` runs a test once per case of ``helpers.DEFAULT_MATRIX`` (every table, single
hands, with and without the shown stock bottom, with bluffs on the one-deck tables); a test that needs
other cases or a sub-selection parametrises it directly, e.g.
``@pytest.mark.parametrize("settings_case", cases("2p hand", "4p-solo 51 bluff"))`` or
``matrix(tables=("2p", "3p"), variants=("hand",), bluff=(True,))``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

import pytest

from helpers import DEFAULT_MATRIX, Case


@pytest.fixture(params=[p.values[0] for p in DEFAULT_MATRIX], ids=[p.id for p in DEFAULT_MATRIX])
def settings_case(request) -> Case:
    """One named case of the settings matrix (``case.id``, ``case.kwargs``, ``case.settings``)."""
    return request.param


# ------------------------------------------------------------------------------- long tests
# Modules slow as a whole: together about three quarters of the default run's time (measured
# with `python -m pytest --durations=0`), and the RL libraries' tests (tests/integration/, run
# where the libraries are installed). Their tests carry the `slow` mark, so that
# `python -m pytest -m "not slow"` is a quick loop of about two minutes on two cores; the
# default run and CI run them all.
SLOW_MODULES = {
    "test_batched.py", "test_pause.py", "test_cuda_check.py", "test_docs_examples.py", "test_trainer.py",
    "test_distributed.py", "test_benchmark.py", "test_invariants.py", "test_pisti_play_pty.py", "test_agents.py",
    "test_export.py", "test_exploit.py", "test_observation.py", "test_determinize.py", "test_bluffer.py",
    "test_illegal_actions.py", "test_to_game.py", "test_run_directory.py", "test_checkpoint_safety.py",
}


@pytest.hookimpl(tryfirst=True)  # before the -m selection reads the marks
def pytest_collection_modifyitems(config, items):
    """Mark the slow modules' tests ``slow``; leave ``long`` tests out unless the ``-m``
    expression asks about them."""
    for item in items:
        if item.path.name in SLOW_MODULES or item.path.parent.name == "integration":
            item.add_marker(pytest.mark.slow)
    if "long" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("long") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("long")])
        items[:] = kept


# ------------------------------------------------------------------ no process outlives the run
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> None:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants(root: int) -> list[int]:
    """Every live process below ``root``, read from /proc (Linux; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":  # a zombie is already dead; its parent reaps it
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


# multiprocessing's own helper processes (its resource tracker, the forkserver) end by
# themselves when this process exits (their pipe to it closes); killing them first makes
# Python's exit-time clean-up relaunch the tracker and print a KeyError traceback.
_MULTIPROCESSING_HELPERS = (b"from multiprocessing.resource_tracker import main",
                            b"from multiprocessing.forkserver import main")


def _is_multiprocessing_helper(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return False
    return any(helper in cmdline for helper in _MULTIPROCESSING_HELPERS)


def _stoppable(root: int) -> list[int]:
    """The descendants to stop: every one but multiprocessing's helpers (their own children,
    a forkserver's workers, are stopped)."""
    return [pid for pid in _descendants(root) if not _is_multiprocessing_helper(pid)]


def stop_descendants(grace: float = 3.0) -> list[int]:
    """SIGTERM every descendant of this process (`_stoppable`), SIGKILL those still there
    after ``grace`` s."""
    me = os.getpid()
    victims = _stoppable(me)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in victims:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and _stoppable(me):
            _reap()
            time.sleep(0.05)
        victims = _stoppable(me)
        if not victims:
            break
    _reap()
    return victims


def _reap() -> None:
    """Collect exited children (orphans handed to us as subreaper included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sigterm_as_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_configure(config):
    _become_subreaper()
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _sigterm_as_interrupt)  # so the cleanup below runs


def pytest_unconfigure(config):
    stop_descendants()
