"""Load test of ``pisti-play --web``: many games at once over loopback, each played to its end
by a scripted client.

The server runs in its own process (``python -m pisti_env.terminal.play_cli --web --no-browser``
on 127.0.0.1 and a free port, replays in a temporary folder), stopped however the run ends; the
clients are threads of this process with one ``httpx.Client`` each: every thread starts a game
(``POST /api/games``), reads it once (``GET``) and plays its first legal move until the game is
over. Prints the games, requests, the request rate and the median and 99th-percentile response
times.

Example::

    python benchmarks/bench_web.py --games 50 --opponent greedy
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def play_one(base: str, choices: dict, times: list[float], errors: list[str], barrier: threading.Barrier) -> None:
    with httpx.Client(base_url=base, timeout=120) as client:
        def call(method: str, path: str, body: dict | None = None) -> dict:
            start = time.perf_counter()
            response = client.request(method, path, json=body)
            times.append(time.perf_counter() - start)
            response.raise_for_status()
            return response.json()

        try:
            barrier.wait()
            created = call("POST", "/api/games", choices)
            token, state = created["token"], created["state"]
            state = call("GET", f"/api/games/{token}")
            while not state["done"]:
                state = call("POST", f"/api/games/{token}/move", {"action": state["legal"][0]["action"]})
        except Exception as error:  # noqa: BLE001 - counted and reported
            errors.append(f"{type(error).__name__}: {error}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=50, help="games played at once, one client thread each (default 50)")
    parser.add_argument("--opponent", default="greedy", help="the other seats' player (default greedy)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--match", action="store_true", help="matches to the target instead of single hands")
    args = parser.parse_args(argv)
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        cmd = [sys.executable, "-m", "pisti_env.terminal.play_cli", "--web", "--no-browser", "--port", str(port),
               "--opponent", args.opponent, "--replay-out", os.path.join(folder, "game.jsonl"),
               "--hint-policy", "greedy"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
        server = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(base + "/api/options", timeout=5).raise_for_status()
                    break
                except httpx.HTTPError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("the server did not start: " + (server.stderr.read() if server.poll() is not None else ""))
                    time.sleep(0.1)
            times: list[float] = []
            errors: list[str] = []
            barrier = threading.Barrier(args.games)
            choices = {"players": args.players, "match": args.match, "opponent": args.opponent,
                       "partnerships": args.players == 4}
            threads = [threading.Thread(target=play_one, args=(base, choices, times, errors, barrier))
                       for _ in range(args.games)]
            start = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - start
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    print(f"{args.games} concurrent games ({args.players} players vs {args.opponent}, "
          f"{'matches' if args.match else 'single hands'}) in {elapsed:.2f} s, {len(errors)} failed")
    print(f"{len(times)} requests: {len(times) / elapsed:.0f} requests/s; response time p50 "
          f"{1000 * percentile(times, 50):.1f} ms, p99 {1000 * percentile(times, 99):.1f} ms")
    for error in errors[:5]:
        print("  error:", error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
