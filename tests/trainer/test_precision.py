"""``precision="auto"``: bf16 only where bfloat16 matrix products are fast (a CPU with AMX, a
GPU with bf16), decided from the machine alone so that a seed still fixes a run."""

from __future__ import annotations

import pytest
import torch

from training.trainer import network
from training.trainer.network import autocast, cpu_has_fast_bf16, resolve_precision


@pytest.fixture
def cpu(monkeypatch):
    """Pretend CPU: ``cpu(machine, amx=..., mkldnn_bf16=...)`` patches what the check reads."""

    def pretend(machine: str, amx: bool | None, mkldnn_bf16: bool) -> None:
        monkeypatch.setattr(network.platform, "machine", lambda: machine)
        monkeypatch.delattr(torch.cpu, "_is_amx_tile_supported", raising=False)
        if amx is None:  # a torch without the AMX queries
            monkeypatch.delattr(torch.cpu, "_init_amx", raising=False)
        else:
            monkeypatch.setattr(torch.cpu, "_init_amx", lambda: amx, raising=False)
        monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: mkldnn_bf16)

    return pretend


@pytest.mark.parametrize(
    "machine, amx, mkldnn_bf16, fast",
    [
        ("x86_64", True, True, True),  # AMX: bf16 about doubles the networks' speed
        ("x86_64", False, True, False),  # AVX-512 BF16 without AMX: slower than fp32, measured
        ("x86_64", None, True, False),  # no way to ask: fp32, never slow
        ("AMD64", False, True, False),
        ("x86_64", False, False, False),
        ("aarch64", None, True, True),  # other architectures: mkldnn's own check
        ("aarch64", None, False, False),
    ],
)
def test_auto_precision_takes_bf16_on_a_cpu_only_where_it_is_fast(cpu, machine, amx, mkldnn_bf16, fast):
    cpu(machine, amx, mkldnn_bf16)
    assert cpu_has_fast_bf16() is fast
    assert resolve_precision("auto", "cpu") == ("bf16" if fast else "fp32")
    assert resolve_precision("auto", torch.device("cpu")) == ("bf16" if fast else "fp32")


@pytest.mark.parametrize("amx", [True, False])
def test_an_older_torch_asks_whether_the_cpu_has_amx_tiles(monkeypatch, amx):
    monkeypatch.setattr(network.platform, "machine", lambda: "x86_64")
    monkeypatch.delattr(torch.cpu, "_init_amx", raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert cpu_has_fast_bf16() is amx


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_explicit_precision_passes_through_whatever_the_machine(cpu, precision):
    cpu("x86_64", False, True)
    assert resolve_precision(precision, "cpu") == precision


@pytest.mark.parametrize("bad", ["fp16", "BF16", "", "float32"])
def test_unknown_precision_is_a_value_error_naming_the_choices(bad):
    with pytest.raises(ValueError, match=r"precision must be one of \('fp32', 'bf16', 'auto'\)"):
        resolve_precision(bad, "cpu")
    with pytest.raises(ValueError, match="precision must be one of"):
        autocast("cpu", bad)


def test_autocast_runs_matrix_products_in_bf16_only_for_bf16():
    x = torch.randn(4, 8)
    w = torch.randn(8, 3)
    with autocast("cpu", "bf16"):
        assert (x @ w).dtype == torch.bfloat16
    with autocast("cpu", "fp32"):
        assert (x @ w).dtype == torch.float32
