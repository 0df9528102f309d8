"""No process outlives an interrupted test run (conftest.py's guard).

An inner pytest runs a test that starts a long-sleeping process the way torchrun, Ray or a
process pool do: a child that starts a grandchild in a new session and itself dies, so the
grandchild is nobody's child any more. The outer test interrupts the inner run (SIGINT as a
Ctrl-C, or SIGTERM) while the test sleeps, and checks that neither process survives. The inner
run gets SIGINT's default disposition (``helpers.interruptible``): a suite started in the
background by a shell ignores SIGINT, and an inner run that inherited that slept through the
Ctrl-C until the wait timed out (what looked like a slow pause on a loaded machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import interruptible

TESTS = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SPAWNING_TEST = textwrap.dedent('''
    import os, subprocess, sys, time

    def test_spawns_and_sleeps():
        pids = os.environ["PIDS_FILE"]
        # a direct child, and a grandchild orphaned by its parent (as torchrun's ranks can be)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        launcher = subprocess.run([sys.executable, "-c",
            "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
            " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"],
            capture_output=True, text=True, check=True)
        with open(pids, "w") as f:
            f.write(f"{child.pid} {launcher.stdout.strip()}")
        time.sleep(600)
''')


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_leaves_no_process(tmp_path, sig):
    (tmp_path / "test_inner.py").write_text(SPAWNING_TEST)
    pids_file = tmp_path / "pids"
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH", "")) if p)  # a checkout on PYTHONPATH stays on it
    env = dict(os.environ, PIDS_FILE=str(pids_file), PYTHONPATH=path)
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
         "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
        cwd=tmp_path, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=interruptible)  # Ctrl-C reaches it even where this run ignores SIGINT (started with `&`)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (pids_file.exists() and pids_file.read_text().strip()):
            assert inner.poll() is None, inner.stdout.read().decode()
            time.sleep(0.1)
        pids = [int(p) for p in pids_file.read_text().split()]
        assert len(pids) == 2 and all(alive(p) for p in pids)
        inner.send_signal(sig)
        inner.wait(timeout=120)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.1)
        survivors = [p for p in pids if alive(p)]
        assert not survivors, f"processes left after {sig.name}: {survivors}"
    finally:
        if inner.poll() is None:
            os.killpg(inner.pid, signal.SIGKILL)
            inner.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
