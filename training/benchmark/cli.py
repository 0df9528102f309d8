"""``pisti-benchmark``: an agent's figures on the benchmark's tasks (see ``docs/benchmark.md``).

Examples::

    pisti-benchmark pisti-2p --task pisti-2p
    pisti-benchmark greedy --task pisti-2p --task pisti-3p --out runs/bench-greedy
    pisti-benchmark mypkg.agents:make --task pisti-2p --trust-code   # a factory returning a Player
    pisti-benchmark model.zip --task pisti-2p --trust-code           # an sb3-contrib MaskablePPO (a pickle)
    pisti-benchmark exports/pisti-2p.onnx --task pisti-2p     # a pisti-export file
    pisti-benchmark pimc --task pisti-2p --deal-set short --workers 2   # a slow agent: the short set
    pisti-benchmark pisti-2p --task pisti-2p --deals 500      # a quick look (not comparable)

AGENT is a player spec (``random``, ``greedy``, ``expert``, ``pimc:n=32``), a shipped policy's
name (``pisti-2p``, ``pisti-4p``, ``pisti-bluff``), a checkpoint directory, a ``pisti-export``
file (``.pt``, ``.onnx``), an SB3 ``MaskablePPO`` ``.zip``, an RLlib checkpoint directory or a
``module:function`` factory. Without ``--task`` every task plays. Output: a table on the
terminal and ``benchmark.json`` in ``--out`` (default ``runs/benchmark_<agent>``).

An SB3 zip, an RLlib checkpoint and a factory run code of the file's or the module's choosing
when loaded: they load only with ``--trust-code`` (docs/reliability.md). A factory's module is
imported from the current directory first, as ``python -m`` does: ``my_agents.py`` beside you
needs no ``PYTHONPATH``. Ctrl-C ends the run with exit status 130; an agent that raises
(``SystemExit`` and ``KeyboardInterrupt`` of its own included) or plays an illegal move is a
one-line error naming it, exit status 2; ``--debug`` prints the agent's traceback before it.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
from typing import Any, Sequence

from pisti_env.tools.flags import ArgumentParser, check_path, fail, non_negative_int, positive_int, torch_device, writable_dir

from .agents import AgentError
from .display_names import MAX_DISPLAY_CHARS
from .report_check import MAX_TEXT_CHARS, refused_character
from .tasks import DEAL_SETS, FULL, get_task, played_deal_set, task_names

DEVICES = ("cpu", "cuda")
def _one_line(text: str, limit: int) -> str:
    """``text`` if it is one line of at most ``limit`` characters that the leaderboard takes
    ([refused_character][training.benchmark.report_check.refused_character] finds nothing);
    else the ``ArgumentTypeError`` that says which."""
    if len(text) > limit:
        raise argparse.ArgumentTypeError(f"at most {limit} characters, got {len(text)}")
    bad = refused_character(text)
    if bad is not None:
        raise argparse.ArgumentTypeError(f"one line of text without control characters, got {ascii(bad)} in it")
    return text


def made_with_text(text: str) -> str:
    """``--made-with``'s check: one line of text, at most `MAX_TEXT_CHARS` characters (the
    leaderboard's bound on a report's texts)."""
    return _one_line(text, MAX_TEXT_CHARS)


def display_name_text(text: str) -> str:
    """``--display-name``'s check: a name of 1 to `MAX_DISPLAY_CHARS` characters on one line."""
    if not text.strip():
        raise argparse.ArgumentTypeError("a name of at least one visible character, got a blank one")
    return _one_line(text, MAX_DISPLAY_CHARS)


def _ci(stat: dict[str, Any], scale: float = 1.0, fmt: str = "{:+.2f}") -> str:
    """``mean ± half-width`` (both times ``scale``, the half-width with ``fmt``'s decimals)."""
    mean, half = stat["mean"] * scale, stat.get("half_width")
    if half is None or (isinstance(half, float) and math.isnan(half)):
        return fmt.format(mean)
    return f"{fmt.format(mean)} ± {fmt.replace('+', '').format(half * scale)}"


