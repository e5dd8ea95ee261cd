"""FLOP counting (2 x MACs), datasheet peaks and the peak cache."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from nasenergy.errors import UsageError  # noqa: E402
from nasenergy.hardware.flops import count_model  # noqa: E402
from nasenergy.hardware.peaks import (  # noqa: E402
    PeakCache,
    PeakKey,
    datasheet_peak_flops,
    measure_matmul_peak_flops,
    resolve_peak,
)


def test_flop_counter_counts_two_flops_per_mac():
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1, bias=False),
                              torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                              torch.nn.Linear(16, 10))
    c = count_model(net, (3, 32, 32))
    macs = 3 * 16 * 9 * 32 * 32 + 16 * 10
    assert c.macs_per_img == macs and c.flops_per_img == 2 * macs
    assert c.params == 3 * 16 * 9 + 2 * 16 + 16 * 10 + 10
    assert count_model(net, (3, 32, 32)) is c              # cached per model and shape
    assert count_model(net, (3, 16, 16)).macs_per_img == 3 * 16 * 9 * 16 * 16 + 160
    assert net.training                                      # mode restored


def test_flop_counter_matches_search_space_count():
    space = pytest.importorskip("search_spaces").get_space("tss")
    arch = space.arch_at(123)
    c = count_model(space.build(arch, "cifar10"), space.input_shape("cifar10"))
    ref = space.count(arch, "cifar10")
    # the analytic count also includes the classifier's bias additions
    assert c.params == ref.params
    assert c.macs_per_img == pytest.approx(ref.macs, rel=1e-5)


@pytest.mark.parametrize(
    ("name", "precision", "tflops"),
    [("NVIDIA H200", "bf16", 989.4), ("NVIDIA H100 80GB HBM3", "fp32", 67.0),
     ("NVIDIA H100 PCIe", "fp16", 756.0), ("NVIDIA A100-SXM4-80GB", "tf32", 156.0),
     ("NVIDIA L4", "fp16", 121.0), ("NVIDIA A10", "fp32", 31.2)],
)
def test_datasheet_lookup(name, precision, tflops):
    assert datasheet_peak_flops(name, precision) == pytest.approx(tflops * 1e12)


def test_datasheet_unknown_device_or_mode():
    with pytest.raises(UsageError, match="no datasheet peak known"):
        datasheet_peak_flops("Some GPU", "fp32")
    with pytest.raises(UsageError, match="no bf16 peak"):
        datasheet_peak_flops("Tesla V100-SXM2-32GB", "bf16")


def test_peak_cache_tolerates_clock_jitter_and_persists(tmp_path):
    path = tmp_path / "peaks.json"
    cache = PeakCache(path)
    calls = []
    measure = lambda: calls.append(1) or 5e14  # noqa: E731
    key = PeakKey("GPU", "fp16", 1980.0)
    assert cache.get_or_measure(key, measure) == 5e14
    assert cache.get_or_measure(PeakKey("GPU", "fp16", 1965.0), measure) == 5e14
    assert len(calls) == 1
    cache.get_or_measure(PeakKey("GPU", "fp16", 1200.0), measure)   # another clock
    assert len(calls) == 2
    reloaded = PeakCache(path)
    assert reloaded.get(key) == 5e14 and reloaded.get(PeakKey("GPU", "fp32", 1980.0)) is None
    assert "GPU|fp16|1980" in json.loads(path.read_text())["peak_flops_per_s"]
    assert resolve_peak("datasheet", PeakKey("NVIDIA H200", "fp32", None), cache, measure).source \
        == "datasheet"
    with pytest.raises(UsageError):
        resolve_peak("guess", key, cache, measure)


def test_bad_peak_cache_file(tmp_path):
    bad = tmp_path / "p.json"
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match="not a valid JSON peak cache"):
        PeakCache(bad)


def test_cpu_matmul_peak_is_positive_and_plausible():
    rate = measure_matmul_peak_flops("cpu", "fp32", n=256, target_s=0.01, trials=2)
    assert 1e8 < rate < 1e14
