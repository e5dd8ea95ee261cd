"""Leave-one-group-out validation of the DVFS model on one GPU's measured clock sweeps.

One job: hold out each group of workloads in turn, calibrate the GPU on the rest
(`leave_one_group_out`), and score the model's clock for each held-out workload, seen only at its
default clock, on its measured sweep, with the comparison variants (`evaluate_workload`,
`WorkloadResult`). The method is described in `nasenergy.dvfs.validation`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from nasenergy.dvfs.clock_choice import EXPECTED, POINT
from nasenergy.dvfs.backends import RecordedBackend
from nasenergy.dvfs.calibration import calibrate, fit_alpha, sweep_features
from nasenergy.dvfs.clock_search import exhaustive_search, find_optimal_clock
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, cap_alpha
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.dvfs.validation_scores import (CsvRow, consistent_default_point, model_choice, noise_frac,
                                              probe_index, regret, two_point_rmse)

__all__ = ["WorkloadResult", "evaluate_workload", "leave_one_group_out"]


@dataclass(frozen=True)
class WorkloadResult(CsvRow):
    """Leave-one-out result of one held-out workload (fractions, MHz, clock steps).

    ``regret_*`` fields score each variant's chosen clock on the measured sweep; NaN where a
    variant cannot run (e.g. no activity features).
    """

    gpu: str
    workload: str
    group: str
    n_clocks: int
    default_clock_mhz: float
    true_best_clock_mhz: float
    model_clock_mhz: float
    clock_error_mhz: float
    clock_error_steps: int
    true_saving_frac: float
    predicted_saving_frac: float
    energy_error_frac: float
    regret_frac: float
    regret_activity_frac: float
    regret_counters_frac: float
    regret_counters_point_frac: float
    regret_constant_alpha_frac: float
    regret_oracle_alpha_frac: float
    regret_fixed_clock_frac: float
    fixed_clock_mhz: float
    regret_default_frac: float
    alpha_predicted: float
    alpha_counters: float
    alpha_fitted: float
    gpu_busy: float
    noise_frac: float
    search_probes_recorded: int
    search_steps_off_recorded: int
    search_regret_recorded_frac: float
    search_steps_off_modelled: int
    consistent_default_point: bool
    clock_activity_mhz: float = math.nan
    clock_counters_mhz: float = math.nan
    clock_counters_point_mhz: float = math.nan
    clock_constant_alpha_mhz: float = math.nan
    clock_oracle_alpha_mhz: float = math.nan
    clock_two_point_mhz: float = math.nan
    regret_two_point_frac: float = math.nan
    alpha_two_point: float = math.nan
    shipped_predictor: str = ""
    shipped_clock_mhz: float = math.nan
    shipped_regret_frac: float = math.nan
    shipped_predicted_saving_frac: float = math.nan
    shipped_expected_saving_frac: float = math.nan
    shipped_measured_saving_frac: float = math.nan


def _fixed_clock(train: Sequence[Sweep], clocks: tuple[float, ...]) -> float:
    scores: list[float] = []
    for f in clocks:
        regs = [regret(s, f) for s in train if np.min(np.abs(s.f - f)) < 1e-6]
        scores.append(float(np.mean(regs)) if regs else math.inf)
    return clocks[int(np.argmin(scores))]


_MAIN = ("power_frac",)
_ACTIVITY = ("sm_active", "dram_active", "power_frac")
_COUNTERS = ("compute_share",)


def _predicted_alpha(params: GpuDvfsParams, features: tuple[str, ...],
                     feats: dict[str, float | None], gpu_busy: float | None
                     ) -> tuple[float, float]:
    """``(alpha, residual)`` of the predictor on `features`, or NaNs if it cannot run."""
    for pred in params.alpha_predictors:
        if tuple(pred.features) == features and pred.usable_with(feats):
            return cap_alpha(pred.predict(feats), gpu_busy, pred.lo), pred.rmse
    return math.nan, math.nan


def evaluate_workload(sweep: Sweep, params: GpuDvfsParams, train: Sequence[Sweep],
                      two_point_rmse_frac: float | None = None) -> WorkloadResult:
    """Score the model (calibrated as `params` on `train`) on one held-out measured `sweep`.

    The main variant predicts ``alpha`` from ``power_frac`` (the model before per-network counters;
    the ``counters`` variant uses the compute share of equation 6), capped
    by the GPU-busy fraction where the sweep records one. The ``two_point`` variant solves
    ``alpha`` from two points of the held-out sweep only, the default clock and one probe at about
    90% of it (`probe_index`; equation 8: what two runs would show; no other clock is used), with residual
    `two_point_rmse_frac` (`two_point_rmse` on the training sweeps).
    """
    model = DvfsModel(params)
    obs = WorkloadObservation(time_s_per_img=sweep.time_s[-1], power_w=sweep.power_w[-1],
                              sm_clock_mhz=sweep.default_clock_mhz)
    feats = sweep_features(sweep, params.power_limit_w, params.idle_power_w)
    counters = _predicted_alpha(params, _COUNTERS, feats, sweep.gpu_busy)
    variants = {  # name: (alpha, residual, choice rule)
        "main": (*_predicted_alpha(params, _MAIN, feats, sweep.gpu_busy), EXPECTED),
        "activity": (*_predicted_alpha(params, _ACTIVITY, feats, sweep.gpu_busy), EXPECTED),
        "counters": (*counters, EXPECTED),
        "counters_point": (*counters, POINT),
        "constant": (*_predicted_alpha(params, (), feats, sweep.gpu_busy), EXPECTED),
        "oracle_alpha": (fit_alpha(sweep, params.overlap_exponent), 0.0, POINT),
    }
    j = probe_index(sweep)
    if j is not None:  # the default clock and one probe below it: what two runs would show
        two = dataclasses.replace(obs, neighbour_clock_mhz=float(sweep.f[j]),
                                  neighbour_time_s_per_img=float(sweep.time_s[j]))
        a2 = model.alpha(two)
        # residual of the two-point alpha: not known from calibration; the predictors' least one
        r2 = (two_point_rmse_frac if two_point_rmse_frac is not None
              else min(p.rmse for p in params.alpha_predictors))
        variants["two_point"] = (a2, r2, EXPECTED)
    default = sweep.point(sweep.default_clock_mhz, "measured")
    regrets: dict[str, float] = {}
    clocks: dict[str, float] = {}
    opts: dict[str, tuple] = {}
    for name, (a, rmse, rule) in variants.items():
        if math.isnan(a):
            regrets[name] = clocks[name] = math.nan
            continue
        opt, backend = model_choice(model, sweep, obs, a, rmse, rule)
        regrets[name] = regret(sweep, opt.sm_clock_mhz)
        clocks[name] = opt.sm_clock_mhz
        opts[name] = (opt, backend)
    alphas = {k: v[0] for k, v in variants.items()}
    choice, main_backend = opts["main"]
    shipped = "counters" if "counters" in opts else "main"
    s_opt, s_backend = opts[shipped]
    i_s = int(np.argmin(np.abs(sweep.f - s_opt.sm_clock_mhz)))
    e0 = float(sweep.energy[-1])
    i_true = int(np.argmin(sweep.energy))
    i_model = int(np.argmin(np.abs(sweep.f - choice.sm_clock_mhz)))
    fixed = _fixed_clock(train, sweep.clocks_mhz)

    recorded = RecordedBackend(sweep)
    fast = find_optimal_clock(recorded, default_point=sweep.point(sweep.default_clock_mhz))
    full = exhaustive_search(recorded, default_point=sweep.point(sweep.default_clock_mhz))
    i_fast = int(np.argmin(np.abs(sweep.f - fast.sm_clock_mhz)))
    i_full = int(np.argmin(np.abs(sweep.f - full.sm_clock_mhz)))
    model_full = exhaustive_search(main_backend, default_point=default)
    i_mfull = int(np.argmin(np.abs(sweep.f - model_full.sm_clock_mhz)))

    e_default = sweep.energy[-1]
    return WorkloadResult(
        gpu=sweep.gpu, workload=sweep.workload, group=sweep.group, n_clocks=len(sweep.f),
        default_clock_mhz=sweep.default_clock_mhz, true_best_clock_mhz=float(sweep.f[i_true]),
        model_clock_mhz=choice.sm_clock_mhz,
        clock_error_mhz=float(choice.sm_clock_mhz - sweep.f[i_true]),
        clock_error_steps=i_model - i_true,
        true_saving_frac=float(1.0 - sweep.energy[i_true] / e_default),
        predicted_saving_frac=choice.energy_saving_frac,
        energy_error_frac=float(choice.best.energy_j_per_img / sweep.energy[i_model] - 1.0),
        regret_frac=regrets["main"], regret_activity_frac=regrets["activity"],
        regret_counters_frac=regrets["counters"],
        regret_counters_point_frac=regrets["counters_point"],
        regret_constant_alpha_frac=regrets["constant"],
        regret_oracle_alpha_frac=regrets["oracle_alpha"],
        regret_fixed_clock_frac=regret(sweep, fixed), fixed_clock_mhz=fixed,
        regret_default_frac=float(e_default / sweep.energy.min() - 1.0),
        alpha_predicted=alphas["main"], alpha_counters=alphas["counters"],
        alpha_fitted=alphas["oracle_alpha"],
        gpu_busy=math.nan if sweep.gpu_busy is None else sweep.gpu_busy,
        noise_frac=noise_frac(sweep), search_probes_recorded=fast.n_probes,
        search_steps_off_recorded=i_fast - i_full,
        search_regret_recorded_frac=regret(sweep, fast.sm_clock_mhz),
        search_steps_off_modelled=i_model - i_mfull,
        consistent_default_point=consistent_default_point(sweep),
        clock_activity_mhz=clocks["activity"], clock_counters_mhz=clocks["counters"],
        clock_counters_point_mhz=clocks["counters_point"],
        clock_constant_alpha_mhz=clocks["constant"], clock_oracle_alpha_mhz=clocks["oracle_alpha"],
        clock_two_point_mhz=clocks.get("two_point", math.nan),
        regret_two_point_frac=regrets.get("two_point", math.nan),
        alpha_two_point=alphas.get("two_point", math.nan),
        shipped_predictor="compute_share" if shipped == "counters" else "power_frac",
        shipped_clock_mhz=s_opt.sm_clock_mhz, shipped_regret_frac=regrets[shipped],
        shipped_predicted_saving_frac=s_opt.energy_saving_frac,
        shipped_expected_saving_frac=float(
            1.0 - s_backend.probe(s_opt.sm_clock_mhz).energy_j_per_img / default.energy_j_per_img),
        shipped_measured_saving_frac=float(1.0 - sweep.energy[i_s] / e0),
    )


def leave_one_group_out(sweeps: Sequence[Sweep], *, power_limit_w: float, gpu: str,
                        progress: Callable[[str], None] | None = None) -> list[WorkloadResult]:
    """Hold out each group in turn, calibrate on the rest, and score every held-out workload.

    Args:
        sweeps: all sweeps of one GPU (one published set).
        power_limit_w: the GPU's board power limit, watts.
        gpu: GPU description for the calibrated sets.
        progress: called with each group's name as it starts.
    """
    groups = sorted({s.group for s in sweeps})
    results: list[WorkloadResult] = []
    for g in groups:
        if progress is not None:
            progress(g)
        test = [s for s in sweeps if s.group == g]
        train = [s for s in sweeps if s.group != g]
        cal = calibrate(train, name=f"loo-{g}", gpu=gpu, device_patterns=(gpu,),
                        power_limit_w=power_limit_w)
        r2 = two_point_rmse(cal.params, train, cal.alphas)
        results.extend(evaluate_workload(s, cal.params, train, r2) for s in test)
    return results
