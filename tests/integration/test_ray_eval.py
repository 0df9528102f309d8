"""``pisti-eval --ray`` (issue 14): the harness's chunks as Ray tasks give the local run's
results, whatever the chunk size; a checkpoint travels through the object store; a worker
killed mid-run is retried without a deal counted twice or lost; and the command line runs
against a real cluster started with ``ray start --head`` on the loopback address.

Games are seeded per deal (R5, R6 through ``stream_seed``), so the figures do not depend on
where a deal was played. One local Ray instance (2 CPUs) serves the module; the real cluster
is its own process group, stopped (by its id) however the test ends. Needs the ``ray`` extra.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from pisti_env import make_settings  # noqa: E402
from pisti_env.agents import Player, make_player  # noqa: E402
from training.harness import bluff_stats  # noqa: E402
from training.harness.duplicate import Table, make_seatings, run_games  # noqa: E402
from training.harness.evaluate import evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "checkpoints" / "pisti-2p"
HAND = make_settings(num_players=2, target=None)


def _env() -> dict[str, str]:
    """This interpreter's environment, with the repository importable by Ray's workers."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module (2 CPUs, a small object store), shut down after."""
    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]  # the workers import the repository
    temp = tempfile.mkdtemp(prefix="rt-", dir="/tmp")  # Ray's socket paths must stay short
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=80 * 2**20, _temp_dir=temp,
             log_to_driver=False, logging_level="WARNING")
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _tables(report: dict) -> list[dict]:
    """A report's tables without their wall-clock seconds."""
    return [{k: v for k, v in table.items() if k != "seconds"} for table in report["tables"]]


def test_ray_chunks_give_the_local_results_r5_r6(local_ray):
    table = Table(("greedy", "random"), make_seatings([0, 1], HAND), HAND)
    local = run_games(table, 23, 11, workers=1)
    for chunk in (1, 5, 23):
        assert run_games(table, 23, 11, ray="local", chunk=chunk) == local
    seen = []
    report = evaluate(["expert", "random"], deals=12, matches=2, target=51, seed=4, bootstrap=20, ray="local",
                      progress=False)
    assert _tables(report) == _tables(evaluate(["expert", "random"], deals=12, matches=2, target=51, seed=4,
                                               bootstrap=20))
    assert report["settings"]["ray"] == "local"
    run_games(table, 9, 1, ray="local", chunk=2, progress=seen.append)  # the progress bar's feed
    assert sorted(seen) == [1, 2, 2, 2, 2]


@pytest.mark.parametrize("suffix", ["", ":play=sample"])
def test_checkpoint_travels_through_the_object_store(local_ray, suffix):
    """The checkpoint's files travel; a spec's options (``PATH:play=sample``) stay with it."""
    specs = [str(CHECKPOINT) + suffix, "greedy"]
    kwargs = dict(deals=4, matches=0, seed=2, bootstrap=0)
    assert _tables(evaluate(specs, ray="local", **kwargs)) == _tables(evaluate(specs, **kwargs))


def test_exploit_edge_on_ray_with_a_player_object(local_ray):
    from training.exploit.exploit import edge

    settings = make_settings(num_players=2)
    player = make_player(str(CHECKPOINT), settings=make_settings(num_players=2, target=None))  # in memory
    assert edge(player, "greedy", settings, 4, 1, ray="local") == edge(player, "greedy", settings, 4, 1)


class KillOnce(Player):
    """Greedy, except that the first one to reach its 30th move anywhere kills its own process
    (SIGKILL, as the OOM killer would), marked by creating ``marker``: mid-chunk, mid-game."""

    def __init__(self, marker: str, seed: int | None = None) -> None:
        self.marker, self.inner, self.moves = marker, make_player("greedy", seed, settings=HAND), 0

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, view):
        self.moves += 1
        if self.moves == 30:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.act(view)


def _kill_loader(marker: str, spec: str) -> Player:
    return KillOnce(marker) if spec == "killer" else make_player(spec, settings=HAND)


def test_a_killed_worker_is_retried_without_a_deal_lost_or_counted_twice(local_ray, tmp_path):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
    marker = tmp_path / "killed"
    table = Table(("killer", "random"), make_seatings([0, 1], HAND), HAND)
    seen = []
    distributed = run_games(table, 16, 3, ray="local", chunk=4, loader=functools.partial(_kill_loader, str(marker)),
                            progress=seen.append)
    assert marker.exists()  # a worker did die
    assert sum(seen) == 16
    local = run_games(table, 16, 3, workers=1, loader=functools.partial(_kill_loader, str(marker)))
    assert distributed == local


def test_bluff_stats_on_ray_match_the_local_run(local_ray):
    local = bluff_stats.bluff_statistics(["bluffer", "challenger"], 10, seed=3)
    distributed = bluff_stats.bluff_statistics(["bluffer", "challenger"], 10, seed=3, ray="local", chunk=3)
    assert json.dumps(distributed, sort_keys=True) == json.dumps(local, sort_keys=True)  # NaN rates included
    assert local["bluffer"]["claims"] > 0 and local["challenger"]["challenges"] > 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_cluster():
    """A real one-node cluster: ``ray start --head --block`` on 127.0.0.1 in its own process
    group; yields its address and the environment to reach it with; the group is killed by its id however the test ends (not
    ``ray stop``, which stops every Ray of this user on the machine)."""
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rc-", dir="/tmp")
    # Ray's servers listen on every interface whatever --node-ip-address says: a fresh token
    # (Ray's token authentication) keeps the test's cluster its own; the CLI gets it too.
    env = {**_env(), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": uuid.uuid4().hex}
    cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
           "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
           "--object-store-memory", str(80 * 2**20), "--temp-dir", temp]
    head = subprocess.Popen(cmd, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start --head did not come up (exit {head.poll()})")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}", env
    finally:
        for sig, grace in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):  # the group: ray start and its servers
            try:
                os.killpg(head.pid, sig)
                head.wait(timeout=grace)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow  # a real cluster's start and stop (~15 s idle); benchmarks/bench_scale.py uses Ray too
def test_pisti_eval_cli_against_a_real_cluster(ray_cluster, tmp_path):
    address, env = ray_cluster
    out = tmp_path / "eval"
    cmd = [sys.executable, "-m", "training.harness.evaluate", "greedy", "random", "--deals", "10", "--matches", "0",
           "--bootstrap", "0", "--seed", "6", "--ray", address, "--no-plots", "--out", str(out)]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "10/10" in done.stderr  # the progress bar, as locally
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["ray"] == address
    local = evaluate(["greedy", "random"], deals=10, matches=0, bootstrap=0, seed=6)
    assert _tables(report) == _tables(local)
