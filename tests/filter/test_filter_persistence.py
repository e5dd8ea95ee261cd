"""Saving and loading filters: identical decisions, clear errors, JSON only."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from nasenergy.errors import DataNotFoundError
from nasenergy.filter import (
    Decision,
    DominanceFilter,
    FilterError,
    PassThroughFilter,
    ScaledBound,
    ThresholdFilter,
    UtilizationFilter,
    synthetic_observations,
)

FAST = {"n_estimators": 30, "learning_rate": 0.2}


def _decisions(flt: UtilizationFilter, cands, front) -> list[Decision]:
    return [flt.admit(o.measurement, front, features=o.features) for o in cands]


def _front(obs) -> np.ndarray:
    return np.array([[o.accuracy, o.objective("throughput"), o.objective("energy")] for o in obs])


@pytest.mark.parametrize(
    "make",
    [
        lambda: ThresholdFilter(target_recall=0.85, confidence=0.9, good="pareto", min_fit=10),
        lambda: DominanceFilter(min_fit=20, estimator_params=FAST, energy_bound=ScaledBound(0.8, 1.0, 1.0)),
        lambda: DominanceFilter(min_fit=20, estimator="rf", estimator_params={"n_estimators": 20}, n_folds=4, seed=3),
        lambda: PassThroughFilter(),
    ],
)
def test_round_trip_gives_identical_decisions(make, tmp_path) -> None:
    obs = synthetic_observations(80, seed=7)
    cands = synthetic_observations(60, seed=8)
    front = _front(obs[:40])
    flt = make().fit(obs[:50])
    for o in obs[50:]:  # state after some observations too
        flt.observe(o.measurement, o.accuracy)
    before = _decisions(flt, cands, front)
    path = flt.save(tmp_path / "sub" / "filter.json")
    json.loads(path.read_text())  # plain JSON
    loaded = UtilizationFilter.load(path)
    assert type(loaded) is type(flt)
    assert loaded.options() == flt.options()
    assert loaded.observations == flt.observations
    after = _decisions(loaded, cands, front)
    assert after == before
    if not isinstance(flt, PassThroughFilter):
        assert any(not d.admit for d in before)  # the comparison covers skips too


def test_loaded_threshold_keeps_its_calibration_without_recomputing(tmp_path) -> None:
    flt = ThresholdFilter(min_fit=10).fit(synthetic_observations(100, seed=1))
    d = flt.to_dict()
    d["state"]["calibration"]["threshold"] = 0.123456  # the saved tau is used as is
    path = tmp_path / "f.json"
    path.write_text(json.dumps(d))
    assert ThresholdFilter.load(path).calibration.threshold == 0.123456


def test_custom_energy_bound_must_be_given_again(tmp_path) -> None:
    def bound(m):
        return (m.energy_j_per_img * 0.6, m.throughput_img_per_s)

    obs = synthetic_observations(40, seed=2)
    flt = DominanceFilter(min_fit=20, estimator_params=FAST, energy_bound=bound).fit(obs)
    path = flt.save(tmp_path / "f.json")
    with pytest.raises(FilterError, match="custom energy bound"):
        UtilizationFilter.load(path)
    loaded = UtilizationFilter.load(path, energy_bound=bound)
    front = _front(obs)
    assert _decisions(loaded, obs, front) == _decisions(flt, obs, front)


def test_load_errors(tmp_path) -> None:
    with pytest.raises(DataNotFoundError):
        UtilizationFilter.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(FilterError):
        UtilizationFilter.load(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(FilterError):
        UtilizationFilter.load(bad)
    flt = ThresholdFilter(min_fit=5).fit(synthetic_observations(10, seed=0))
    d = flt.to_dict()
    d["mode"] = "bogus"
    bad.write_text(json.dumps(d))
    with pytest.raises(FilterError):
        UtilizationFilter.load(bad)


def test_decision_to_dict_is_json_safe() -> None:
    obs = synthetic_observations(25, seed=3)
    flt = DominanceFilter(min_fit=20, estimator_params=FAST).fit(obs)
    d = flt.admit(dataclasses.replace(obs[0].measurement, utilization=float("nan")), [])
    out = d.to_dict()
    assert out["utilization"] is None
    json.dumps(out, allow_nan=False)
