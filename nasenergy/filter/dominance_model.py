"""The accuracy model of `nasenergy.filter.dominance.DominanceFilter`: its refit schedule,
fitting, prediction and the saving/restoring of its fitted state.

Module-level functions the filter delegates to; they read and set the filter's attributes
(``_observations``, ``_model``, ``_n_at_fit``, ``_fit_base``, ...), so the filter's saved-state
format is the one it always had.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from nasenergy.filter.conformal import CVPlusRegressor
from nasenergy.filter.energy_bound import ScaledBound
from nasenergy.filter.features import candidate_features, feature_matrix, n_extra_features
from nasenergy.filter.energy_bound import EnergyBound
from nasenergy.filter.records import FilterError, Observation
from nasenergy.measurement import Measurement


class DominanceFilter(Protocol):
    """What these functions use of a `nasenergy.filter.dominance.DominanceFilter` (named so here
    without importing it, which would make an import cycle)."""

    target_recall: float
    min_fit: int
    estimator: str
    estimator_params: dict[str, Any]
    n_folds: int
    seed: int
    local_margin: float | None
    cheap_columns: tuple[str, ...]
    energy_bound: EnergyBound
    _observations: list[Observation]
    _model: CVPlusRegressor | None
    _n_at_fit: int
    _fit_base: int | None
    _stale: bool

    @property
    def n_observed(self) -> int: ...

    def fit_size(self, n: int) -> int: ...

    def _fit_model(self, n: int) -> None: ...


def fit_accuracy_model(flt: DominanceFilter, n: int) -> None:
    """Fit ``flt``'s accuracy model on its first ``n`` evaluations (`DominanceFilter._fit_model`)."""
    obs = flt._observations[:n]
    model = CVPlusRegressor(flt.estimator, flt.estimator_params, flt.n_folds, flt.seed)
    model.fit(feature_matrix(obs, flt.cheap_columns), np.array([o.accuracy for o in obs]))
    flt._model, flt._n_at_fit = model, n
    flt._stale = False


def refit_size(n: int, min_fit: int, fit_base: int | None, refit_every: int, refit_growth: float) -> int:
    """The last point of the refit schedule that ``n`` evaluations have reached
    (`DominanceFilter.fit_size`)."""
    size = max(min_fit, n if fit_base is None else fit_base)
    while True:
        step = max(refit_every, math.ceil(refit_growth * size - 1e-9), 1)
        if size + step > n:
            return size
        size += step


def ensure_model(flt: DominanceFilter) -> CVPlusRegressor | None:
    """``flt``'s accuracy model, (re)fitted to the refit schedule; ``None`` before ``min_fit``."""
    n = flt.n_observed
    if n < flt.min_fit:
        return None
    if flt._fit_base is None:
        flt._fit_base = n
    size = flt.fit_size(n)
    if flt._model is None or size != flt._n_at_fit:
        flt._fit_model(size)
    return flt._model


def predict_bounds(
    flt: DominanceFilter, model: CVPlusRegressor, x: np.ndarray
) -> tuple[float, float, float]:
    """(predicted, lower, upper) accuracy for one feature vector, one-sided at ``target_recall``."""
    iv = model.predict_interval(x[None, :], 1 - flt.target_recall, local_margin=flt.local_margin)
    return float(iv.predicted[0]), float(iv.lower[0]), float(iv.upper[0])


def features_of(
    flt: DominanceFilter, measurement: Measurement, features: Sequence[float] | np.ndarray | None
) -> np.ndarray:
    """The model's feature vector for one candidate; refuses an extra-feature layout unlike the
    evaluated candidates'."""
    n_extra = n_extra_features(flt._observations)
    given = 0 if features is None else np.asarray(features).size
    if given != n_extra:
        raise FilterError(
            f"the accuracy model uses {n_extra} extra features per candidate, got {given}; "
            "pass the same features= layout as for the evaluated candidates"
        )
    return candidate_features(measurement, features, flt.cheap_columns)


def model_state(flt: DominanceFilter) -> dict[str, Any]:
    """The filter's mode-specific saved state (`DominanceFilter._state`)."""
    custom = not isinstance(flt.energy_bound, ScaledBound)
    return {
        "custom_energy_bound": getattr(flt.energy_bound, "__qualname__", type(flt.energy_bound).__name__)
        if custom
        else None,
        "n_at_fit": flt._n_at_fit if flt._model is not None else None,
        "fit_base": flt._fit_base,
    }


def restore_model_state(flt: DominanceFilter, state: dict[str, Any]) -> None:
    """Inverse of `model_state` (`DominanceFilter._restore_state`): refits the saved model."""
    name = state.get("custom_energy_bound")
    if name and isinstance(flt.energy_bound, ScaledBound):
        raise FilterError(
            f"this filter was saved with a custom energy bound ({name}); pass energy_bound= to load()"
        )
    n_at_fit = state.get("n_at_fit")
    if n_at_fit:
        if not 2 <= int(n_at_fit) <= flt.n_observed:
            raise FilterError(f"corrupt saved filter: model fitted on {n_at_fit} of {flt.n_observed} evaluations")
        flt._fit_model(int(n_at_fit))
    base = state.get("fit_base", int(n_at_fit) if n_at_fit else flt.min_fit)
    if base is not None and not (isinstance(base, int) and 0 <= base <= max(flt.n_observed, flt.min_fit)):
        raise FilterError(f"corrupt saved filter: refit schedule base {base!r}")
    flt._fit_base = base
