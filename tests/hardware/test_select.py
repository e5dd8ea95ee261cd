"""select_meter / resolve_hardware."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware import select
from nasenergy.hardware.recorded import RecordedMeter


def test_auto_without_gpu_replays_profile_and_says_so(monkeypatch, small_profile, tss):
    monkeypatch.setattr(select, "cuda_available", lambda: False)
    lines = []
    meter = select.select_meter("auto", profile_path=small_profile[0], space=tss,
                                announce=lines.append)
    assert isinstance(meter, RecordedMeter)
    assert len(lines) == 1 and "recorded" in lines[0]


def test_auto_with_gpu_is_cuda(monkeypatch):
    monkeypatch.setattr(select, "cuda_available", lambda: True)
    assert select.resolve_hardware("auto", announce=None) == "cuda"


def test_unknown_hardware_and_cuda_without_gpu(monkeypatch):
    with pytest.raises(UsageError, match="unknown hardware"):
        select.select_meter("tpu")
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(UsageError, match="no CUDA GPU"):
        select.select_meter("cuda")


def test_cpu_meter_selected():
    pytest.importorskip("torch")
    from nasenergy.hardware.cpu_meter import CpuMeter

    assert isinstance(select.select_meter("cpu", n_repeats=2), CpuMeter)


def test_auto_without_gpu_measures_on_the_cpu_for_a_space_without_a_profile(monkeypatch, tmp_path):
    from nasenergy.hardware import recorded

    monkeypatch.setattr(select, "cuda_available", lambda: False)
    monkeypatch.setattr(recorded, "SSS_PROFILE", tmp_path / "absent.csv.gz")
    said: list[str] = []
    assert select.resolve_hardware("auto", said.append, space_name="sss") == "cpu"
    assert len(said) == 1 and "sss" in said[0] and "CPU" in said[0]
    assert select.resolve_hardware("auto", None, space_name="tss") == "recorded"
