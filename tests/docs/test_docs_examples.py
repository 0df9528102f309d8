"""Every code block of README.md and docs/ runs, so the documentation cannot drift from the code.

A page runs as a reader would run it: its blocks in order, in one scratch directory (where
``checkpoints/``, ``examples/`` and ``benchmarks/`` are the repository's and ``docs/`` is an empty
folder), its ``python`` blocks in one namespace. So a command may use what an earlier one
wrote (``pisti-train --resume`` the run above it, ``pisti-replay`` the game ``pisti-play``
saved), and a page whose commands clash (two runs into one ``--out``) fails as it would for
its reader.

- ``python`` blocks are executed.
- ``bash`` blocks: every ``pisti-*`` command, ``python -m MODULE`` and ``python FILE.py`` line is
  first parsed with that command's real parser (a flag that no longer exists or a value its
  checker refuses fails here), then **run** in-process on a tiny budget: ``BUDGETS`` below
  names, per command, the flags that bound its work and the values the test puts in place of
  the documented ones (``--steps 5e6`` becomes ``--steps 2048``, ``--deals 10000`` becomes
  ``--deals 4``), the switches it adds (``--quiet``), and what it types (``pisti-play`` reads
  its moves from a pipe). Player specs ``pimc…`` get ``n=2``. A command ends with status 0 or
  the test fails, showing its output. Every runnable command needs an entry in ``BUDGETS``:
  a newly documented command is a decision about how to run it, not a silent pass.
- Lines that are not ours to run (``pip``, ``mkdocs``, ``ray start``, ``torchrun``, …) are
  listed in ``NOT_RUN`` with the reason; any other line fails the test.
- Other languages (``text`` output, ``json``) are illustration and are not run.
- A block that cannot run here says so on the line before it: ``<!-- docs-test: skip (why) -->``
  (installing packages, a cluster, a GPU, a placeholder for the reader's own file); its
  commands are still parsed.
- A block the page asks the reader to save as a file says so on the line before it:
  ``<!-- docs-test: file my_agents.py -->``; the test writes it there, in the scratch directory,
  for the commands after it (``pisti-benchmark my_agents:make``) and does not run it itself.
- Every ``python`` block imports or defines every name it uses (``test_python_blocks_import_what_they_use``,
  a static check, skipped blocks included): a reader may copy any one block on its own.
- A page about an optional library names it once near the top:
  ``<!-- docs-test: requires ray.rllib -->``; its blocks run where the module imports (CI runs
  ``tests/docs`` again in each library's environment) and the page is skipped elsewhere. The
  same marker right before a block applies to that block alone.
- A command whose tiny run is still long (``Budget.long``: several processes, a cluster of
  workers) is only parsed in the default run; the page's ``long`` variant
  (``python -m pytest tests/docs -m long``, a CI step of its own) runs all of it.

Generated sections (``<!-- pisti:... -->`` markers, docs/hooks/generate.py) are rendered by
``test_generated_sections_render``, so a marker naming a bad setting or command fails here too.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import importlib
import importlib.util
import io
import os
import re
import runpy
import shlex
import signal
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<why>[^)]+)\)\s*-->")
REQUIRES = re.compile(r"<!--\s*docs-test:\s*requires\s+(?P<modules>[\w., ]+?)\s*-->")
FILE = re.compile(r"<!--\s*docs-test:\s*file\s+(?P<name>[\w.-]+)\s*-->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*$")
SHELL = ("bash", "sh", "shell", "console")


# ------------------------------------------------------------------------------ the budgets
@dataclass(frozen=True)
class Budget:
    """How the test runs one documented command on a tiny budget.

    ``flags``: flag -> the value that replaces the documented one (or is added when the command
    does not give the flag); ``None`` adds a switch. ``words``: a placeholder word -> what to
    pass instead (``REV`` -> ``HEAD``). A flag set to ``OMIT`` is left out (documented or not). ``stdin``: what the command reads. ``long``: why even
    the tiny run is long (it then runs only with ``-m long``); ``long_when``: the same for the
    command lines that give a flag (``--nproc``, ``--ray``). ``when``: extra flags for the
    command lines that give a flag (``--resume`` extends the run it continues).
    """

    flags: dict[str, str | None] = field(default_factory=dict)  # OMIT: a flag neither given nor added
    words: dict[str, str] = field(default_factory=dict)
    stdin: str = ""
    long: str | None = None
    long_when: dict[str, str] = field(default_factory=dict)
    when: dict[str, dict[str, str | None]] = field(default_factory=dict)


OMIT = "<omit>"
TRAIN = {"--steps": "2048", "--envs": "64", "--rollout": "16", "--eval-deals": "10", "--threads": "1", "--quiet": None}
EXPLOIT = {"--steps": "1024", "--envs": "64", "--rollout-steps": "16", "--curve-points": "1", "--curve-deals": "4",
           "--final-deals": "4", "--threads": "1", "--quiet": None}
EVAL = {"--deals": "4", "--matches": "1", "--workers": "1", "--threads": "1", "--quiet": None}
# pisti-play: a card number at a move prompt, "b" (believe) at a claim; each is refused at the
# other prompt and asked again, so the game goes on to its end whichever comes.
MOVES = "1\nb\n" * 4000

BUDGETS: dict[str, Budget] = {
    # the pisti-* commands
    "pisti-train": Budget(TRAIN, long_when={"--nproc": "starts torchrun ranks"},
                          when={"--resume": {"--steps": "4096"},
                                # a wall-clock budget sizes the run itself: a few seconds, no --steps
                                "--budget": {"--budget": "5s", "--steps": OMIT}}),
    "pisti-eval": Budget(EVAL, long_when={"--ray": "starts Ray"}),
    "pisti-exploit": Budget(EXPLOIT, long_when={"--ray": "starts Ray"}),
    "pisti-bluff-stats": Budget({"--deals": "4"}, long_when={"--ray": "starts Ray"}),
    "pisti-benchmark": Budget({"--deals": "4", "--threads": "1", "--quiet": None}),
    "pisti-export": Budget(),
    # the learning protocol: a seed trains for minutes and is rated on the whole deal set, so its
    # pages' pisti-learn blocks are marked skip (parsed only); a tiny run is tests/learning's
    "pisti-learn": Budget({"--budget": "4096", "--seeds": "1000", "--quiet": None},
                          long="trains a seed and rates it on the task's whole deal set"),
    "pisti-learn-report": Budget({"--reps": "200"}),
    "pisti-play": Budget({"--delay": "0", "--no-color": None}, stdin=MOVES),
    "pisti-replay": Budget(),
    "pisti-solve-claims": Budget(),
    "pisti-capture-value": Budget({"--states": "8", "--rollouts": "1"}),
    "pisti-demo": Budget(),
    "training.trainer": Budget(TRAIN),
    "training.benchmark.leaderboard": Budget(),
    # benchmarks: each measures for seconds to minutes; here one short slice of each
    "benchmarks/bench_env.py": Budget({"--seconds": "0.2", "--rounds": "1"}),
    "benchmarks/bench_batched.py": Budget({"--seconds": "0.05", "--sizes": "64"}),
    "benchmarks/bench_batched_ab.py": Budget({"--rounds": "1", "--steps": "2", "--configs": "2:plain:uint8:256"},
                                             words={"REV": "HEAD"}),
    "benchmarks/bench_vector.py": Budget({"--seconds": "0.05", "--sizes": "16"}),
    "benchmarks/bench_eval.py": Budget({"--deals": "20", "--python-deals": "4", "--pimc-deals": "1", "--pimc": "pimc:n=2",
                                        "--workers": "1", "--threads": "1"}),
    "benchmarks/bench_train.py": Budget({"--updates": "1", "--envs": "64", "--rollout": "8", "--threads": "1"}),
    "benchmarks/bench_exploit_target.py": Budget({"--updates": "1", "--envs": "16", "--rollout": "4", "--threads": "1"}),
    "benchmarks/bench_scale.py": Budget({"--deals": "4", "--steps": "1024", "--envs": "64", "--rollout": "8"},
                                        long="starts Ray workers and torchrun ranks"),
    "benchmarks/soak.py": Budget({"--hands": "1", "--only": "2p"}),
    "benchmarks/bench_web.py": Budget({"--games": "2"}),
    "benchmarks/cuda_check.py": Budget({"--quick": None, "--device": "cpu"}, long="runs the CUDA test files and every GPU benchmark step"),
    "benchmarks/bench_lib_sb3.py": Budget({"--steps": "256", "--num-envs": "16", "--threads": "1"},
                                          long="trains on both doors (20 s or more)"),
    "benchmarks/bench_lib_tianshou.py": Budget({"--steps": "256", "--envs": "16", "--steps-per-env": "8", "--threads": "1"},
                                               long="trains on every door (50 s or more)"),
    "benchmarks/bench_lib_torchrl.py": Budget({"--steps": "256", "--num-envs": "16", "--old-steps": "64",
                                               "--selfplay-envs": "4", "--selfplay-steps": "64", "--tables": "2",
                                               "--threads": "1"}, long="trains on every door (40 s or more)"),
    "docs/scripts/make_pictures.py": Budget({"--out": "img", "--size": "160x120"}),
    # the recipes: train for seconds, evaluate on a few deals
    "examples/cleanrl_ppo_vector.py": Budget({"--minutes": "0.002", "--eval-deals": "4"}),
    "examples/sb3_maskable_ppo.py": Budget({"--minutes": "0", "--steps": "512", "--num-envs": "16", "--deals": "2"}),
    "examples/sb3_selfplay.py": Budget({"--minutes": "0", "--steps": "512", "--num-envs": "16", "--snapshot-every": "128",
                                        "--envs": "2", "--rollout": "256", "--deals": "2"}),
    "examples/rllib_ppo.py": Budget({"--minutes": "0", "--steps": "500", "--deals": "2"}, long="starts Ray"),
    "examples/rllib_ppo_vector.py": Budget({"--minutes": "0", "--steps": "1024", "--deals": "2", "--env-runners": "0",
                                            "--envs-per-runner": "16", "--train-batch-size": "256", "--minibatch-size": "128"},
                                           long="starts Ray"),
    "examples/tianshou_masked.py": Budget({"--minutes": "0", "--total-steps": "512", "--envs": "16", "--steps-per-env": "8",
                                           "--deals": "2"}),
    "examples/tianshou_pettingzoo_selfplay.py": Budget({"--steps": "256", "--envs": "2", "--hands": "2", "--deals": "2"}),
    "examples/torchrl_masked.py": Budget({"--minutes": "0", "--frames": "512", "--num-envs": "16", "--deals": "2"}),
    "examples/torchrl_selfplay.py": Budget({"--minutes": "0", "--frames": "512", "--num-envs": "16", "--deals": "2"}),
    "examples/torchrl_pettingzoo.py": Budget({"--frames": "256", "--frames-per-batch": "128", "--envs": "2", "--deals": "2"}),
    "examples/openspiel_ismcts.py": Budget({"--n": "4", "--deals": "2"}),
}

# Lines of shell blocks that are not ours to run, by their first words.
NOT_RUN = {
    "pip": "installs packages",
    "sudo": "installs system packages",
    "python -m pip": "installs packages",
    "python -m venv": "makes a virtual environment",
    "python -m pytest": "the test suite itself",
    "mkdocs": "the site's build, a CI step of its own",
    "ray": "starts or joins a Ray cluster",
    "torchrun": "starts ranks on GPUs or several nodes",
    "bash benchmarks/reference_reports.sh": "the full reference benchmark of every task (hours)",
}


# ------------------------------------------------------------------------------- the blocks
@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None
    requires: tuple[str, ...] = ()
    file: str | None = None  # the file the reader saves the block as

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    files = [ROOT / "README.md"]
    files += sorted(p for p in (ROOT / "docs").rglob("*.md") if "hooks" not in p.parts)
    return files


def modules_of(marker: re.Match) -> tuple[str, ...]:
    return tuple(marker.group("modules").replace(",", " ").split())


def blocks_of(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the marker line before each, if any."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group("indent"), m.group("lang"), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        skip, requires, file = SKIP.search(before), REQUIRES.search(before), FILE.search(before)
        found.append(Block(path, start + 1, lang, "\n".join(body) + "\n", skip.group("why") if skip else None,
                           modules_of(requires) if requires else (), file.group("name") if file else None))
        i += 1
    return found


def page_requires(page: Path) -> tuple[str, ...]:
    """The modules a page's ``requires`` markers name, except those right before one block."""
    lines = page.read_text(encoding="utf-8").split("\n")
    modules: list[str] = []
    for n, line in enumerate(lines):
        marker = REQUIRES.search(line)
        if not marker:
            continue
        after = next((lines[j] for j in range(n + 1, len(lines)) if lines[j].strip()), "")
        if not FENCE.match(after):
            modules += modules_of(marker)
    return tuple(modules)


