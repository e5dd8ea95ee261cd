"""Per-network clock sensitivity: the compute share of GPU counters read at the default clock."""

from __future__ import annotations

import pytest

from nasenergy.dvfs.api import optimal_clock_for
from nasenergy.dvfs.model import DvfsModel, counter_fractions, observation_from_measurement
from nasenergy.dvfs.params import AlphaPredictor, compute_share

from dvfs_helpers import make_measurement, make_params


def _params():
    return make_params(alpha_predictors=(
        AlphaPredictor(("compute_share",), (0.9,), 0.05, 0.05),
        AlphaPredictor(("power_frac",), (0.5,), 0.3, 0.05),
        AlphaPredictor((), (), 0.5, 0.05)))


def test_compute_share_definition() -> None:
    assert compute_share(0.8, 0.25) == pytest.approx(0.6)
    assert compute_share(1.2, -0.1) == pytest.approx(1.0)  # clipped to 0..1
    assert compute_share(None, 0.2) is None and compute_share(0.5, float("nan")) is None


def test_gpm_counters_become_features() -> None:
    m = make_measurement(counters_kind="gpm", sm_util_pct=90.0, dram_bw_util_pct=30.0,
                         gpu_util_pct=100.0, memory_util_pct=20.0)
    assert counter_fractions(m) == pytest.approx((0.9, 0.3, 1.0))
    obs = observation_from_measurement(m)
    assert obs.features(_params())["compute_share"] == pytest.approx(0.63)


def test_utilization_rates_give_busy_only() -> None:
    """NVML's memory rate is not a DRAM bandwidth share: no compute share, power_frac is used."""
    m = make_measurement(counters_kind="utilization_rates", gpu_util_pct=60.0, memory_util_pct=40.0)
    assert counter_fractions(m) == (None, None, pytest.approx(0.6))
    obs = observation_from_measurement(m)
    model = DvfsModel(_params())
    power_frac = (400.0 - 80.0) / (700.0 - 80.0)
    assert model.alpha(obs) == pytest.approx(min(0.6, 0.3 + 0.5 * power_frac))


def test_memory_bound_network_gets_lower_alpha_and_lower_clock() -> None:
    """Same time and power, different counters: the DRAM-bound one is less clock-sensitive."""
    params = _params()
    compute = make_measurement(counters_kind="gpm", sm_util_pct=95.0, dram_bw_util_pct=5.0,
                               gpu_util_pct=100.0)
    memory = make_measurement(counters_kind="gpm", sm_util_pct=60.0, dram_bw_util_pct=80.0,
                              gpu_util_pct=100.0)
    model = DvfsModel(params)
    a_c = model.alpha(observation_from_measurement(compute))
    a_m = model.alpha(observation_from_measurement(memory))
    assert a_c > 0.8 > 0.3 > a_m
    opt_c = optimal_clock_for(compute, params=params)
    opt_m = optimal_clock_for(memory, params=params)
    assert opt_m.sm_clock_mhz < opt_c.sm_clock_mhz
    assert opt_m.energy_saving_frac > opt_c.energy_saving_frac
