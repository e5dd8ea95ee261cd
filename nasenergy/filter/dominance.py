"""Dominance-aware mode: skip a candidate only when even its optimistic figures are dominated.

Throughput and energy are measured cheaply; only accuracy is dear. The filter predicts accuracy
from the cheap figures (and optional structural features) with a one-sided conformal upper bound
at level ``target_recall`` (`nasenergy.filter.conformal`), bounds the candidate's throughput and
energy at its own optimal clock optimistically (`nasenergy.filter.energy_bound`), and skips it
when the current front dominates that optimistic point.

Why this keeps a share ``target_recall`` of the final front: if the optimistic point
``(acc_upper, thr_upper, energy_lower)`` is dominated by a front point ``f`` and the truth is no
better than the optimistic point, then ``f`` dominates the truth too; a point dominated by the
front at any time stays dominated by every later front (fronts only improve, and dominance is
transitive), so the candidate could never have been on the final front. A final-front member is
therefore lost only when its true accuracy exceeds its conformal upper bound (probability about
``1 - target_recall``) or the throughput/energy bound is not optimistic enough.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from nasenergy.filter import dominance_model as _model
from nasenergy.filter.base import UtilizationFilter
from nasenergy.filter.conformal import CVPlusRegressor, make_estimator
from nasenergy.filter.dominance_decide import (
    build_energy_bound,
    check_schedule,
    cold_start_decision,
    decision_figures,
    dominance_decision,
    front_points,
    require_energy,
)
from nasenergy.filter.energy_bound import EnergyBound, ScaledBound, optimistic_figures
from nasenergy.filter.features import CHEAP_FEATURE_NAMES, check_cheap_columns, n_extra_features
from nasenergy.filter.records import DEFAULT_OBJECTIVES, Decision, FilterError, Observation, check_objectives
from nasenergy.measurement import Measurement


DEFAULT_LOCAL_MARGIN = 3.0
"""Default `DominanceFilter` ``local_margin``, in accuracy percentage points. On the TSS space
with the TSS path features (``results/search_efficiency``, 200 evaluations, recall 0.95) the filter
matched 0.955 of the CIFAR-10 true front (20 seeds) and 0.745 of the CIFAR-100 one (10 seeds),
against 0.952 and 0.668 with neither the path features nor the local calibration; no run stalled.
``None`` calibrates on every evaluated candidate."""


class AccuracyEstimate(NamedTuple):
    """A candidate's predicted accuracy with one-sided conformal bounds (level ``target_recall``)."""

    predicted: float
    lower: float
    upper: float


