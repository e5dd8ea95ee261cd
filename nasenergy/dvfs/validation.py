"""Leave-one-out validation of the DVFS model on measured clock sweeps.

The model's use case is the hard one: the GPU's parameters are fitted on *other* workloads and the
workload itself is seen only at its default (highest) clock. For each hold-out group (a workload,
or all inputs of one benchmark) the GPU is calibrated on the remaining sweeps, the held-out
workload's default-clock point is given to the model, and the model's chosen clock is scored on
the workload's *measured* sweep:

* ``regret = E_measured(model clock) / E_measured(true best clock) - 1``: how much more energy the
  model's choice really costs than the measured optimum;
* the clock error (MHz and clock steps) and the model's energy error at its chosen clock;
* the same regret for comparison choices: ``alpha`` fitted to the held-out sweep itself
  (``oracle_alpha``, isolating the error of the alpha predictor), a constant ``alpha``, the single
  clock that is best on average over the training workloads (``fixed_clock``) and the default clock.

Every model variant with a *predicted* ``alpha`` chooses its clock by the ``expected`` rule
(equation 7 of `nasenergy.dvfs.model`: least mean energy over ``alpha`` +/- the predictor's
residual and, for generic sets, the reference shapes); ``regret_counters_point_frac`` keeps the
compute-share variant under the ``point`` rule (least point-estimate energy, the simpler rule) for
comparison. ``alpha`` fitted to the held-out sweep has no residual and uses the point rule.

It also checks the few-probe search against the exhaustive answer on the measured sweep
(``recorded`` backend) and on the modelled curve that the search used.

`consistent_default_point` flags sweeps whose default (highest-clock) point cannot be reproduced
by any model in which board power rises with the clock: power more than `DEFAULT_POWER_DROP`
below the next lower clock's although the run is faster there. Such a point makes the default
clock look like the measured optimum by a wide margin (four RTX 8000 mixbench inputs); summaries
are given with and without them.

`leave_one_gpu_out` holds out a whole GPU instead: its workloads are predicted by the generic
parameters (`nasenergy.dvfs.generic`) built from the other GPUs' calibrations and the facts NVML
would report about it, and scored the same way, with the share of workloads whose measured saving
at the chosen clock lies inside the model's saving band.
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass, fields
from typing import Callable, Sequence

import numpy as np

from nasenergy.dvfs.backends import RecordedBackend
from nasenergy.dvfs.calibration import calibrate, fit_alpha, sweep_features
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, alpha_from_neighbour, cap_alpha
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.clock_search import exhaustive_search, find_optimal_clock
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.dvfs.api import (EXPECTED, POINT, clock_backend, optimal_clock_for_observation,
                                saving_band, search_clock)
from nasenergy.dvfs.generic import GpuFacts, generic_params


class _CsvRow:
    """A result row written as CSV: `columns` are its field names, in order."""

    @classmethod
    def columns(cls) -> list[str]:
        """Field names, in CSV column order."""
        return [f.name for f in fields(cls)]  # type: ignore[arg-type]


@dataclass(frozen=True)
class WorkloadResult(_CsvRow):
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


#: A default point drawing this much less power than the next lower clock, while faster, is
#: physically inconsistent (`consistent_default_point`).
DEFAULT_POWER_DROP = 0.10


def consistent_default_point(sweep: Sweep) -> bool:
    """Whether `sweep`'s default (highest-clock) point is consistent with the next lower clock:
    ``False`` when its board power is more than `DEFAULT_POWER_DROP` below that clock's while its
    time is no longer. Raising the clock raises dynamic power and the work rate, so such a point
    (a sampling artefact, most likely) lies outside every model of this package."""
    if len(sweep.f) < 2:
        return True
    return not (sweep.p[-1] < (1.0 - DEFAULT_POWER_DROP) * sweep.p[-2]
                and sweep.t[-1] <= sweep.t[-2])


def noise_frac(sweep: Sweep, window: int = 5) -> float:
    """Median relative deviation of a sweep's energies from their running median (NaN if short)."""
    e = sweep.energy
    if len(e) < 3 * window:
        return math.nan
    h = window // 2
    smooth = np.array([np.median(e[max(0, i - h): i + h + 1]) for i in range(len(e))])
    return float(np.median(np.abs(e / smooth - 1.0)))


def _regret(sweep: Sweep, clock_mhz: float) -> float:
    i = int(np.argmin(np.abs(sweep.f - clock_mhz)))
    return float(sweep.energy[i] / sweep.energy.min() - 1.0)


