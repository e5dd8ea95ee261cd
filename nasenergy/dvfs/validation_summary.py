"""Summaries of the leave-one-group-out validation: each variant's regrets over a GPU's workloads.

One job: `summarise` turns `nasenergy.dvfs.workload_holdout.WorkloadResult` rows into one
`Summary` per variant (model variants and baselines), for all workloads, those with a consistent
default point, and the GPU-bound ones (`HOST_BOUND_BUSY`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from nasenergy.dvfs.validation_scores import CsvRow, spearman
from nasenergy.dvfs.workload_holdout import WorkloadResult

__all__ = ["HOST_BOUND_BUSY", "Summary", "summarise"]


@dataclass(frozen=True)
class Summary(CsvRow):
    """Aggregate leave-one-out figures of one GPU (regrets as fractions)."""

    gpu: str
    subset: str
    variant: str
    n_workloads: int
    regret_median: float
    regret_p90: float
    regret_max: float
    share_regret_le_3pct: float
    clock_error_abs_median_mhz: float
    clock_error_abs_median_steps: float
    energy_error_abs_median: float
    true_saving_median: float
    predicted_saving_median: float
    meets_targets: bool
    rank_corr_clock: float = math.nan


_VARIANT_FIELD = {
    "model (alpha from power_frac; before counters)": "regret_frac",
    "model (alpha from activity + power)": "regret_activity_frac",
    "model (alpha from compute share of counters)": "regret_counters_frac",
    "model (compute share, point-estimate clock)": "regret_counters_point_frac",
    "model (constant alpha)": "regret_constant_alpha_frac",
    "model (alpha fitted to held-out sweep)": "regret_oracle_alpha_frac",
    "model (alpha from two clocks: default, ~90%)": "regret_two_point_frac",
    "model (shipped: compute share, else power_frac)": "shipped_regret_frac",
    "fixed clock best on training workloads": "regret_fixed_clock_frac",
    "default clock (no DVFS)": "regret_default_frac",
}


#: The clock each variant chose (`_VARIANT_FIELD`); the baselines choose one clock per GPU.
_VARIANT_CLOCK = {
    "regret_frac": "model_clock_mhz", "regret_activity_frac": "clock_activity_mhz",
    "regret_counters_frac": "clock_counters_mhz",
    "regret_counters_point_frac": "clock_counters_point_mhz",
    "regret_constant_alpha_frac": "clock_constant_alpha_mhz",
    "regret_oracle_alpha_frac": "clock_oracle_alpha_mhz",
    "regret_two_point_frac": "clock_two_point_mhz", "shipped_regret_frac": "shipped_clock_mhz",
}


#: Workloads whose GPU ran kernels less than this share of the time are host-bound.
HOST_BOUND_BUSY = 0.5


def summarise(gpu: str, results: Sequence[WorkloadResult], *, median_target: float = 0.03,
              worst_target: float = 0.10) -> list[Summary]:
    """One `Summary` per variant (model variants and baselines) for all workloads, and, where the
    sweeps record the GPU-busy fraction, for the GPU-bound ones (busy >= `HOST_BOUND_BUSY`), and
    where some sweeps fail `consistent_default_point`, for the others."""
    out = _summarise(gpu, "all", results, median_target, worst_target)
    consistent = [r for r in results if r.consistent_default_point]
    if len(consistent) < len(results):
        out += _summarise(gpu, "consistent default point", consistent, median_target,
                          worst_target)
    gpu_bound = [r for r in results if r.gpu_busy >= HOST_BOUND_BUSY]
    if any(not math.isnan(r.gpu_busy) for r in results):
        out += _summarise(gpu, f"gpu_busy>={HOST_BOUND_BUSY:g}", gpu_bound, median_target,
                          worst_target)
    return out


def _summarise(gpu: str, subset: str, results: Sequence[WorkloadResult], median_target: float,
               worst_target: float) -> list[Summary]:
    out: list[Summary] = []
    if not results:
        return out
    for variant, field_name in _VARIANT_FIELD.items():
        reg = np.array([getattr(r, field_name) for r in results], dtype=float)
        reg = reg[~np.isnan(reg)]
        if reg.size == 0:
            continue
        main = field_name == "regret_frac"
        nan = math.nan
        out.append(Summary(
            gpu=gpu, subset=subset, variant=variant, n_workloads=int(reg.size),
            regret_median=float(np.median(reg)), regret_p90=float(np.quantile(reg, 0.9)),
            regret_max=float(reg.max()), share_regret_le_3pct=float(np.mean(reg <= 0.03)),
            clock_error_abs_median_mhz=(float(np.median([abs(r.clock_error_mhz) for r in results]))
                                        if main else nan),
            clock_error_abs_median_steps=(float(np.median([abs(r.clock_error_steps) for r in results]))
                                          if main else nan),
            energy_error_abs_median=(float(np.median([abs(r.energy_error_frac) for r in results]))
                                     if main else nan),
            true_saving_median=float(np.median([r.true_saving_frac for r in results])),
            predicted_saving_median=(float(np.median([r.predicted_saving_frac for r in results]))
                                     if main else nan),
            meets_targets=bool(np.median(reg) <= median_target and reg.max() <= worst_target),
            rank_corr_clock=(spearman([getattr(r, _VARIANT_CLOCK[field_name]) for r in results],
                                      [r.true_best_clock_mhz for r in results])
                             if field_name in _VARIANT_CLOCK else nan),
        ))
    return out
