"""The stacked tree walk gives the fold models' own predictions, and the filter decides the same."""

from __future__ import annotations

import numpy as np
import pytest

from nasenergy.filter.conformal import CVPlusRegressor
from nasenergy.filter.tree_predict import StackedTrees


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.05] = np.nan  # the imputer's medians must be used
    y = 3 * np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("estimator", ["gbr", "rf", "extra_trees"])
def test_stacked_trees_equal_the_pipelines(estimator: str) -> None:
    X, y = _data(120, 8, 0)
    X[:, 5] = np.nan  # a column without any value: kept, filled with 0
    model = CVPlusRegressor(estimator, {"n_estimators": 25}, n_folds=5, seed=1).fit(X, y)
    Xt, _ = _data(200, 8, 1)
    Xt[:3] = X[:3].astype(np.float32)  # training rows, on split thresholds' float32 grid
    want = np.vstack([m.predict(Xt) for m in model._models])
    stacked = StackedTrees.from_pipelines(model._models)
    assert stacked is not None
    np.testing.assert_allclose(stacked.predict(Xt), want, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.fold_predictions(Xt[:1]), want[:, :1], rtol=0, atol=1e-9)


def test_other_models_fall_back_to_their_own_predict() -> None:
    X, y = _data(40, 3, 2)
    model = CVPlusRegressor("gp", None, n_folds=4, seed=0).fit(X, y)
    assert StackedTrees.from_pipelines(model._models) is None
    np.testing.assert_allclose(model.fold_predictions(X[:5]), np.vstack([m.predict(X[:5]) for m in model._models]))


def test_intervals_are_those_of_the_pipelines() -> None:
    X, y = _data(150, 6, 3)
    model = CVPlusRegressor("gbr", None, n_folds=5, seed=0).fit(X, y)
    Xt, _ = _data(50, 6, 4)
    got = model.predict_interval(Xt, 0.2)
    preds = np.vstack([m.predict(Xt) for m in model._models])
    scores = np.sort(preds[model._fold_of] + model._residuals[:, None], axis=0)
    rank = int(np.ceil(0.8 * (len(y) + 1)))
    np.testing.assert_allclose(got.upper, scores[rank - 1], atol=1e-9)
    np.testing.assert_allclose(got.predicted, preds.mean(axis=0), atol=1e-9)
