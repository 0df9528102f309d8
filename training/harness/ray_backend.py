"""Ray as one more executor of the harness's chunks (``pisti-eval --ray [ADDRESS]``).

The harness cuts its games into chunks (`training.harness.duplicate.run_games`,
`training.harness.bluff_stats.bluff_statistics`); locally a chunk runs in this process or
a worker process. Here each chunk is a Ray task on a local Ray instance or an existing cluster.
A chunk's result depends only on its games' seeds, never on where or how often it ran, so the
results are those of the local run. A task whose worker dies (killed, out of memory, node
lost) is run again from the start of its chunk (Ray's ``max_retries``) and only its finished
run's result is kept: no game is counted twice or lost.

What a chunk needs (the table, the loader) goes to the object store once per run and is built
into players once per worker process, not once per chunk. A player spec that is a path on this
machine (a checkpoint directory) goes through the object store as the bytes of a tar archive
and is unpacked on each worker into a temporary directory, so the cluster's nodes need no
shared filesystem; the weights are never pickled by hand.

``ray`` is imported only here, and only when ``--ray`` is given (``pip install -e ".[ray]"``).
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import tarfile
import tempfile
import uuid
from typing import Any, Callable, Sequence

EXTRA = 'pip install -e ".[ray]"'
LOCAL = "local"  # --ray without an address: start a Ray instance on this machine
LOOPBACK = "127.0.0.1"  # all that a local instance listens on (see start_local)
USAGE_STATS = "RAY_USAGE_STATS_ENABLED"  # Ray's switch for reporting usage to the Ray project
MAX_RETRIES = 3  # runs of a task after its worker died

# Per worker process: the last run's built state (keyed by the run's token) and unpacked paths.
_STATE: dict[str, Any] = {}
_UNPACKED: dict[str, str] = {}


def import_ray() -> Any:
    """The ``ray`` module, or a ``RuntimeError`` naming the extra that installs it."""
    try:
        import ray
    except ImportError as error:
        raise RuntimeError(f"--ray needs Ray, which is not installed: {EXTRA}") from error
    return ray


def connect(address: str) -> Any:
    """Join Ray at ``address`` (``"local"``: a new instance on this machine, on the loopback
    address only and without a dashboard (`start_local`); ``"auto"``: the
    cluster this machine belongs to; ``"HOST:PORT"`` or ``"ray://HOST:PORT"``), unless this
    process is already connected. Returns the ``ray`` module."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"a Ray address must be 'local', 'auto' or HOST:PORT, got {address!r}")
    ray = import_ray()
    if ray.is_initialized():
        return ray
    quiet = dict(include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    if address == LOCAL:
        start_local(ray, **quiet)
    else:
        ray.init(address=address, **quiet)
    return ray


def start_local(ray: Any, **kwargs: Any) -> Any:
    """Start a Ray instance on this machine that listens on the loopback address only: its GCS,
    raylet, object manager, workers and runtime-env agent bind to 127.0.0.1, and the dashboard's
    web UI is not started (``include_dashboard=False``: Ray's API-server process still runs,
    with its frontend off). ``kwargs`` go to ``ray.init``; returns its context.

    Why the switch below: Ray binds its servers to 127.0.0.1 only when the node's address is
    127.0.0.1, but on Linux ``ray.init(_node_ip_address="127.0.0.1")`` replaces a loopback
    address with the machine's reachable one (it assumes the node may join a cluster), so
    everything would listen on every interface. Ray keeps a node on loopback where clusters are
    off (its ``ENABLE_RAY_CLUSTER`` constant, false on macOS and Windows); it is switched off
    for the start only, and a single-node instance needs nothing more from it.

    Ray's usage statistics (sent to the Ray project by the head's API server unless
    ``RAY_USAGE_STATS_ENABLED=0``) are off for this instance unless that variable is set."""
    from ray._private import ray_constants  # Ray's own switch; checked at call time

    kwargs = {"include_dashboard": False, **kwargs, "_node_ip_address": LOOPBACK}
    usage = os.environ.get(USAGE_STATS)
    if usage is None:
        os.environ[USAGE_STATS] = "0"  # read by the processes started now
    switch = hasattr(ray_constants, "ENABLE_RAY_CLUSTER")  # a Ray without it binds as it does
    saved = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    try:
        if switch:
            ray_constants.ENABLE_RAY_CLUSTER = False
        return ray.init(**kwargs)
    finally:
        if switch:
            ray_constants.ENABLE_RAY_CLUSTER = saved
        if usage is None:
            del os.environ[USAGE_STATS]


def cluster_cpus(ray: Any) -> int:
    """CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def ship_paths(ray: Any, specs: Sequence[str]) -> dict[str, Any]:
    """Object-store references to the bytes (a tar archive) of each spec that is a path here."""
    from pisti_env.agents import checkpoint_location

    shipped = {}
    for spec in dict.fromkeys(specs):
        location = checkpoint_location(spec)
        if location is not None:
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                tar.add(location[0], arcname="shipped")
            shipped[spec] = (ray.put(buffer.getvalue()), location[1])
    return shipped


def local_path(ray: Any, ref: Any) -> str:
    """Where the shipped path ``ref`` (of `ship_paths`) lies on this worker (unpacked once)."""
    key = ref.hex()
    if key not in _UNPACKED:
        folder = tempfile.mkdtemp(prefix="pisti-ray-")
        atexit.register(shutil.rmtree, folder, True)
        with tarfile.open(fileobj=io.BytesIO(ray.get(ref)), mode="r") as tar:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12
            tar.extractall(folder, **safe)
        _UNPACKED[key] = os.path.join(folder, "shipped")
    return _UNPACKED[key]


def _run_chunk(token: str, setup: Callable[[dict[str, str]], Any], shipped: dict[str, Any],
               play: Callable[[Any, Any], Any], job: Any) -> Any:
    """A task: build the run's state once per worker process, then play one chunk."""
    if token not in _STATE:
        import ray

        _STATE.clear()  # one run at a time per worker: drop the last run's players
        # a spec's path replaced by where it lies here, its options (``:play=...``) kept
        paths = {spec: local_path(ray, ref) + (f":{options}" if options else "")
                 for spec, (ref, options) in shipped.items()}
        _STATE[token] = setup(paths)
    return play(_STATE[token], job)


def map_chunks(
    setup: Callable[[dict[str, str]], Any],
    play: Callable[[Any, Any], Any],
    jobs: Sequence[Any],
    *,
    address: str,
    specs: Sequence[str] = (),
    on_done: Callable[[int], None] | None = None,
    max_retries: int = MAX_RETRIES,
) -> list[Any]:
    """Run ``play(state, job)`` for every job as Ray tasks; returns the results in job order.

    Args:
        setup: builds a worker's state from ``{spec: local path}`` for the shipped specs
            (picklable: it travels through the object store once per run).
        play: plays one chunk with that state (a module-level function).
        jobs: the chunks, each small and picklable (seeds and game ranges).
        address: where Ray runs, see `connect`.
        specs: player specs; those that are paths here are shipped (`ship_paths`).
        on_done: called with a job's index as its result arrives (a progress bar).
        max_retries: runs of a task again after its worker process died.
    """
    ray = connect(address)
    remote = ray.remote(max_retries=max_retries, num_cpus=1)(_run_chunk)
    token = uuid.uuid4().hex
    setup_ref = ray.put(setup)
    shipped = ship_paths(ray, specs)
    index_of = {}
    for index, job in enumerate(jobs):
        index_of[remote.remote(token, setup_ref, shipped, play, job)] = index
    results: list[Any] = [None] * len(jobs)
    pending = list(index_of)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            index = index_of[ref]
            results[index] = ray.get(ref)
            if on_done is not None:
                on_done(index)
    return results
