"""Estimated NATS-Bench costs for architectures whose time the benchmark does not record.

NATS-Bench records, per architecture, one training time per image per epoch and one evaluation
time per image (`nasenergy.oracles.data`). These rates are close to additive in the operations of
the cell, so a least-squares fit of the recorded rates on the architecture's features predicts
the rate of any other architecture, in the same seconds as the records:

* topology space: the one-hot operation of each of the 6 edges plus the structural features of
  ``space.features`` (cross-validated median error about 1% on the 1,000 recorded archs of the
  shared tables; ``experiments/bench_oracles.py`` reports it);
* size space: the 5 widths, their squares and the products of neighbouring widths.

Predicted costs are labelled ``estimated``. The fit needs at least `MIN_FIT_ARCHS` architectures
with recorded times; with fewer, costs are ``unknown`` unless timed training steps on this device
are asked for (``estimate="device"``, `nasenergy.oracles.cost_estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nasenergy.oracles.data import BenchmarkData
from search_spaces import TSS_PATH_FEATURES, get_space

MIN_FIT_ARCHS = 50
"""Fewest architectures with recorded times to fit the rate model on."""

CV_FOLDS = 5


@dataclass(frozen=True)
class RateModel:
    """Predicted per-image rates of every architecture of a space.

    Attributes:
        train_rate_s_per_img: training seconds per image per epoch, ``float64[N]``.
        eval_rate_s_per_img: evaluation seconds per image, ``float64[N]``.
        n_fit_archs: architectures with recorded times the fit used.
        cv_median_rel_err_train: median relative error of the training rate, 5-fold
            cross-validated over the recorded architectures.
        cv_median_rel_err_eval: the same for the evaluation rate.
    """

    train_rate_s_per_img: np.ndarray
    eval_rate_s_per_img: np.ndarray
    n_fit_archs: int
    cv_median_rel_err_train: float
    cv_median_rel_err_eval: float

    def summary(self) -> dict[str, float | int | str]:
        """JSON-able description (stored in the benchmark's provenance)."""
        return {
            "method": "least squares of recorded per-image rates on architecture features",
            "n_fit_archs": self.n_fit_archs,
            "cv_median_rel_err_train": round(self.cv_median_rel_err_train, 5),
            "cv_median_rel_err_eval": round(self.cv_median_rel_err_eval, 5),
        }


def design_matrix(space_name: str) -> np.ndarray:
    """Regressors of every architecture of a space, in official order, with an intercept column."""
    space = get_space(space_name)
    features = np.array([space.features(arch) for arch in space.enumerate()], dtype=np.float64)
    if space_name == "tss":  # rates are additive in the ops: the path summaries are for accuracy predictors
        keep = [i for i, name in enumerate(space.feature_names) if name not in TSS_PATH_FEATURES]
        features = features[:, keep]
    if space_name == "sss":
        widths = features
        features = np.hstack([widths, widths**2, widths[:, :-1] * widths[:, 1:]])
    return np.hstack([features, np.ones((features.shape[0], 1))])


def _fit_predict(x: np.ndarray, y: np.ndarray, known: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x[known], y[known], rcond=None)
    floor = 0.5 * float(np.min(y[known]))
    return np.maximum(x @ coef, floor)


def _cv_error(x: np.ndarray, y: np.ndarray, known: np.ndarray) -> float:
    rows = np.flatnonzero(known)
    errors = []
    for fold in range(CV_FOLDS):
        held = rows[rows % CV_FOLDS == fold]
        train = known.copy()
        train[held] = False
        if held.size == 0 or train.sum() < x.shape[1]:
            continue
        pred = _fit_predict(x, y, train)[held]
        errors.append(np.abs(pred - y[held]) / y[held])
    return float(np.median(np.concatenate(errors))) if errors else float("nan")


def fit_rate_model(data: BenchmarkData, design: np.ndarray | None = None) -> RateModel | None:
    """Fit the rate model on the architectures of `data` with recorded times.

    Args:
        data: the benchmark.
        design: `design_matrix` of its space (computed when None).

    Returns:
        The model, or None when fewer than `MIN_FIT_ARCHS` architectures have recorded times.
    """
    train = data.recorded_train_rate()
    evaluation = data.recorded_eval_rate()
    known_train = np.isfinite(train) & (train > 0)
    known_eval = np.isfinite(evaluation) & (evaluation > 0)
    if known_train.sum() < MIN_FIT_ARCHS:
        return None
    x = design_matrix(data.space_name) if design is None else design
    if x.shape[0] != data.size:
        return None
    if known_eval.sum() < MIN_FIT_ARCHS:  # no evaluation times: charge training only
        eval_pred = np.zeros(data.size)
        eval_err = float("nan")
    else:
        eval_pred = _fit_predict(x, evaluation, known_eval)
        eval_err = _cv_error(x, evaluation, known_eval)
    return RateModel(
        train_rate_s_per_img=_fit_predict(x, train, known_train),
        eval_rate_s_per_img=eval_pred,
        n_fit_archs=int(known_train.sum()),
        cv_median_rel_err_train=_cv_error(x, train, known_train),
        cv_median_rel_err_eval=eval_err,
    )


def attach_rate_model(data: BenchmarkData) -> RateModel | None:
    """Fit the rate model and store its predictions in `data` (``est_*_rate``, provenance)."""
    model = fit_rate_model(data)
    if model is not None:
        data.est_train_rate = model.train_rate_s_per_img
        data.est_eval_rate = model.eval_rate_s_per_img
        data.provenance["cost_model"] = model.summary()
    return model
