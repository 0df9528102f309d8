"""Bytes per game of the batched engine and the vector env, measured, next to the estimates
their constructors check a size against (``BYTES_PER_OBSERVATION_ENTRY`` of
`pisti_env.batched.engine`, ``HOST_BYTES_PER_OBSERVATION_ENTRY`` of `pisti_env.envs.vector`).

Each case runs in a fresh process: it builds N games on the CPU, resets them and plays 30 steps
of legal moves, and reports (peak resident memory − memory before building) / N. An estimate
below the measured figure would let a size through that cannot fit; far above it would refuse
sizes that work.

    python benchmarks/bench_memory.py              # N = 50,000
    python benchmarks/bench_memory.py --games 200000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CASES = {"2 players": {}, "4 players": {"num_players": 4}, "bluff": {"bluff": True}}

CHILD = r"""
import json, resource, sys
import numpy as np
import torch
torch.set_num_threads(1)
kind, games, settings = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

from pisti_env.views.observation import ObservationEncoder
from pisti_env.rules import make_settings
from pisti_env.batched import BatchedPisti
from pisti_env.envs.vector import PistiVectorEnv
size = ObservationEncoder(make_settings(**settings)).layout.size
before = resident()
if kind == "engine":
    engine = BatchedPisti(games, **settings)
    out = engine.reset()
    for _ in range(30):
        out = engine.step(torch.multinomial(out.action_mask.float(), 1).squeeze(1))
else:
    env = PistiVectorEnv(games, **settings)
    env.reset(seed=0)
    for _ in range(30):
        env.step(env.action_masks().argmax(axis=1))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"per_game": (peak - before) / games, "entries": size}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50_000)
    args = parser.parse_args()
    from pisti_env.batched.engine import BYTES_PER_OBSERVATION_ENTRY
    from pisti_env.envs.vector import HOST_BYTES_PER_OBSERVATION_ENTRY

    estimates = {"engine": BYTES_PER_OBSERVATION_ENTRY, "vector": HOST_BYTES_PER_OBSERVATION_ENTRY}
    print(f"{'case':<10} {'kind':<7} {'bytes/game':>11} {'per entry':>10} {'estimate/entry':>15} {'ratio':>6}")
    for name, settings in CASES.items():
        for kind in ("engine", "vector"):
            done = subprocess.run([sys.executable, "-c", CHILD, kind, str(args.games), json.dumps(settings)],
                                  capture_output=True, text=True, check=True)
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            per_entry = figures["per_game"] / figures["entries"]
            print(f"{name:<10} {kind:<7} {figures['per_game']:>11,.0f} {per_entry:>10.1f} {estimates[kind]:>15} "
                  f"{estimates[kind] / per_entry:>6.2f}")


if __name__ == "__main__":
    main()
