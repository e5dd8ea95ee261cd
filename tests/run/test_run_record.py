"""The typed scored figures of a candidate: stored form, read back, picked by objective."""

from __future__ import annotations

import dataclasses

import pytest

from nasenergy.errors import UsageError
from nasenergy.objectives import OBJECTIVES
from nasenergy.run.record import ScoredFigures


def _figures(**over):
    base = dict(accuracy_pct=91.5, throughput_img_per_s=12000.0, energy_j_per_img=0.002,
                throughput_source="measured", energy_source="measured")
    return ScoredFigures(**(base | over))


def test_every_objective_column_is_a_scored_figure():
    assert {o.column for o in OBJECTIVES.values()} <= set(ScoredFigures.field_names())


def test_values_follow_the_objectives_order():
    f = _figures()
    objs = [OBJECTIVES["energy"], OBJECTIVES["accuracy"], OBJECTIVES["throughput"]]
    assert f.values(objs) == [0.002, 91.5, 12000.0]


def test_the_stored_form_reads_back_equal_and_is_frozen():
    f = _figures()
    assert ScoredFigures.from_attr(f.as_attr()) == f
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.accuracy_pct = 1.0  # type: ignore[misc]


def test_a_missing_energy_is_refused_only_when_energy_is_an_objective():
    f = _figures(energy_j_per_img=None, energy_source=None)
    assert f.values([OBJECTIVES["accuracy"], OBJECTIVES["throughput"]]) == [91.5, 12000.0]
    with pytest.raises(UsageError, match="energy"):
        f.values([OBJECTIVES["energy"]])


def test_an_older_stored_form_without_sources_reads_and_a_broken_one_is_refused():
    old = ScoredFigures.from_attr({"accuracy_pct": 90, "throughput_img_per_s": 5.0, "energy_j_per_img": 0.1})
    assert old.throughput_source == "" and old.energy_source is None and old.accuracy_pct == 90.0
    with pytest.raises(UsageError, match="accuracy_pct"):
        ScoredFigures.from_attr({"throughput_img_per_s": 5.0})
