"""CudaMeter on a real GPU (skipped without one). Reads clocks and energy; never changes them."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32),
                               torch.nn.ReLU(), torch.nn.Conv2d(32, 64, 3, padding=1),
                               torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                               torch.nn.Linear(64, 10))


@pytest.fixture(scope="module")
def meter():
    from nasenergy.hardware.cuda_meter import CudaMeter

    m = CudaMeter(energy_repeats=2, energy_window_s=0.2)
    yield m
    m.close()


def test_energy_measurement(meter):
    net = _net()
    flags = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    m = meter.measure(net, (3, 32, 32), batch_size=256, precision="fp16")
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == flags
    assert m.source == "measured" and m.peak_source == "measured"
    assert next(net.parameters()).device.type == "cpu"         # the model was not moved
    assert m.throughput_img_per_s > 0 and 0 < m.utilization < 1
    assert m.energy_basis == "total" and m.energy_j_per_img > 0
    assert m.avg_power_w > 0 and m.idle_power_w > 0 and m.sm_clock_mhz > 0
    assert m.energy_j_per_img == pytest.approx(m.avg_power_w / m.throughput_img_per_s, rel=0.1)
    assert m.flops_per_img == 2 * m.macs_per_img
    if meter.has_energy_counter:  # the windows ran as fast as the timed repeats (no idle inside)
        from nasenergy.hardware.energy_window import MIN_BUSY_FRAC

        assert meter.last_busy_frac >= MIN_BUSY_FRAC
    if meter.nvml_device is not None:
        assert meter.nvml_device.has_energy_counter() == meter.has_energy_counter


def test_throughput_only_and_precisions(meter):
    from nasenergy.hardware.cuda_meter import CudaMeter

    fast = CudaMeter(measure_energy=False, peak="datasheet")
    try:
        for precision in ("fp32", "tf32", "bf16"):
            m = fast.measure(_net(), (3, 32, 32), batch_size=128, precision=precision)
            assert m.energy_j_per_img is None and m.energy_basis == "unavailable"
            assert m.precision == precision and m.throughput_img_per_s > 0
    finally:
        fast.close()


def test_host_copies_are_measured_like_the_model(meter):
    from nasenergy.hardware.cuda_meter import host_copies

    net = _net()
    copies = host_copies(net, "fp16")
    m = meter.measure(copies, (3, 32, 32), batch_size=256, precision="fp16")
    assert copies.formats == []                                  # both copies used, once
    assert next(net.parameters()).device.type == "cpu"
    assert m.memory_format in ("channels_last", "contiguous") and m.energy_j_per_img > 0
    plain = meter.measure(net, (3, 32, 32), batch_size=256, precision="fp16", channels_last=m.memory_format == "channels_last")
    assert m.flops_per_img == plain.flops_per_img and m.params == plain.params
    assert m.throughput_img_per_s == pytest.approx(plain.throughput_img_per_s, rel=0.2)


def test_throughput_from_the_energy_windows_matches_the_timed_throughput():
    from nasenergy.hardware.cuda_meter import CudaMeter
    from nasenergy.hardware.energy_window import MIN_BUSY_FRAC

    timed = CudaMeter(energy_repeats=1, energy_window_s=0.2, energy_source="samples")
    windowed = CudaMeter(energy_repeats=1, energy_window_s=0.2, energy_source="samples",
                         throughput_from_energy=True, release_every=4)
    try:
        net = _net()
        a = timed.measure(net, (3, 32, 32), batch_size=256, precision="fp16", channels_last=True)
        b = windowed.measure(net, (3, 32, 32), batch_size=256, precision="fp16", channels_last=True)
        # one window; its passes split into n_repeats contiguous runs give the throughput's spread
        assert b.n_repeats == windowed.n_repeats and b.energy_cv is None and b.energy_j_per_img > 0
        assert b.throughput_img_per_s == pytest.approx(a.throughput_img_per_s, rel=0.05)
        assert windowed.last_busy_frac >= MIN_BUSY_FRAC
        assert windowed.last_phases_s["throughput"] < timed.last_phases_s["throughput"]
    finally:
        timed.close()
        windowed.close()


def test_the_search_default_setting_gives_throughput_and_energy_from_one_window():
    from nasenergy.hardware.cuda_meter import CudaMeter
    from nasenergy.hardware.meter_settings import get_setting

    fast = CudaMeter(**dict(get_setting("fast").meter_options))
    try:
        m = fast.measure(_net(), (3, 32, 32), batch_size=256, precision="fp16")
    finally:
        fast.close()
    assert m.throughput_img_per_s > 0 and m.n_repeats > 1 and m.throughput_cv < 0.05
    if fast.nvml_device is not None:
        assert m.energy_j_per_img > 0 and m.energy_cv is None and len(fast.last_windows) == 1
