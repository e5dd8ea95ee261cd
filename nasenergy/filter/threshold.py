"""Threshold mode: admit a candidate when its utilization is at least a calibrated τ."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from nasenergy.filter.base import UtilizationFilter
from nasenergy.filter.threshold_calibration import ThresholdCalibration, calibrate_threshold
from nasenergy.filter.records import (
    DEFAULT_OBJECTIVES,
    OBJECTIVE_SENSES,
    Decision,
    FilterError,
    Observation,
    check_objectives,
)
from nasenergy.measurement import Measurement
from nasenergy.pareto import non_dominated_mask

GOOD_KINDS: tuple[str, ...] = ("top", "pareto")


def good_mask(
    observations: Sequence[Observation],
    good: str,
    *,
    top_fraction: float = 0.1,
    objectives: Sequence[str] = DEFAULT_OBJECTIVES,
) -> np.ndarray:
    """Which evaluated candidates count as good.

    Args:
        observations: evaluated candidates.
        good: ``top``: the ``ceil(top_fraction * n)`` most accurate (ties included); ``pareto``:
            the members of the Pareto front over ``objectives``. An objective unavailable for
            every candidate (e.g. energy on a device without an energy counter) is left out;
            candidates missing a figure that others have are never on the front.
        top_fraction: share of candidates that are good in ``top`` mode, in (0, 1].
        objectives: objective names, see `nasenergy.filter.records.OBJECTIVE_SENSES`.
    """
    n = len(observations)
    if n == 0:
        return np.zeros(0, dtype=bool)
    if good == "top":
        acc = np.array([o.accuracy for o in observations])
        k = max(1, math.ceil(top_fraction * n - 1e-9))
        cut = np.sort(acc)[::-1][k - 1]
        return acc >= cut
    if good == "pareto":
        cols = [name for name in objectives if not all(math.isnan(o.objective(name)) for o in observations)]
        pts = np.array([[o.objective(name) for name in cols] for o in observations])
        return non_dominated_mask(pts, [OBJECTIVE_SENSES[c] for c in cols])
    raise FilterError(f"good must be one of {GOOD_KINDS}, got {good!r}")


class ThresholdFilter(UtilizationFilter):
    """Admit when measured utilization ≥ τ, with τ calibrated for a target recall of good candidates.

    τ is calibrated (see `nasenergy.filter.threshold_calibration`) by `fit`, or, without `fit`, once
    ``min_fit`` evaluated candidates with a known utilization have been observed; until then
    everything is admitted, so that first sample is unbiased. After that τ stays fixed: candidates
    observed later passed the filter, so they over-represent high utilization and recalibrating on
    them would ratchet τ upwards. Call `fit` again (on an unfiltered sample) to recalibrate, or set
    ``recalibrate_on_observe`` if observations are not filtered.

    Args:
        target_recall: the share of good candidates that must pass, in (0, 1].
        good: ``top`` (top ``top_fraction`` by accuracy) or ``pareto`` (Pareto-front members).
        top_fraction: share of candidates counted good in ``top`` mode.
        confidence: optional level for a Clopper–Pearson lower bound on recall; τ is then the
            largest threshold whose bound meets the target.
        min_fit: evaluated candidates needed before the threshold is used.
        objectives: objectives of the Pareto front in ``pareto`` mode.
        recalibrate_on_observe: recalibrate τ after every `observe`.
    """

    mode = "threshold"

    def __init__(
        self,
        target_recall: float = 0.9,
        good: str = "top",
        top_fraction: float = 0.1,
        confidence: float | None = None,
        min_fit: int = 20,
        objectives: Sequence[str] = DEFAULT_OBJECTIVES,
        recalibrate_on_observe: bool = False,
    ) -> None:
        super().__init__()
        if not 0 < target_recall <= 1:
            raise FilterError(f"target_recall must be in (0, 1], got {target_recall}")
        if good not in GOOD_KINDS:
            raise FilterError(f"good must be one of {GOOD_KINDS}, got {good!r}")
        if not 0 < top_fraction <= 1:
            raise FilterError(f"top_fraction must be in (0, 1], got {top_fraction}")
        if confidence is not None and not 0 < confidence < 1:
            raise FilterError(f"confidence must be in (0, 1), got {confidence}")
        if int(min_fit) < 1:
            raise FilterError(f"min_fit must be at least 1, got {min_fit}")
        self.target_recall = float(target_recall)
        self.good = good
        self.top_fraction = float(top_fraction)
        self.confidence = None if confidence is None else float(confidence)
        self.min_fit = int(min_fit)
        self.objectives = check_objectives(objectives)
        self.recalibrate_on_observe = bool(recalibrate_on_observe)
        self._calibration: ThresholdCalibration | None = None

    def options(self) -> dict[str, Any]:
        """The constructor options."""
        return {
            "target_recall": self.target_recall,
            "good": self.good,
            "top_fraction": self.top_fraction,
            "confidence": self.confidence,
            "min_fit": self.min_fit,
            "objectives": list(self.objectives),
            "recalibrate_on_observe": self.recalibrate_on_observe,
        }

    def _state(self) -> dict[str, Any]:
        cal = self.calibration
        return {"calibration": None if cal is None else cal.to_dict()}

    def _restore_state(self, state: dict[str, Any]) -> None:
        cal = state.get("calibration")
        if cal is not None:
            self._calibration = ThresholdCalibration.from_dict(cal)
            self._stale = False

    def fit(self, sample: Iterable[Observation]) -> ThresholdFilter:
        """Calibrate τ on ``sample`` (evaluated candidates, not pre-filtered); returns self."""
        super().fit(sample)
        self._recalibrate()
        return self

    @property
    def calibration(self) -> ThresholdCalibration | None:
        """The current calibration, or ``None`` before ``min_fit`` evaluated candidates exist."""
        if self._calibration is None or (self._stale and self.recalibrate_on_observe):
            self._recalibrate()
        return self._calibration

    def _recalibrate(self) -> None:
        usable = [o for o in self._observations if not math.isnan(o.measurement.utilization)]
        self._calibration = None
        if len(usable) >= self.min_fit:
            good = good_mask(usable, self.good, top_fraction=self.top_fraction, objectives=self.objectives)
            if good.any():
                u = [o.measurement.utilization for o in usable]
                self._calibration = calibrate_threshold(u, good, self.target_recall, self.confidence)
        self._stale = False

    def admit(
        self,
        measurement: Measurement,
        front: Any = None,
        *,
        features: Sequence[float] | np.ndarray | None = None,
    ) -> Decision:
        """Admit when utilization ≥ τ; ``front`` and ``features`` are not used."""
        u = float(measurement.utilization)
        cal = self.calibration
        base: dict[str, Any] = {"mode": self.mode, "utilization": u, "n_observed": self.n_observed}
        if cal is None:
            usable = sum(not math.isnan(o.measurement.utilization) for o in self._observations)
            return Decision(
                admit=True,
                reason=f"cold start: {usable} of {self.min_fit} evaluated candidates needed to calibrate τ; admitted",
                **base,
            )
        figures: dict[str, Any] = {
            "threshold": cal.threshold,
            "expected_recall": cal.recall_empirical,
            "recall_lower_bound": cal.recall_lower_bound,
            "expected_pass_rate": cal.pass_rate_empirical,
        }
        if math.isnan(u):
            return Decision(admit=True, reason="utilization unknown; admitted", **base, **figures)
        bound = "" if cal.recall_lower_bound is None else f", recall ≥ {cal.recall_lower_bound:.3f} at {cal.confidence:.0%}"
        stats = f"(τ calibrated for recall {cal.recall_empirical:.3f}{bound}, pass rate {cal.pass_rate_empirical:.3f})"
        if u >= cal.threshold:
            return Decision(admit=True, reason=f"utilization {u:.4g} ≥ τ {cal.threshold:.4g} {stats}", **base, **figures)
        return Decision(admit=False, reason=f"utilization {u:.4g} < τ {cal.threshold:.4g} {stats}", **base, **figures)
