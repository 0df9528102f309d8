"""``--ray local`` (`training.harness.ray_backend.connect` with ``"local"``): the Ray
instance it starts listens on the loopback address only (every TCP socket that any of its
processes listens on) and serves no dashboard. Ray is shut down however the test ends. Needs
Ray core (the ``ray`` extra) and Linux's ``/proc``."""

from __future__ import annotations

import ipaddress
import os
import sys

import pytest

ray = pytest.importorskip("ray")

from training.harness import ray_backend  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp*


def descendants(root: int) -> set[int]:
    """``root`` and every process below it (Ray's GCS, raylet and agents are children of the
    driver; its workers, of the raylet)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    return inodes


def hex_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address as /proc/net/tcp* writes it (32-bit words in host byte order)."""
    raw = bytes.fromhex(text)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4)) if sys.byteorder == "little" else raw
    return ipaddress.ip_address(words)


def listening(pids: set[int]) -> list[tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]]:
    """(address, port) of every TCP socket in LISTEN state that one of ``pids`` holds."""
    inodes = socket_inodes(pids)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    if fields[3] == LISTEN and fields[9] in inodes:
                        address, port = fields[1].split(":")
                        found.append((hex_address(address), int(port, 16)))
        except FileNotFoundError:
            continue  # no IPv6 here
    return found


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1, how gRPC listens
    return (mapped or address).is_loopback


def test_proc_addresses_are_read_right():
    """The helper the test relies on: /proc's little-endian words, IPv4 and IPv6."""
    if sys.byteorder != "little":
        pytest.skip("the sample strings are little-endian")
    assert hex_address("0100007F") == ipaddress.ip_address("127.0.0.1")
    assert hex_address("00000000") == ipaddress.ip_address("0.0.0.0")
    mapped = hex_address("0000000000000000FFFF00000100007F")
    assert mapped == ipaddress.ip_address("::ffff:127.0.0.1") and is_loopback(mapped)
    assert not is_loopback(ipaddress.ip_address("::")) and not is_loopback(ipaddress.ip_address("0.0.0.0"))


@pytest.fixture
def local_ray(monkeypatch):
    """``--ray local``'s Ray instance (with ``RAY_USAGE_STATS_ENABLED`` unset, the usual case),
    shut down however the test ends."""
    monkeypatch.delenv(ray_backend.USAGE_STATS, raising=False)
    ray.shutdown()  # a module before this one may have left one connected
    try:
        yield ray_backend.connect(ray_backend.LOCAL)
    finally:
        ray.shutdown()


def command_lines(pids: set[int]) -> dict[int, list[str]]:
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                found[pid] = cmdline.read().decode(errors="replace").split("\0")
        except OSError:
            continue
    return found


def test_ray_local_listens_on_loopback_only_and_serves_no_dashboard(local_ray):
    @ray.remote
    def worker_pid() -> int:
        return os.getpid()

    workers = set(ray.get([worker_pid.remote() for _ in range(2)]))  # workers are up and listening
    processes = descendants(os.getpid())
    assert workers <= processes  # the walk finds Ray's processes (workers are the raylet's children)

    (node,) = ray.nodes()
    assert node["NodeManagerAddress"] == ray_backend.LOOPBACK
    gcs_host, gcs_port = ray.get_runtime_context().gcs_address.rsplit(":", 1)
    assert gcs_host == ray_backend.LOOPBACK

    sockets = listening(processes)
    ports = {port for _, port in sockets}
    # not vacuous: the GCS and the raylet's node manager are among what was found
    assert {int(gcs_port), node["NodeManagerPort"]} <= ports
    exposed = sorted(f"{address}:{port}" for address, port in sockets if not is_loopback(address))
    assert not exposed, f"Ray listens beyond loopback: {exposed}"

    # no dashboard: no web UI address, and Ray's API-server process runs with its frontend off
    assert ray._private.worker.global_worker.node.address_info["webui_url"] in ("", None)
    commands = command_lines(processes)
    dashboard = os.path.join("dashboard", "dashboard.py")
    api_servers = [c for c in commands.values() if any(part.endswith(dashboard) for part in c)]
    assert all("--disable-frontend" in c for c in api_servers)

    # Ray's usage reports (to the Ray project) are off in the processes it started, and this
    # process's environment is as it was
    assert ray_backend.USAGE_STATS not in os.environ
    (gcs,) = [pid for pid, c in commands.items() if c[0].endswith("gcs_server")]
    with open(f"/proc/{gcs}/environ", "rb") as environ:
        variables = dict(v.split(b"=", 1) for v in environ.read().split(b"\0") if b"=" in v)
    assert variables.get(ray_backend.USAGE_STATS.encode()) == b"0"
