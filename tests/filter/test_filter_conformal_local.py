"""Local calibration of the CV+ bounds (`nasenergy.filter.conformal`, ``local_margin``)."""

from __future__ import annotations

import numpy as np
import pytest

from nasenergy.filter import CVPlusRegressor, DominanceFilter, FilterError, synthetic_observations
from nasenergy.filter.conformal import calibration_rows
from nasenergy.filter.dominance import DEFAULT_LOCAL_MARGIN
from nasenergy.filter.features import feature_matrix


def test_calibration_rows_keep_those_predicted_near_or_above() -> None:
    oof = np.arange(40, dtype=float)  # predictions 0..39
    rows = calibration_rows(oof, mu=30.0, margin=3.0, alpha=0.1)
    assert rows.tolist() == list(range(27, 40))  # 13 rows >= ceil(1 / 0.1) = 10
    assert calibration_rows(oof, mu=-100.0, margin=0.0, alpha=0.1).tolist() == list(range(40))


def test_calibration_rows_fall_back_to_the_nearest() -> None:
    oof = np.arange(40, dtype=float)
    rows = calibration_rows(oof, mu=38.0, margin=1.0, alpha=0.05)  # only 37, 38, 39 qualify; 20 needed
    assert len(rows) == 20 and rows.tolist() == sorted(rows.tolist())
    assert set(rows.tolist()) == set(range(20, 40))  # the 20 predictions nearest 38
    assert len(calibration_rows(oof[:5], mu=4.0, margin=0.0, alpha=0.05)) == 5  # fewer rows than needed: all


def _heteroscedastic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """y = x, with noise 10x larger where y is low (the shape of accuracy residuals)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, size=(n, 1))
    scale = np.where(x[:, 0] < 5, 5.0, 0.5)
    return x, x[:, 0] + scale * rng.standard_normal(n)


def test_local_bound_is_tighter_where_residuals_are_small_and_still_covers() -> None:
    x, y = _heteroscedastic(300, seed=0)
    model = CVPlusRegressor("gbr", {"n_estimators": 40, "max_depth": 2}, n_folds=5, seed=0).fit(x, y)
    xt, yt = _heteroscedastic(2000, seed=1)
    high = xt[:, 0] > 6
    glob = model.predict_interval(xt[high], alpha=0.1)
    local = model.predict_interval(xt[high], alpha=0.1, local_margin=1.0)
    assert np.median(local.upper - local.predicted) < 0.5 * np.median(glob.upper - glob.predicted)
    assert np.mean(yt[high] <= local.upper) >= 0.8
    assert np.all(local.lower <= local.upper)


def test_wide_margin_is_the_global_bound() -> None:
    train = synthetic_observations(80, seed=3)
    test = synthetic_observations(50, seed=4)
    model = CVPlusRegressor("gbr", {"n_estimators": 20}, seed=0).fit(
        feature_matrix(train), np.array([o.accuracy for o in train])
    )
    a = model.predict_interval(feature_matrix(test), alpha=0.1)
    b = model.predict_interval(feature_matrix(test), alpha=0.1, local_margin=1e9)
    np.testing.assert_allclose(a.upper, b.upper)
    np.testing.assert_allclose(a.lower, b.lower)
    with pytest.raises(FilterError):
        model.predict_interval(feature_matrix(test), alpha=0.1, local_margin=-1.0)


def test_dominance_filter_local_margin_option() -> None:
    assert DominanceFilter().local_margin == DEFAULT_LOCAL_MARGIN
    assert DominanceFilter(local_margin=None).options()["local_margin"] is None
    for bad in (-0.5, float("inf"), float("nan")):
        with pytest.raises(FilterError):
            DominanceFilter(local_margin=bad)
    obs = synthetic_observations(60, seed=5)
    flt = DominanceFilter(min_fit=20, local_margin=2.0, estimator_params={"n_estimators": 20}).fit(obs)
    loaded = DominanceFilter.from_dict(flt.to_dict())
    assert loaded.local_margin == 2.0
    assert loaded.predict_accuracy(obs[0].measurement) == flt.predict_accuracy(obs[0].measurement)


def test_the_largest_seed_fits_every_fold():
    """Fold f's model is seeded ``seed + f`` modulo 2^32 (scikit-learn takes 32-bit seeds)."""
    import numpy as np

    from nasenergy.filter.conformal import CVPlusRegressor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 3))
    model = CVPlusRegressor("gbr", {"n_estimators": 5}, n_folds=4, seed=2**32 - 1).fit(x, x[:, 0])
    assert np.isfinite(model.predict_interval(x[:2], 0.1).predicted).all()
