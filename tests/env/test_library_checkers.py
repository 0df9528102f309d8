"""Gymnasium's and PettingZoo's own checkers pass on the base install (issue 50).

``check_env`` and ``render_test`` build the env in every render mode its metadata lists,
``rgb_array`` included, so they pass only if a frame can be drawn without the ``pictures``
extra. One child process, where ``cairosvg`` (and ``cairocffi``) cannot be imported, as after
a plain ``pip install .``, runs every checker and reports each one's result; the tests below
read that report. The child is started with ``subprocess.run`` and a timeout, so it never
outlives the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.drawing import HEIGHT, WIDTH, open_frame

MARK = "CHECKER-RESULTS:"
FRAME_MOVES = 5  # the fixed state whose frame's hash is compared across processes

CHECKER = textwrap.dedent(f'''
    import sys
    for blocked in ("cairosvg", "cairocffi"):
        sys.modules[blocked] = None  # as on a plain `pip install .`: importing it raises ImportError

    import contextlib, hashlib, io, json, traceback, warnings
    from functools import partial

    import gymnasium
    import numpy as np
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test, render_test, seed_test

    import pisti_env
    from pisti_env import Game, make_settings
    from pisti_env.drawing import open_frame

    warnings.simplefilter("ignore")  # the checkers' advice on space types is not what is tested
    results = {{}}


    def check(name):
        def run(fn):
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # render_test's "human" mode prints
                    value = fn()
                results[name] = {{"ok": True, "value": value}}
            except BaseException:
                results[name] = {{"ok": False, "error": traceback.format_exc()}}
        return run


    def frame_facts(frame):
        return {{"type": type(frame).__name__, "dtype": str(getattr(frame, "dtype", None)),
                "shape": list(getattr(frame, "shape", ())), "std": float(np.std(frame))}}


    @check("check_env")
    def _():
        check_env(gymnasium.make("pisti/Pisti-v0", target=None).unwrapped)


    @check("api_test")
    def _():
        api_test(pisti_env.env(target=None), num_cycles=200)


    @check("render_test")
    def _():
        render_test(partial(pisti_env.env, target=None))


    @check("seed_test")
    def _():
        seed_test(partial(pisti_env.env, target=None), num_cycles=200)


    @check("aec_frame")
    def _():
        env = pisti_env.env(render_mode="rgb_array", target=None)
        env.reset(seed=0)
        return frame_facts(env.render())


    @check("gym_frame")
    def _():
        env = gymnasium.make("pisti/Pisti-v0", render_mode="rgb_array", target=None)
        env.reset(seed=0)
        return frame_facts(env.render())


    @check("frame_hash")
    def _():
        game = Game(make_settings(target=None), seed=7)
        for _ in range({FRAME_MOVES}):
            game.step(game.legal_actions()[0])
        return hashlib.sha256(open_frame(game, ["a", "b"]).tobytes()).hexdigest()


    @check("cairosvg_blocked")
    def _():
        return sys.modules.get("cairosvg", "missing") is None and "PIL" in sys.modules

    print({MARK!r} + json.dumps(results))
''')


@pytest.fixture(scope="module")
def results() -> dict:
    """Each check's outcome in a child process without CairoSVG."""
    package_root = str(Path(pisti_env.__file__).resolve().parents[1])  # the pisti_env this test imports
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", CHECKER], capture_output=True, text=True, timeout=300, env=env,
                          cwd=package_root)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    assert done.returncode == 0 and lines, f"the checker process failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(lines[-1][len(MARK):])


def passed(results: dict, name: str):
    outcome = results[name]
    assert outcome["ok"], f"{name} failed without CairoSVG:\n{outcome['error']}"
    return outcome["value"]


def test_issue50_checker_runs_without_cairosvg(results):
    assert passed(results, "cairosvg_blocked") is True, "cairosvg was importable in the checker, or Pillow unused"


def test_issue50_gymnasium_check_env_every_render_mode(results):
    passed(results, "check_env")


def test_issue50_pettingzoo_api_test(results):
    passed(results, "api_test")


def test_issue50_pettingzoo_render_test(results):
    passed(results, "render_test")


def test_issue50_pettingzoo_seed_test(results):
    passed(results, "seed_test")


@pytest.mark.parametrize("env_kind", ["aec_frame", "gym_frame"])
def test_issue50_rgb_array_render_without_cairosvg(results, env_kind):
    facts = passed(results, env_kind)
    assert facts["type"] == "ndarray" and facts["dtype"] == "uint8" and facts["shape"] == [HEIGHT, WIDTH, 3]
    assert facts["std"] > 10, "a blank frame"


def test_issue50_same_state_same_frame_in_another_process(results):
    """Deterministic: the child's frame of a fixed state is this process's, byte for byte."""
    game = Game(make_settings(target=None), seed=7)
    for _ in range(FRAME_MOVES):
        game.step(game.legal_actions()[0])
    here = hashlib.sha256(open_frame(game, ["a", "b"]).tobytes()).hexdigest()
    assert passed(results, "frame_hash") == here
