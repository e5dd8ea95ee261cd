"""FakeNvml behaves as documented (the fake others test against)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from nasenergy.testing import FakeGpu, FakeNvml, ManualClock


def _handle(fake):
    fake.nvmlInit()
    return fake.nvmlDeviceGetHandleByIndex(0)


def test_calls_before_init_fail_uninitialized():
    fake = FakeNvml()
    with pytest.raises(fake.NVMLError) as ei:
        fake.nvmlDeviceGetCount()
    assert ei.value.value == fake.NVML_ERROR_UNINITIALIZED


def test_h200_like_defaults():
    fake = FakeNvml()
    h = _handle(fake)
    g = fake.nvmlDeviceGetSupportedGraphicsClocks(h, 3201)
    assert len(g) == 110 and max(g) == 1980 and min(g) == 345
    assert g == sorted(g, reverse=True)  # NVML lists descending
    assert sorted(fake.nvmlDeviceGetSupportedMemoryClocks(h)) == [2201, 3201]
    assert fake.nvmlDeviceGetPowerManagementLimitConstraints(h) == [200_000, 700_000]


def test_counter_is_quantised_to_ticks_and_exact_at_ticks():
    clock = ManualClock(100.0)
    fake = FakeNvml(clock=clock, tick_s=0.1)
    h = _handle(fake)
    e0 = fake.nvmlDeviceGetTotalEnergyConsumption(h)
    assert e0 == 5_000_000
    fake.set_load(250.0)                              # load from t = 0
    clock.advance(0.1999)
    assert fake.nvmlDeviceGetTotalEnergyConsumption(h) - e0 == 25_000      # one tick
    clock.advance(0.0001)
    assert fake.nvmlDeviceGetTotalEnergyConsumption(h) - e0 == 50_000      # two ticks
    assert fake.exact_energy_j(0.0, 0.2) == pytest.approx(50.0)


def test_load_change_mid_tick_is_integrated_exactly():
    clock = ManualClock()
    fake = FakeNvml(clock=clock, tick_s=0.1)
    h = _handle(fake)
    e0 = fake.nvmlDeviceGetTotalEnergyConsumption(h)
    clock.advance(0.04)
    fake.set_load(484.0)                              # idle 84 W for 40 ms, then 484 W
    clock.advance(0.06)
    de = fake.nvmlDeviceGetTotalEnergyConsumption(h) - e0
    assert de == round(84 * 40 + 484 * 60)            # mJ
    assert fake.nvmlDeviceGetPowerUsage(h) == 324_000  # mean over the tick, mW


def test_callable_load_sees_locked_clock():
    clock = ManualClock()
    fake = FakeNvml(clock=clock)
    h = _handle(fake)
    fake.set_load(lambda t, mhz: 100.0 + mhz / 10.0)
    fake.nvmlDeviceSetGpuLockedClocks(h, 1005, 1005)
    e0 = fake.nvmlDeviceGetTotalEnergyConsumption(h)
    clock.advance(1.0)
    de = fake.nvmlDeviceGetTotalEnergyConsumption(h) - e0
    assert de == pytest.approx((100 + 100.5) * 1000, abs=1)


def test_fail_on_and_call_log():
    fake = FakeNvml(fail_on={"nvmlDeviceGetName": FakeNvml.NVML_ERROR_GPU_IS_LOST})
    h = _handle(fake)
    with pytest.raises(fake.NVMLError) as ei:
        fake.nvmlDeviceGetName(h)
    assert ei.value.value == 15 and str(ei.value) == "GPU is lost"
    assert fake.calls[-1] == ("nvmlDeviceGetName", (0,))
    fake.fail_on.clear()
    assert fake.nvmlDeviceGetName(h) == "NVIDIA H200 (fake)"


def test_multiple_gpus_and_no_counter():
    fake = FakeNvml(gpus=[FakeGpu(), FakeGpu(name="Old", has_energy_counter=False)])
    fake.nvmlInit()
    assert fake.nvmlDeviceGetCount() == 2
    h1 = fake.nvmlDeviceGetHandleByIndex(1)
    with pytest.raises(fake.NVMLError) as ei:
        fake.nvmlDeviceGetTotalEnergyConsumption(h1)
    assert ei.value.value == fake.NVML_ERROR_NOT_SUPPORTED
    with pytest.raises(fake.NVMLError):
        fake.nvmlDeviceGetHandleByIndex(2)


_CHILD = textwrap.dedent(
    """
    import sys, time
    from nasenergy.testing import FakeNvml
    fake = FakeNvml(state_file=sys.argv[1])
    fake.nvmlInit()
    h = fake.nvmlDeviceGetHandleByIndex(0)
    fake.nvmlDeviceSetGpuLockedClocks(h, 900, 900)
    print("locked", flush=True)
    time.sleep(60)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_state_file_shows_clocks_left_locked_by_killed_child(tmp_path, sig):
    state = tmp_path / "gpu.json"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(state)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
    finally:
        os.kill(child.pid, sig)
        child.wait(timeout=30)
    parent = FakeNvml(state_file=state)
    assert parent.locked_clocks_mhz() == (900, 900)
    h = _handle(parent)
    assert parent.nvmlDeviceGetClockInfo(h, parent.NVML_CLOCK_SM) == 900
    parent.nvmlDeviceResetGpuLockedClocks(h)
    assert FakeNvml(state_file=state).locked_clocks_mhz() is None
    assert [e["op"] for e in parent.lock_history()] == ["set", "reset"]
    assert parent.lock_history()[0]["pid"] == child.pid


