"""The clock choice under uncertainty (equation 7): expected energy over the band against the
point estimate, the band members, and the physical-consistency flag of a sweep's default point."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dvfs_helpers import make_measurement, make_params, model_sweep
from nasenergy.dvfs.api import (EXPECTED, POINT, band_members, choose_clock, optimal_clock_for,
                                saving_band)
from nasenergy.dvfs.backends import ExpectedBackend, ModelledBackend
from nasenergy.dvfs.clock_search import exhaustive_search
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, observation_from_measurement
from nasenergy.dvfs.params import AlphaPredictor
from nasenergy.dvfs.points import ClockPoint
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.dvfs.validation import consistent_default_point
from nasenergy.errors import UsageError

OBS = WorkloadObservation(time_s_per_img=1e-5, power_w=400.0, sm_clock_mhz=1980.0)


def _params(lo: float = 0.05, rmse: float = 0.2, intercept: float = 0.5):
    return make_params(alpha_predictors=(AlphaPredictor((), (), intercept, lo, rmse=rmse),))


def _default(obs: WorkloadObservation = OBS) -> ClockPoint:
    return ClockPoint.from_time_power(obs.sm_clock_mhz, obs.time_s_per_img, obs.power_w, "measured")


def test_band_members_span_alpha_and_clip() -> None:
    p = _params(lo=0.05, rmse=0.2)
    members = band_members(p, OBS, 0.1)
    assert [a for _, a in members] == pytest.approx([0.05, 0.1, 0.3])
    assert all(shape is p for shape, _ in members)
    assert [a for _, a in band_members(p, OBS, 0.95)] == pytest.approx([0.75, 0.95, 1.0])
    assert [a for _, a in band_members(p, OBS, 0.5, rmse=0.0)] == pytest.approx([0.5] * 3)


def test_expected_backend_with_one_member_is_the_point_estimate() -> None:
    p = _params()
    model = DvfsModel(p)
    point = ModelledBackend(model, OBS, alpha=0.4)
    expected = ExpectedBackend(model, OBS, [(p, 0.4)], alpha=0.4)
    for f in (600.0, 1200.0, 1980.0):
        a, b = point.probe(f), expected.probe(f)
        assert b.energy_j_per_img == pytest.approx(a.energy_j_per_img, rel=1e-12)
        assert b.time_s_per_img == pytest.approx(a.time_s_per_img, rel=1e-12)
    with pytest.raises(UsageError):
        ExpectedBackend(model, OBS, [])


def test_expected_backend_averages_energy_at_the_point_estimates_time() -> None:
    p = _params()
    model = DvfsModel(p)
    b = ExpectedBackend(model, OBS, [(p, 0.2), (p, 0.8)], alpha=0.7)
    lo, hi, mid = (model.point(OBS, 900.0, alpha=a) for a in (0.2, 0.8, 0.7))
    pt = b.probe(900.0)
    assert pt.energy_j_per_img == pytest.approx((lo.energy_j_per_img + hi.energy_j_per_img) / 2)
    assert pt.time_s_per_img == pytest.approx(mid.time_s_per_img)
    assert b.probe(913.0).energy_j_per_img > 0          # a clock outside the table
    # every member reproduces the measured point at the default clock
    d = b.probe(1980.0)
    assert d.energy_j_per_img == pytest.approx(OBS.power_w * OBS.time_s_per_img)


def test_expected_choice_avoids_the_steep_side_when_alpha_is_clipped() -> None:
    """alpha at the predictors' lower clip: the band reaches only upwards (lo, lo, lo + r), so the
    expected rule must choose a strictly higher clock than the point estimate, and with no
    residual both rules agree."""
    p = _params(lo=0.05, rmse=0.3)
    model = DvfsModel(p)
    pt = choose_clock(model, OBS, _default(), alpha=0.05, choice=POINT)
    ex = choose_clock(model, OBS, _default(), alpha=0.05, choice=EXPECTED)
    assert ex.sm_clock_mhz > pt.sm_clock_mhz
    assert choose_clock(model, OBS, _default(), alpha=0.05, rmse=0.0).sm_clock_mhz == pt.sm_clock_mhz
    # the expected clock is the exhaustive minimum of the mean curve
    members = band_members(p, OBS, 0.05)
    mean = np.mean([DvfsModel(s).curve(OBS, alpha=a).energy_j_per_img for s, a in members], axis=0)
    assert ex.sm_clock_mhz == p.supported_clocks_mhz[int(np.argmin(mean))]
    full = exhaustive_search(ExpectedBackend(model, OBS, members, alpha=0.05), default_point=_default())
    assert full.sm_clock_mhz == ex.sm_clock_mhz
    # the figures at the chosen clock are the point estimate's
    ref = model.point(OBS, ex.sm_clock_mhz, alpha=0.05)
    assert ex.energy_j_per_img == pytest.approx(ref.energy_j_per_img)
    assert ex.energy_saving_frac == pytest.approx(1 - ref.energy_j_per_img / (400.0 * 1e-5))
    with pytest.raises(UsageError, match="unknown clock choice"):
        choose_clock(model, OBS, _default(), choice="robust")


def test_expected_choice_is_the_better_choice_on_a_sweep_with_an_underpredicted_alpha() -> None:
    """The workload's true alpha is one residual above the prediction: the expected rule's clock
    must cost less measured energy than the point rule's."""
    p = _params(lo=0.02, rmse=0.25)
    model = DvfsModel(p)
    sweep = model_sweep(p, 0.45, p0=400.0)
    e = {rule: sweep.energy[int(np.argmin(np.abs(sweep.f - choose_clock(
        model, OBS, _default(), alpha=0.2, choice=rule).sm_clock_mhz)))] for rule in (EXPECTED, POINT)}
    assert e[EXPECTED] < e[POINT]


