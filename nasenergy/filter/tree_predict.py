"""Vectorised prediction of the CV+ fold models when they are tree ensembles.

The dominance filter asks its ``K`` fold models about one candidate at a time. Through
scikit-learn each of those calls validates its input and walks the ensemble separately (about a
millisecond per fold model), which is most of a decision's cost. `StackedTrees` copies the fitted
trees of every fold model (gradient boosting, random forest or extremely randomised trees, after
median imputation) into flat arrays once per fit and walks all of them together with a few numpy
operations. It reproduces scikit-learn's predictions: inputs are compared as float32, as
scikit-learn's trees compare them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class StackedTrees:
    """The trees of ``K`` fitted pipelines (median imputer, then a tree ensemble) in flat arrays.

    Build it with `StackedTrees.from_pipelines`; `predict` returns the ``(K, m)`` predictions of
    the ``K`` models for ``m`` rows.
    """

    def __init__(
        self,
        fill: np.ndarray,
        feature: np.ndarray,
        threshold: np.ndarray,
        children: np.ndarray,
        value: np.ndarray,
        depth: int,
        weight: np.ndarray,
        offset: np.ndarray,
        n_trees: int,
    ) -> None:
        self._fill = fill  # (K, d) imputation values
        self._feature = feature  # (T, N) split feature, 0 at leaves
        self._threshold = threshold  # (T, N) split threshold, +inf at leaves (always "left")
        self._children = children  # (T, N, 2) left and right child, a leaf points to itself
        self._value = value  # (T, N) leaf value
        self._depth = depth  # deepest leaf
        self._weight = weight  # (K,) factor of each model's tree sum
        self._offset = offset  # (K,) constant of each model
        self._n_trees = n_trees  # trees per model

    @classmethod
    def from_pipelines(cls, pipelines: Sequence[Any]) -> StackedTrees | None:
        """Stack the fitted ``pipelines``; ``None`` when any of them is not a median imputer
        followed by a single-output `GradientBoostingRegressor` (squared error, mean start),
        `RandomForestRegressor` or `ExtraTreesRegressor`, or when they differ in tree count."""
        found = [_ensemble_of(p) for p in pipelines]
        parts = [p for p in found if p is not None]
        if not parts or len(parts) != len(found):
            return None
        n_trees = {len(p[1]) for p in parts}
        if len(n_trees) != 1:
            return None
        trees = [t for _, ts, _, _ in parts for t in ts]
        width = max(t.node_count for t in trees)
        n = len(trees)
        feature = np.zeros((n, width), dtype=np.intp)
        threshold = np.full((n, width), np.inf)
        children = np.zeros((n, width, 2), dtype=np.intp)
        value = np.zeros((n, width))
        depth = 0
        for i, t in enumerate(trees):
            c = t.node_count
            leaf = t.children_left[:c] < 0
            nodes = np.arange(c)
            feature[i, :c] = np.where(leaf, 0, t.feature[:c])
            threshold[i, :c] = np.where(leaf, np.inf, t.threshold[:c])
            children[i, :c, 0] = np.where(leaf, nodes, t.children_left[:c])
            children[i, :c, 1] = np.where(leaf, nodes, t.children_right[:c])
            value[i, :c] = t.value[:c, 0, 0]
            depth = max(depth, int(t.max_depth))
        fill = np.vstack([p[0] for p in parts])
        weight = np.asarray([p[2] for p in parts], dtype=np.float64)
        offset = np.asarray([p[3] for p in parts], dtype=np.float64)
        return cls(fill, feature, threshold, children, value, depth, weight, offset, n_trees.pop())

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The ``(K, m)`` predictions of the ``K`` models for the rows of ``X`` (shape ``(m, d)``)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        k, m = len(self._weight), X.shape[0]
        filled = np.where(np.isnan(X)[None, :, :], self._fill[:, None, :], X[None, :, :])  # (K, m, d)
        filled = filled.astype(np.float32).astype(float)  # scikit-learn's trees compare float32 inputs
        per_tree = np.repeat(filled, self._n_trees, axis=0)  # (T, m, d)
        trees = np.arange(len(per_tree))[:, None]
        rows = np.arange(m)[None, :]
        node = np.zeros((len(per_tree), m), dtype=np.intp)
        for _ in range(self._depth):
            x = per_tree[trees, rows, self._feature[trees, node]]
            right = (x > self._threshold[trees, node]).astype(np.intp)
            node = self._children[trees, node, right]
        sums = self._value[trees, node].reshape(k, self._n_trees, m).sum(axis=1)
        return self._offset[:, None] + self._weight[:, None] * sums


def _ensemble_of(pipeline: Any) -> tuple[np.ndarray, list[Any], float, float] | None:
    """(imputation values, trees, weight, offset) of a fitted imputer + ensemble pipeline."""
    from sklearn.dummy import DummyRegressor
    from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
    from sklearn.impute import SimpleImputer

    steps = getattr(pipeline, "steps", None)
    if not steps or len(steps) != 2:
        return None
    imputer, model = steps[0][1], steps[1][1]
    if not isinstance(imputer, SimpleImputer) or imputer.strategy != "median":
        return None
    if getattr(imputer, "indicator_", None) is not None:
        return None
    fill = np.asarray(imputer.statistics_, dtype=float)
    if np.isnan(fill).any():
        return None
    if isinstance(model, GradientBoostingRegressor):
        init = model.init_
        if model.loss != "squared_error" or not isinstance(init, DummyRegressor) or init.strategy != "mean":
            return None
        trees = [est.tree_ for est in model.estimators_[:, 0]]
        return fill, trees, float(model.learning_rate), float(np.ravel(init.constant_)[0])
    if isinstance(model, RandomForestRegressor | ExtraTreesRegressor):
        if getattr(model, "n_outputs_", 1) != 1:
            return None
        trees = [est.tree_ for est in model.estimators_]
        return fill, trees, 1.0 / len(trees), 0.0
    return None
