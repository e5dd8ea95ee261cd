"""The cheap measurement columns an accuracy model reads: `cheap_features` subsets and
`DominanceFilter(cheap_columns=...)`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from nasenergy.filter import DominanceFilter, FilterError, ScaledBound, UtilizationFilter, synthetic_observations
from nasenergy.filter.features import (
    CHEAP_FEATURE_GROUPS,
    CHEAP_FEATURE_NAMES,
    candidate_features,
    cheap_features,
    check_cheap_columns,
    feature_matrix,
)

EXACT = ScaledBound(energy_factor=1.0, noise_sigmas=0.0)
SIZE = CHEAP_FEATURE_GROUPS["size"]


def test_the_groups_split_the_five_columns():
    together = [c for g in CHEAP_FEATURE_GROUPS.values() for c in g]
    assert sorted(together) == sorted(CHEAP_FEATURE_NAMES) and len(together) == 5


def test_a_subset_is_the_matching_columns_of_the_full_vector():
    m = synthetic_observations(1, seed=0)[0].measurement
    full = cheap_features(m)
    assert np.array_equal(cheap_features(m, CHEAP_FEATURE_NAMES), full)
    cols = check_cheap_columns(["log10_params", "log10_flops_per_img"])  # any order given: the canonical one
    assert cols == SIZE
    idx = [CHEAP_FEATURE_NAMES.index(c) for c in cols]
    assert np.array_equal(cheap_features(m, cols), full[idx])
    assert candidate_features(m, [7.0], cols).tolist() == [*full[idx], 7.0]
    assert cheap_features(m, ()).shape == (0,)


@pytest.mark.parametrize("bad", [["flops"], ["utilization", "utilization"]])
def test_unknown_or_repeated_columns_are_refused(bad):
    with pytest.raises(FilterError):
        check_cheap_columns(bad)
    with pytest.raises(FilterError):
        DominanceFilter(cheap_columns=bad)


def test_a_string_is_not_a_list_of_columns():
    with pytest.raises(FilterError, match="list of column names"):
        DominanceFilter(cheap_columns="utilization")


def _upper_bounds(flt: DominanceFilter, cands) -> list[float]:
    return [flt.predict_accuracy(o.measurement).upper for o in cands]


def _with_other_measured_figures(obs):
    """The same candidates with utilization, throughput and energy changed (sizes kept)."""
    return [dataclasses.replace(o, measurement=dataclasses.replace(
        o.measurement, utilization=1.0 - o.measurement.utilization,
        throughput_img_per_s=o.measurement.throughput_img_per_s * 3.0)) for o in obs]


def test_a_size_only_model_ignores_the_measured_figures():
    train, cands = synthetic_observations(60, seed=1), synthetic_observations(20, seed=2)
    size = DominanceFilter(min_fit=20, energy_bound=EXACT, cheap_columns=SIZE).fit(train)
    assert feature_matrix(train, size.cheap_columns).shape == (60, 2)
    moved = _with_other_measured_figures(cands)
    assert _upper_bounds(size, cands) == _upper_bounds(size, moved)
    # the default model reads them (so the comparison above can fail)
    full = DominanceFilter(min_fit=20, energy_bound=EXACT).fit(train)
    assert _upper_bounds(full, cands) != _upper_bounds(full, moved)


def test_the_default_columns_are_the_five_and_decide_as_before():
    train, cands = synthetic_observations(60, seed=3), synthetic_observations(20, seed=4)
    default = DominanceFilter(min_fit=20, energy_bound=EXACT).fit(train)
    named = DominanceFilter(min_fit=20, energy_bound=EXACT, cheap_columns=list(reversed(CHEAP_FEATURE_NAMES))).fit(train)
    assert default.cheap_columns == CHEAP_FEATURE_NAMES == named.cheap_columns
    assert _upper_bounds(default, cands) == _upper_bounds(named, cands)


def test_the_columns_are_saved_and_restored(tmp_path):
    flt = DominanceFilter(min_fit=20, energy_bound=EXACT, cheap_columns=SIZE).fit(synthetic_observations(40, seed=5))
    loaded = UtilizationFilter.load(flt.save(tmp_path / "f.json"))
    assert loaded.cheap_columns == SIZE
    cands = synthetic_observations(10, seed=6)
    assert _upper_bounds(loaded, cands) == _upper_bounds(flt, cands)
    d = flt.to_dict()
    del d["options"]["cheap_columns"]  # a filter saved before the option: all five
    assert UtilizationFilter.from_dict(d).cheap_columns == CHEAP_FEATURE_NAMES


def test_no_column_and_no_extra_features_is_refused_with_extra_features_it_learns():
    obs = synthetic_observations(30, seed=7)
    with pytest.raises(FilterError, match="nothing to learn"):
        DominanceFilter(min_fit=20, cheap_columns=()).fit(obs)
    with_x = [dataclasses.replace(o, features=(o.measurement.utilization,)) for o in obs]
    flt = DominanceFilter(min_fit=20, energy_bound=EXACT, cheap_columns=()).fit(with_x)
    assert flt.predict_accuracy(obs[0].measurement, features=[0.5]) is not None
