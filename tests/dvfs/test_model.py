"""The DVFS model equations on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nasenergy.dvfs.model import (DvfsModel, WorkloadObservation, cap_alpha,
                                  observation_from_measurement, power_w, time_ratio, voltage_ratio)
from nasenergy.errors import UsageError

from dvfs_helpers import make_measurement, make_params


def test_time_ratio_serial_and_overlapped() -> None:
    # p = 1: alpha * f0/f + 1 - alpha
    assert time_ratio(1000.0, 2000.0, 0.4, 1.0) == pytest.approx(0.4 * 2 + 0.6)
    # p = 2: sqrt((0.4*2)^2 + 1 - 0.16) = sqrt(0.64 + 0.84)
    assert time_ratio(1000.0, 2000.0, 0.4, 2.0) == pytest.approx(math.sqrt(1.48))
    # compute-bound scales as 1/f for any p; tau(f0) = 1
    assert time_ratio(500.0, 2000.0, 1.0, 3.0) == pytest.approx(4.0)
    assert time_ratio(2000.0, 2000.0, 0.3, 2.5) == pytest.approx(1.0)


def test_voltage_ratio_flat_below_knee_then_rising() -> None:
    v = voltage_ratio(np.array([800.0, 1500.0, 1740.0, 1980.0]), 1980.0, 1500.0, 0.75, 1.0)
    assert v == pytest.approx([0.75, 0.75, 0.875, 1.0])
    assert voltage_ratio(1740.0, 1980.0, 1500.0, 0.75, 2.0) == pytest.approx(0.75 + 0.25 * 0.25)


def test_power_hand_computed() -> None:
    prm = make_params(static_power_w=100.0, knee_clock_mhz=1000.0, v_floor=0.8, v_exponent=1.0,
                      per_cycle_share=0.25)
    # f = 990 (below knee, v = 0.8); f0 = 1980 (v = 1); tau = 1.5
    p = power_w(990.0, 1980.0, 500.0, np.array(1.5), prm)
    expect = 100 + 400 * 0.8 ** 2 * (0.25 * 0.5 + 0.75 / 1.5)
    assert float(p) == pytest.approx(expect)
    # P(f0) = P0
    assert float(power_w(1980.0, 1980.0, 500.0, np.array(1.0), prm)) == pytest.approx(500.0)
    # P0 below static power: dynamic part is zero
    assert float(power_w(990.0, 1980.0, 50.0, np.array(1.5), prm)) == pytest.approx(100.0)


def test_curve_energy_is_power_times_time(params) -> None:
    obs = WorkloadObservation(time_s_per_img=2e-6, power_w=450.0, sm_clock_mhz=1980.0)
    c = DvfsModel(params).curve(obs, alpha=0.6)
    assert np.allclose(c.energy_j_per_img, c.power_w * c.time_s_per_img)
    assert c.time_s_per_img[-1] == pytest.approx(2e-6) and c.power_w[-1] == pytest.approx(450.0)
    # lower clocks are slower, and energy has an interior minimum (the valley)
    assert np.all(np.diff(c.time_s_per_img) <= 1e-18)
    i = int(np.argmin(c.energy_j_per_img))
    assert 0 < i < len(c.clocks_mhz) - 1


def test_alpha_prediction_and_cap(params) -> None:
    m = DvfsModel(params)
    obs = WorkloadObservation(time_s_per_img=1e-6, power_w=80 + 0.5 * 620, sm_clock_mhz=1980.0)
    assert m.alpha(obs) == pytest.approx(0.3 + 0.5 * 0.5)
    capped = WorkloadObservation(1e-6, 80 + 0.5 * 620, 1980.0, gpu_busy=0.2)
    assert m.alpha(capped) == pytest.approx(0.2)
    assert cap_alpha(0.5, 0.01, 0.05) == 0.05
    assert cap_alpha(0.5, None, 0.05) == 0.5
    given = WorkloadObservation(1e-6, 300.0, 1980.0, alpha=0.9)
    assert m.alpha(given) == 0.9


def test_observation_from_measurement_variants(params) -> None:
    m = make_measurement()
    obs = observation_from_measurement(m, params)
    assert obs.time_s_per_img == pytest.approx(5e-6) and obs.power_w == 400.0
    assert obs.flop_util == pytest.approx(0.054)
    no_power = make_measurement(avg_power_w=None, energy_basis="above_idle",
                                energy_j_per_img=320.0 / 200_000.0)
    assert observation_from_measurement(no_power, params).power_w == pytest.approx(400.0)
    with pytest.raises(UsageError, match="no board power"):
        observation_from_measurement(make_measurement(avg_power_w=None, energy_j_per_img=None,
                                                      energy_basis="unavailable"), params)
    no_clock = make_measurement(sm_clock_mhz=None)
    assert observation_from_measurement(no_clock, params).sm_clock_mhz == 1980.0


def test_observation_rejects_bad_values() -> None:
    with pytest.raises(UsageError):
        WorkloadObservation(time_s_per_img=0.0, power_w=100.0, sm_clock_mhz=1000.0)
    with pytest.raises(UsageError):
        WorkloadObservation(time_s_per_img=1.0, power_w=100.0, sm_clock_mhz=1000.0, alpha=1.5)
