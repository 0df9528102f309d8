"""Agents and agent files are untrusted input (docs/reliability.md, "Agent files that can run
code" and "Exported policies, benchmark reports and misbehaving agents"):

* an agent whose loading runs code of its own (a ``module:function`` factory, an SB3 zip, an
  RLlib checkpoint) loads only with ``--trust-code``; built-in names and exports need nothing;
* an agent that raises (``SystemExit``, ``EOFError``, its own ``KeyboardInterrupt``, anything)
  or chooses an illegal action ends ``pisti-benchmark`` / ``pisti-eval`` with one line naming
  it, exit status 2, and no report;
* a ``pisti-export`` file's metadata is checked against a schema and the game, and its function
  run once at load, so a malformed file is one ``ExportError`` line naming the file, never a
  TorchScript dump at the first move; the report names the agent by the path given.

CLI cases run the real console scripts in a child process (with a timeout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pisti_env import make_settings  # noqa: E402
from pisti_env.agents import make_player  # noqa: E402
from pisti_env.agents.exported import ExportError  # noqa: E402
from training.benchmark.export import export_policy  # noqa: E402
from training.benchmark.run import play_task  # noqa: E402
from training.benchmark.tasks import get_task  # noqa: E402

from hostile_support import read_export, scripted, write_export  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TWO = make_settings(num_players=2, target=None)
SCRIPTS = Path(sys.executable).parent


def run_cli(prog: str, args: list[str], cwd: Path, stdin: str = "", timeout: int = 300) -> subprocess.CompletedProcess:
    """The installed console script ``prog`` (or ``python -m`` its module when not on PATH) in a
    child process, with this folder importable (the hostile factories)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])}
    script = SCRIPTS / prog
    command = [str(script)] if script.exists() else [sys.executable, "-m", {
        "pisti-benchmark": "training.benchmark.cli", "pisti-eval": "training.harness.evaluate"}[prog]]
    return subprocess.run(command + args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def assert_one_line(result: subprocess.CompletedProcess, prog: str, *words: str) -> str:
    """Exit status 2, one line on stderr ``PROG: error: ...`` holding ``words``, no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr[-3000:])
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), result.stderr[-3000:]
    assert "Traceback" not in result.stderr + result.stdout
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def benchmark(tmp_path: Path, agent: str, *flags: str, stdin: str = "") -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "out"
    return run_cli("pisti-benchmark", [agent, "--task", "pisti-2p", "--deals", "2", "--quiet", "--out", str(out),
                                       *flags], tmp_path, stdin), out


# ---------------------------------------------------------------------------- --trust-code
def test_a_factory_needs_trust_code_and_is_not_imported_without_it(tmp_path):
    """Without the flag the module is never imported (its import would have run its code)."""
    marker = tmp_path / "imported"
    (tmp_path / "evil_agent.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef make():\n    return None\n")
    result, out = benchmark(tmp_path, "evil_agent:make")
    assert_one_line(result, "pisti-benchmark", "'evil_agent:make'", "--trust-code")
    assert not marker.exists() and not out.exists()


def test_an_sb3_zip_needs_trust_code(tmp_path):
    """An SB3 zip is a pickle: refused before any library reads it (sb3 need not be installed)."""
    (tmp_path / "evil.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    result, out = benchmark(tmp_path, str(tmp_path / "evil.zip"))
    assert_one_line(result, "pisti-benchmark", "evil.zip", "--trust-code", "pickle")
    assert not out.exists()


def test_trusted_forms_need_no_flag_and_the_report_names_the_path_given(tmp_path):
    """An export that calls itself ``pisti-2p`` in its metadata is reported by its path; its
    figures are those of what it is (here the shipped policy, exported)."""
    module, contract = read_export(export_policy("pisti-2p", "torchscript", str(tmp_path)))
    contract["name"] = "expert"
    path = write_export(module, contract, tmp_path / "impostor.pt")
    result = play_task(path, get_task("pisti-2p"), count=2)
    assert result["agent_name"] == path and result["agent_kind"] == "spec"  # "expert" before
    assert play_task("greedy", get_task("pisti-2p"), count=2)["agent_name"] == "greedy"


# ---------------------------------------------------------------------------- agents that fail
# (agent, flags, stdin, words of the one line)
FAILURES = [
    ("sys:exit", ["--trust-code"], "", ["'sys:exit'", "SystemExit"]),  # exit status 0 and no report before
    ("builtins:input", ["--trust-code"], "", ["'builtins:input'", "EOFError"]),  # a traceback before
    ("hostile_support:exits_in_act", ["--trust-code"], "", ["'hostile_support:exits_in_act'", "SystemExit"]),
    ("hostile_support:exits_in_act", ["--trust-code", "--workers", "2"], "",
     ["'hostile_support:exits_in_act'", "SystemExit"]),  # in worker processes
    ("hostile_support:interrupts_itself", ["--trust-code"], "", ["'hostile_support:interrupts_itself'",
                                                                 "KeyboardInterrupt"]),
    ("hostile_support:divides_by_zero", ["--trust-code"], "", ["'hostile_support:divides_by_zero'",
                                                               "ZeroDivisionError"]),
    ("hostile_support:illegal", ["--trust-code"], "", ["agent 'hostile_support:illegal'", "illegal action"]),
    ("hostile_support:illegal_batched", ["--trust-code"], "", ["agent 'hostile_support:illegal_batched'",
                                                               "illegal action"]),
    ("hostile_support:wrong_shape_batched", ["--trust-code"], "", ["agent 'hostile_support:wrong_shape_batched'",
                                                                   "one integer action per row"]),
]


@pytest.mark.parametrize("agent, flags, stdin, words", FAILURES,
                         ids=[f"{a}{' workers' if '--workers' in f else ''}" for a, f, _, _ in FAILURES])
def test_an_agent_that_raises_or_plays_illegally_is_one_line_naming_it(tmp_path, agent, flags, stdin, words):
    result, out = benchmark(tmp_path, agent, *flags, stdin=stdin)
    assert assert_one_line(result, "pisti-benchmark", *words).endswith("(--debug prints its traceback)")
    assert not out.exists()  # no report


# (agent, flags, what the agent raised, its line in hostile_support.py)
DEBUGGED = [
    ("hostile_support:divides_by_zero", [], "ZeroDivisionError", "return 1 // 0"),
    ("hostile_support:divides_by_zero", ["--workers", "2"], "ZeroDivisionError", "return 1 // 0"),  # from a worker
    ("hostile_support:raises_in_act_batch", [], "RuntimeError", 'raise RuntimeError("the batch went wrong")'),
    ("hostile_support:fails_to_build", [], "LookupError", 'raise LookupError("the factory went wrong")'),
    ("hostile_support:interrupts_itself", [], "KeyboardInterrupt", "raise KeyboardInterrupt"),
]


@pytest.mark.parametrize("agent, flags, raised, line", DEBUGGED,
                         ids=[f"{a.partition(':')[2]}{' workers' if f else ''}" for a, f, _, _ in DEBUGGED])
def test_debug_prints_the_agents_traceback_then_the_one_line(tmp_path, agent, flags, raised, line):
    """Whatever it raised and wherever (act, act_batch, its factory, a worker process), the
    traceback reaches down to the agent's own line; the one-line error still ends the output."""
    result, out = benchmark(tmp_path, agent, "--trust-code", "--debug", *flags)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and not out.exists(), result.stderr[-3000:]
    # a worker's traceback comes back as the text of a RemoteTraceback, the first of the chain
    assert lines[0] in ("Traceback (most recent call last):", "multiprocessing.pool.RemoteTraceback: "), lines[0]
    assert "hostile_support.py" in result.stderr and line in result.stderr and raised in result.stderr
    assert lines[-1].startswith(f"pisti-benchmark: error: agent {agent!r} ") and raised in lines[-1]
    assert "--debug" not in lines[-1]


def test_pisti_eval_debug_prints_the_players_traceback(tmp_path, monkeypatch, capsys):
    """pisti-eval's players come from the registry: here greedy, made to raise."""
    from pisti_env.agents.greedy import GreedyAgent
    from training.harness.evaluate import main

    def choose(self, view, legal):
        raise LookupError("no such card")

    monkeypatch.setattr(GreedyAgent, "choose", choose)
    args = ["greedy", "random", "--deals", "2", "--matches", "0", "--engine", "python", "--workers", "1", "--quiet",
            "--no-plots", "--out", str(tmp_path / "out")]
    assert main(args) == 2
    one_line = capsys.readouterr().err.strip()
    assert one_line == "pisti-eval: error: player 'greedy' raised LookupError: no such card (--debug prints its traceback)"
    assert main(args + ["--debug"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == "Traceback (most recent call last):" and 'raise LookupError("no such card")' in "\n".join(err)
    assert err[-1] == "pisti-eval: error: player 'greedy' raised LookupError: no such card"
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- a factory beside the user
# The console script's stand-in: a file in another folder, so that sys.path starts with that
# folder and not with the current directory (as `python -m` or `python -c` would).
CONSOLE_SCRIPT = """import os
import sys

from training.benchmark.cli import main

if __name__ == "__main__":
    assert os.getcwd() not in [os.path.abspath(entry or os.curdir) for entry in sys.path], sys.path
    sys.exit(main())
"""


def run_from(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """pisti-benchmark run from ``folder``, with only the checkout on PYTHONPATH."""
    script = folder.parent / "console" / "pisti_benchmark.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text(CONSOLE_SCRIPT)
    return subprocess.run([sys.executable, str(script), *args], cwd=folder, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)


def test_a_factory_module_in_the_current_directory_needs_no_pythonpath(tmp_path):
    """`my_agents.py` in the folder the command runs from loads as `python -m` would load it,
    with its own imports of its neighbours, in worker processes too (``--workers 2``)."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_helpers.py").write_text("def first(legal):\n    return legal[0]\n")
    (work / "my_agents.py").write_text(
        "from my_helpers import first\n\n\nclass First:\n    name = 'first'\n\n"
        "    def reset(self, seed=None):\n        pass\n\n    def act(self, view):\n        return first(view.legal_actions)\n\n\n"
        "def make():\n    return First()\n")
    result = run_from(work, "my_agents:make", "--task", "pisti-2p", "--deals", "2", "--workers", "2", "--trust-code",
                      "--quiet", "--out", "out")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((work / "out" / "benchmark.json").read_text())
    assert report["agent"] == "my_agents:make" and report["tasks"][0]["opponents"]
    # a package beside you: its folder, mypkg/, is a path that exists, yet no checkpoint
    (work / "mypkg").mkdir()
    (work / "mypkg" / "__init__.py").write_text("from my_agents import make\n")
    result = run_from(work, "mypkg:make", "--task", "pisti-2p", "--deals", "1", "--trust-code", "--quiet", "--out", "pkg")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((work / "pkg" / "benchmark.json").read_text())["tasks"][0]["agent_kind"] == "factory"


def test_a_missing_factory_module_is_one_line_naming_the_folder_searched(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "uses_missing.py").write_text("import no_such_library_here\n\n\ndef make():\n    return None\n")
    result = run_from(work, "no_such_agents:make", "--task", "pisti-2p", "--trust-code")
    assert_one_line(result, "pisti-benchmark", "'no_such_agents:make'", "current directory", str(work))
    # the module is there, an import inside it is not: named as the agent's failure, not as a missing module
    result = run_from(work, "uses_missing:make", "--task", "pisti-2p", "--trust-code")
    assert_one_line(result, "pisti-benchmark", "agent 'uses_missing:make' failed to load", "no_such_library_here")


def test_pisti_eval_names_the_player_that_chose_an_illegal_action(tmp_path):
    """An export whose log-probabilities ignore the mask: its argmax is often illegal."""
    module, contract = read_export(export_policy("pisti-2p", "torchscript", str(tmp_path)))
    path = write_export(scripted("zeros", contract["num_actions"]), contract, tmp_path / "careless.pt")
    result = run_cli("pisti-eval", [path, "greedy", "--deals", "4", "--quiet", "--out", str(tmp_path / "out")],
                     tmp_path)
    assert_one_line(result, "pisti-eval", f"player {path!r}", "illegal action")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- exports
@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    out = tmp_path_factory.mktemp("exports")
    return {name: export_policy(name, "torchscript", str(out)) for name in ("pisti-2p", "pisti-4p")}


def _edited(contract: dict, edit: str) -> dict | None:
    contract = json.loads(json.dumps(contract))
    if edit == "empty settings":
        contract["settings"] = {}  # loaded for any game before
    elif edit == "huge observation_size":
        contract["observation_size"] = 10**30
    elif edit == "no num_actions":
        del contract["num_actions"]  # a KeyError before
    elif edit == "bool observation_size":
        contract["observation_size"] = True
    elif edit == "bad settings value":
        contract["settings"]["num_players"] = 9
    elif edit == "settings not an object":
        contract["settings"] = [2]
    elif edit == "name with escapes":
        contract["name"] = "\x1b[2Jpisti-2p"
    elif edit == "play unknown":
        contract["play"] = "cheat"
    return contract


EDITS = {
    "empty settings": "settings", "huge observation_size": "observation_size", "no num_actions": "num_actions",
    "bool observation_size": "observation_size", "bad settings value": "settings",
    "settings not an object": "settings", "name with escapes": "name", "play unknown": "play",
}
RAW = {"array": "[1, 2]", "null": "null", "deep": "[" * 100_000 + "]" * 100_000, "nan": '{"format": NaN}'}


@pytest.mark.parametrize("edit", list(EDITS) + [f"raw {k}" for k in RAW])
def test_malformed_export_metadata_is_an_export_error_naming_file_and_field(exports, tmp_path, edit):
    module, contract = read_export(exports["pisti-2p"])
    path = tmp_path / "bad.pt"
    if edit.startswith("raw "):
        write_export(module, None, path, raw=RAW[edit[4:]])
        field = "pisti_contract"
    else:
        write_export(module, _edited(contract, edit), path)
        field = EDITS[edit]
    with pytest.raises(ExportError) as caught:
        make_player(str(path), settings=TWO)
    message = str(caught.value)
    assert str(path) in message and field in message and "\n" not in message and len(message) < 600, message


@pytest.mark.parametrize("kind", ["relabelled 4p", "raises", "wrong-shape"])
def test_a_broken_export_fails_at_load_in_one_short_line(exports, tmp_path, kind):
    """A 4-player network under a 2-player contract failed only at the first move, with a
    3,426-character TorchScript dump; now the test input at load says so in one line."""
    _, contract = read_export(exports["pisti-2p"])
    if kind == "relabelled 4p":
        module = read_export(exports["pisti-4p"])[0]
    else:
        module = scripted(kind, contract["num_actions"])
    path = write_export(module, contract, tmp_path / "broken.pt")
    with pytest.raises(ExportError) as caught:
        make_player(path, settings=TWO)
    message = str(caught.value)
    assert path in message and "\n" not in message and len(message) < 400, message
    assert ("fails on a test input" if kind != "wrong-shape" else "shape") in message


def test_pisti_benchmark_refuses_a_broken_export_in_one_line(exports, tmp_path):
    _, contract = read_export(exports["pisti-2p"])
    path = write_export(read_export(exports["pisti-4p"])[0], contract, tmp_path / "relabelled.pt")
    result, out = benchmark(tmp_path, path)
    line = assert_one_line(result, "pisti-benchmark", path, "fails on a test input")
    assert len(line) < 500 and not out.exists()


def test_an_export_with_a_full_valid_contract_still_loads(exports):
    player = make_player(exports["pisti-4p"], settings=make_settings(num_players=4, partnerships=True, target=None))
    assert player.num_actions == 52 and player.observation_size > 0
    with pytest.raises(ExportError, match="another game"):
        make_player(exports["pisti-4p"], settings=TWO)
