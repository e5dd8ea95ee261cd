"""A run's front is computed once (`RunFront.mark`) and read back as its files mark it."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.run.files import load_run, write_json, write_tables
from nasenergy.run.front import RunFront
from nasenergy.run.objectives import objectives_for
from nasenergy.run.record import CandidateRecord

OBJS = objectives_for(["accuracy", "throughput"])


def _row(n: int, outcome: str, acc: float | None = None, thr: float | None = None, done: str = "") -> dict:
    return {"trial_number": n, "outcome": outcome, "arch": f"a{n}", "canonical": f"c{n}", "network": f"c{n}",
            "accuracy_pct": acc, "throughput_img_per_s": thr, "accuracy_source": "recorded" if acc else None,
            "throughput_source": "measured" if thr else None, "datetime_complete": done or None}


ROWS = [
    _row(0, "evaluated", 90.0, 100.0, "2026-01-01T00:00:03"),
    _row(1, "evaluated", 80.0, 300.0, "2026-01-01T00:00:01"),
    _row(2, "evaluated", 70.0, 200.0, "2026-01-01T00:00:02"),  # dominated by 1
    _row(3, "filtered"),
    {**_row(4, "duplicate"), "duplicate_of": 0, "network": "c0"},
    _row(5, "evaluated", 10.0, 5000.0, "2026-01-01T00:00:04"),  # the all-skip network: fast, useless
]


def test_mark_numbers_the_evaluations_by_completion_and_marks_the_front_once():
    run = RunFront.mark(ROWS, OBJS)
    numbers = {r.trial_number: r.evaluation_number for r in run.records}
    assert numbers == {0: 3, 1: 1, 2: 2, 3: None, 4: None, 5: 4}
    assert [r.trial_number for r in run.evaluated] == [1, 2, 0, 5]
    assert [r.trial_number for r in run.members] == [0, 1, 5]  # most accurate first
    assert len({r.network for r in run.members}) == len(run.members)  # no network twice


def test_a_floor_keeps_a_network_below_it_off_the_front():
    run = RunFront.mark(ROWS, OBJS, min_accuracy=50.0)
    assert [r.trial_number for r in run.members] == [0, 1]


def test_the_quality_follows_the_declared_floor():
    rows = [{**r, "measure_throughput_img_per_s": r["throughput_img_per_s"]} for r in ROWS]
    assert RunFront.mark(rows, OBJS, config={"search_metric": "x-test/200"}).quality is None  # no floor
    median = RunFront.mark(rows, OBJS).region  # no --min-accuracy: the median of the space
    assert median is not None and "median" in median.floor_from
    run = RunFront.mark(rows, OBJS, min_accuracy=50.0, config={"min_accuracy": 50.0})
    assert run.region is not None and run.region.accuracy_floor_pct == 50.0
    assert run.quality is not None and run.quality.in_region == 3  # trials 0, 1, 2
    # trial 0 sits on the throughput reference (the slowest measured): no share of the volume
    assert run.region.throughput_ref_img_per_s == 100.0 and run.quality.front_size == 1


def test_the_files_hold_the_marks_and_read_back_to_the_same_records(tmp_path):
    written = write_tables(tmp_path, ROWS, OBJS)
    write_json(tmp_path / "config.json", {"objectives": ["accuracy", "throughput"], "study_name": "t"})
    run = load_run(tmp_path)
    assert run.rows == written.records and all(isinstance(r, CandidateRecord) for r in run.rows)
    assert [r.trial_number for r in run.front] == [0, 1, 5]
    front_csv = (tmp_path / "pareto_front.csv").read_text().splitlines()
    assert len(front_csv) == 1 + 3


def test_a_record_is_frozen_and_refuses_an_unknown_column_or_a_wrong_type():
    r = CandidateRecord(ROWS[0])
    with pytest.raises(TypeError):
        r["accuracy_pct"] = 1.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        r.accuracy_pct = 1.0  # type: ignore[attr-defined]
    with pytest.raises(UsageError, match="no column 'accuracy'"):
        CandidateRecord({**ROWS[0], "accuracy": 1.0})
    with pytest.raises(UsageError, match="trial_number: expected int"):
        CandidateRecord({**ROWS[0], "trial_number": "seven"})
    assert r.replace(accuracy_pct=91).scored.accuracy_pct == 91.0
    assert CandidateRecord(ROWS[3]).scored is None  # not evaluated: no scored figures