def missing(modules: tuple[str, ...]) -> str | None:
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            return module
    return None


ALL_BLOCKS = [b for f in doc_files() for b in blocks_of(f)]
RUN_PAGES = sorted({b.path for b in ALL_BLOCKS if b.lang == "python" or b.lang in SHELL})


# ----------------------------------------------------------------------------- the commands
def scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return dict(tomllib.load(f)["project"]["scripts"])


SCRIPTS = scripts()


def commands_of(code: str) -> list[list[str]]:
    """The command lines of a shell block: continuations joined, comments cut, `&&` split."""
    joined = re.sub(r"\\\n", " ", code)
    out = []
    for line in joined.split("\n"):
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return [c for c in out if c]


@dataclass(frozen=True)
class Command:
    kind: str  # "entry" (a pisti-* script), "module" (python -m), "file" (python FILE.py)
    target: str  # module:function, module name or path
    key: str  # its name in BUDGETS
    args: list[str]


def runnable(argv: list[str]) -> Command | None:
    """The command a line runs, if it is one of ours; None for pip, ray, torchrun, pytest …"""
    if argv[0] in SCRIPTS:
        return Command("entry", SCRIPTS[argv[0]], argv[0], argv[1:])
    if argv[0] in ("python", "python3") and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2 and argv[2] not in ("pytest", "pip", "venv"):
            return Command("module", argv[2], argv[2], argv[3:])
        if argv[1].endswith(".py"):
            return Command("file", argv[1], argv[1], argv[2:])
    return None


