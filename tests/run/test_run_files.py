"""Run files: the candidate table round-trips, the front is marked, evaluations are numbered."""

from __future__ import annotations

import json

import pytest

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.run import files as run_files
from nasenergy.run.objectives import objectives_for


def _rows():
    base = {"state": "COMPLETE", "arch": "a", "canonical": "c", "accuracy_source": "recorded"}
    return [
        {**base, "trial_number": 0, "outcome": "evaluated", "accuracy_pct": 90.0, "energy_j_per_img": 2e-4,
         "datetime_complete": "2026-01-01T00:00:03"},
        {**base, "trial_number": 1, "outcome": "evaluated", "accuracy_pct": 80.0, "energy_j_per_img": 1e-4,
         "datetime_complete": "2026-01-01T00:00:01"},
        {**base, "trial_number": 2, "outcome": "evaluated", "accuracy_pct": 70.0, "energy_j_per_img": 3e-4,
         "datetime_complete": "2026-01-01T00:00:02"},
        {**base, "trial_number": 3, "outcome": "duplicate", "duplicate_of": 0, "accuracy_pct": 90.0,
         "energy_j_per_img": 2e-4},
        {**base, "trial_number": 4, "state": "PRUNED", "outcome": "filtered", "filter_admit": False,
         "utilization": 0.01, "measure_source": "modelled"},
    ]


def test_write_and_read_back(tmp_path):
    rows = _rows()
    run_files.write_tables(tmp_path, rows, objectives_for(["accuracy", "energy"]))
    back = run_files.read_candidates(tmp_path / run_files.CANDIDATES_CSV)
    assert [r["trial_number"] for r in back] == [0, 1, 2, 3, 4]
    assert [r["evaluation_number"] for r in back] == [3, 1, 2, None, None]  # completion order
    assert [r["on_front"] for r in back] == [True, True, False, False, False]  # duplicates never count
    assert back[4]["filter_admit"] is False and back[4]["accuracy_pct"] is None
    assert back[0]["energy_j_per_img"] == 2e-4  # floats survive exactly
    front = run_files.read_candidates(tmp_path / run_files.FRONT_CSV)
    assert [r["trial_number"] for r in front] == [0, 1]


def test_load_run_and_its_errors(tmp_path):
    with pytest.raises(DataNotFoundError):
        run_files.load_run(tmp_path / "missing")
    with pytest.raises(DataNotFoundError):
        run_files.load_run(tmp_path)
    (tmp_path / run_files.CANDIDATES_CSV).write_text("a,b\n1,2\n")
    with pytest.raises(UsageError, match="not a nasenergy candidates file"):
        run_files.load_run(tmp_path)
    rows = _rows()
    run_files.write_tables(tmp_path, rows, objectives_for(["accuracy", "energy"]))
    run_files.write_json(tmp_path / run_files.CONFIG_JSON, {"study_name": "s", "objectives": ["accuracy", "energy"]})
    rec = run_files.load_run(tmp_path)
    assert rec.name == "s" and [o.name for o in rec.objectives] == ["accuracy", "energy"]
    assert [r["trial_number"] for r in rec.evaluated] == [1, 2, 0]
    assert json.loads((tmp_path / run_files.CONFIG_JSON).read_text())["study_name"] == "s"


def _saved_run(tmp_path, **config):
    run_files.write_tables(tmp_path, _rows(), objectives_for(["accuracy", "energy"]))
    run_files.write_json(tmp_path / run_files.CONFIG_JSON,
                         {"study_name": "s", "objectives": ["accuracy", "energy"], "space": "tss",
                          "dataset": "cifar10", "budget": 3, **config})
    return tmp_path


def test_a_candidates_file_cut_mid_row_is_refused(tmp_path):
    run = _saved_run(tmp_path)
    path = run / run_files.CANDIDATES_CSV
    text = path.read_text()
    path.write_text(text[:-1])  # its line end lost: the last value may be cut short (70.418 to 70)
    with pytest.raises(UsageError, match="last line is cut short"):
        run_files.load_run(run)
    cut = text.rstrip("\n").rsplit(",", 5)[0] + "\n"  # whole line, but fields missing
    path.write_text(cut)
    with pytest.raises(UsageError, match="fewer fields than the header"):
        run_files.load_run(run)


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("space", "xyz", "space 'xyz' is none of"),
    ("dataset", "mnist", "dataset 'mnist' is none of"),
    ("budget", 0, "budget must be a positive whole number"),
    ("budget", "10", "budget must be a positive whole number"),
    ("budget", True, "budget must be a positive whole number"),
])
def test_a_config_with_an_unknown_space_dataset_or_bad_budget_is_refused(tmp_path, field, value, needle):
    run = _saved_run(tmp_path, **{field: value})
    with pytest.raises(UsageError, match=needle):
        run_files.load_run(run)


def test_a_file_that_cannot_be_written_is_one_line_and_keeps_its_old_content(tmp_path, monkeypatch):
    import errno

    from nasenergy.errors import OutputError

    a_file = tmp_path / "a_file"
    a_file.write_text("mine\n")
    with pytest.raises(OutputError, match="cannot write .*a_file/report.md: Not a directory"):
        run_files.write_text_atomic(a_file / "report.md", "text")
    target = tmp_path / "report.md"
    target.write_text("old\n")

    def full_disk(fd, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_files.os, "fdopen", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        run_files.write_text_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "report.md"]  # no temporary file left
