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

from nasenergy.filter.base import UtilizationFilter
from nasenergy.filter.conformal import CVPlusRegressor, make_estimator
from nasenergy.filter.energy_bound import EnergyBound, ScaledBound, optimistic_figures
from nasenergy.filter.features import (
    CHEAP_FEATURE_NAMES,
    candidate_features,
    check_cheap_columns,
    feature_matrix,
    n_extra_features,
)
from nasenergy.filter.records import (
    DEFAULT_OBJECTIVES,
    OBJECTIVE_SENSES,
    Decision,
    FilterError,
    Observation,
    check_objectives,
)
from nasenergy.measurement import Measurement
from nasenergy.pareto import ParetoFront, dominating_index


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
        if not 0 < target_recall < 1:
            raise FilterError(f"target_recall must be in (0, 1), got {target_recall}")
        if int(min_fit) < 2:
            raise FilterError(f"min_fit must be at least 2, got {min_fit}")
        if int(refit_every) < 1:
            raise FilterError(f"refit_every must be at least 1, got {refit_every}")
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
        if energy_bound is None:
            energy_bound = ScaledBound()
        elif isinstance(energy_bound, dict):
            try:
                energy_bound = ScaledBound(**energy_bound)
            except TypeError as exc:
                raise FilterError(f"bad energy_bound fields: {exc}") from None
        if not callable(energy_bound):
            raise FilterError("energy_bound must be callable (measurement -> optimistic figures)")
        self.energy_bound = energy_bound
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
        bound: Any
        if isinstance(self.energy_bound, ScaledBound):
            bound = self.energy_bound.to_dict()
        else:
            bound = None
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
        custom = not isinstance(self.energy_bound, ScaledBound)
        return {
            "custom_energy_bound": getattr(self.energy_bound, "__qualname__", type(self.energy_bound).__name__)
            if custom
            else None,
            "n_at_fit": self._n_at_fit if self._model is not None else None,
            "fit_base": self._fit_base,
        }

    def _restore_state(self, state: dict[str, Any]) -> None:
        name = state.get("custom_energy_bound")
        if name and isinstance(self.energy_bound, ScaledBound):
            raise FilterError(
                f"this filter was saved with a custom energy bound ({name}); pass energy_bound= to load()"
            )
        n_at_fit = state.get("n_at_fit")
        if n_at_fit:
            if not 2 <= int(n_at_fit) <= self.n_observed:
                raise FilterError(f"corrupt saved filter: model fitted on {n_at_fit} of {self.n_observed} evaluations")
            self._fit_model(int(n_at_fit))
        base = state.get("fit_base", int(n_at_fit) if n_at_fit else self.min_fit)
        if base is not None and not (isinstance(base, int) and 0 <= base <= max(self.n_observed, self.min_fit)):
            raise FilterError(f"corrupt saved filter: refit schedule base {base!r}")
        self._fit_base = base

    def _validate_observations(self) -> None:
        n_extra = n_extra_features(self._observations)
        if self._observations and not self.cheap_columns and n_extra == 0:
            raise FilterError("the accuracy model reads no cheap column and the candidates bring no extra "
                              "features: it has nothing to learn from")

    # ----- model --------------------------------------------------------------------------
    def fit(self, sample: Iterable[Observation]) -> DominanceFilter:
        """Replace the evaluated candidates by ``sample``; the model is refitted before the next
        decision. Returns self."""
        super().fit(sample)
        self._model, self._n_at_fit, self._fit_base = None, 0, None
        return self

    def _fit_model(self, n: int) -> None:
        obs = self._observations[:n]
        model = CVPlusRegressor(self.estimator, self.estimator_params, self.n_folds, self.seed)
        model.fit(feature_matrix(obs, self.cheap_columns), np.array([o.accuracy for o in obs]))
        self._model, self._n_at_fit = model, n
        self._stale = False

    def fit_size(self, n: int) -> int:
        """How many of ``n`` evaluations (the first ones) the model is fitted on: the last point of
        the refit schedule (``min_fit``, then each time at least ``refit_every`` and
        ``refit_growth`` of the last fit's data have arrived) that ``n`` has reached. A function of
        ``n`` alone, so a filter rebuilt from the same evaluations (a resumed search, a loaded
        file) decides as the one that learnt them one at a time. After `fit`, the schedule starts
        from all the evaluations known at the next decision."""
        size = max(self.min_fit, n if self._fit_base is None else self._fit_base)
        while True:
            step = max(self.refit_every, math.ceil(self.refit_growth * size - 1e-9), 1)
            if size + step > n:
                return size
            size += step

    def _ensure_model(self) -> CVPlusRegressor | None:
        n = self.n_observed
        if n < self.min_fit:
            return None
        if self._fit_base is None:
            self._fit_base = n
        size = self.fit_size(n)
        if self._model is None or size != self._n_at_fit:
            self._fit_model(size)
        return self._model

    def predict_accuracy(
        self, measurement: Measurement, features: Sequence[float] | np.ndarray | None = None
    ) -> AccuracyEstimate | None:
        """The candidate's predicted accuracy and bounds, or ``None`` before ``min_fit``.

        The bounds are one-sided at level ``target_recall`` each.
        """
        model = self._ensure_model()
        if model is None:
            return None
        x = self._features_of(measurement, features)
        iv = model.predict_interval(x[None, :], 1 - self.target_recall, local_margin=self.local_margin)
        return AccuracyEstimate(float(iv.predicted[0]), float(iv.lower[0]), float(iv.upper[0]))

    def _features_of(self, measurement: Measurement, features: Sequence[float] | np.ndarray | None) -> np.ndarray:
        n_extra = n_extra_features(self._observations)
        given = 0 if features is None else np.asarray(features).size
        if given != n_extra:
            raise FilterError(
                f"the accuracy model uses {n_extra} extra features per candidate, got {given}; "
                "pass the same features= layout as for the evaluated candidates"
            )
        return candidate_features(measurement, features, self.cheap_columns)

    # ----- deciding -----------------------------------------------------------------------
    def _front_points(self, front: Any) -> np.ndarray:
        if front is None:
            return np.empty((0, len(self.objectives)))
        if isinstance(front, ParetoFront):
            want = tuple(OBJECTIVE_SENSES[o] for o in self.objectives)
            if front.senses != want:
                raise FilterError(
                    f"the front's senses {front.senses} do not match the filter's objectives {self.objectives}"
                )
            return front.points
        pts = np.asarray(front, dtype=float)
        if pts.size == 0:
            return np.empty((0, len(self.objectives)))
        if pts.ndim != 2 or pts.shape[1] != len(self.objectives):
            raise FilterError(
                f"the front must have one column per objective {self.objectives}, got shape {pts.shape}"
            )
        return pts

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
        """Refuse a candidate without energy per image when energy is an objective: its optimistic
        point could never be compared with the front, so the filter would silently admit all."""
        if "energy" not in self.objectives:
            return
        if energy_j_per_img is None or not math.isfinite(float(energy_j_per_img)):
            raise FilterError(
                f"energy is one of the filter's objectives but the measurement from {measurement.device_name} "
                "has no energy per image; create the filter with objectives=(\"accuracy\", \"throughput\")"
            )

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
        u = float(measurement.utilization)
        base: dict[str, Any] = {
            "mode": self.mode,
            "utilization": u,
            "n_observed": self.n_observed,
            "expected_recall": self.target_recall,
        }
        if self.n_observed < self.min_fit:
            return Decision(
                admit=True,
                reason=f"cold start: {self.n_observed} of {self.min_fit} evaluations needed to fit the accuracy model; admitted",
                **base,
            )
        pred, lo, hi = self.predict_accuracy(measurement, features)  # type: ignore[misc]
        opt = optimistic_figures(self.energy_bound, measurement)
        figures: dict[str, Any] = {
            "accuracy_predicted": pred,
            "accuracy_lower": lo,
            "accuracy_upper": hi,
            "throughput_img_per_s_upper": opt.throughput_img_per_s_upper,
            "energy_j_per_img_lower": opt.energy_j_per_img_lower,
            "objectives": self.objectives,
        }
        pts = self._front_points(front)
        if len(pts) == 0:
            return Decision(admit=True, reason="the front is empty; admitted", **base, **figures)
        values = {"accuracy": hi, "throughput": opt.throughput_img_per_s_upper, "energy": opt.energy_j_per_img_lower}
        point = np.array([values[o] for o in self.objectives])
        if np.isnan(point).any():
            missing = [o for o, v in zip(self.objectives, point) if math.isnan(v)]
            return Decision(admit=True, reason=f"{', '.join(missing)} unknown; admitted", **base, **figures)
        if math.isinf(hi):
            return Decision(
                admit=True,
                reason=f"too few evaluations ({self.n_observed}) to bound accuracy at level {self.target_recall}; admitted",
                **base,
                **figures,
            )
        senses = [OBJECTIVE_SENSES[o] for o in self.objectives]
        idx = dominating_index(point, pts, senses)
        described = ", ".join(f"{o} {v:.4g}" for o, v in zip(self.objectives, point))
        if idx is None:
            return Decision(
                admit=True,
                reason=f"optimistic figures ({described}) are not dominated by the front; admitted",
                **base,
                **figures,
            )
        dom = tuple(float(v) for v in pts[idx])
        dom_s = ", ".join(f"{o} {v:.4g}" for o, v in zip(self.objectives, dom))
        return Decision(
            admit=False,
            reason=f"even optimistic figures ({described}) are dominated by front point ({dom_s}); skipped",
            dominating_point=dom,
            **base,
            **figures,
        )
