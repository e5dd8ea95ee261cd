"""Calibration recovers known parameters from noise-free synthetic sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from dvfs_helpers import H200_CLOCKS, make_params, model_sweep
from nasenergy.dvfs.calibration import calibrate, fit_alpha
from nasenergy.errors import UsageError

CLOCKS = H200_CLOCKS[::4] + (1980.0,) if H200_CLOCKS[::4][-1] != 1980.0 else H200_CLOCKS[::4]


def _sweeps(truth, rng, n=14):
    out = []
    for k in range(n):
        p0 = float(rng.uniform(150, 650))
        power_frac = (p0 - truth.idle_power_w) / (truth.power_limit_w - truth.idle_power_w)
        alpha = 0.15 + 0.7 * power_frac           # a known, exact alpha predictor
        out.append(model_sweep(truth, alpha, p0=p0, workload=f"w{k}", clocks=CLOCKS))
    return out


def test_recovers_known_parameters(rng) -> None:
    truth = make_params(static_power_w=70.0, knee_clock_mhz=1300.0, v_floor=0.75, v_exponent=1.5,
                        per_cycle_share=0.3, overlap_exponent=2.0, supported_clocks_mhz=CLOCKS)
    sweeps = _sweeps(truth, rng)
    cal = calibrate(sweeps, name="fit", gpu="Test GPU", device_patterns=("Test",),
                    power_limit_w=truth.power_limit_w, idle_power_w=truth.idle_power_w)
    p = cal.params
    assert p.overlap_exponent == 2.0
    assert p.knee_clock_mhz == pytest.approx(1300.0, abs=30)
    assert p.v_floor == pytest.approx(0.75, abs=0.02)
    assert p.v_exponent == pytest.approx(1.5, abs=0.15)
    assert p.per_cycle_share == pytest.approx(0.3, abs=0.03)
    assert p.static_power_w == pytest.approx(70.0, abs=3.0)
    assert cal.power_rms_frac < 1e-3 and cal.energy_rms_frac < 1e-3
    pf = next(a for a in p.alpha_predictors if a.features == ("power_frac",))
    assert pf.coef[0] == pytest.approx(0.7, abs=0.02) and pf.intercept == pytest.approx(0.15, abs=0.02)
    assert p.alpha_predictors[-1].features == ()      # constant fallback always present
    assert dict(p.sources)["idle_power_w"] == "given to calibration"


def test_fit_alpha_exact(params) -> None:
    for a in (0.05, 0.4, 0.9, 1.0):
        assert fit_alpha(model_sweep(params, a), params.overlap_exponent) == pytest.approx(a, abs=1e-3)


def test_needs_three_sweeps(params) -> None:
    with pytest.raises(UsageError, match="at least 3"):
        calibrate([model_sweep(params, 0.5)] * 2, name="x", gpu="x", device_patterns=("x",),
                  power_limit_w=700)


def test_default_idle_is_lowest_power_seen(rng, params) -> None:
    sweeps = _sweeps(params, rng, n=5)
    cal = calibrate(sweeps, name="x", gpu="x", device_patterns=("x",), power_limit_w=700,
                    feature_sets=(("power_frac",),))
    assert cal.params.idle_power_w == pytest.approx(min(float(np.min(s.p)) for s in sweeps))
    assert "upper bound" in dict(cal.params.sources)["idle_power_w"]


def test_package_calibrate_stays_the_function_after_its_module_is_imported():
    import importlib

    import nasenergy.dvfs as dvfs

    importlib.import_module("nasenergy.dvfs.calibration")
    assert dvfs.calibrate is calibrate and callable(dvfs.calibrate)