# ----------------------------------------------------------------------------- FakeMeter
torch = pytest.importorskip("torch")

from nasenergy.hardware.meter import Meter  # noqa: E402
from nasenergy.testing import FakeMeter  # noqa: E402


def _net(width: int) -> "torch.nn.Module":
    return torch.nn.Sequential(torch.nn.Conv2d(3, width, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(width, 10))


def test_fake_meter_is_a_meter_and_says_it_is_synthetic():
    m = FakeMeter().measure(_net(8), (3, 32, 32), batch_size=256, precision="fp16")
    assert isinstance(FakeMeter(), Meter)
    assert m.source == "modelled" and m.device_name == "fake"
    assert m.flops_per_img == 2 * m.macs_per_img == 2 * (3 * 8 * 9 * 32 * 32 + 8 * 10)
    assert m.utilization == pytest.approx(m.flops_per_img * m.throughput_img_per_s / m.peak_flops_per_s)
    assert m.energy_j_per_img == pytest.approx(m.avg_power_w / m.throughput_img_per_s)
    assert 84.0 < m.avg_power_w < 700.0


def test_fake_meter_bigger_net_is_better_utilized_and_deterministic():
    meter = FakeMeter(noise_cv=0.02, seed=3)
    small = meter.measure(_net(4), (3, 32, 32), batch_size=256, precision="fp16")
    big = meter.measure(_net(64), (3, 32, 32), batch_size=256, precision="fp16")
    assert big.utilization > small.utilization
    assert big.energy_j_per_img > small.energy_j_per_img
    again = FakeMeter(noise_cv=0.02, seed=3).measure(_net(64), (3, 32, 32), batch_size=256,
                                                      precision="fp16")
    assert again.throughput_img_per_s == big.throughput_img_per_s
    other = FakeMeter(noise_cv=0.02, seed=4).measure(_net(64), (3, 32, 32), batch_size=256,
                                                      precision="fp16")
    assert other.throughput_img_per_s != big.throughput_img_per_s


def test_fake_meter_overrides_keep_figures_consistent():
    net = _net(8)
    meter = FakeMeter(overrides={"a": {"throughput_img_per_s": 1000.0, "energy_j_per_img": 0.5}},
                      key=lambda model: "a" if model is net else None, cost_s=0.25)
    m = meter.measure(net, (3, 32, 32), batch_size=100, precision="fp32")
    assert m.throughput_img_per_s == 1000.0 and m.energy_j_per_img == 0.5
    assert m.avg_power_w == pytest.approx(500.0)
    assert m.latency_ms_per_batch == pytest.approx(100.0)
    assert m.utilization == pytest.approx(m.flops_per_img * 1000.0 / 67e12)
    assert m.measure_cost_s == 0.25 and meter.n_calls == 1
    with pytest.raises(ValueError, match="unknown Measurement fields"):
        FakeMeter(overrides={"a": {"speed": 1}}, key=lambda _: "a").measure(
            net, (3, 32, 32), batch_size=1, precision="fp32")