def not_run_reason(argv: list[str]) -> str | None:
    words = [Path(argv[0]).name, *argv[1:]]
    if words[0] == "python3":
        words[0] = "python"
    return next((why for start, why in NOT_RUN.items() if words[:len(start.split())] == start.split()), None)


def given_flags(args: list[str]) -> set[str]:
    return {a.split("=", 1)[0] for a in args if a.startswith("-")}


def tiny(command: Command, budget: Budget) -> list[str]:
    """The command's arguments with its budget's flags and words put in."""
    flags = dict(budget.flags)
    for flag, extra in budget.when.items():
        if flag in given_flags(command.args):
            flags.update(extra)
    args, rest = [], list(command.args)
    while rest:
        word = rest.pop(0)
        name, equals, _ = word.partition("=")
        if name not in flags:
            args.append(budget.words.get(word, pimc_budget(word)))
            continue
        value = flags.pop(name)
        if value is not None and not equals:  # the documented value(s): the words up to the next flag
            while rest and not rest[0].startswith("-"):
                rest.pop(0)
        if value != OMIT:
            args += [name] if value is None else [name, value]
    for flag, value in flags.items():
        if value != OMIT:
            args += [flag] if value is None else [flag, value]
    return args


def pimc_budget(word: str) -> str:
    """``pimc`` / ``pimc:n=32,rollout=greedy`` with 2 determinizations (a search of seconds per move)."""
    if word != "pimc" and not word.startswith("pimc:"):
        return word
    options = [o for o in word.partition(":")[2].split(",") if o and not o.startswith("n=")]
    return "pimc:" + ",".join(["n=2", *options])


