"""The batched engine's CUDA path, checked as far as a CPU allows (issue 17 item 3).

On a machine without CUDA the engine never runs on a GPU here (``test_cuda_*`` in
``test_batched.py`` and ``test_batched_compact.py`` do where one is present), so these tests read
the source of `pisti_env.batched` instead:

* every tensor it creates with a torch factory (``torch.zeros``, ``arange``, ``tensor``, …)
  names its device, so none lands on the CPU while the state lives on a GPU;
* no hot-path module copies a tensor to the host (``.item()``, ``.cpu()``, ``.numpy()``,
  ``.tolist()``; but for the documented CPU-only calls of ``CPU_ONLY_HOST_CALLS``), and the data-dependent branches and sizes (``bool(t.any())``,
  ``t.nonzero()``), each a GPU-to-host sync, are exactly the documented ones (a new one must be
  added here on purpose). A plain step without bluffs syncs once in `.transitions` (more
  when a hand runs out of cards) and once in [`BatchedPisti.step`][pisti_env.batched.BatchedPisti.step]'s action check.

``device="meta"`` is no substitute: those branches need values, which meta tensors do not have.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pisti_env" / "batched"
FACTORIES = {
    "zeros", "ones", "empty", "full", "arange", "tensor", "as_tensor", "rand", "randn", "randint", "randperm",
    "eye", "linspace", "zeros_like_", "empty_strided",
}
# Modules a step runs through, and the data-dependent branches and sizes each holds
# (``bool(t.any())``, ``t.nonzero()``: one sync with the GPU each, when they run).
HOT_MODULES = {
    "transitions.py": 4,  # a hand empty? then a deal needed? a hand over? an episode over? (the last two rarely run)
    "moves.py": 2,  # R29, per kind: any face-down play (any answer)? which games (large CPU batches only)? (bluff variant only)
    "decks.py": 1,  # R7: any void deal to draw again? (at hand ends only)
    "hands.py": 2,  # end_hands_, start_hands_: which games? (nonzero, at hand ends only)
    "observe.py": 0,
    "state.py": 0,
    "tables.py": 0,
    "critic.py": 0,
    "compact.py": 0,
}
HOST_COPIES = {"item", "cpu", "numpy", "tolist"}
# Host copies a module may make on purpose, each only where its tensor is on the CPU already
# (a view, no copy): decks.py hands a CPU deck draw to NumPy, whose sort is ~10x torch's there,
# and the CPU hash keys of new hands and dealers (a few dozen small operations, each far cheaper
# in NumPy).
CPU_ONLY_HOST_CALLS = {"decks.py": 2}


def calls(path: Path):
    return [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)]


def test_every_torch_factory_call_names_its_device():
    missing = []
    for path in sorted(PACKAGE.glob("*.py")):
        for call in calls(path):
            func = call.func
            if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch"
                    and func.attr in FACTORIES and "device" not in {k.arg for k in call.keywords}):
                missing.append(f"{path.name}:{call.lineno} torch.{func.attr}")
    assert not missing, f"torch factories without device=: {missing}"
    assert len(list(PACKAGE.glob("*.py"))) >= 10  # the package was found and read


@pytest.mark.parametrize("module", sorted(HOT_MODULES))
def test_hot_path_has_no_host_copies_and_only_the_documented_syncs(module):
    path = PACKAGE / module
    host, syncs = [], 0
    for call in calls(path):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in HOST_COPIES:
            host.append(f"{module}:{call.lineno} .{func.attr}()")
        # bool(x.any()), int(x.sum()), ...: a tensor's value read on the host.
        if (isinstance(func, ast.Name) and func.id in ("bool", "int", "float") and len(call.args) == 1
                and isinstance(call.args[0], ast.Call) and isinstance(call.args[0].func, ast.Attribute)):
            syncs += 1
        if isinstance(func, ast.Attribute) and func.attr == "nonzero":  # its size depends on the values
            syncs += 1
    assert len(host) == CPU_ONLY_HOST_CALLS.get(module, 0), host
    assert syncs == HOT_MODULES[module], (module, syncs)
