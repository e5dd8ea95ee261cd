"""ThresholdFilter: cold start, calibration, freezing, goodness kinds, decisions."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from nasenergy.filter import (
    FilterError,
    Observation,
    ThresholdFilter,
    UtilizationFilter,
    good_mask,
    synthetic_observations,
)
from nasenergy.pareto import NAS_OBJECTIVES, non_dominated_mask


def _with_util(o: Observation, u: float) -> Observation:
    return dataclasses.replace(o, measurement=dataclasses.replace(o.measurement, utilization=u))


def test_cold_start_admits_and_says_so() -> None:
    flt = ThresholdFilter(min_fit=5)
    obs = synthetic_observations(4, seed=0)
    for o in obs:
        flt.observe(o.measurement, o.accuracy)
    d = flt.admit(_with_util(obs[0], 0.0).measurement)
    assert d.admit and "cold start" in d.reason and "4 of 5" in d.reason
    assert d.threshold is None and flt.calibration is None


def test_calibrates_once_then_freezes_until_fit() -> None:
    obs = synthetic_observations(200, seed=1)
    flt = ThresholdFilter(target_recall=0.9, min_fit=50)
    for o in obs[:50]:
        flt.observe(o.measurement, o.accuracy)
    tau = flt.calibration.threshold
    # later (filtered) observations do not move tau ...
    for o in obs[50:]:
        flt.observe(o.measurement, o.accuracy)
    assert flt.calibration.threshold == tau
    # ... until fit() recalibrates on a sample, or recalibration on observe is asked for
    assert flt.fit(obs).calibration.n_calibration == 200
    eager = ThresholdFilter(target_recall=0.9, min_fit=50, recalibrate_on_observe=True)
    for o in obs:
        eager.observe(o.measurement, o.accuracy)
    assert eager.calibration == flt.calibration


def test_decisions_follow_the_threshold() -> None:
    obs = synthetic_observations(300, seed=2)
    flt = ThresholdFilter(target_recall=0.8, top_fraction=0.2).fit(obs)
    cal = flt.calibration
    assert cal is not None and cal.recall_empirical >= 0.8
    above = flt.admit(_with_util(obs[0], cal.threshold).measurement)
    below = flt.admit(_with_util(obs[0], cal.threshold * 0.999).measurement)
    unknown = flt.admit(_with_util(obs[0], math.nan).measurement)
    assert above.admit and "≥ τ" in above.reason
    assert not below.admit and "< τ" in below.reason
    assert unknown.admit and "unknown" in unknown.reason
    for d in (above, below):
        assert d.threshold == cal.threshold
        assert d.expected_recall == cal.recall_empirical
        assert d.expected_pass_rate == cal.pass_rate_empirical
        assert d.mode == "threshold" and d.n_observed == 300


def test_recall_of_top_candidates_holds_on_fresh_data() -> None:
    # truth known: the same synthetic population; top 10 % by accuracy are good
    calib = synthetic_observations(400, seed=3)
    fresh = synthetic_observations(20000, seed=4)
    flt = ThresholdFilter(target_recall=0.9, top_fraction=0.1, confidence=0.9).fit(calib)
    good = good_mask(fresh, "top", top_fraction=0.1)
    admitted = np.array([flt.admit(o.measurement).admit for o in fresh])
    recall = admitted[good].mean()
    assert recall >= 0.88
    assert admitted.mean() < 0.9  # and it does filter something


def test_good_mask_kinds() -> None:
    obs = synthetic_observations(100, seed=5)
    acc = np.array([o.accuracy for o in obs])
    top = good_mask(obs, "top", top_fraction=0.1)
    assert top.sum() == 10 and acc[top].min() >= acc[~top].max()
    pts = np.array([[o.objective(n) for n in ("accuracy", "throughput", "energy")] for o in obs])
    assert good_mask(obs, "pareto").tolist() == non_dominated_mask(pts, NAS_OBJECTIVES).tolist()
    # energy unavailable everywhere: the front is over accuracy and throughput only
    no_e = synthetic_observations(100, seed=5, with_energy=False)
    mask = good_mask(no_e, "pareto")
    assert mask.any()
    assert mask.tolist() == non_dominated_mask(pts[:, :2], ("maximize", "maximize")).tolist()
    with pytest.raises(FilterError):
        good_mask(obs, "best")


def test_bad_options_are_filter_errors() -> None:
    with pytest.raises(FilterError):
        ThresholdFilter(target_recall=1.5)
    with pytest.raises(FilterError):
        ThresholdFilter(good="median")
    with pytest.raises(FilterError):
        UtilizationFilter.create("threshold", tau=0.3)
    with pytest.raises(FilterError):
        UtilizationFilter.create("magic")
    with pytest.raises(FilterError):
        ThresholdFilter().observe(synthetic_observations(1, seed=0)[0].measurement, math.nan)
