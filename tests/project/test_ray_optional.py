"""Ray is an optional extra (issue 14): without it, ``--ray`` is a clear error naming the
extra, and nothing else needs it (``tests/integration/test_ray_eval.py`` runs Ray itself)."""

from __future__ import annotations

import sys

from training.harness.bluff_stats import main as bluff_main
from training.harness.evaluate import main as eval_main


def test_ray_flag_without_ray_names_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails, installed or not
    assert eval_main(["greedy", "random", "--deals", "2", "--matches", "0", "--quiet", "--out", str(tmp_path),
                      "--ray", "auto"]) == 2
    assert bluff_main(["bluffer", "challenger", "--deals", "2", "--ray"]) == 2
    err = capsys.readouterr().err
    assert err.count('--ray needs Ray, which is not installed: pip install -e ".[ray]"') == 2
    assert not list(tmp_path.iterdir())  # nothing written