def _model_choice(model: DvfsModel, sweep: Sweep, obs: WorkloadObservation, alpha: float,
                  rmse: float = 0.0, choice: str = EXPECTED,
                  shape_references: Sequence[GpuDvfsParams] | None = None):
    """The model's clock for a held-out sweep under `choice`, and the backend searched
    (`nasenergy.dvfs.api.clock_backend`, `nasenergy.dvfs.api.search_clock`); ``expected``
    averages over `nasenergy.dvfs.api.band_members` with residual `rmse`."""
    backend = clock_backend(model, obs, alpha=alpha, clocks_mhz=sweep.clocks_mhz, choice=choice,
                            shape_references=shape_references, rmse=rmse)
    return search_clock(backend, sweep.point(sweep.default_clock_mhz, "measured")), backend


def _fixed_clock(train: Sequence[Sweep], clocks: tuple[float, ...]) -> float:
    scores = []
    for f in clocks:
        regs = [_regret(s, f) for s in train if np.min(np.abs(s.f - f)) < 1e-6]
        scores.append(np.mean(regs) if regs else math.inf)
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


#: The second run of the two-clock estimate is at the highest clock at or below this share of
#: the default clock: far enough below it that the time difference stands out of run-to-run noise
#: (the A100 sweeps step by 1%), near enough to be one probe.
PROBE_CLOCK_FRAC = 0.9


def probe_index(sweep: Sweep) -> int | None:
    """Index of the two-clock estimate's second run in `sweep` (`PROBE_CLOCK_FRAC`), or ``None``
    when the sweep has no clock that low."""
    below = np.nonzero(sweep.f <= PROBE_CLOCK_FRAC * sweep.default_clock_mhz + 1e-9)[0]
    return int(below[-1]) if below.size else None


def two_point_rmse(params: GpuDvfsParams, sweeps: Sequence[Sweep],
                   fitted: dict[str, float]) -> float:
    """Root-mean-square difference between the two-clock ``alpha`` (equation 8 of
    `nasenergy.dvfs.model`, from each sweep's top two clocks) and ``alpha`` fitted to the whole
    sweep (`fitted`, by workload), over `sweeps`: the residual of the two-point estimate
    (second run at `probe_index`)."""
    lo = min(a.lo for a in params.alpha_predictors)
    errs = []
    for s in sweeps:
        j = probe_index(s)
        if j is not None and s.workload in fitted:
            errs.append(alpha_from_neighbour(s.default_clock_mhz, float(s.time_s[-1]),
                                             float(s.f[j]), float(s.time_s[j]),
                                             params.overlap_exponent, lo) - fitted[s.workload])
    return float(np.sqrt(np.mean(np.square(errs)))) if errs else 0.0


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
        opt, backend = _model_choice(model, sweep, obs, a, rmse, rule)
        regrets[name] = _regret(sweep, opt.sm_clock_mhz)
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
        regret_fixed_clock_frac=_regret(sweep, fixed), fixed_clock_mhz=fixed,
        regret_default_frac=float(e_default / sweep.energy.min() - 1.0),
        alpha_predicted=alphas["main"], alpha_counters=alphas["counters"],
        alpha_fitted=alphas["oracle_alpha"],
        gpu_busy=math.nan if sweep.gpu_busy is None else sweep.gpu_busy,
        noise_frac=noise_frac(sweep), search_probes_recorded=fast.n_probes,
        search_steps_off_recorded=i_fast - i_full,
        search_regret_recorded_frac=_regret(sweep, fast.sm_clock_mhz),
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


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of `x` and `y` (average ranks for ties; NaN pairs dropped;
    NaN when either side is constant or fewer than three pairs remain)."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    ra, rb = _ranks(a), _ranks(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(v.size, dtype=float)
    ranks[order] = np.arange(v.size, dtype=float)
    for value in np.unique(v):  # ties share their mean rank
        tie = v == value
        ranks[tie] = ranks[tie].mean()
    return ranks


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
    results = []
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


@dataclass(frozen=True)
class Summary(_CsvRow):
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


# ------------------------------------------------------------------ leave one GPU out
@dataclass(frozen=True)
class GpuHoldOutResult(_CsvRow):
    """One workload of a GPU held out whole: scored with the generic model built from the other
    GPUs' calibrations and this GPU's NVML-like facts (fractions, MHz).

    ``band_low_frac``/``band_high_frac`` are the model's saving band at its chosen clock;
    ``measured_saving_in_band`` whether the measured saving at that clock lies inside it.
    The chosen clock follows the ``expected`` rule; ``point_clock_mhz``/``regret_point_frac`` are
    the ``point`` rule's.
    """

    gpu: str
    workload: str
    group: str
    default_clock_mhz: float
    true_best_clock_mhz: float
    generic_clock_mhz: float
    regret_frac: float
    regret_default_frac: float
    true_saving_frac: float
    predicted_saving_frac: float
    measured_saving_at_choice_frac: float
    band_low_frac: float
    band_high_frac: float
    measured_saving_in_band: bool
    alpha_predictor: str
    point_clock_mhz: float
    regret_point_frac: float
    consistent_default_point: bool
    expected_saving_frac: float = math.nan
    two_point_clock_mhz: float = math.nan
    regret_two_point_frac: float = math.nan


