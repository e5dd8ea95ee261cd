"""Scoring a DVFS clock choice on a measured sweep: the shared parts of the leave-out validations.

One job: the figures and helpers that both hold-out validations
(`nasenergy.dvfs.workload_holdout`, `nasenergy.dvfs.generic_validation`) and their summary
(`nasenergy.dvfs.validation_summary`) use: the measured regret of a clock (`regret`), the model's
chosen clock on a held-out sweep (`model_choice`), whether a sweep's default point is physically
consistent (`consistent_default_point`), its noise (`noise_frac`), the two-clock probe
(`probe_index`, `two_point_rmse`), Spearman's rank correlation (`spearman`) and the base of the
CSV result rows (`CsvRow`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from collections.abc import Mapping, Sequence

import numpy as np

from nasenergy.dvfs.clock_choice import EXPECTED, clock_backend, search_clock
from nasenergy.dvfs.backends import ModelledBackend
from nasenergy.dvfs.model import DvfsModel, WorkloadObservation, alpha_from_neighbour
from nasenergy.dvfs.params import GpuDvfsParams
from nasenergy.dvfs.points import OptimalClock
from nasenergy.dvfs.sweeps import Sweep

__all__ = ["DEFAULT_POWER_DROP", "PROBE_CLOCK_FRAC", "CsvRow", "consistent_default_point", "model_choice",
           "noise_frac", "probe_index", "regret", "spearman", "two_point_rmse"]


class CsvRow:
    """A result row written as CSV: `columns` are its field names, in order."""

    @classmethod
    def columns(cls) -> list[str]:
        """Field names, in CSV column order."""
        return [f.name for f in fields(cls)]  # type: ignore[arg-type]


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


def regret(sweep: Sweep, clock_mhz: float) -> float:
    """How much more energy `sweep` measured at the clock nearest `clock_mhz` than at its best, a fraction."""
    i = int(np.argmin(np.abs(sweep.f - clock_mhz)))
    return float(sweep.energy[i] / sweep.energy.min() - 1.0)


def model_choice(model: DvfsModel, sweep: Sweep, obs: WorkloadObservation, alpha: float,
                 rmse: float = 0.0, choice: str = EXPECTED,
                 shape_references: Sequence[GpuDvfsParams] | None = None) -> tuple[OptimalClock, ModelledBackend]:
    """The model's clock for a held-out sweep under `choice`, and the backend searched
    (`nasenergy.dvfs.clock_choice.clock_backend`, `nasenergy.dvfs.clock_choice.search_clock`); ``expected``
    averages over `nasenergy.dvfs.clock_choice.band_members` with residual `rmse`."""
    backend = clock_backend(model, obs, alpha=alpha, clocks_mhz=sweep.clocks_mhz, choice=choice,
                            shape_references=shape_references, rmse=rmse)
    return search_clock(backend, sweep.point(sweep.default_clock_mhz, "measured")), backend


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
                   fitted: Mapping[str, float]) -> float:
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