class DominanceFilter(UtilizationFilter):
    """Skip a candidate when its optimistic (accuracy, throughput, energy) is dominated by the front.

    Args:
        target_recall: the conformal level of the accuracy upper bound, in (0, 1): the share of
            final-front members the filter aims to keep.
        min_fit: evaluated candidates needed before the model is used (cold start: admit all).
        estimator: accuracy model, one of `nasenergy.filter.conformal.ESTIMATORS`.
        estimator_params: its hyper-parameters (JSON-serialisable).
        n_folds: CV+ folds (``>= n`` or ``<= 1``: jackknife+).
        seed: seeds the folds and models (decisions are reproducible).
        refit_every: refit the model once at least this many new evaluations have arrived ...
        refit_growth: ... and at least this share of the data it was last fitted on (so the
            number of refits grows only logarithmically with the number of evaluations: 11
            fits from 20 to 200 evaluations at the default 0.25).
        objectives: the front's columns, in order; names from ``accuracy``, ``throughput``,
            ``energy`` (drop ``energy`` on devices that cannot measure it).
        energy_bound: callable giving optimistic optimal-clock figures for a measurement (see
            `nasenergy.filter.energy_bound`); default `ScaledBound()`. Pass a dict to build a
            `ScaledBound` from its fields. A custom callable is not saved: give it again to
            `load`.
        local_margin: calibrate a candidate's accuracy bound only on the evaluated candidates
            predicted at least its prediction minus this many accuracy units (percentage
            points), see `nasenergy.filter.conformal` (*local calibration*); ``None`` calibrates
            on all of them. The residuals of badly predicted poor cells then no longer widen the
            bound of the good candidates, which decide the front.
        cheap_columns: which columns of the cheap measurement the accuracy model reads (names
            from `nasenergy.filter.features.CHEAP_FEATURE_NAMES`, used in that order); default
            all five. E.g. ``("log10_flops_per_img", "log10_params")`` gives a model that reads
            only what is known without measuring (plus the extra ``features=``). With no
            column, every candidate must bring extra features.
    """

    mode = "dominance"

    def __init__(
        self,
        target_recall: float = 0.9,
        min_fit: int = 20,
        estimator: str = "gbr",
        estimator_params: dict[str, Any] | None = None,
        n_folds: int = 5,
        seed: int = 0,
        refit_every: int = 1,
        refit_growth: float = 0.25,
        objectives: Sequence[str] = DEFAULT_OBJECTIVES,
        energy_bound: EnergyBound | dict[str, Any] | None = None,
        local_margin: float | None = DEFAULT_LOCAL_MARGIN,
        cheap_columns: Sequence[str] = CHEAP_FEATURE_NAMES,
    ) -> None:
        super().__init__()
        check_schedule(target_recall, min_fit, refit_every)
        self.target_recall = float(target_recall)
        self.min_fit = int(min_fit)
        self.estimator = estimator
        self.estimator_params = dict(estimator_params or {})
        self.n_folds = int(n_folds)
        self.seed = int(seed)
        self.refit_every = int(refit_every)
        if not refit_growth >= 0:
            raise FilterError(f"refit_growth must be >= 0, got {refit_growth}")
        self.refit_growth = float(refit_growth)
        self.objectives = check_objectives(objectives)
        self.energy_bound = build_energy_bound(energy_bound)
        if local_margin is not None and not (math.isfinite(float(local_margin)) and float(local_margin) >= 0):
            raise FilterError(f"local_margin must be a finite number >= 0 or None, got {local_margin}")
        self.local_margin = None if local_margin is None else float(local_margin)
        if isinstance(cheap_columns, str) or not isinstance(cheap_columns, Sequence):
            raise FilterError(f"cheap_columns must be a list of column names, got {cheap_columns!r}"[:300])
        self.cheap_columns = check_cheap_columns(cheap_columns)
        make_estimator(estimator, self.estimator_params, self.seed)  # validate early
        self._model: CVPlusRegressor | None = None
        self._n_at_fit = 0
        self._fit_base: int | None = self.min_fit  # None: at the next decision, on every evaluation

    # ----- options and state ----------------------------------------------------------------
    def options(self) -> dict[str, Any]:
        """The constructor options; a custom energy bound is recorded by name only."""
        bound: Any = self.energy_bound.to_dict() if isinstance(self.energy_bound, ScaledBound) else None
        return {
            "target_recall": self.target_recall,
            "min_fit": self.min_fit,
            "estimator": self.estimator,
            "estimator_params": self.estimator_params,
            "n_folds": self.n_folds,
            "seed": self.seed,
            "refit_every": self.refit_every,
            "refit_growth": self.refit_growth,
            "objectives": list(self.objectives),
            "energy_bound": bound,
            "local_margin": self.local_margin,
            "cheap_columns": list(self.cheap_columns),
        }

    def _state(self) -> dict[str, Any]:
        return _model.model_state(self)

    def _restore_state(self, state: dict[str, Any]) -> None:
        _model.restore_model_state(self, state)

    def _validate_observations(self) -> None:
        n_extra = n_extra_features(self._observations)
        if self._observations and not self.cheap_columns and n_extra == 0:
            raise FilterError("the accuracy model reads no cheap column and the candidates bring no extra "
                              "features: it has nothing to learn from")

    # ----- model (`nasenergy.filter.dominance_model`) -------------------------------------
    def fit(self, sample: Iterable[Observation]) -> DominanceFilter:
        """Replace the evaluated candidates by ``sample``; the model is refitted before the next
        decision. Returns self."""
        super().fit(sample)
        self._model, self._n_at_fit, self._fit_base = None, 0, None
        return self

    def _fit_model(self, n: int) -> None:
        _model.fit_accuracy_model(self, n)

    def fit_size(self, n: int) -> int:
        """How many of ``n`` evaluations (the first ones) the model is fitted on: the last point of
        the refit schedule (``min_fit``, then each time at least ``refit_every`` and
        ``refit_growth`` of the last fit's data have arrived) that ``n`` has reached. A function of
        ``n`` alone, so a filter rebuilt from the same evaluations (a resumed search, a loaded
        file) decides as the one that learnt them one at a time. After `fit`, the schedule starts
        from all the evaluations known at the next decision."""
        return _model.refit_size(n, self.min_fit, self._fit_base, self.refit_every, self.refit_growth)

    def _ensure_model(self) -> CVPlusRegressor | None:
        return _model.ensure_model(self)

    def predict_accuracy(
        self, measurement: Measurement, features: Sequence[float] | np.ndarray | None = None
    ) -> AccuracyEstimate | None:
        """The candidate's predicted accuracy and bounds, or ``None`` before ``min_fit``.

        The bounds are one-sided at level ``target_recall`` each.
        """
        model = self._ensure_model()
        if model is None:
            return None
        return AccuracyEstimate(*_model.predict_bounds(self, model, self._features_of(measurement, features)))

    def _features_of(self, measurement: Measurement, features: Sequence[float] | np.ndarray | None) -> np.ndarray:
        return _model.features_of(self, measurement, features)

    # ----- deciding (`nasenergy.filter.dominance_decide`) ---------------------------------
    def _front_points(self, front: Any) -> np.ndarray:
        return front_points(front, self.objectives)

    def observe(
        self,
        measurement: Measurement,
        accuracy: float,
        *,
        features: Sequence[float] | np.ndarray | None = None,
        throughput_img_per_s: float | None = None,
        energy_j_per_img: float | None = None,
    ) -> None:
        """Learn one full evaluation (see `UtilizationFilter.observe`).

        Raises:
            FilterError: energy is an objective and neither ``energy_j_per_img`` nor the
                measurement gives it.
        """
        self._require_energy(measurement.energy_j_per_img if energy_j_per_img is None else energy_j_per_img,
                             measurement)
        super().observe(measurement, accuracy, features=features, throughput_img_per_s=throughput_img_per_s,
                        energy_j_per_img=energy_j_per_img)

    def _require_energy(self, energy_j_per_img: float | None, measurement: Measurement) -> None:
        require_energy(self.objectives, energy_j_per_img, measurement)

    def admit(
        self,
        measurement: Measurement,
        front: Any = None,
        *,
        features: Sequence[float] | np.ndarray | None = None,
    ) -> Decision:
        """Skip the candidate only when its optimistic figures are dominated by ``front``.

        Args:
            measurement: the candidate's cheap default-clock measurement.
            front: the current front (`ParetoFront` or rows in ``objectives`` order) of fully
                evaluated candidates, scored as the search scores them.
            features: the candidate's extra features, when the evaluated ones had them.
        """
        self._require_energy(measurement.energy_j_per_img, measurement)
        base: dict[str, Any] = {"mode": self.mode, "utilization": float(measurement.utilization),
                                "n_observed": self.n_observed, "expected_recall": self.target_recall}
        if self.n_observed < self.min_fit:
            return cold_start_decision(base, self.n_observed, self.min_fit)
        estimate = self.predict_accuracy(measurement, features)
        opt = optimistic_figures(self.energy_bound, measurement)
        figures = decision_figures(estimate, opt, self.objectives)  # type: ignore[arg-type]
        pts = self._front_points(front)
        return dominance_decision(pts, self.objectives, figures, base, self.n_observed, self.target_recall)
