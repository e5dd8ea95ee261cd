"""optimal_clock_for, optimistic_energy_bound and show_curve from a Measurement."""

from __future__ import annotations

import numpy as np
import pytest

from dvfs_helpers import make_measurement
from nasenergy.dvfs.api import optimal_clock_for, optimistic_energy_bound, show_curve
from nasenergy.dvfs.model import DvfsModel, observation_from_measurement
from nasenergy.dvfs.points import BOUNDED_SLOWDOWN, MIN_EDP
from nasenergy.errors import UsageError


def test_optimal_clock_for_uses_measurement_as_default(params) -> None:
    m = make_measurement()
    opt = optimal_clock_for(m, params=params)
    assert opt.source == "modelled" and opt.default.source == "measured"
    assert opt.default.energy_j_per_img == pytest.approx(400.0 / 200_000.0)
    curve = DvfsModel(params).curve(observation_from_measurement(m, params))
    assert opt.sm_clock_mhz == curve.clocks_mhz[int(np.argmin(curve.energy_j_per_img))]
    assert opt.energy_saving_frac > 0 and opt.throughput_change_frac < 0
    assert opt.caveat and "synthetic test parameters" in opt.caveat


def test_modes_order(params) -> None:
    m = make_measurement()
    e = optimal_clock_for(m, params=params)
    edp = optimal_clock_for(m, params=params, mode=MIN_EDP)
    b = optimal_clock_for(m, params=params, mode=BOUNDED_SLOWDOWN, max_slowdown=0.02)
    assert edp.sm_clock_mhz >= e.sm_clock_mhz
    assert b.throughput_change_frac >= -0.02 and b.sm_clock_mhz >= e.sm_clock_mhz


def test_shipped_params_picked_by_device_name() -> None:
    opt = optimal_clock_for(make_measurement(device_name="NVIDIA H200"))
    assert "no measured H200" in (opt.caveat or "")
    assert 345 <= opt.sm_clock_mhz <= 1980
    with pytest.raises(UsageError, match="no DVFS parameter set"):
        optimal_clock_for(make_measurement(device_name="cpu: some CPU"))


def test_optimistic_bound_is_below_modelled_optimum(params) -> None:
    m = make_measurement()
    opt = optimal_clock_for(m, params=params)
    bound = optimistic_energy_bound(m, params, margin_frac=0.0)
    assert bound <= opt.energy_j_per_img + 1e-15
    assert optimistic_energy_bound(m, params, margin_frac=0.2) == pytest.approx(0.8 * bound)
    with pytest.raises(UsageError):
        optimistic_energy_bound(m, params, margin_frac=1.0)


def test_show_curve_text_and_png(tmp_path, params) -> None:
    png = tmp_path / "curve.png"
    text = show_curve(make_measurement(), params=params, png_path=png, max_rows=20)
    assert "modelled" in text and "caveat: " in text
    rows = [ln for ln in text.splitlines() if ln[:2].strip() in ("*", "d", "*d")]
    assert any(ln.startswith("*") for ln in rows) and any("d" in ln[:2] for ln in rows)
    assert png.stat().st_size > 1000


def test_show_curve_uses_device_clocks(tmp_path, params) -> None:
    from nasenergy.hardware.nvml import open_device
    from nasenergy.testing import FakeGpu, FakeNvml

    fake = FakeNvml([FakeGpu(graphics_clocks_mhz=(990, 1500, 1980))])
    with open_device(0, nvml=fake) as dev:
        text = show_curve(make_measurement(), params=params, device=dev)
    table = [ln for ln in text.splitlines()[6:] if ln.strip()]
    assert len(table) == 3
    assert "nvmlDeviceSetGpuLockedClocks" not in fake.call_names()
