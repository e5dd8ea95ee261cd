"""Power-capped runs, board power limits, idle-power estimates and the two-clock alpha
(fake NVML only: no clock is ever changed)."""

from __future__ import annotations

import pytest

from nasenergy.dvfs import (GENERIC_LABEL, DvfsModel, WorkloadObservation, alpha_from_neighbour,
                            candidate_clocks, facts_from_measurement, optimal_clock_for,
                            resolve_params)
from nasenergy.dvfs.generic import REASON_SW_POWER_CAP, GpuFacts, generic_params
from nasenergy.dvfs.model import observation_from_measurement, time_ratio
from nasenergy.dvfs.params import shipped_params
from nasenergy.errors import UsageError
from nasenergy.hardware.nvml import open_device
from nasenergy.testing import FakeGpu, FakeNvml

from dvfs_helpers import make_measurement

A40_CLOCKS = tuple(range(210, 1741, 15))
HELD_MHZ = 1500.0  # the clock the capped card holds under load, below its highest (1740)


def _capped_device(reasons: int = REASON_SW_POWER_CAP):
    return open_device(0, FakeNvml([FakeGpu(
        name="NVIDIA A40 (fake)", graphics_clocks_mhz=A40_CLOCKS, default_sm_clock_mhz=int(HELD_MHZ),
        idle_power_w=30.0, power_limit_w=300.0, power_limit_range_w=(100.0, 300.0), gpm_pct={},
        utilization_rates_pct=(100.0, 40.0), clocks_event_reasons=reasons)]))


def _capped_measurement(power_w: float = 299.0, **kw):
    base = dict(device_name="NVIDIA A40 (fake)", avg_power_w=power_w, idle_power_w=30.0,
                energy_j_per_img=power_w / 200_000.0, sm_clock_mhz=HELD_MHZ,
                counters_kind="utilization_rates", gpu_util_pct=100.0, memory_util_pct=40.0)
    base.update(kw)
    return make_measurement(**base)


def test_power_capped_gpu_without_a_set_gets_a_clock_below_the_capped_one() -> None:
    m = _capped_measurement()
    p = resolve_params(m, device=_capped_device())
    assert p.provenance == "generic" and p.max_clock_mhz == HELD_MHZ
    opt = optimal_clock_for(m, params=p)
    assert opt.label == GENERIC_LABEL == "modelled (generic)"
    assert opt.default.sm_clock_mhz == HELD_MHZ and opt.sm_clock_mhz < HELD_MHZ
    assert all(pt.sm_clock_mhz <= HELD_MHZ for pt in opt.probed)
    assert opt.energy_saving_frac > 0


def test_the_power_cap_reason_counts_even_below_the_power_threshold() -> None:
    # NVML says power cap, the mean power is below 97% of the limit: still capped
    m = _capped_measurement(power_w=270.0)
    p = resolve_params(m, device=_capped_device())
    assert p.max_clock_mhz == HELD_MHZ and p.source_of("power_capped")
    uncapped = resolve_params(m, device=_capped_device(reasons=0))
    assert uncapped.max_clock_mhz == 1740.0 and uncapped.source_of("power_capped") is None


def test_facts_without_a_device_handle() -> None:
    m = _capped_measurement(power_w=270.0)
    facts = facts_from_measurement(m, power_limit_w=300.0, supported_clocks_mhz=A40_CLOCKS,
                                   clock_event_reasons=REASON_SW_POWER_CAP)
    assert facts.power_capped and facts.loaded_sm_clock_mhz == HELD_MHZ
    p = resolve_params(m, facts=facts)
    opt = optimal_clock_for(m, params=p)
    assert p.provenance == "generic" and opt.sm_clock_mhz < HELD_MHZ
    with pytest.raises(UsageError, match="facts_from_measurement"):
        resolve_params(m)


def test_a_capped_run_does_not_use_its_saturated_power_fraction() -> None:
    p = resolve_params(_capped_measurement(), device=_capped_device())
    a_hi = DvfsModel(p).alpha(observation_from_measurement(_capped_measurement(299.0), p))
    a_lo = DvfsModel(p).alpha(observation_from_measurement(_capped_measurement(292.0), p))
    constant = [a for a in p.alpha_predictors if a.features == ()][0]
    assert a_hi == a_lo == pytest.approx(constant.predict({}))
    # the same set below the cap reads the power fraction
    obs = observation_from_measurement(_capped_measurement(200.0), p)
    assert not obs.power_capped and obs.features(p)["power_frac"] is not None


