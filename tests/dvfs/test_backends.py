"""The three backends: measured (fake NVML + synthetic meter), modelled and recorded."""

from __future__ import annotations

import numpy as np
import pytest

from dvfs_helpers import make_measurement, make_params, model_sweep
import nasenergy.dvfs
from nasenergy.dvfs.backends import (ClockBackend, MeasuredBackend, ClockPointError,
                                     ModelledBackend, RecordedBackend, point_from_measurement)
from nasenergy.dvfs.control import ClockControl
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation
from nasenergy.dvfs.clock_search import exhaustive_search, find_optimal_clock
from nasenergy.errors import UsageError
from nasenergy.testing import FakeNvml


def test_backends_follow_the_protocol(tmp_path, params) -> None:
    obs = WorkloadObservation(2e-6, 400.0, 1980.0)
    cc = ClockControl(0, allow=True, nvml=FakeNvml(), state_dir=tmp_path)
    for b in (ModelledBackend(DvfsModel(params), obs),
              RecordedBackend(model_sweep(params, 0.5)),
              MeasuredBackend(cc, make_measurement)):
        assert isinstance(b, ClockBackend)
        assert b.source in ("measured", "modelled", "recorded")
        clocks = b.clocks_mhz()
        assert list(clocks) == sorted(clocks) and b.default_clock_mhz() == 1980.0


def test_measured_backend_search_with_fake_gpu(tmp_path) -> None:
    """A synthetic 'real' GPU: the fake NVML locks clocks, a meter reads the curve at the clock in
    force. The few-probe search must find the exhaustive optimum and leave clocks unlocked."""
    truth = make_params(knee_clock_mhz=1300.0)
    model = DvfsModel(truth)
    obs = WorkloadObservation(2e-6, 450.0, 1980.0)
    fake = FakeNvml()
    cc = ClockControl(0, allow=True, nvml=fake, state_dir=tmp_path)
    seen: list[int] = []

    def measure():
        f = cc.device.sm_clock_mhz()
        seen.append(f)
        pt = model.point(obs, f, alpha=0.55)
        return make_measurement(throughput_img_per_s=pt.throughput_img_per_s,
                                avg_power_w=pt.power_w, sm_clock_mhz=float(f),
                                energy_j_per_img=pt.energy_j_per_img)

    fast = find_optimal_clock(MeasuredBackend(cc, measure))
    assert fast.source == "measured" and fast.n_probes <= 11
    assert fake.locked_clocks_mhz() is None
    assert len(fake.lock_history()) == 2 * fast.n_probes
    assert sorted(seen) == sorted(p.sm_clock_mhz for p in fast.probed)
    curve = model.curve(obs, alpha=0.55)
    assert fast.sm_clock_mhz == curve.clocks_mhz[int(np.argmin(curve.energy_j_per_img))]


def test_measured_backend_snaps_requested_clocks(tmp_path) -> None:
    cc = ClockControl(0, allow=True, nvml=FakeNvml(), state_dir=tmp_path)
    b = MeasuredBackend(cc, make_measurement, clocks_mhz=[1001, 1412, 1409])
    assert b.clocks_mhz() == (1005.0, 1410.0)


def test_point_from_measurement_bases() -> None:
    m = make_measurement()
    assert point_from_measurement(m, 1980).power_w == 400.0
    above = make_measurement(avg_power_w=None, energy_basis="above_idle",
                             energy_j_per_img=320.0 / 200_000.0)
    assert point_from_measurement(above, 1980).power_w == pytest.approx(400.0)
    with pytest.raises(ClockPointError, match="no power or energy"):
        point_from_measurement(make_measurement(avg_power_w=None, energy_j_per_img=None,
                                                energy_basis="unavailable"), 1980)
    with pytest.raises(ClockPointError):
        point_from_measurement(make_measurement(avg_power_w=None, idle_power_w=None,
                                                energy_basis="above_idle"), 1980)


def test_recorded_backend_rejects_unrecorded_clocks(params) -> None:
    s = model_sweep(params, 0.5, clocks=(1000.0, 1500.0, 1980.0))
    b = RecordedBackend(s)
    assert b.probe(1500.0).source == "recorded"
    with pytest.raises(UsageError, match="not recorded"):
        b.probe(1200.0)


def test_modelled_backend_matches_exhaustive_and_caveat(params) -> None:
    obs = WorkloadObservation(2e-6, 400.0, 1980.0)
    b = ModelledBackend(DvfsModel(params), obs)
    fast, full = find_optimal_clock(b), exhaustive_search(b)
    assert fast.sm_clock_mhz == full.sm_clock_mhz
    assert full.n_probes == len(params.supported_clocks_mhz)
    assert fast.n_probes <= 11
    assert "synthetic test parameters" in (fast.caveat or "")
    assert fast.default.sm_clock_mhz == 1980.0 and fast.default.source == "modelled"


def test_the_former_name_of_clock_point_error_still_imports() -> None:
    assert nasenergy.dvfs.MeasurementError is nasenergy.dvfs.ClockPointError
