"""Every RL library's learner throughput on its step-by-step door and on its batched door, one run.

    python benchmarks/bench_libraries.py                                   # every library installed here
    python benchmarks/bench_libraries.py --only sb3 torchrl
    python benchmarks/bench_libraries.py --rllib-python /path/to/venv-rllib/bin/python

Runs each library's own benchmark (``benchmarks/bench_lib_<library>.py``) one after the other,
each in a process of its own, and prints their tables in turn; a library that is not installed
is reported and skipped. Each table gives learner steps per second on the library's old door
(the Python engine, step by step) and its new batched door, and the share of the time spent
inside our env against inside the library, all measured in the same process minutes apart, so
compare the lines of one run: the machine's speed moves from hour to hour. The reference of
the batched doors is our CleanRL-style loop on the same vector env (``bench_lib_torchrl.py``
measures it beside TorchRL) or the vector env alone (``bench_lib_rllib.py``,
``bench_lib_tianshou.py``).

RLlib pins its own gymnasium and lives in its own virtual environment: ``--rllib-python``
names that environment's interpreter (default: this one, where RLlib is usually missing).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# library -> (module whose presence means it is installed, benchmark script)
LIBRARIES = {
    "sb3": ("sb3_contrib", "bench_lib_sb3.py"),
    "tianshou": ("tianshou", "bench_lib_tianshou.py"),
    "torchrl": ("torchrl", "bench_lib_torchrl.py"),
    "rllib": ("ray.rllib", "bench_lib_rllib.py"),
}


def installed(python: str, module: str) -> bool:
    # importing, not finding: ray ships RLlib's code in an environment whose gymnasium it cannot run
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(LIBRARIES), default=sorted(LIBRARIES),
                        help="libraries to measure (default: all)")
    parser.add_argument("--rllib-python", default=sys.executable,
                        help="the Python of RLlib's own virtual environment")
    args = parser.parse_args(argv)
    root = HERE.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    failed = 0
    for name in args.only:
        module, script = LIBRARIES[name]
        python = args.rllib_python if name == "rllib" else sys.executable
        print(f"\n=== {name} ({script}) ===", flush=True)
        if not installed(python, module):
            print(f"{module} is not installed for {python}: skipped (pip install -e \".[{name}]\")")
            continue
        start = time.perf_counter()
        done = subprocess.run([python, str(HERE / script)], cwd=root, env=env)
        print(f"({time.perf_counter() - start:.0f} s, exit {done.returncode})", flush=True)
        failed += done.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
