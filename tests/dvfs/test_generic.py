"""Generic DVFS parameters for a GPU without a calibrated set, from NVML facts (fake NVML only)."""

from __future__ import annotations

import pytest

from nasenergy.dvfs.api import optimal_clock_for, resolve_params
from nasenergy.dvfs.generic import (GENERIC_LABEL, GpuFacts, REASON_SW_POWER_CAP, generic_params,
                                    mean_predictors)
from nasenergy.dvfs.params import shipped_params
from nasenergy.errors import UsageError
from nasenergy.hardware.nvml import open_device
from nasenergy.testing import FakeGpu, FakeNvml

from dvfs_helpers import make_measurement, make_params

L4_CLOCKS = tuple(range(210, 2041, 15))


def _device(**kw):
    spec = dict(name="NVIDIA L4 (fake)", graphics_clocks_mhz=L4_CLOCKS, default_sm_clock_mhz=2040,
                idle_power_w=16.0, power_limit_w=72.0, power_limit_range_w=(40.0, 72.0))
    spec.update(kw)
    return open_device(0, FakeNvml([FakeGpu(**spec)]))


def _l4_measurement(**kw):
    base = dict(device_name="NVIDIA L4 (fake)", avg_power_w=50.0, idle_power_w=16.0,
                energy_j_per_img=50.0 / 200_000.0, sm_clock_mhz=2040.0)
    base.update(kw)
    return make_measurement(**base)


def test_facts_from_the_fake_device_and_a_measurement() -> None:
    facts = GpuFacts.from_device(_device()).with_measurement(_l4_measurement())
    assert facts.supported_clocks_mhz[0] == 210 and facts.supported_clocks_mhz[-1] == 2040
    assert facts.power_limit_w == 72.0 and facts.idle_power_w == 16.0
    assert facts.loaded_sm_clock_mhz == 2040.0 and not facts.capped
    assert GpuFacts.from_device(_device(clocks_event_reasons=REASON_SW_POWER_CAP)).power_capped


def test_generic_shape_is_the_mean_of_the_references() -> None:
    refs = [make_params(name="a", knee_clock_mhz=990.0), make_params(name="b", knee_clock_mhz=1980.0 * 0.6)]
    facts = GpuFacts.from_device(_device()).with_measurement(_l4_measurement())
    p = generic_params(facts, refs)
    assert p.provenance == "generic" and p.caveat.startswith("GENERIC")
    assert p.knee_clock_mhz == pytest.approx(2040.0 * (990.0 / 1980.0 + 0.6) / 2)
    assert p.static_power_w == pytest.approx(16.0 * 70.0 / 80.0)
    assert p.supported_clocks_mhz[-1] == 2040.0 and p.default_clock_mhz == 2040.0
    assert [a.features for a in p.alpha_predictors] == [a.features for a in refs[0].alpha_predictors]


def test_power_capped_run_starts_the_curve_at_the_measured_clock() -> None:
    m = _l4_measurement(avg_power_w=71.5, sm_clock_mhz=1612.0, energy_j_per_img=71.5 / 200_000.0)
    facts = GpuFacts.from_device(_device()).with_measurement(m)
    assert facts.power_capped
    p = generic_params(facts)
    assert p.supported_clocks_mhz[-1] == 1612.0 and p.default_clock_mhz == 1612.0
    assert "power-capped under load at 1612 MHz" in p.caveat
    opt = optimal_clock_for(m, params=p)
    assert opt.default.sm_clock_mhz == 1612.0 and opt.sm_clock_mhz <= 1612.0
    assert all(pt.sm_clock_mhz <= 1612.0 for pt in opt.probed)
    # not capped: the same GPU at its top clock keeps every clock
    assert generic_params(GpuFacts.from_device(_device()).with_measurement(_l4_measurement())
                          ).supported_clocks_mhz[-1] == 2040.0


def test_generic_answers_are_labelled_and_carry_a_band() -> None:
    m = _l4_measurement(counters_kind="gpm", sm_util_pct=80.0, dram_bw_util_pct=20.0, gpu_util_pct=100.0)
    p = resolve_params(m, device=_device())
    opt = optimal_clock_for(m, params=p)
    assert opt.basis == "generic" and opt.label == GENERIC_LABEL == "modelled (generic)"
    lo, hi = opt.saving_band_frac
    assert lo <= opt.energy_saving_frac <= hi and hi > lo
    with pytest.raises(UsageError, match="no DVFS parameter set"):
        resolve_params(m)  # no device: nothing to build generic parameters from


def test_calibrated_sets_are_labelled_calibrated() -> None:
    m = make_measurement(device_name="NVIDIA A100-SXM4-80GB", avg_power_w=300.0, idle_power_w=60.0,
                         energy_j_per_img=300.0 / 200_000.0, sm_clock_mhz=1410.0)
    assert optimal_clock_for(m).label == "modelled (calibrated)"


def test_mean_predictors_average_over_the_sets_that_have_them() -> None:
    sets = [p for p in shipped_params().values() if p.provenance == "calibrated"]
    preds = mean_predictors(sets)
    assert {a.features for a in preds} == {a.features for s in sets for a in s.alpha_predictors}
    assert preds[0].features == ("compute_share",) and preds[-1].features == ()
    having = [a for s in sets for a in s.alpha_predictors if a.features == ("compute_share",)]
    assert 0 < len(having) < len(sets)  # the GTX Titan X sweeps have no counters
    assert preds[0].coef[0] == pytest.approx(sum(a.coef[0] for a in having) / len(having))


def test_generic_band_spans_the_reference_shapes() -> None:
    import dataclasses

    from nasenergy.dvfs.api import saving_band
    from nasenergy.dvfs.generic import reshape
    from nasenergy.dvfs.model import observation_from_measurement

    refs = [make_params(name="a", knee_clock_mhz=990.0, v_floor=0.6),
            make_params(name="b", knee_clock_mhz=1700.0, v_floor=0.9)]
    m = _l4_measurement()
    p = generic_params(GpuFacts.from_device(_device()).with_measurement(m), refs)
    assert reshape(p, refs[0], refs).knee_clock_mhz < p.knee_clock_mhz < reshape(p, refs[1], refs).knee_clock_mhz
    assert reshape(p, refs[1], refs).v_floor == 0.9
    obs = observation_from_measurement(m, p)
    alpha = 0.5
    lo_g, hi_g = saving_band(p, obs, 1200.0, alpha, shape_references=refs)
    lo_a, hi_a = saving_band(dataclasses.replace(p, provenance="calibrated"), obs, 1200.0, alpha)
    assert lo_g < lo_a <= hi_a < hi_g
