"""Accuracy prediction with conformal bounds (CV+ / jackknife+), on scikit-learn regressors.

CV+ (Barber, Candès, Ramdas & Tibshirani, "Predictive inference with the jackknife+", 2021):
the ``n`` evaluated candidates are split into ``K`` folds; the model is fitted ``K`` times, each
time leaving one fold out, and each candidate gets its out-of-fold residual
``R_i = y_i - mu_{-k(i)}(x_i)``. For a new candidate ``x`` the one-sided upper bound at level
``1 - alpha`` is the ``ceil((1 - alpha)(n + 1))``-th smallest of ``mu_{-k(i)}(x) + R_i``
(``+inf`` when that rank exceeds ``n``); the lower bound is the ``floor(alpha (n + 1))``-th
smallest (``-inf`` below rank 1). With ``K = n`` this is jackknife+. The theory guarantees
coverage of at least ``1 - 2 alpha`` for each one-sided bound (``1 - alpha`` for split conformal
and, in practice, for CV+ too).

*Local calibration* (``local_margin``): accuracy residuals are heavy-tailed (a few broken cells
far below their prediction, a few good ones far above), so a bound calibrated on every candidate
is loose exactly where a filter needs it tight, among the good candidates. With a margin ``d``,
the bound for ``x`` uses only the candidates whose out-of-fold prediction is at least
``mu(x) - d`` (a Mondrian-style split of the calibration set by predicted accuracy), and, when
fewer than ``ceil(1 / alpha)`` qualify (too few for a finite bound), the ``ceil(1 / alpha)``
candidates whose out-of-fold predictions are nearest ``mu(x)``.

The model is described by a name and JSON-serialisable hyper-parameters, and is refitted from its
training data when loaded, so no pickles are ever written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from nasenergy.filter.records import FilterError
from nasenergy.filter.tree_predict import StackedTrees

ESTIMATORS: tuple[str, ...] = ("gbr", "rf", "extra_trees", "gp")
"""Accuracy model names: gradient boosting, random forest, extremely randomised trees, and a
Gaussian process (RBF + white noise kernel, standardised inputs)."""

_DEFAULTS: dict[str, dict[str, Any]] = {
    "gbr": {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.1, "subsample": 0.8},
    "rf": {"n_estimators": 100, "min_samples_leaf": 2},
    "extra_trees": {"n_estimators": 100, "min_samples_leaf": 2},
    "gp": {"alpha": 1e-6},
}


PARAM_RANGES: dict[str, tuple[type, float, float]] = {
    "n_estimators": (int, 1, 5000),
    "max_depth": (int, 1, 64),
    "min_samples_leaf": (int, 1, 100_000),
    "min_samples_split": (int, 2, 100_000),
    "max_leaf_nodes": (int, 2, 100_000),
    "n_restarts_optimizer": (int, 0, 50),
    "learning_rate": (float, 1e-6, 10.0),
    "subsample": (float, 1e-6, 1.0),
    "alpha": (float, 0.0, 1e6),
}
"""Allowed ``(type, low, high)`` of the hyper-parameters whose size sets the cost of a fit (a saved
filter with ``n_estimators`` of 10**7 would otherwise take hours to load); ``max_depth`` and
``max_leaf_nodes`` may also be ``None``."""


def check_params(name: str, params: dict[str, Any]) -> None:
    """Refuse hyper-parameters outside `PARAM_RANGES`, in one line.

    Raises:
        FilterError: a value of the wrong type or out of its range.
    """
    for key, value in params.items():
        if key not in PARAM_RANGES:
            continue
        kind, low, high = PARAM_RANGES[key]
        if value is None and key in ("max_depth", "max_leaf_nodes"):
            continue
        ok_type = not isinstance(value, bool) and (
            isinstance(value, int) if kind is int else isinstance(value, (int, float)))
        if not ok_type or not (low <= value <= high):  # NaN fails the range check
            raise FilterError(
                f"bad hyper-parameters for accuracy model {name!r}: {key} = {value!r}, must be "
                f"{'an integer' if kind is int else 'a number'} in [{low:g}, {high:g}]"
            )


def make_estimator(name: str, params: dict[str, Any] | None, seed: int) -> Any:
    """A fresh scikit-learn pipeline: median imputation of missing features, then the model.

    Args:
        name: one of `ESTIMATORS`.
        params: hyper-parameters overriding the defaults (JSON-serialisable values).
        seed: the model's random state.
    """
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline

    if name not in ESTIMATORS:
        raise FilterError(f"unknown accuracy model {name!r}; choose one of {ESTIMATORS}")
    if params is not None and not isinstance(params, dict):
        raise FilterError(f"bad hyper-parameters for accuracy model {name!r}: not a mapping")
    check_params(name, params or {})
    kw = {**_DEFAULTS[name], **(params or {})}
    try:
        if name == "gbr":
            from sklearn.ensemble import GradientBoostingRegressor

            model = GradientBoostingRegressor(random_state=seed, **kw)
        elif name == "rf":
            from sklearn.ensemble import RandomForestRegressor

            model = RandomForestRegressor(random_state=seed, n_jobs=1, **kw)
        elif name == "extra_trees":
            from sklearn.ensemble import ExtraTreesRegressor

            model = ExtraTreesRegressor(random_state=seed, n_jobs=1, **kw)
        else:
            from sklearn.gaussian_process import GaussianProcessRegressor
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
            from sklearn.preprocessing import StandardScaler

            kernel = ConstantKernel(1.0) * RBF(length_scale=1.0) + WhiteKernel(noise_level=0.1)
            gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=seed, **kw)
            return make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True), StandardScaler(), gp)
    except TypeError as exc:
        raise FilterError(f"bad hyper-parameters for accuracy model {name!r}: {exc}") from None
    return make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True), model)


@dataclass(frozen=True)
class AccuracyInterval:
    """Predicted accuracy of each candidate with one-sided conformal bounds (arrays of equal length).

    Attributes:
        predicted: mean of the fold models' predictions.
        lower: one-sided lower bound at level ``1 - alpha`` (``-inf`` when not boundable).
        upper: one-sided upper bound at level ``1 - alpha`` (``+inf`` when not boundable).
    """

    predicted: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class CVPlusRegressor:
    """A regressor with CV+ (or jackknife+) conformal bounds.

    Args:
        estimator: model name, one of `ESTIMATORS`.
        params: the model's hyper-parameters (JSON-serialisable).
        n_folds: number of folds ``K``; ``K >= n`` (or ``K <= 1``) means jackknife+ (``n`` fits).
        seed: seeds the fold split and the models.
    """

    def __init__(self, estimator: str = "gbr", params: dict[str, Any] | None = None, n_folds: int = 5, seed: int = 0):
        make_estimator(estimator, params, seed)  # validate early
        self.estimator = estimator
        self.params = dict(params or {})
        self.n_folds = int(n_folds)
        self.seed = int(seed)
        self._models: list[Any] = []
        self._stacked: StackedTrees | None = None
        self._fold_of: np.ndarray = np.empty(0, dtype=int)
        self._residuals: np.ndarray = np.empty(0)
        self._oof: np.ndarray = np.empty(0)

    @property
    def n_fit(self) -> int:
        """Number of training rows of the current fit (0 before `fit`)."""
        return len(self._residuals)

    def fit(self, X: np.ndarray, y: np.ndarray) -> CVPlusRegressor:
        """Fit the ``K`` leave-fold-out models and store the out-of-fold residuals."""
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        n = len(y)
        if n < 2:
            raise FilterError(f"need at least 2 evaluated candidates to fit the accuracy model, got {n}")
        k = n if (self.n_folds <= 1 or self.n_folds >= n) else self.n_folds
        rng = np.random.default_rng(self.seed)
        fold_of = np.empty(n, dtype=int)
        fold_of[rng.permutation(n)] = np.arange(n) % k
        models, oof = [], np.empty(n)
        for f in range(k):
            held = fold_of == f
            model = make_estimator(self.estimator, self.params, (self.seed + f) % 2**32)
            model.fit(X[~held], y[~held])
            oof[held] = model.predict(X[held])
            models.append(model)
        self._models, self._fold_of, self._residuals, self._oof = models, fold_of, y - oof, oof
        self._stacked = StackedTrees.from_pipelines(models)
        return self

    def fold_predictions(self, X: np.ndarray) -> np.ndarray:
        """The ``(K, m)`` predictions of the ``K`` fold models for the rows of ``X``."""
        if not self._models:
            raise FilterError("the accuracy model is not fitted yet")
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if self._stacked is not None:
            return self._stacked.predict(X)
        return np.vstack([m.predict(X) for m in self._models])

    def predict_interval(self, X: np.ndarray, alpha: float, local_margin: float | None = None) -> AccuracyInterval:
        """Point predictions and one-sided bounds at level ``1 - alpha`` for each row of ``X``.

        Args:
            X: the candidates' feature rows.
            alpha: one minus each bound's level, in (0, 1).
            local_margin: calibrate each row's bounds only on the training rows predicted (out of
                fold) at least this much below its prediction, or above (see the module's
                *local calibration*); ``None``: on every training row.
        """
        if not self._models:
            raise FilterError("the accuracy model is not fitted yet")
        if not 0 < alpha < 1:
            raise FilterError(f"alpha must be in (0, 1), got {alpha}")
        if local_margin is not None and not local_margin >= 0:
            raise FilterError(f"local_margin must be >= 0, got {local_margin}")
        X = np.atleast_2d(np.asarray(X, dtype=float))
        preds = self.fold_predictions(X)  # (K, m)
        predicted = preds.mean(axis=0)
        scores = preds[self._fold_of] + self._residuals[:, None]  # (n, m)
        if local_margin is None:
            upper, lower = _ranked_bounds(np.sort(scores, axis=0), alpha)
        else:
            upper, lower = np.empty(len(predicted)), np.empty(len(predicted))
            for j, mu in enumerate(predicted):
                rows = calibration_rows(self._oof, float(mu), float(local_margin), alpha)
                hi, lo = _ranked_bounds(np.sort(scores[rows, j])[:, None], alpha)
                upper[j], lower[j] = hi[0], lo[0]
        return AccuracyInterval(predicted=predicted, lower=lower, upper=upper)


def calibration_rows(oof: np.ndarray, mu: float, margin: float, alpha: float) -> np.ndarray:
    """Indices of the training rows that calibrate a candidate predicted ``mu``: those whose
    out-of-fold prediction is at least ``mu - margin``, or, when fewer than ``ceil(1 / alpha)``
    (the fewest giving a finite bound at level ``1 - alpha``) qualify, that many rows whose
    out-of-fold predictions are nearest ``mu`` (all rows when there are fewer)."""
    oof = np.asarray(oof, dtype=float)
    rows = np.flatnonzero(oof >= mu - margin)
    need = min(len(oof), math.ceil(1 / alpha - 1e-9))
    if len(rows) >= need:
        return rows
    return np.sort(np.argsort(np.abs(oof - mu), kind="stable")[:need])


def _ranked_bounds(sorted_scores: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) one-sided bounds at level ``1 - alpha`` from the ``(n, m)`` sorted CV+
    scores: the ``ceil((1 - alpha)(n + 1))``-th and ``floor(alpha (n + 1))``-th smallest."""
    n, m = sorted_scores.shape
    hi_rank = math.ceil((1 - alpha) * (n + 1))
    lo_rank = math.floor(alpha * (n + 1))
    upper = sorted_scores[hi_rank - 1] if hi_rank <= n else np.full(m, math.inf)
    lower = sorted_scores[lo_rank - 1] if lo_rank >= 1 else np.full(m, -math.inf)
    return upper, lower