def format_benchmark(report: dict[str, Any]) -> str:
    """The report as a table for the terminal."""
    lines = [f"pisti-benchmark {report['agent']}"]
    for result in report["tasks"]:
        task = result["task"]
        unit = "margin / hand (95% CI)" if task["kind"] == "hand" else "match win rate % (95% CI)"
        count = f"{result['count']} duplicate {'deals' if task['kind'] == 'hand' else 'matches to ' + str(task['settings']['target'])}"
        deal_set, digest = played_deal_set(result)
        lines += ["", f"{task['id']}: {task['description']}",
                  f"  {count}, seed {result['seed']}, {deal_set} deal set {digest[:12]}"
                  + ("" if result["comparable"] else "  (NOT the task's deal set: not comparable)"),
                  f"  {'opponent':<14} {unit:>30} {'win rate %':>16} {'engine':>8} {'seconds':>8}"]
        for o in result["opponents"]:
            metric = _ci(o["metric"], 100.0, "{:.1f}") if task["kind"] == "match" else _ci(o["metric"])
            lines.append(f"  {o['opponent']:<14} {metric:>30} {_ci(o['win_rate'], 100.0, '{:.1f}'):>16} "
                         f"{o['engine']:>8} {o['seconds']:>8.1f}")
        rating = result.get("rating")
        panel = _ci(result["panel_mean"], 100.0 if task["kind"] == "match" else 1.0,
                    "{:.1f}" if task["kind"] == "match" else "{:+.2f}")
        lines.append(f"  panel mean {panel}"
                     + (f"   rating {rating['rating']:.0f} ± {rating['half_width']:.0f} (random 0, greedy 1000)"
                        if rating else "   rating: - (not comparable, or the task has no anchors)"))
        if "exploit" in result:
            edge = result["exploit"]["edge"]
            lines.append(f"  best-response edge after {result['exploit']['steps']:,} steps: "
                         f"{edge['mean']:+.2f} ± {edge['half_width']:.2f} per hand")
    v, hw = report["versions"], report["hardware"]
    lines += ["", f"pisti {v['pisti']} · {v['env_version']} · {hw['cpu']} ({hw['cpu_count']} cores, "
                  f"{hw['torch_threads']} torch threads, {hw['device']}) · {report['wall_seconds']:.1f} s"]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-benchmark", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", help="the agent: a player spec, shipped policy name, checkpoint directory, .pt/.onnx "
                                      "export, SB3 .zip, RLlib checkpoint or module:function")
    parser.add_argument("--task", action="append", choices=task_names(), default=None, metavar="TASK",
                        help=f"a task to play (repeatable; default all): {', '.join(task_names())}")
    parser.add_argument("--out", type=writable_dir, default=None, help="output folder (default runs/benchmark_<agent>)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or per-opponent lines")
    parser.add_argument("--seed", type=non_negative_int, default=None,
                        help="deal from this seed instead of the task's (the report is then not comparable)")
    parser.add_argument("--deal-set", choices=DEAL_SETS, default=FULL,
                        help="full: the task's whole deal set (default); short: its first deals only (a few "
                             "hundred), for agents too slow for the whole set; rated on the same scale, with "
                             "wider intervals")
    parser.add_argument("--deals", type=positive_int, default=None, metavar="N",
                        help="play only the first N deals (matches) of the deal set: a quick look, not comparable")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="processes for the tables played on the Python engine (agents without a batched "
                             "form, match tasks); the figures do not depend on it (default 1)")
    parser.add_argument("--made-with", type=made_with_text, default=None, metavar="COMMAND",
                        help="how the agent was made (e.g. its training command): kept in the report and shown "
                             "on the leaderboard")
    parser.add_argument("--display-name", type=display_name_text, default=None, metavar="NAME",
                        help="the agent's short name on the leaderboard (at most "
                             f"{MAX_DISPLAY_CHARS} characters; default: read from the agent spec, a file's "
                             "name without its suffix, a factory's function)")
    parser.add_argument("--trust-code", action="store_true",
                        help="allow an agent whose loading runs its own code: an SB3 .zip or RLlib checkpoint "
                             "(pickles) or a module:function factory; give it only for files and modules you trust")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print its whole traceback before the one-line message: where in the "
                             "agent's own code (act, act_batch, its factory) it raised")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")
    parser.add_argument("--device", type=torch_device, default="cpu", help="cpu, cuda or cuda:N for batched tables")
    parser.add_argument("--exploit-budget", type=positive_int, default=None, metavar="STEPS",
                        help="also train a best response of STEPS steps against the agent per hand task and report "
                             "its edge (slow: minutes per million steps on a 2-core CPU)")
    return parser


class _CtrlC:
    """Tells a real Ctrl-C (SIGINT, in this process) from a ``KeyboardInterrupt`` an agent raised
    itself: the handler notes the signal, then raises as Python's own does."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, signum: int, frame: Any) -> None:
        self.seen = True
        signal.default_int_handler(signum, frame)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ctrl_c = _CtrlC()
    try:
        previous, installed = signal.signal(signal.SIGINT, ctrl_c), True
    except ValueError:  # not the main thread: Python's own handling stays
        previous, installed = None, False
    try:
        return _main(args)
    except KeyboardInterrupt as interrupt:
        if ctrl_c.seen or not installed:
            print("pisti-benchmark: interrupted", file=sys.stderr)
            return 130
        error = AgentError(f"agent {args.agent!r} raised KeyboardInterrupt (no Ctrl-C was pressed)")
        error.__cause__ = interrupt
        return fail("pisti-benchmark", error, debug=args.debug)
    finally:
        if installed and previous is not None:  # None: a handler not set from Python, nothing to restore
            signal.signal(signal.SIGINT, previous)


def _main(args: argparse.Namespace) -> int:
    out = args.out or os.path.join("runs", "benchmark_" + "".join(
        ch if ch.isalnum() or ch in "-_" else "-" for ch in os.path.basename(os.path.normpath(args.agent))))
    try:
        check_path(writable_dir, out, "--out")
        import torch

        torch.set_num_threads(args.threads)
        if args.device != "cpu" and not torch.cuda.is_available():
            raise ValueError(f"--device {args.device}: no CUDA device is available")
        from .run import benchmark

        tasks = [get_task(name) for name in dict.fromkeys(args.task or task_names())]
        log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
        report = benchmark(args.agent, tasks, deal_set=args.deal_set, count=args.deals, seed=args.seed,
                           threads=args.threads, workers=args.workers, device=args.device, progress=False,
                           exploit_budget=args.exploit_budget, exploit_dir=out, made_with=args.made_with,
                           display_name=args.display_name, log=log,
                           trust_code=args.trust_code)
    except (ValueError, TypeError, ImportError, OSError, RuntimeError) as err:
        return fail("pisti-benchmark", err, debug=args.debug)
    from training.harness.report import write_json

    print(format_benchmark(report))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "benchmark.json")
    write_json(report, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
