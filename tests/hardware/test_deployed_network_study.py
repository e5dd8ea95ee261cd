"""The deployed-network study script: its summary is what its committed measurements say."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[2] / "results" / "deployed_network"


@pytest.fixture(scope="module")
def study(load_experiment):
    return load_experiment("deployed_network_study")


def test_the_committed_readme_is_the_summary_of_the_committed_measurements(study):
    with open(RESULTS / "measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 300
    readme = (RESULTS / "README.md").read_text()
    for line in study.summarize(rows):
        assert line in readme


def test_summarize_recomputes_from_its_input(study, tmp_path):
    with open(RESULTS / "measurements.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    half = study.summarize(rows[: len(rows) // 2])
    assert half != study.summarize(rows)  # a test that could fail: the figures come from the rows


def test_a_missing_csv_is_one_line_and_exit_2(study, capsys, tmp_path):
    assert study.main(["summarize", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
