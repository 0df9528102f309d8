"""The learning protocol: its tasks, its results files, one seed trained and rated end to end,
the same seed giving the same curve, and ``pisti-learn``'s command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from learning_support import TINY_BUDGET, TINY_PPO, tiny_ppo, tiny_task
from training.learning import cli
from training.learning.algorithms import ALGORITHMS, resolve_algorithm
from training.learning.protocol import LEARNING_TASKS, get_learning_task
from training.learning.results import ResultsError, check_results, read_results, write_results
from training.learning.runs import RunFailed, run_seed, run_seeds


# ------------------------------------------------------------------ the tasks
def test_every_learning_task_checks_its_deal_sets():
    for task in LEARNING_TASKS.values():
        task.check()  # the game task's deal set and the curve deal set hash as recorded
        assert task.curve_count < task.task.count
        assert not set(task.seeds) & set(task.tuning_seeds), "tuning seeds are kept apart from reported ones"
        assert len(task.seeds) >= 5 and task.points >= 8


def test_a_changed_curve_deal_set_is_refused():
    import dataclasses

    task = dataclasses.replace(get_learning_task("pisti-2p"), curve_count=999)
    with pytest.raises(ValueError, match="curve deal set hashes to"):
        task.check()


def test_evaluation_points_are_evenly_spaced_and_end_at_the_budget():
    task = get_learning_task("pisti-2p")
    steps = task.evaluation_steps(task.budget_steps("standard"))
    assert steps == [625_000 * k for k in range(1, 9)]
    assert task.budget_steps("long") > task.budget_steps("standard")
    assert task.budget_steps(80) == 80
    with pytest.raises(ValueError, match="unknown budget"):
        task.budget_steps("huge")
    with pytest.raises(ValueError, match="at least 8 steps"):
        task.budget_steps(7)


def test_task_names_with_versions():
    assert get_learning_task("pisti-2p@1").id == "pisti-2p@1"
    with pytest.raises(ValueError, match="version 1"):
        get_learning_task("pisti-2p@2")
    with pytest.raises(ValueError, match="learning tasks are"):
        get_learning_task("chess")


def test_algorithms_are_commands_keeping_the_contract():
    assert {"ppo", "dmc", "dqn", "nfsp"} <= set(ALGORITHMS)
    argv = ALGORITHMS["dmc"].argv(3, 800, [100, 200], "/tmp/x")
    assert argv[0] == sys.executable and argv[1:3] == ["-m", "training.algorithms.dmc"]
    assert argv[argv.index("--seed") + 1] == "3" and argv[argv.index("--steps") + 1] == "800"
    assert argv[argv.index("--snapshot-steps") + 1: argv.index("--snapshot-steps") + 3] == ["100", "200"]
    with pytest.raises(ValueError, match="built-in"):
        resolve_algorithm("ppo", "python mine.py")
    with pytest.raises(ValueError, match="unknown algorithm"):
        resolve_algorithm("nope")
    with pytest.raises(ValueError, match="without spaces"):
        resolve_algorithm("my algo", "python mine.py")


# ------------------------------------------------------------------ results files
def _document(**changes):
    doc = {"algorithm": "a", "task": "pisti-2p@1", "budget_steps": 800, "command": "pisti-learn a",
           "runs": [{"seed": 0, "rating": 900.0, "curve": [[100, 500.0], [800, 900.0]]}]}
    doc.update(changes)
    return doc


def _run(**changes):
    run = {"seed": 0, "rating": 900.0, "curve": [[100, 500.0], [800, 900.0]]}
    run.update(changes)
    return run


@pytest.mark.parametrize("changes, field", [
    (dict(algorithm=None), "algorithm"),
    (dict(task=7), "task"),
    (dict(command=""), "command"),
    (dict(budget_steps=1.5), "budget_steps"),
    (dict(budget_steps=True), "budget_steps"),
    (dict(runs={"seed": 0}), "runs"),
    (dict(runs=[_run(seed=-1)]), "runs[0].seed"),
    (dict(runs=[_run(), _run()]), "runs[1].seed"),
    (dict(runs=[_run(rating="high")]), "runs[0].rating"),
    (dict(runs=[_run(rating=float("nan"))]), "runs[0].rating"),
    (dict(runs=[_run(curve=[])]), "runs[0].curve"),
    (dict(runs=[_run(curve=[[100, 1.0], [50, 2.0]])]), "runs[0].curve[1]"),
    (dict(runs=[_run(curve=[[100]])]), "runs[0].curve[0]"),
    (dict(format="something-else"), "format"),
    (dict(format_version=9), "format_version"),
])
def test_a_results_file_with_a_wrong_field_is_refused_naming_it(tmp_path, changes, field):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(_document(**changes)))
    with pytest.raises(ResultsError) as error:
        read_results(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {field}:"), message
    assert "\n" not in message


@pytest.mark.parametrize("field", ["algorithm", "task", "budget_steps", "command", "runs"])
def test_a_results_file_missing_a_field_is_refused_naming_it(tmp_path, field):
    doc = _document()
    del doc[field]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ResultsError, match=f"^{path}: {field}: missing$"):
        read_results(path)


def test_a_run_missing_a_field_is_refused_naming_it():
    for field in ("seed", "rating", "curve"):
        run = _run()
        del run[field]
        with pytest.raises(ResultsError, match=rf"^f.json: runs\[0\].{field}: missing$"):
            check_results(_document(runs=[run]), "f.json")


@pytest.mark.parametrize("content", ["[1, 2]", "null", "{", "[" * 100_000])
def test_a_results_file_that_is_not_a_results_object_is_refused(tmp_path, content):
    path = tmp_path / "a.json"
    path.write_text(content)
    with pytest.raises(ResultsError, match=f"^{path}: "):
        read_results(path)


def test_results_files_are_read_as_regular_files_only(tmp_path):
    good = tmp_path / "good.json"
    write_results(good, _document())
    assert read_results(good)["algorithm"] == "a"
    link = tmp_path / "link.json"
    link.symlink_to(good)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (link, fifo, tmp_path):
        with pytest.raises(ResultsError, match="not a regular file"):
            read_results(path)


def test_write_results_checks_before_writing(tmp_path):
    path = tmp_path / "x" / "a.json"
    with pytest.raises(ResultsError):
        write_results(path, _document(runs=[_run(rating=None)]))
    assert not path.exists()


# ------------------------------------------------------------------ one seed, end to end
@pytest.fixture(scope="module")
def two_seeds(tmp_path_factory):
    """The tiny task's seeds 0 and 1 through ``pisti-learn`` (in this process, the task patched
    in), and seed 0 once more through run_seed into another folder."""
    root = tmp_path_factory.mktemp("learn")
    task = tiny_task()
    saved = dict(LEARNING_TASKS)
    LEARNING_TASKS["pisti-2p"] = task
    try:
        code = cli.main(["tiny-ppo", "--command", TINY_PPO, "--task", "pisti-2p", "--budget", str(TINY_BUDGET),
                         "--seeds", "0", "1", "--out", str(root / "results"), "--work-dir", str(root / "work"),
                         "--quiet"])
    finally:
        LEARNING_TASKS.clear()
        LEARNING_TASKS.update(saved)
    assert code == 0
    again = run_seed(tiny_ppo(), task, 0, TINY_BUDGET, str(root / "again"))
    return root, task, again


def test_pisti_learn_writes_a_results_file_with_every_seed(two_seeds):
    root, task, _ = two_seeds
    path = root / "results" / "pisti-2p" / f"tiny-ppo-{TINY_BUDGET}.json"
    doc = read_results(path)
    assert doc["algorithm"] == "tiny-ppo" and doc["task"] == "pisti-2p@1" and doc["budget_steps"] == TINY_BUDGET
    assert doc["command"] == f"pisti-learn tiny-ppo --task pisti-2p --budget {TINY_BUDGET} --command '{TINY_PPO}'"
    assert [run["seed"] for run in doc["runs"]] == [0, 1]
    points = task.evaluation_steps(TINY_BUDGET)
    for run in doc["runs"]:
        assert [steps for steps, _ in run["curve"]] == points  # one update per point: taken exactly there
        assert run["curve"][-1][1] == run["rating"]
        assert {o["opponent"] for o in run["final"]["opponents"]} == {"random", "greedy"}
        assert run["train_cpu_seconds"] > 0 and run["eval_cpu_seconds"] > 0  # the child's CPU time, and ours
    # the snapshots and the training's log are kept in the work folder
    seed_dir = root / "work" / "pisti-2p" / "tiny-ppo" / "seed-0"
    assert len(list(seed_dir.glob("step-*.pt"))) == len(points)
    assert (seed_dir / "train.log").stat().st_size > 0


def test_the_same_seed_gives_the_same_curve(two_seeds):
    root, _, again = two_seeds
    doc = read_results(root / "results" / "pisti-2p" / f"tiny-ppo-{TINY_BUDGET}.json")
    first = next(run for run in doc["runs"] if run["seed"] == 0)
    assert again["curve"] == first["curve"]
    other = next(run for run in doc["runs"] if run["seed"] == 1)
    assert other["curve"] != first["curve"]


def test_pisti_learn_continues_a_results_file(two_seeds, capsys):
    root, task, _ = two_seeds
    saved = dict(LEARNING_TASKS)
    LEARNING_TASKS["pisti-2p"] = task
    try:
        code = cli.main(["tiny-ppo", "--command", TINY_PPO, "--task", "pisti-2p", "--budget", str(TINY_BUDGET),
                         "--seeds", "0", "1", "--out", str(root / "results"), "--work-dir", str(root / "work")])
        assert code == 0
        assert "nothing to run" in capsys.readouterr().out
        # another command into the same file is refused, naming --fresh
        code = cli.main(["tiny-ppo", "--command", TINY_PPO + " --num-envs 8", "--task", "pisti-2p", "--budget",
                         str(TINY_BUDGET), "--seeds", "2", "--out", str(root / "results"), "--work-dir",
                         str(root / "work")])
        assert code == 2
        assert "--fresh" in capsys.readouterr().err
    finally:
        LEARNING_TASKS.clear()
        LEARNING_TASKS.update(saved)


# ------------------------------------------------------------------ commands that break the contract
def _script(tmp_path, body: str):
    script = tmp_path / "algo.py"
    script.write_text(body)
    return resolve_algorithm("broken", f"python {script}")


def test_a_failing_command_names_its_exit_and_log(tmp_path):
    algorithm = _script(tmp_path, "import sys\nprint('diverged at step 12')\nsys.exit(3)\n")
    with pytest.raises(RunFailed, match=r"seed 0: the training command exited 3 \(diverged at step 12\)"):
        run_seed(algorithm, tiny_task(), 0, TINY_BUDGET, str(tmp_path / "work"))


def test_a_command_writing_too_few_snapshots_is_refused(tmp_path):
    body = ("import sys, pathlib\nargs = sys.argv\nd = pathlib.Path(args[args.index('--snapshot-dir') + 1])\n"
            "d.mkdir(parents=True, exist_ok=True)\n(d / 'step-000000000001.pt').write_bytes(b'')\n")
    algorithm = _script(tmp_path, body)
    with pytest.raises(RunFailed, match="asked for snapshots at"):
        run_seed(algorithm, tiny_task(), 0, TINY_BUDGET, str(tmp_path / "work"))


# ------------------------------------------------------------------ the command line
@pytest.mark.parametrize("argv, message", [
    (["nope"], "unknown algorithm"),
    (["ppo", "--task", "chess"], "invalid choice"),
    (["ppo", "--budget", "huge"], "--budget"),
    (["ppo", "--seeds", "0", "0"], "repeats a seed"),
    (["ppo", "--seeds", "0", "1000"], "tuning seeds"),
    (["ppo", "--command", "python x.py"], "built-in"),
    (["ppo", "--threads", "0"], "--threads"),
])
def test_pisti_learn_bad_input_is_one_line(tmp_path, argv, message):
    result = subprocess.run([sys.executable, "-m", "training.learning.cli", *argv, "--out", str(tmp_path / "o"),
                             "--work-dir", str(tmp_path / "w")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pisti-learn: error:") and message in lines[0], result.stderr
    assert not (tmp_path / "o" / "pisti-2p").exists()