def expand(args: list[str]) -> list[str]:
    """Shell globs (``runs/play/*.jsonl``) expanded in the working directory, as a shell does."""
    out = []
    for word in args:
        matches = sorted(glob.glob(word)) if any(c in word for c in "*?[") else []
        out += matches or [word]
    return out


class Parsed(Exception):
    """Raised when the outermost parse succeeded: the command line is valid."""


@contextlib.contextmanager
def process_state(stdin: str = ""):
    """What a command may change in this process (argv, stdin, signal handlers, torch threads,
    sys.path) put back afterwards."""
    import torch

    saved = (list(sys.argv), sys.stdin, list(sys.path), torch.get_num_threads())
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    sys.stdin = io.StringIO(stdin)
    try:
        yield
    finally:
        sys.argv, sys.stdin, sys.path[:] = saved[0], saved[1], saved[2]
        torch.set_num_threads(saved[3])
        for s, handler in handlers.items():
            signal.signal(s, handler)


def invoke(command: Command, args: list[str]) -> None:
    """Run a command in this process, as its console script, ``python -m`` or ``python FILE``."""
    if command.kind == "entry":
        module_name, function = command.target.split(":")
        status = getattr(importlib.import_module(module_name), function)(args)
        if status:
            raise SystemExit(status)
    elif command.kind == "module":
        sys.argv = [command.target, *args]
        runpy.run_module(command.target, run_name="__main__", alter_sys=True)
    else:
        path = ROOT / command.target
        sys.argv = [str(path), *args]
        sys.path.insert(0, str(path.parent))
        runpy.run_path(str(path), run_name="__main__")