def test_bounded_slowdown_holds_on_the_reported_point() -> None:
    """alpha near 1 (the band clipped at 1 above): the expected rule must still keep the
    reported point estimate within the throughput bound."""
    p = _params(lo=0.05, rmse=0.3)
    model = DvfsModel(p)
    for alpha in (0.8, 0.95, 1.0):
        opt = choose_clock(model, OBS, _default(), alpha=alpha, mode="bounded-slowdown",
                           max_slowdown=0.05)
        assert opt.throughput_change_frac >= -0.05 - 1e-12


def test_optimal_clock_for_choices() -> None:
    params = make_params()
    m = make_measurement()
    obs = observation_from_measurement(m, params)
    model = DvfsModel(params)
    pt = optimal_clock_for(m, params=params, choice=POINT)
    ref = exhaustive_search(ModelledBackend(model, obs), default_point=pt.default)
    assert pt.sm_clock_mhz == ref.sm_clock_mhz
    ex = optimal_clock_for(m, params=params)          # expected is the default
    members = band_members(params, obs, model.alpha(obs))
    mean = np.mean([DvfsModel(s).curve(obs, alpha=a).energy_j_per_img for s, a in members], axis=0)
    assert ex.sm_clock_mhz == params.supported_clocks_mhz[int(np.argmin(mean))]
    lo, hi = ex.saving_band_frac
    assert lo - 1e-12 <= ex.energy_saving_frac <= hi + 1e-12
    assert ex.best.source == "modelled"
    assert saving_band(params, obs, ex.sm_clock_mhz, model.alpha(obs)) == (lo, hi)


def _sweep(p_top: float, t_top: float) -> Sweep:
    f = (705.0, 1215.0, 1605.0, 1710.0)
    return Sweep.from_arrays("g", "w", f, (2.0, 1.3, 1.02, t_top), (100.0, 150.0, 240.0, p_top))


def test_consistent_default_point() -> None:
    assert consistent_default_point(_sweep(250.0, 1.0))
    assert not consistent_default_point(_sweep(110.0, 1.0))     # half the power, faster: artefact
    assert consistent_default_point(_sweep(110.0, 1.5))         # slower at the top: not flagged
    assert consistent_default_point(_sweep(0.91 * 240.0, 1.0))  # within the 10% allowance
    assert consistent_default_point(model_sweep(make_params(), 0.5))


def test_leave_one_gpu_out_does_not_see_the_held_out_gpus_sweeps() -> None:
    """The held-out GPU's sweeps away from their default points must not inform its own
    predictions: distorting them changes its scores but none of its chosen clocks (either rule)."""
    from test_published import _synthetic_gpu
    from nasenergy.dvfs.validation import leave_one_gpu_out

    def gpus(distort: bool):
        out = []
        for key, top, knee in (("g1", 1980.0, 0.75), ("g2", 1410.0, 0.6), ("g3", 1710.0, 0.5)):
            clocks = tuple(float(c) for c in np.linspace(0.3 * top, top, 30).round())
            truth = make_params(name=key, gpu=key, supported_clocks_mhz=clocks,
                                default_clock_mhz=top, knee_clock_mhz=knee * top)
            g = _synthetic_gpu(key, truth, 700.0, 80.0)
            if distort and key == "g3":
                g = dataclasses.replace(g, sweeps=[Sweep.from_arrays(
                    s.gpu, s.workload, s.f, np.r_[s.t[:-1] * 1.3, s.t[-1]], s.p,
                    sm_active=s.sm_active, dram_active=s.dram_active) for s in g.sweeps])
            out.append(g)
        return out

    a = [r for r in leave_one_gpu_out(gpus(False)) if r.gpu == "g3"]
    b = [r for r in leave_one_gpu_out(gpus(True)) if r.gpu == "g3"]
    assert [r.generic_clock_mhz for r in a] == [r.generic_clock_mhz for r in b]
    assert [r.point_clock_mhz for r in a] == [r.point_clock_mhz for r in b]
    assert [r.regret_frac for r in a] != [r.regret_frac for r in b]
    assert all(r.consistent_default_point for r in a)