def test_a_calibrated_set_on_a_capped_run_stays_at_or_below_the_held_clock() -> None:
    a100 = shipped_params()["a100-sxm4"]
    m = make_measurement(device_name="NVIDIA A100-SXM4-80GB", avg_power_w=495.0, idle_power_w=60.0,
                         energy_j_per_img=495.0 / 200_000.0, sm_clock_mhz=1305.0)
    opt = optimal_clock_for(m, params=a100)
    assert opt.label == "modelled (calibrated)"
    assert all(pt.sm_clock_mhz <= 1305.0 for pt in opt.probed)
    free = make_measurement(device_name="NVIDIA A100-SXM4-80GB", avg_power_w=300.0,
                            idle_power_w=60.0, energy_j_per_img=300.0 / 200_000.0,
                            sm_clock_mhz=1305.0)
    obs = observation_from_measurement(free, a100)
    assert max(candidate_clocks(a100, obs)) == a100.max_clock_mhz


def test_the_board_power_limit_replaces_the_shipped_one() -> None:
    m = make_measurement(device_name="NVIDIA A100-SXM4-40GB", avg_power_w=300.0, idle_power_w=55.0,
                         energy_j_per_img=300.0 / 200_000.0, sm_clock_mhz=1410.0)
    assert resolve_params(m).power_limit_w == 500.0  # the set's own (its sweep's board)
    facts = facts_from_measurement(m, power_limit_w=400.0,
                                   supported_clocks_mhz=tuple(range(210, 1411, 15)))
    p = resolve_params(m, facts=facts)
    assert p.name == "a100-sxm4" and p.power_limit_w == 400.0
    assert "400 W read from the board" in (p.caveat or "")
    near = facts_from_measurement(m, power_limit_w=495.0, supported_clocks_mhz=(210, 1410))
    assert resolve_params(m, facts=near).power_limit_w == 500.0  # within tolerance: kept


def test_idle_power_is_estimated_and_labelled_when_not_measured() -> None:
    m = _capped_measurement(idle_power_w=None)
    facts = facts_from_measurement(m, power_limit_w=300.0, supported_clocks_mhz=A40_CLOCKS)
    assert facts.idle_power_w is None
    p = generic_params(facts)
    assert p.source_of("idle_power_w").startswith("estimated")
    assert "idle power estimated" in p.caveat and 0 < p.idle_power_w < 300.0
    measured = generic_params(facts_from_measurement(_capped_measurement(), power_limit_w=300.0,
                                                     supported_clocks_mhz=A40_CLOCKS))
    assert measured.idle_power_w == 30.0 and measured.source_of("idle_power_w").startswith("measured")


def test_clocks_mhz_is_honoured_for_generic_sets() -> None:
    m = _capped_measurement(power_w=200.0)
    p = resolve_params(m, facts=facts_from_measurement(m, power_limit_w=300.0,
                                                       supported_clocks_mhz=A40_CLOCKS))
    opt = optimal_clock_for(m, params=p, clocks_mhz=[900.0, 1200.0, HELD_MHZ])
    assert opt.sm_clock_mhz in (900.0, 1200.0, HELD_MHZ)
    assert {pt.sm_clock_mhz for pt in opt.probed} <= {900.0, 1200.0, HELD_MHZ}


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("p", [1.0, 2.0])
def test_two_clock_alpha_recovers_the_share_of_equation_1(alpha: float, p: float) -> None:
    f0, f1 = 1410.0, 1260.0
    t1 = float(time_ratio(f1, f0, alpha, p)) * 2e-3
    assert alpha_from_neighbour(f0, 2e-3, f1, t1, p) == pytest.approx(alpha, abs=1e-6)
    obs = WorkloadObservation(time_s_per_img=2e-3, power_w=300.0, sm_clock_mhz=f0,
                              neighbour_clock_mhz=f1, neighbour_time_s_per_img=t1)
    params = shipped_params()["a100-sxm4"]
    if params.overlap_exponent == p:
        assert DvfsModel(params).alpha(obs) == pytest.approx(max(alpha, 0.02), abs=1e-6)
    with pytest.raises(UsageError):
        WorkloadObservation(time_s_per_img=2e-3, power_w=300.0, sm_clock_mhz=f0,
                            neighbour_clock_mhz=f0 + 15, neighbour_time_s_per_img=t1)