@dataclass(frozen=True)
class GpuSweeps:
    """All sweeps of one GPU and the facts NVML would give about it.

    Attributes:
        key: short identifier (a published set's key).
        gpu: GPU description.
        sweeps: its workloads' sweeps.
        power_limit_w: board power limit, watts.
        idle_power_w: idle board power, watts; ``None``: the lowest power in the sweeps.
    """

    key: str
    gpu: str
    sweeps: Sequence[Sweep]
    power_limit_w: float
    idle_power_w: float | None = None


def _idle(g: GpuSweeps) -> float:
    return g.idle_power_w if g.idle_power_w is not None else float(min(s.p.min() for s in g.sweeps))


def leave_one_gpu_out(gpus: Sequence[GpuSweeps], *,
                      progress: Callable[[str], None] | None = None) -> list[GpuHoldOutResult]:
    """Predict each GPU's workloads with the generic model of the *other* GPUs.

    Every GPU is calibrated on its own sweeps; for the held-out one, the generic parameters
    (`nasenergy.dvfs.generic.generic_params`) take the other GPUs' calibrated sets as references
    and only what NVML would report about the held-out GPU: its clocks (those of its sweeps), its
    power limit and idle power, and each workload's default-clock time, power and counters. The
    chosen clock (``expected`` rule over the band of those references' shapes, never the held-out
    GPU's own) is scored on the workload's measured sweep.
    """
    if len(gpus) < 2:
        raise ValueError("leave-one-GPU-out needs at least two GPUs")
    fitted = {g.key: calibrate(list(g.sweeps), name=g.key, gpu=g.gpu, device_patterns=(g.gpu,),
                               power_limit_w=g.power_limit_w, idle_power_w=g.idle_power_w)
              for g in gpus}
    cals = {k: c.params for k, c in fitted.items()}
    # residual of the two-clock alpha, from the other GPUs' sweeps only (the largest of theirs)
    own_r2 = {g.key: two_point_rmse(cals[g.key], g.sweeps, dict(fitted[g.key].alphas))
              for g in gpus}
    r2 = {g.key: max(v for k, v in own_r2.items() if k != g.key) for g in gpus}
    out: list[GpuHoldOutResult] = []
    for g in gpus:
        if progress is not None:
            progress(g.key)
        refs = [cals[k] for k in cals if k != g.key]
        clocks = sorted({f for s in g.sweeps for f in s.clocks_mhz})
        base = GpuFacts(device_name=g.gpu, supported_clocks_mhz=tuple(clocks),
                        power_limit_w=g.power_limit_w, idle_power_w=_idle(g),
                        source="the held-out GPU's sweeps (as NVML would report them)")
        for s in g.sweeps:
            facts = dataclasses.replace(base, loaded_sm_clock_mhz=s.default_clock_mhz,
                                        loaded_power_w=s.power_w[-1])
            params = dataclasses.replace(generic_params(facts, refs),
                                         supported_clocks_mhz=s.clocks_mhz,
                                         default_clock_mhz=s.default_clock_mhz)
            model = DvfsModel(params)
            obs = WorkloadObservation(time_s_per_img=s.time_s[-1], power_w=s.power_w[-1],
                                      sm_clock_mhz=s.default_clock_mhz, sm_active=s.sm_active,
                                      dram_active=s.dram_active, gpu_busy=s.gpu_busy)
            feats = obs.features(params)
            used = next(a for a in params.alpha_predictors if a.usable_with(feats))
            alpha = model.alpha(obs)
            opt, _ = _model_choice(model, s, obs, alpha, used.rmse, EXPECTED,
                                   shape_references=refs)
            opt_point, _ = _model_choice(model, s, obs, alpha, choice=POINT)
            j = probe_index(s)
            two_clock = two_regret = math.nan
            if j is not None:
                a2 = model.alpha(dataclasses.replace(
                    obs, neighbour_clock_mhz=float(s.f[j]),
                    neighbour_time_s_per_img=float(s.time_s[j])))
                opt2, _ = _model_choice(model, s, obs, a2, r2[g.key], EXPECTED,
                                        shape_references=refs)
                two_clock, two_regret = opt2.sm_clock_mhz, _regret(s, opt2.sm_clock_mhz)
            _, exp_backend = _model_choice(model, s, obs, alpha, used.rmse, EXPECTED,
                                           shape_references=refs)
            lo, hi = saving_band(params, obs, opt.sm_clock_mhz, alpha, shape_references=refs)
            i = int(np.argmin(np.abs(s.f - opt.sm_clock_mhz)))
            measured_saving = float(1.0 - s.energy[i] / s.energy[-1])
            out.append(GpuHoldOutResult(
                gpu=g.gpu, workload=s.workload, group=s.group,
                default_clock_mhz=s.default_clock_mhz,
                true_best_clock_mhz=float(s.f[int(np.argmin(s.energy))]),
                generic_clock_mhz=opt.sm_clock_mhz, regret_frac=_regret(s, opt.sm_clock_mhz),
                regret_default_frac=float(s.energy[-1] / s.energy.min() - 1.0),
                true_saving_frac=float(1.0 - s.energy.min() / s.energy[-1]),
                predicted_saving_frac=opt.energy_saving_frac,
                measured_saving_at_choice_frac=measured_saving, band_low_frac=lo,
                band_high_frac=hi, measured_saving_in_band=bool(lo - 1e-12 <= measured_saving <= hi + 1e-12),
                alpha_predictor="+".join(used.features) or "constant",
                point_clock_mhz=opt_point.sm_clock_mhz,
                regret_point_frac=_regret(s, opt_point.sm_clock_mhz),
                consistent_default_point=consistent_default_point(s),
                expected_saving_frac=float(
                    1.0 - exp_backend.probe(opt.sm_clock_mhz).energy_j_per_img / float(s.energy[-1])),
                two_point_clock_mhz=two_clock, regret_two_point_frac=two_regret))
    return out


