"""DominanceFilter and its conformal model: coverage, dominance edge cases, options."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from nasenergy.filter import (
    CVPlusRegressor,
    DominanceFilter,
    FilterError,
    OptimisticFigures,
    ScaledBound,
    synthetic_observations,
)
from nasenergy.filter.features import feature_matrix
from nasenergy.pareto import ParetoFront, dominates

EXACT = ScaledBound(energy_factor=1.0, noise_sigmas=0.0)  # front figures at the measured clock


def _fitted(n: int = 60, seed: int = 0, **kw) -> tuple[DominanceFilter, list]:
    obs = synthetic_observations(n, seed=seed)
    flt = DominanceFilter(min_fit=20, energy_bound=kw.pop("energy_bound", EXACT), **kw).fit(obs)
    return flt, obs


@pytest.mark.parametrize(("n_folds", "n_train"), [(5, 150), (0, 60)])
def test_conformal_upper_bound_covers_fresh_candidates(n_folds: int, n_train: int) -> None:
    train = synthetic_observations(n_train, seed=10)
    test = synthetic_observations(2000, seed=11)
    model = CVPlusRegressor("gbr", {"n_estimators": 30, "learning_rate": 0.2}, n_folds=n_folds, seed=0)
    model.fit(feature_matrix(train), np.array([o.accuracy for o in train]))
    iv = model.predict_interval(feature_matrix(test), alpha=0.1)
    y = np.array([o.accuracy for o in test])
    cover_hi = np.mean(y <= iv.upper)
    cover_lo = np.mean(y >= iv.lower)
    # theory: each one-sided bound covers at least 1 - 2 alpha; nominally 1 - alpha
    assert 0.83 <= cover_hi <= 0.97
    assert 0.83 <= cover_lo <= 0.97
    assert np.all(iv.lower <= iv.upper)


def test_conformal_bound_is_infinite_with_too_few_points() -> None:
    train = synthetic_observations(5, seed=1)
    model = CVPlusRegressor("gbr", {"n_estimators": 10}).fit(
        feature_matrix(train), np.array([o.accuracy for o in train])
    )
    iv = model.predict_interval(feature_matrix(train), alpha=0.1)  # ceil(0.9 * 6) = 6 > 5
    assert np.all(np.isinf(iv.upper)) and np.all(np.isinf(iv.lower))


def test_cold_start_and_empty_front_admit() -> None:
    obs = synthetic_observations(30, seed=2)
    flt = DominanceFilter(min_fit=20)
    for o in obs[:7]:
        flt.observe(o.measurement, o.accuracy)
    d = flt.admit(obs[8].measurement, [[99.0, 1e9, 1e-9]])
    assert d.admit and "cold start" in d.reason and "7 of 20" in d.reason
    flt.fit(obs)
    d = flt.admit(obs[8].measurement, None)
    assert d.admit and "empty" in d.reason
    assert d.accuracy_upper is not None and d.accuracy_lower <= d.accuracy_predicted <= d.accuracy_upper


def test_dominance_edge_cases_against_the_optimistic_point() -> None:
    flt, obs = _fitted()
    m = obs[3].measurement
    ref = flt.admit(m, [])  # empty front: see the optimistic figures
    opt = (ref.accuracy_upper, ref.throughput_img_per_s_upper, ref.energy_j_per_img_lower)
    assert opt[1] == m.throughput_img_per_s and opt[2] == m.energy_j_per_img

    tie = flt.admit(m, [opt])
    assert tie.admit  # equal points do not dominate

    better = (opt[0] + 0.5, opt[1], opt[2])
    d = flt.admit(m, [[0.0, 0.0, 1e9], better])
    assert not d.admit and "dominated" in d.reason
    assert d.dominating_point == pytest.approx(better)
    assert d.objectives == ("accuracy", "throughput", "energy")

    trade_off = (opt[0] + 5, opt[1] * 2, opt[2] * 1.01)  # worse energy
    assert flt.admit(m, [trade_off]).admit

    nan_front = (opt[0] + 5, math.nan, opt[2] / 2)  # a NaN front row dominates nothing
    assert flt.admit(m, [nan_front]).admit


def test_unknown_energy_is_refused_unless_energy_is_not_an_objective() -> None:
    flt, obs = _fitted()
    m = dataclasses.replace(obs[0].measurement, energy_j_per_img=None, energy_basis="unavailable", energy_cv=None)
    far_better = [[100.0, 1e12, 1e-12]]
    with pytest.raises(FilterError, match="objectives=") as ei:
        flt.admit(m, far_better)
    assert "\n" not in str(ei.value)
    with pytest.raises(FilterError, match="no energy per image"):
        DominanceFilter(min_fit=20).admit(m, [])  # also during the cold start
    with pytest.raises(FilterError, match="no energy per image"):
        flt.observe(m, 90.0)
    two = DominanceFilter(min_fit=20, objectives=("accuracy", "throughput")).fit(
        synthetic_observations(60, seed=0, with_energy=False)
    )
    d2 = two.admit(m, [[100.0, 1e12]])
    assert not d2.admit and len(d2.dominating_point) == 2


def test_energy_bound_is_applied() -> None:
    flt, obs = _fitted(energy_bound=ScaledBound(energy_factor=0.5, noise_sigmas=0.0))
    m = obs[0].measurement
    assert flt.admit(m, []).energy_j_per_img_lower == pytest.approx(0.5 * m.energy_j_per_img)
    calls = []

    def custom(meas):
        calls.append(meas)
        return (meas.energy_j_per_img * 0.7, meas.throughput_img_per_s * 1.1)

    flt2, _ = _fitted(energy_bound=custom)
    d = flt2.admit(m, [])
    assert calls and d.energy_j_per_img_lower == pytest.approx(0.7 * m.energy_j_per_img)
    assert d.throughput_img_per_s_upper == pytest.approx(1.1 * m.throughput_img_per_s)
    flt3, _ = _fitted(energy_bound=lambda meas: OptimisticFigures(1.0, 2.0))
    assert flt3.admit(m, []).throughput_img_per_s_upper == 2.0
    flt4, _ = _fitted(energy_bound=lambda meas: 0.25 * meas.energy_j_per_img)  # energy only
    d4 = flt4.admit(m, [])
    assert d4.energy_j_per_img_lower == pytest.approx(0.25 * m.energy_j_per_img)
    assert d4.throughput_img_per_s_upper == m.throughput_img_per_s
    flt5, _ = _fitted(energy_bound=lambda meas: "nonsense")
    with pytest.raises(FilterError):
        flt5.admit(m, [])


def test_features_must_match_the_training_layout() -> None:
    obs = [dataclasses.replace(o, features=(i % 2, i % 3)) for i, o in enumerate(synthetic_observations(40, seed=4))]
    flt = DominanceFilter(min_fit=20).fit(obs)
    assert flt.admit(obs[0].measurement, [], features=[1, 0]).admit
    with pytest.raises(FilterError):
        flt.admit(obs[0].measurement, [], features=None)
    with pytest.raises(FilterError):
        flt.observe(obs[0].measurement, 80.0)  # no features while the others have two
    assert flt.n_observed == 40


def test_front_shape_and_senses_are_checked() -> None:
    flt, obs = _fitted()
    with pytest.raises(FilterError):
        flt.admit(obs[0].measurement, [[1.0, 2.0]])
    with pytest.raises(FilterError):
        flt.admit(obs[0].measurement, ParetoFront(("maximize", "minimize", "minimize")))
    front = ParetoFront(("maximize", "maximize", "minimize"))
    front.add((0.0, 0.0, 1e9))
    assert flt.admit(obs[0].measurement, front).admit


def test_search_keeps_most_of_the_front_and_skips_work() -> None:
    """A simulated search over a synthetic pool: skipped candidates are rarely front members."""
    pool = synthetic_observations(400, seed=21)
    flt = DominanceFilter(
        target_recall=0.9, min_fit=20, energy_bound=EXACT, estimator_params={"n_estimators": 40, "learning_rate": 0.15}, refit_growth=0.25
    )
    front = ParetoFront(("maximize", "maximize", "minimize"))
    skipped = []
    vec = [(o.accuracy, o.objective("throughput"), o.objective("energy")) for o in pool]
    for i, o in enumerate(pool):
        d = flt.admit(o.measurement, front)
        if d.admit:
            flt.observe(o.measurement, o.accuracy)
            front.add(vec[i], key=i)
        else:
            skipped.append(i)
            assert dominates(d.dominating_point, (d.accuracy_upper, d.throughput_img_per_s_upper, d.energy_j_per_img_lower), front.senses)
    true_front = {i for i in range(len(pool)) if not any(dominates(vec[j], vec[i], front.senses) for j in range(len(pool)))}
    lost = len(true_front & set(skipped))
    assert len(skipped) > 0.2 * len(pool)
    assert lost <= 0.2 * len(true_front)


def test_fit_replaces_the_model() -> None:
    a = synthetic_observations(40, seed=30)
    b = [dataclasses.replace(o, accuracy=o.accuracy - 30.0) for o in a]
    flt = DominanceFilter(min_fit=20, estimator_params={"n_estimators": 20}).fit(a)
    before = flt.predict_accuracy(a[0].measurement)
    after = flt.fit(b).predict_accuracy(a[0].measurement)
    assert after.predicted == pytest.approx(before.predicted - 30.0, abs=1.0)
