#!/usr/bin/env bash
# The installed package, without a checkout: build the wheel, install it into a fresh venv, and
# from a directory outside the repository play the shipped policy by name (pisti-eval), benchmark
# it (pisti-benchmark, a short deal set), export it (pisti-export) and benchmark the export; the
# library checkers (Gymnasium's check_env, PettingZoo's api/render/seed tests) pass on this base
# install, without the pictures extra, and the shipped policy plays with `training` blocked (issue 50).
# CI runs it after the test suite; by hand: bash tests/wheel_smoke.sh [WORKDIR]
#
# TORCH_SPEC (default torch==2.13.0, as CI) is installed into the venv first, so that the wheel's
# bare `torch` requirement does not pull another build. WHEEL_SMOKE_VENV names a fresh venv made
# beforehand, holding only TORCH_SPEC and pytest (CI makes it in the background while other steps run).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
torch_spec="${TORCH_SPEC:-torch==2.13.0}"

python -m pip wheel --quiet --no-deps --wheel-dir "$work/wheelhouse" "$repo"
wheel="$(ls "$work"/wheelhouse/pisti-*.whl)"
# The shipped policies travel as package data.
python - "$wheel" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for policy in ("pisti-2p", "pisti-4p", "pisti-bluff"):
    for part in ("metadata.json", "model.safetensors"):
        path = f"pisti_env/policies/{policy}/{part}"
        assert path in names, f"{path} is not in the wheel"
assert any(n.startswith("training/benchmark/") for n in names), "training.benchmark is not in the wheel"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "the LICENSE is not in the wheel"
print("wheel holds the shipped policies, training.benchmark and the LICENSE")
EOF

venv="${WHEEL_SMOKE_VENV:-$work/venv}"
if [ ! -x "$venv/bin/python" ]; then
  python -m venv "$venv"
  "$venv/bin/pip" install --quiet "$torch_spec" pytest
fi
"$venv/bin/pip" install --quiet "$wheel"

mkdir -p "$work/elsewhere"
cd "$work/elsewhere"  # no checkout, no checkpoints/ here
bin="$venv/bin"
"$bin/python" -c "
import pisti_env, os
assert os.path.realpath(pisti_env.__file__).startswith(os.path.realpath('$venv')), pisti_env.__file__
from pisti_env.agents import make_player
print('make_player(pisti-2p):', make_player('pisti-2p'))
"
"$bin/python" -c "
import sys
sys.modules['training'] = None  # the environment package stands alone
from pisti_env import Game, make_settings
from pisti_env.agents import SeatView, make_player
settings = make_settings(num_players=2, target=None)
player = make_player('pisti-2p', seed=0, settings=settings)
game = Game(settings, seed=0)
while not game.done:
    game.step(player.act(SeatView(game, game.turn)))
assert 'torch' in sys.modules and not any(m == 'training' or m.startswith('training.') for m in sys.modules if sys.modules[m] is not None)
print('pisti-2p played a hand with training blocked:', game.hand_scores())
"
"$bin/python" -m pytest -p no:cacheprovider -q "$repo/tests/env/test_library_checkers.py"
"$bin/pisti-eval" pisti-2p greedy --deals 100 --matches 0 --no-plots --quiet --workers 1 --threads 1 --out eval
"$bin/pisti-benchmark" pisti-2p --task pisti-2p --deals 200 --quiet --out bench
"$bin/pisti-export" pisti-2p --format torchscript --out exports
"$bin/pisti-benchmark" exports/pisti-2p.pt --task pisti-2p --deals 200 --quiet --out bench-export
"$bin/python" - <<'EOF'
import json
a = json.load(open("bench/benchmark.json"))["tasks"][0]["opponents"]
b = json.load(open("bench-export/benchmark.json"))["tasks"][0]["opponents"]
assert [o["margin"]["mean"] for o in a] == [o["margin"]["mean"] for o in b], (a, b)
print("the export plays as the shipped policy:", [round(o["margin"]["mean"], 3) for o in a])
EOF
echo "wheel smoke test passed ($work)"