# ------------------------------------------------------------------ a power-capped card
@dataclass(frozen=True)
class CappedCardResult(_CsvRow):
    """A power-capped card without a calibrated set, seen at its top requested clock, under one
    way of starting the curve (``start``): from the clock it held under the cap (read during the
    run) or, as if that clock were not known, from the requested one. Scored on its measured
    sweep (nearest measured held clock)."""

    gpu: str
    workload: str
    start: str
    requested_clock_mhz: float
    held_clock_mhz: float
    power_w: float
    power_limit_w: float
    idle_power_w: float
    idle_power_source: str
    chosen_clock_mhz: float
    true_best_clock_mhz: float
    regret_frac: float
    predicted_saving_frac: float
    measured_saving_at_choice_frac: float
    label: str


def capped_card(requested_mhz: Sequence[float], held_mhz: Sequence[float],
                time_s: Sequence[float], power_w: Sequence[float], *, gpu: str, workload: str,
                power_limit_w: float, references: Sequence[GpuDvfsParams],
                idle_power_w: float | None = None) -> list[CappedCardResult]:
    """The generic model on a card whose top requested clocks were held lower by its power cap.

    The default run is the one at the highest requested clock: its time, power and the clock it
    held. ``held clock`` builds the facts with that held clock and a power cap (what NVML reports
    during such a run); ``requested clock`` takes the requested clock as the clock run (the
    model's view before it read the held clock). The other runs are scored by their held clock.
    """
    order = np.argsort(np.asarray(requested_mhz, dtype=float))
    req = np.asarray(requested_mhz, dtype=float)[order]
    held = np.asarray(held_mhz, dtype=float)[order]
    t = np.asarray(time_s, dtype=float)[order]
    pw = np.asarray(power_w, dtype=float)[order]
    e = t * pw
    i_best = int(np.argmin(e))
    out = []
    for start, f0 in (("held clock", float(held[-1])), ("requested clock", float(req[-1]))):
        clocks = tuple(sorted(set(float(c) for c in req) | {float(held[-1])}))
        facts = GpuFacts(device_name=gpu, supported_clocks_mhz=clocks, power_limit_w=power_limit_w,
                         idle_power_w=idle_power_w, loaded_sm_clock_mhz=f0,
                         loaded_power_w=float(pw[-1]), power_capped=start == "held clock",
                         source="the sweep (as NVML would report it)")
        params = generic_params(facts, references)
        obs = WorkloadObservation(time_s_per_img=float(t[-1]), power_w=float(pw[-1]),
                                  sm_clock_mhz=f0, power_capped=start == "held clock")
        opt = optimal_clock_for_observation(params, obs, source="measured")
        i = int(np.argmin(np.abs(held - opt.sm_clock_mhz)))
        out.append(CappedCardResult(
            gpu=gpu, workload=workload, start=start, requested_clock_mhz=float(req[-1]),
            held_clock_mhz=float(held[-1]), power_w=float(pw[-1]), power_limit_w=power_limit_w,
            idle_power_w=params.idle_power_w,
            idle_power_source=(params.source_of("idle_power_w") or "").split(":")[0],
            chosen_clock_mhz=opt.sm_clock_mhz, true_best_clock_mhz=float(held[i_best]),
            regret_frac=float(e[i] / e.min() - 1.0), predicted_saving_frac=opt.energy_saving_frac,
            measured_saving_at_choice_frac=float(1.0 - e[i] / e[-1]), label=opt.label))
    return out
