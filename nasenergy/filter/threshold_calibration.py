"""Calibrating a utilization threshold for a target recall of good candidates.

The rule follows approximate filters in data systems: among the calibration candidates that are
"good" (top accuracy, or on the Pareto front), admit the ``k`` with the highest utilization and set
the threshold τ to the k-th highest good utilization, for the smallest ``k`` that meets the target.

* Without a confidence level, ``k = ceil(target * n_good)``: the empirical recall meets the target.
* With a confidence level ``c``, ``k`` is the smallest count whose one-sided Clopper–Pearson lower
  bound ``Beta.ppf(1 - c, k, n_good - k + 1)`` is at least the target. For continuous
  utilizations this bound is exact, not only approximate: the recall of τ on a fresh good
  candidate, ``1 - F(τ)`` with τ the k-th largest of ``n_good`` draws, is ``Beta(k, n_good-k+1)``
  distributed, so ``P(recall >= target) >= c``.

When even admitting every good calibration candidate cannot certify the target (too few good
candidates), τ is the lowest good utilization and the calibration says it is not certified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from nasenergy.filter.records import FilterError, check_field


@dataclass(frozen=True)
class ThresholdCalibration:
    """A calibrated utilization threshold and the figures behind it.

    Attributes:
        threshold: τ; admit a candidate when its utilization is ≥ τ.
        target_recall: the requested recall of good candidates (0..1].
        confidence: the confidence level of ``recall_lower_bound``, or ``None`` (empirical rule).
        n_calibration: calibration candidates with a known utilization.
        n_good: how many of them are good.
        recall_empirical: share of good calibration candidates with utilization ≥ τ.
        recall_lower_bound: one-sided Clopper–Pearson lower bound on recall at ``confidence``;
            ``None`` without a confidence level.
        pass_rate_empirical: share of all calibration candidates with utilization ≥ τ (the
            expected share of full evaluations).
        certified: whether the target is met (empirically, or by the bound when ``confidence``
            is set).
    """

    threshold: float
    target_recall: float
    confidence: float | None
    n_calibration: int
    n_good: int
    recall_empirical: float
    recall_lower_bound: float | None
    pass_rate_empirical: float
    certified: bool

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ThresholdCalibration:
        """Inverse of `to_dict`.

        Raises:
            FilterError: not a dict, or a field missing, unknown or of the wrong type.
        """
        names = [f.name for f in fields(cls)]
        if not isinstance(d, dict) or sorted(d) != sorted(names):
            raise FilterError(f"a saved calibration must be a JSON object with exactly the fields {', '.join(names)}")
        for f in fields(cls):
            check_field(f"calibration {f.name}", d[f.name], str(f.type))
        return cls(**d)


def clopper_pearson_lower(successes: int, trials: int, confidence: float) -> float:
    """One-sided Clopper–Pearson lower confidence bound on a binomial proportion.

    Args:
        successes: number of successes ``k`` (0..trials).
        trials: number of trials ``n`` (> 0).
        confidence: the level ``c`` in (0, 1).

    Returns:
        ``Beta.ppf(1 - c, k, n - k + 1)``, or 0 when ``k == 0``.
    """
    from scipy.stats import beta

    if not 0 < confidence < 1:
        raise FilterError(f"confidence must be in (0, 1), got {confidence}")
    if trials <= 0 or not 0 <= successes <= trials:
        raise FilterError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    if successes == 0:
        return 0.0
    return float(beta.ppf(1.0 - confidence, successes, trials - successes + 1))


def calibrate_threshold(
    utilization: Sequence[float] | np.ndarray,
    good: Sequence[bool] | np.ndarray,
    target_recall: float,
    confidence: float | None = None,
) -> ThresholdCalibration:
    """The largest threshold whose recall of good candidates meets the target.

    Args:
        utilization: the calibration candidates' utilizations; NaN entries are left out.
        good: for each candidate, whether it is good (e.g. top-10 % accuracy).
        target_recall: the recall of good candidates to keep, in (0, 1].
        confidence: optional level in (0, 1) for a Clopper–Pearson lower bound on recall.

    Raises:
        FilterError: bad target or confidence, mismatched lengths, or no good candidate.
    """
    u = np.asarray(utilization, dtype=float)
    g = np.asarray(good, dtype=bool)
    if u.shape != g.shape or u.ndim != 1:
        raise FilterError(f"utilization and good must be 1-D of equal length, got {u.shape} and {g.shape}")
    if not 0 < target_recall <= 1:
        raise FilterError(f"target recall must be in (0, 1], got {target_recall}")
    if confidence is not None and not 0 < confidence < 1:
        raise FilterError(f"confidence must be in (0, 1), got {confidence}")
    known = ~np.isnan(u)
    u, g = u[known], g[known]
    pos = np.sort(u[g])[::-1]  # good utilizations, highest first
    n_good = len(pos)
    if n_good == 0:
        raise FilterError("the calibration sample has no good candidate with a known utilization")

    def recall_at(tau: float) -> tuple[int, float]:
        k_eff = int(np.sum(pos >= tau))
        return k_eff, k_eff / n_good

    if confidence is None:
        k = max(1, math.ceil(target_recall * n_good - 1e-9))
        tau = float(pos[k - 1])
        _, rec = recall_at(tau)
        lower = None
        certified = rec >= target_recall - 1e-12
    else:
        from scipy.stats import beta

        # with ties, admitting down to the k-th good utilization admits k_eff >= k good ones
        k_eff_all = n_good - np.searchsorted(pos[::-1], pos, side="left")
        bounds = beta.ppf(1.0 - confidence, k_eff_all, n_good - k_eff_all + 1)
        ok = np.flatnonzero(bounds >= target_recall)
        certified = len(ok) > 0
        tau = float(pos[ok[0]]) if certified else float(pos[-1])
        k_eff, rec = recall_at(tau)
        lower = clopper_pearson_lower(k_eff, n_good, confidence)
    return ThresholdCalibration(
        threshold=tau,
        target_recall=float(target_recall),
        confidence=None if confidence is None else float(confidence),
        n_calibration=int(len(u)),
        n_good=n_good,
        recall_empirical=float(rec),
        recall_lower_bound=lower,
        pass_rate_empirical=float(np.mean(u >= tau)),
        certified=bool(certified),
    )
