"""Issue 17's GPU checks and figures in one command, for a machine with one CUDA GPU.

A lease of a GPU machine is short and starts bare, so everything the GPU has to show runs from
this one script, each step in its own process with its own time limit (a failing step does not
stop the next), its output in ``OUT/<step>.log``, and a summary at the end (``OUT/summary.txt``):

1. ``gpu``: torch, its CUDA and the GPU's name.
2. ``tests``: ``tests/batched/test_cuda.py`` (the engine against the CPU bit for bit, batched
   evaluation, a short training run) and the CUDA tests of ``test_batched.py`` and
   ``test_batched_compact.py``, with ``test_batched_device.py`` (the sync counts).
3. ``batched``: ``bench_batched.py`` at B = 4,096, 65,536 and 262,144 (target >= 50M steps/s).
4. ``train``: ``bench_train.py`` with settings for a GPU (32,768 games, 1M decisions per update;
   target >= 500k steps/s end to end).
5. ``eval``: ``bench_eval.py --only checkpoint``: 10,000 deals of the shipped policy against
   greedy with the batched engine on the GPU.

Estimated at about 5 minutes on an H200; each step stops at its own limit (2 to 5 minutes),
and ``--only`` runs some steps again. ``--quick`` shrinks every step (small batches, short runs) to
check the script itself on a CPU (``--device cpu --quick``, as ``tests/batched/test_cuda_check.py``).

On a machine without the package registry (no ``pip install``), gymnasium and pettingzoo
travel as wheels (``.whl/`` is git-ignored: a copy of the checkout must carry it); from the
repository root, on a machine with the registry::

    python -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl \\
        gymnasium==1.4.0 pettingzoo==1.27.0 farama-notifications==0.0.6

and there (the GPU image has torch, numpy, safetensors, tensorboard, matplotlib, rich, tqdm,
pytest)::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site python3 benchmarks/cuda_check.py --out "$OUT"

Usage: ``python benchmarks/cuda_check.py [--out DIR] [--device cuda] [--only STEP ...] [--quick]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("gpu", "tests", "batched", "train", "eval")

GPU_INFO = """
import torch
print("torch", torch.__version__, "CUDA", torch.version.cuda, "available", torch.cuda.is_available())
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"device {i}: {p.name}, {p.total_memory / 2**30:.0f} GiB, {p.multi_processor_count} SMs, capability {p.major}.{p.minor}")
"""


def commands(device: str, quick: bool) -> dict[str, tuple[list[str], int]]:
    """Each step's command line and time limit in seconds."""
    py = sys.executable
    sizes = ["64", "256"] if quick else ["4096", "65536", "262144"]
    return {
        "gpu": ([py, "-c", GPU_INFO], 120),
        "tests": ([py, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "tests/batched/test_cuda.py",
                   "tests/batched/test_batched.py::test_cuda_matches_cpu",
                   "tests/batched/test_batched_compact.py::test_cuda_uint8_format_matches_cpu_float",
                   "tests/batched/test_batched_device.py"], 300),
        "batched": ([py, "benchmarks/bench_batched.py", "--device", device, "--sizes", *sizes,
                     "--seconds", "0.3" if quick else "2"], 300),
        "train": ([py, "benchmarks/bench_train.py", "--device", device, "--envs", "256" if quick else "32768",
                   "--rollout", "8" if quick else "32", "--updates", "1" if quick else "5"], 240),
        "eval": ([py, "benchmarks/bench_eval.py", "--only", "checkpoint", "--device", device,
                  "--deals", "200" if quick else "10000", "--python-deals", "20" if quick else "100"], 180),
    }


def run_step(name: str, command: list[str], limit: int, out: Path, env: dict[str, str]) -> tuple[int | str, float]:
    """Runs one step, its output into ``out/<name>.log`` and echoed; returns (exit code or
    "timeout", seconds)."""
    print(f"== {name}: {' '.join(command[:3])} ... (limit {limit} s)", flush=True)
    start = time.perf_counter()
    with open(out / f"{name}.log", "w", encoding="utf-8") as log:
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=limit)
            output, code = done.stdout, done.returncode
        except subprocess.TimeoutExpired as stopped:
            raw = stopped.stdout or b""
            output, code = raw.decode(errors="replace") if isinstance(raw, bytes) else raw, "timeout"
        log.write(output)
    print(output, flush=True)
    return code, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "cuda-check", help="folder for the logs (default $OUT or cuda-check)")
    parser.add_argument("--device", default="cuda", help="torch device of the benchmarks (default cuda)")
    parser.add_argument("--only", nargs="+", choices=STEPS, default=list(STEPS), help="steps to run, in the usual order")
    parser.add_argument("--quick", action="store_true", help="tiny runs: a check of this script, no figures")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # The benchmarks run as scripts (sys.path[0] = benchmarks/): the package from this checkout.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    steps = commands(args.device, args.quick)
    results, failed = [], 0
    for name in STEPS:
        if name in args.only:
            command, limit = steps[name]
            code, seconds = run_step(name, command, limit, out, env)
            failed += code != 0
            results.append(f"{name:<8} {'ok' if code == 0 else f'FAILED ({code})':<14} {seconds:7.1f} s")
    summary = "\n".join(results)
    from pisti_env.util.atomic import write_text_atomic

    write_text_atomic(out / "summary.txt", summary + "\n")
    print("== summary\n" + summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
