"""CpuMeter: real throughput and utilization, energy never invented."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from nasenergy.errors import UsageError  # noqa: E402
from nasenergy.hardware.cpu_meter import CpuMeter  # noqa: E402
from nasenergy.hardware.meter import Meter, repeat_stats  # noqa: E402
from nasenergy.hardware.peaks import PeakCache  # noqa: E402


def _net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 10))


@pytest.fixture(scope="module")
def meter():
    return CpuMeter(n_repeats=3, min_repeat_s=0.005, peak_matmul_n=256,
                    peak_cache=PeakCache())


def test_cpu_measurement(meter):
    net = _net()
    before = [p.clone() for p in net.parameters()]
    m = meter.measure(net, (3, 8, 8), batch_size=4, precision="fp32")
    assert isinstance(meter, Meter)
    assert m.source == "measured" and m.device_name.startswith("cpu: ")
    assert m.energy_j_per_img is None and m.energy_basis == "unavailable"
    assert m.avg_power_w is None and m.energy_cv is None and m.sm_clock_mhz is None
    assert m.throughput_img_per_s > 0 and m.n_repeats == 3
    assert m.utilization == pytest.approx(
        m.flops_per_img * m.throughput_img_per_s / m.peak_flops_per_s)
    assert 0 < m.utilization < 1.5
    assert m.latency_ms_per_batch == pytest.approx(1000 * 4 / m.throughput_img_per_s)
    assert m.flops_per_img == 2 * m.macs_per_img
    assert m.measure_cost_s > 0 and m.peak_source == "measured"
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))  # not modified


def test_cpu_bad_requests(meter):
    with pytest.raises(UsageError, match="not measured on the CPU"):
        meter.measure(_net(), (3, 8, 8), batch_size=2, precision="tf32")
    with pytest.raises(UsageError, match="unknown precision"):
        meter.measure(_net(), (3, 8, 8), batch_size=2, precision="fp8")
    with pytest.raises(UsageError, match="batch size"):
        meter.measure(_net(), (3, 8, 8), batch_size=0, precision="fp32")
    with pytest.raises(UsageError, match="input shape"):
        meter.measure(_net(), (8, 8), batch_size=2, precision="fp32")


def test_repeat_stats():
    s = repeat_stats([1.0, 2.0, 3.0])
    assert s.median == 2.0 and s.cv == pytest.approx(0.5) and s.n == 3
    assert repeat_stats([4.0]).cv == 0.0
    with pytest.raises(ValueError):
        repeat_stats([])


def test_a_batch_that_does_not_fit_in_memory_is_a_meter_error(meter, monkeypatch):
    """Torch's "can't allocate memory" (a batch of 10^8 images) is one line, not a traceback."""
    from nasenergy.hardware.meter import MeterError

    def no_memory(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           "memory: you tried to allocate 1228800000000 bytes. Error code 12")

    monkeypatch.setattr(torch, "randn", no_memory)
    with pytest.raises(MeterError, match="out of memory at batch size 100000000 on the CPU"):
        meter.measure(_net(), (3, 8, 8), batch_size=100_000_000, precision="fp32")
    monkeypatch.setattr(torch, "randn", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("other")))
    with pytest.raises(RuntimeError, match="other"):  # any other error is not taken for memory
        meter.measure(_net(), (3, 8, 8), batch_size=4, precision="fp32")
