"""``pisti-learn --ray``: a seed run as a Ray task on a local Ray gives the record of the same
seed run in this process. Needs Ray core (the ``ray`` extra); CI installs it. The local Ray
listens on the loopback address only and is shut down however the test ends."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from learning_support import TINY_BUDGET, tiny_ppo, tiny_task  # noqa: E402
from training.learning.runs import run_seed, run_seeds  # noqa: E402


@pytest.fixture
def local_ray():
    yield "local"
    if ray.is_initialized():
        ray.shutdown()


def test_seeds_on_ray_give_the_local_records(tmp_path, local_ray):
    task, algorithm = tiny_task(), tiny_ppo()
    on_ray = run_seeds(algorithm, task, [0, 1], TINY_BUDGET, str(tmp_path / "ray"), ray=local_ray)
    assert [record["seed"] for record in on_ray] == [0, 1]
    here = run_seed(algorithm, task, 1, TINY_BUDGET, str(tmp_path / "here"))
    assert on_ray[1]["curve"] == here["curve"] and on_ray[1]["final"] == here["final"]
    assert on_ray[0]["curve"] != on_ray[1]["curve"]