def parse_only(command: Command) -> str | None:
    """Run a command up to its argument parsing; the parser's error message, or None if valid."""
    original = argparse.ArgumentParser.parse_known_args
    depth = 0

    def parse_known_args(self, *a, **k):
        nonlocal depth
        depth += 1
        try:
            result = original(self, *a, **k)
        finally:
            depth -= 1
        if depth == 0:
            if result[1]:  # what parse_args would refuse (none of our commands keeps unknown words)
                self.error(f"unrecognized arguments: {' '.join(result[1])}")
            raise Parsed
        return result

    err = io.StringIO()
    argparse.ArgumentParser.parse_known_args = parse_known_args
    try:
        with process_state(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            invoke(command, command.args)
    except Parsed:
        return None
    except SystemExit as exc:
        if exc.code in (0, None):
            return None  # --help
        return err.getvalue().strip() or f"exit {exc.code}"
    finally:
        argparse.ArgumentParser.parse_known_args = original
    return "the command never parsed its arguments"


def run(command: Command, budget: Budget) -> str | None:
    """Run a command on its tiny budget; None when it ended with status 0, else what it printed."""
    args = expand(tiny(command, budget))
    out = io.StringIO()
    status: object = 0
    try:
        with process_state(budget.stdin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            invoke(command, args)
    except SystemExit as exc:
        status = exc.code
    except Exception as exc:  # noqa: BLE001 - report which command failed and how
        status = f"{type(exc).__name__}: {exc}"
    if status in (0, None):
        return None
    return f"ran as: {shlex.join([command.key, *args])}\n    status {status}; its output ends:\n{out.getvalue()[-3000:]}"


def long_reason(command: Command) -> str | None:
    budget = BUDGETS.get(command.key)
    if budget is None:
        return None
    return budget.long or next((why for flag, why in budget.long_when.items() if flag in given_flags(command.args)), None)


def is_long_page(page: Path) -> bool:
    return any(
        (c := runnable(argv)) is not None and long_reason(c)
        for b in ALL_BLOCKS if b.path == page and b.lang in SHELL and not b.skip
        for argv in commands_of(b.code))


def needs_library(page: Path) -> bool:
    """A page with a ``requires`` marker, of the page or of a block: CI runs it again where the
    libraries are installed (``-m needs_library``); the others ran in the README's command."""
    return bool(REQUIRES.search(page.read_text(encoding="utf-8")))


def page_marks(page: Path, *marks: pytest.MarkDecorator) -> list[pytest.MarkDecorator]:
    return [*marks, *([pytest.mark.needs_library] if needs_library(page) else [])]


PAGE_CASES = [pytest.param(p, False, id=str(p.relative_to(ROOT)), marks=page_marks(p)) for p in RUN_PAGES]
PAGE_CASES += [pytest.param(p, True, id=f"{p.relative_to(ROOT)}[long]", marks=page_marks(p, pytest.mark.long))
               for p in RUN_PAGES if is_long_page(p)]


# -------------------------------------------------------------------------------- the tests
@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working directory holding links to the repository's checkpoints, examples and benchmarks,
    and an empty ``docs/``."""
    for name in ("checkpoints", "examples", "benchmarks"):
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "docs").mkdir()  # what a page's commands write under docs/ (the leaderboard, pictures) stays here
    monkeypatch.chdir(tmp_path)
    # what the commands start (torchrun ranks, pool workers) imports this checkout
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    yield tmp_path
    # a module a page saved and a command imported (my_agents.py) goes with its folder: the next
    # page's file of that name is imported afresh
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def run_shell_block(block: Block, long: bool) -> list[str]:
    """Parse and run a shell block's commands in order; the failures (it stops at the first run that fails)."""
    failures = []
    for argv in commands_of(block.code):
        command = runnable(argv)
        if command is None:
            if not_run_reason(argv) is None:
                failures.append(f"{shlex.join(argv)}\n    not a command this test knows: add it to NOT_RUN with "
                                f"the reason, or mark the block <!-- docs-test: skip (why) -->")
            continue
        problem = parse_only(command)
        if problem:
            failures.append(f"{shlex.join(argv)}\n    refused by its parser: {problem}")
            continue
        if block.skip or (long_reason(command) and not long):
            continue
        if command.key not in BUDGETS:
            failures.append(f"{shlex.join(argv)}\n    no entry for {command.key!r} in BUDGETS: say how it runs on a tiny budget")
            continue
        problem = run(command, BUDGETS[command.key])
        if problem:
            failures.append(f"{shlex.join(argv)}\n    {problem}")
            break
    return failures


@pytest.mark.parametrize("page, long", PAGE_CASES)
def test_page_runs(page, long, scratch):
    absent = missing(page_requires(page))
    if absent:
        pytest.skip(f"{page.name} needs {absent}")
    import torch

    torch.set_num_threads(1)
    namespace: dict = {"__name__": "__docs__"}
    for block in (b for b in ALL_BLOCKS if b.path == page):
        if block.requires and missing(block.requires):
            continue
        if block.file:
            (scratch / block.file).write_text(block.code, encoding="utf-8")
        elif block.lang in SHELL:
            failures = run_shell_block(block, long)
            assert not failures, f"{block.id}:\n" + "\n".join(failures)
        elif block.lang == "python" and not block.skip:
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    exec(compile(block.code, block.id, "exec"), namespace)
                except Exception as exc:  # noqa: BLE001 - say which block failed
                    raise AssertionError(f"{block.id} failed: {type(exc).__name__}: {exc}") from exc


def test_every_block_is_found_and_labelled():
    assert len(ALL_BLOCKS) >= 10, "the documentation should hold code blocks"
    for block in ALL_BLOCKS:
        assert block.lang, f"{block.id}: a code block names its language (python, bash, text …)"


def test_budgets_name_real_commands():
    # a stale entry (a renamed example, a removed script) is a budget nobody uses
    for key in BUDGETS:
        assert key in SCRIPTS or (ROOT / key).is_file() or importlib.util.find_spec(key) is not None, key


def test_tiny_replaces_documented_values_and_adds_the_rest():
    command = Command("entry", SCRIPTS["pisti-train"], "pisti-train", ["--steps", "5e6", "--out", "runs/short"])
    assert tiny(command, Budget({"--steps": "2048", "--quiet": None})) == ["--steps", "2048", "--out", "runs/short", "--quiet"]
    resumed = Command("entry", "", "pisti-train", ["--resume", "--steps=1e8"])
    assert tiny(resumed, Budget({"--steps": "2048"}, when={"--resume": {"--steps": "4096"}})) == ["--resume", "--steps", "4096"]
    players = Command("entry", "", "pisti-eval", ["pimc:n=32,rollout=greedy", "pimc", "--hidden-sizes", "8", "8"])
    assert tiny(players, Budget({"--hidden-sizes": "4"})) == ["pimc:n=2,rollout=greedy", "pimc:n=2", "--hidden-sizes", "4"]
    timed = Command("entry", "", "pisti-train", ["--budget", "10m", "--steps", "1e6"])
    assert tiny(timed, Budget({"--steps": "2048"}, when={"--budget": {"--budget": "5s", "--steps": OMIT}})) == ["--budget", "5s"]


def test_a_bad_command_fails(scratch):
    # what the page test relies on: an unknown flag is refused by the parse, a failing run is reported
    assert "--ladder" in parse_only(runnable(["pisti-eval", "random", "greedy", "--ladder"]))
    assert parse_only(runnable(["pisti-eval", "random", "greedy", "--deals", "3"])) is None
    failed = run(runnable(["pisti-eval", "no-such-player", "greedy"]), BUDGETS["pisti-eval"])
    assert failed is not None and "no-such-player" in failed
    assert run(runnable(["pisti-eval", "random", "greedy"]), BUDGETS["pisti-eval"]) is None


def test_generated_sections_render():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        generate = importlib.import_module("generate")
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    for page in doc_files():
        text = page.read_text(encoding="utf-8")
        rendered = generate.render(text)
        assert "<!-- pisti:" not in rendered, f"{page}: a marker was left unrendered"


def test_skip_markers_give_a_reason():
    for page in doc_files():
        for line in page.read_text(encoding="utf-8").split("\n"):
            if "docs-test:" in line:
                assert SKIP.search(line) or REQUIRES.search(line) or FILE.search(line), (
                    f"{page}: a docs-test marker reads <!-- docs-test: skip (why) -->, "
                    f"<!-- docs-test: requires MODULE --> or <!-- docs-test: file NAME -->: {line!r}")


def test_scratch_directory_is_clean_of_repo_state(scratch):
    # the blocks run away from the checkout: writing runs/ there must not touch the repository
    assert Path.cwd() != ROOT and not (Path.cwd() / "runs").exists()
    assert os.path.islink("checkpoints") or not (ROOT / "checkpoints").exists()


# ------------------------------------------------------------------- what a block imports
def unbound_names(code: str) -> list[str]:
    """The names ``code`` reads that it neither imports, defines nor assigns, and that are not
    builtins, sorted. Flow-insensitive (a name bound anywhere in the block counts as bound): it
    finds the name a reader's copy of the block lacks, not every NameError."""
    import ast
    import builtins

    tree = ast.parse(code)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return sorted(read - bound)


PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.id for b in PYTHON_BLOCKS])
def test_python_blocks_import_what_they_use(block):
    try:
        missing_names = unbound_names(block.code)
    except SyntaxError as err:
        pytest.fail(f"{block.id}: a python block is Python: {err}")
    assert not missing_names, (f"{block.id} uses {missing_names} without importing or defining them: a reader "
                               "copying this block alone gets a NameError; import them in the block")


def test_the_import_check_finds_a_missing_import():
    assert unbound_names("import pisti_env\nenv = pisti_env.env()\nplayer = make_player('greedy')\n") == ["make_player"]
    assert unbound_names("from pisti_env import make_player as mp\nfor seat in range(2):\n    mp('greedy', seed=seat)\n") == []
    assert unbound_names("def f(x, *rest, key=None):\n    return [y for y in rest if y != x] or key\n"
                         "try:\n    f(1)\nexcept ValueError as err:\n    print(err)\n") == []
    assert unbound_names("class A:\n    def act(self, view: SeatView) -> int:\n        return 0\n") == ["SeatView"]
