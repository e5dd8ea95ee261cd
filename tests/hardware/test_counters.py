"""GPU activity counters through NVML (tested on the fake NVML)."""

from __future__ import annotations

from nasenergy.hardware.counters import GPM_DRAM_BW_UTIL, GPM_SM_UTIL, CounterWindow, GpuCounters
from nasenergy.hardware.nvml import open_device
from nasenergy.testing import FakeGpu, FakeNvml, ManualClock


def _window(gpu: FakeGpu, **fake_kw) -> tuple[CounterWindow, ManualClock]:
    clock = ManualClock()
    device = open_device(0, FakeNvml([gpu], clock=clock, **fake_kw))
    return CounterWindow(device, clock=clock), clock


def test_gpm_metrics_over_a_window() -> None:
    window, clock = _window(FakeGpu(gpm_pct={GPM_SM_UTIL: 93.0, GPM_DRAM_BW_UTIL: 7.0}))
    window.start()
    clock.advance(0.2)
    got = window.stop()
    assert got.kind == "gpm" and got.window_s == 0.2
    assert got.sm_util_pct == 93.0 and got.dram_bw_util_pct == 7.0 and got.tensor_util_pct == 0.0
    assert got.gpu_util_pct == 100.0


def test_without_gpm_only_the_utilization_rates() -> None:
    window, clock = _window(FakeGpu(gpm_pct={}, utilization_rates_pct=(97.0, 41.0)))
    window.start()
    clock.advance(0.2)
    assert window.stop() == GpuCounters("utilization_rates", gpu_util_pct=97.0, memory_util_pct=41.0)


def test_counter_errors_never_fail_the_measurement() -> None:
    window, clock = _window(FakeGpu(), fail_on={"nvmlGpmMetricsGet": 3, "nvmlDeviceGetUtilizationRates": 3})
    window.start()
    clock.advance(0.2)
    assert window.stop().kind == "unavailable"
    assert CounterWindow(None).stop().kind == "unavailable"


def test_reading_counters_changes_no_setting() -> None:
    clock = ManualClock()
    fake = FakeNvml(1, clock=clock)
    window = CounterWindow(open_device(0, fake), clock=clock)
    window.start()
    clock.advance(0.1)
    window.stop()
    assert not any("Set" in name or "Reset" in name for name in fake.call_names())
