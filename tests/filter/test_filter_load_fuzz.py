"""`UtilizationFilter.load` on malformed files: a `FilterError` of one line, never a Python error.

Saved filters of every mode are mutated at a random place (a value replaced by arbitrary JSON, or
a key removed); the loaded filter must also still decide without a Python error."""

from __future__ import annotations

import copy
import functools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from json_mutation import JSON_VALUES, json_paths, mutate
from nasenergy.errors import NasEnergyError
from nasenergy.filter import (
    DominanceFilter,
    FilterError,
    PassThroughFilter,
    ThresholdFilter,
    UtilizationFilter,
    synthetic_observations,
)

FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@functools.cache
def _saved() -> tuple[dict[str, Any], ...]:
    obs = synthetic_observations(14, seed=1)
    filters = [
        ThresholdFilter(target_recall=0.8, min_fit=5).fit(obs),
        DominanceFilter(min_fit=5, n_folds=3, estimator_params={"n_estimators": 5}),
        PassThroughFilter().fit(obs[:3]),
    ]
    dominance = filters[1]
    for o in obs:
        dominance.observe(o.measurement, o.accuracy)
    dominance.admit(obs[0].measurement, np.array([[90.0, 1e5, 1e-4]]))  # fits its model
    return tuple(f.to_dict() for f in filters)




def _load_text(text: str) -> UtilizationFilter:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "filter.json"
        path.write_text(text)
        return UtilizationFilter.load(path)


def _check_usable_or_refused(text: str) -> None:
    try:
        flt = _load_text(text)
    except NasEnergyError as exc:
        assert isinstance(exc, FilterError) and "\n" not in str(exc)
        return
    measurement = synthetic_observations(1, seed=5)[0].measurement
    try:
        flt.admit(measurement, np.array([[90.0, 1e5, 1e-4]]))
    except NasEnergyError as exc:
        assert "\n" not in str(exc)


@FUZZ
@given(data=st.data())
def test_a_mutated_saved_filter_loads_or_is_refused_in_one_line(data):
    doc = copy.deepcopy(data.draw(st.sampled_from(_saved())))
    path = data.draw(st.sampled_from(json_paths(doc)))
    mutated = mutate(doc, path, data.draw(JSON_VALUES), delete=data.draw(st.booleans()))
    _check_usable_or_refused(json.dumps(mutated))


@FUZZ
@given(value=JSON_VALUES)
def test_any_json_document_loads_or_is_refused_in_one_line(value):
    _check_usable_or_refused(json.dumps(value))


@FUZZ
@given(raw=st.binary(max_size=200))
def test_any_bytes_are_refused_in_one_line(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "filter.json"
        path.write_bytes(raw)
        try:
            UtilizationFilter.load(path)
        except NasEnergyError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"mode": []}, "mode must be one of"),
        ({"mode": "other"}, "unknown filter mode"),
        ({"options": [1]}, "options must be a JSON object"),
        ({"observations": {}}, "observations must be a JSON array"),
        ({"state": {"calibration": {"threshold": "high"}}}, "calibration"),
    ],
)
def test_named_malformations(change, needle):
    doc = {**copy.deepcopy(_saved()[0]), **change}
    with pytest.raises(FilterError, match=needle) as ei:
        _load_text(json.dumps(doc))
    assert "\n" not in str(ei.value) and "filter.json" in str(ei.value)


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"n_estimators": 10**7}, "n_estimators = 10000000, must be an integer in [1, 5000]"),
        ({"n_estimators": 0}, "n_estimators = 0"),
        ({"n_estimators": True}, "n_estimators = True"),
        ({"n_estimators": 5.5}, "n_estimators = 5.5"),
        ({"max_depth": 10**6}, "max_depth"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"subsample": 2.0}, "subsample"),
    ],
)
def test_hyper_parameters_that_would_hang_or_break_the_load_are_refused(params, needle):
    doc = copy.deepcopy(_saved()[1])
    doc["options"]["estimator_params"] = params
    started = time.monotonic()
    with pytest.raises(FilterError) as ei:
        _load_text(json.dumps(doc))
    assert needle in str(ei.value) and "\n" not in str(ei.value)
    assert time.monotonic() - started < 30  # refused, not fitted


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(["n_estimators", "max_depth", "min_samples_leaf", "learning_rate", "subsample",
                            "n_folds", "min_fit", "refit_every"]),
       value=st.one_of(st.integers(-10**9, 10**9), st.floats(allow_nan=True, allow_infinity=True), st.booleans()))
def test_any_size_of_the_model_loads_quickly_or_is_refused_in_one_line(key, value):
    doc = copy.deepcopy(_saved()[1])
    if key in ("n_folds", "min_fit", "refit_every"):
        doc["options"][key] = value
    else:
        doc["options"]["estimator_params"] = {key: value}
    started = time.monotonic()
    _check_usable_or_refused(json.dumps(doc))
    assert time.monotonic() - started < 30, (key, value)
