"""The published sweep readers and the leave-one-out machinery (skipped without the data)."""

from __future__ import annotations

import math

import numpy as np

import pytest

from dvfs_helpers import make_params, model_sweep
from nasenergy.dvfs.published import SETS, load_set
from nasenergy.dvfs.validation import evaluate_workload, leave_one_group_out, summarise
from nasenergy.errors import UsageError
from shared_files import require_dvfs_data


@pytest.mark.parametrize("key, n, n_clocks", [
    ("a100_sxm4_ttu", 25, 61), ("v100_hkbu", 158, 10), ("rtx8000_hkbu", 158, 10),
    ("titanx_maxwell_inesc", 25, 16),
])
def test_published_sets_load(key, n, n_clocks) -> None:
    require_dvfs_data(*SETS[key].files)
    sweeps = load_set(key)
    assert len(sweeps) == n
    assert all(len(s.clocks_mhz) == n_clocks for s in sweeps)
    if key == "a100_sxm4_ttu":
        dgemm = next(s for s in sweeps if s.workload == "dgemm")
        assert dgemm.default_clock_mhz == 1410 and dgemm.power_w[-1] > 400   # the 476 W run
        assert dgemm.gpu_busy is not None and dgemm.sm_active is not None


def test_unknown_set() -> None:
    with pytest.raises(UsageError, match="unknown published sweep set"):
        load_set("h100_secret")
    assert set(SETS) >= {"a100_sxm4_ttu", "v100_hkbu"}


def test_leave_one_out_on_synthetic_sweeps_has_zero_regret() -> None:
    """Sweeps made by the model with an exactly predictable alpha: LOO must find every optimum
    whose alpha lies inside the training range (predictions are clipped to that range)."""
    truth = make_params(supported_clocks_mhz=tuple(float(c) for c in range(345, 1981, 60)) + (1980.0,))
    sweeps = []
    for k, p0 in enumerate((150.0, 250.0, 350.0, 450.0, 550.0, 650.0)):
        alpha = 0.1 + 0.8 * (p0 - 80) / 620
        sweeps.append(model_sweep(truth, alpha, p0=p0, workload=f"w{k}"))
    res = leave_one_group_out(sweeps, power_limit_w=700, gpu="Test GPU")
    assert len(res) == 6
    inside = res[1:-1]
    assert max(r.regret_frac for r in inside) < 1e-9
    assert all(r.alpha_predicted == pytest.approx(r.alpha_fitted, abs=1e-6) for r in inside)
    assert res[0].alpha_predicted == pytest.approx(res[1].alpha_fitted, abs=1e-6)   # clipped
    assert all(r.search_steps_off_modelled == 0 for r in res)
    summ = summarise("Test GPU", res)
    assert summ[0].meets_targets and summ[0].subset == "all"
    assert math.isnan(res[0].gpu_busy)


def test_evaluate_workload_scores_a_wrong_model() -> None:
    """A model calibrated on other sweeps with a wrong knee must show positive regret."""
    truth = make_params(knee_clock_mhz=900.0)
    wrong = make_params(knee_clock_mhz=1800.0, v_floor=0.95)
    sweep = model_sweep(truth, 0.9, p0=500.0)
    r = evaluate_workload(sweep, wrong, [sweep])
    assert r.regret_frac > 0.01 and r.model_clock_mhz > r.true_best_clock_mhz


def _synthetic_gpu(key: str, truth, power_limit_w: float, idle_w: float):
    from nasenergy.dvfs.validation import GpuSweeps

    sweeps = []
    for k, (sm, dram) in enumerate(((0.95, 0.05), (0.9, 0.3), (0.8, 0.5), (0.7, 0.7), (0.6, 0.85))):
        alpha = 0.1 + 0.8 * sm * (1 - dram)
        p0 = idle_w + (0.3 + 0.5 * k / 4) * (power_limit_w - idle_w)
        sweeps.append(model_sweep(truth, alpha, p0=p0, workload=f"{key}-w{k}", sm_active=sm,
                                  dram_active=dram))
    return GpuSweeps(key, truth.gpu, sweeps, power_limit_w, idle_power_w=idle_w)


def test_leave_one_gpu_out_on_gpus_of_one_shape_finds_the_optima() -> None:
    """Three synthetic GPUs of the same relative shape (different clocks and powers): the generic
    model of the other two must choose (near) every optimum of the held-out one."""
    from nasenergy.dvfs.validation import leave_one_gpu_out

    gpus = []
    for key, top, idle, limit in (("g1", 1980.0, 80.0, 700.0), ("g2", 1410.0, 60.0, 400.0),
                                  ("g3", 1710.0, 30.0, 260.0)):
        clocks = tuple(float(c) for c in np.linspace(0.3 * top, top, 40).round())
        truth = make_params(name=key, gpu=key, supported_clocks_mhz=clocks, default_clock_mhz=top,
                            power_limit_w=limit, idle_power_w=idle,
                            static_power_w=idle * 70.0 / 80.0, knee_clock_mhz=0.75 * top)
        gpus.append(_synthetic_gpu(key, truth, limit, idle))
    res = leave_one_gpu_out(gpus)
    assert len(res) == 15 and {r.alpha_predictor for r in res} == {"compute_share"}
    assert max(r.regret_frac for r in res) < 0.01
    assert all(r.band_low_frac <= r.predicted_saving_frac <= r.band_high_frac for r in res)


def test_leave_one_gpu_out_shows_a_different_shape() -> None:
    """A held-out GPU whose knee differs from the references' is scored with positive regret."""
    from nasenergy.dvfs.validation import leave_one_gpu_out

    gpus = []
    for key, knee in (("g1", 0.75), ("g2", 0.75), ("odd", 0.3)):
        clocks = tuple(float(c) for c in range(345, 1981, 45)) + (1980.0,)
        truth = make_params(name=key, gpu=key, supported_clocks_mhz=clocks,
                            knee_clock_mhz=knee * 1980.0, v_floor=0.6)
        gpus.append(_synthetic_gpu(key, truth, 700.0, 80.0))
    res = leave_one_gpu_out(gpus)
    odd = [r for r in res if r.gpu == "odd"]
    assert max(r.regret_frac for r in odd) > 0.02
    assert all(r.generic_clock_mhz > r.true_best_clock_mhz for r in odd)
