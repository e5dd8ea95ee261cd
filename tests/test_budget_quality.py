"""experiments/budget_quality.py: the declared held-out seeds, one-line errors for bad flags, and
one tiny run of both rivals end to end (slow)."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "budget_quality.py"


@pytest.fixture(scope="module")
def bq(load_experiment):
    return load_experiment("budget_quality")


def test_the_seeds_are_held_out_and_the_rivals_are_search_quality_s(bq, load_experiment):
    sq = load_experiment("search_quality")
    assert not set(bq.HELD_OUT_SEEDS) & set(range(10))  # never the tuning seeds
    assert set(bq.METHODS) <= set(sq.METHODS)


@pytest.mark.parametrize("args", [["--budgets", "x"], ["--budgets", "0"], ["--seeds", "x-y"], ["--jobs", "0"],
                                  ["--dataset", "mnist"]])
def test_bad_flags_give_one_line_and_exit_2(args, tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_tiny_run_writes_both_rivals_and_the_paired_difference(tmp_path):
    out = tmp_path / "bq"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--budgets", "12", "--seeds", "100", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["method"]: r for r in csv.DictReader((out / "quality.csv").open())}
    assert set(rows) == {"tpe", "default"}
    for r in rows.values():
        assert r["full_budget_runs"] == "1" and 0 < float(r["quality_at_budget"]) <= 1
    diff = float(rows["default"]["quality_at_budget"]) - float(rows["tpe"]["quality_at_budget"])
    assert float(rows["default"]["diff_vs_tpe"]) == pytest.approx(diff, abs=2e-4)
    assert (out / "runs" / "b12" / "default_s100.csv.gz").exists() and "| cifar10 | 12 |" in (out / "README.md").read_text()
    again = subprocess.run([sys.executable, str(SCRIPT), "--budgets", "12", "--seeds", "100", "--out", str(out)],
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "runs to do" not in again.stdout  # resumed: nothing run twice


def test_candidate_bounds_read_the_gaps_between_evaluations(bq):
    # evaluations at trials 0, 1, 5, 6 (candidates 2-4 were not evaluated)
    assert bq.candidate_bounds([0, 1, 5, 6], window=2) == (4, 2.5)  # trials 2-5 brought 1: 4; (5-0)/2
    assert bq.candidate_bounds([0, 1, 2], window=2) == (1, 1.0)
    assert bq.candidate_bounds([3], window=2) == (4, 0.0)  # fewer evaluations than the window
    assert bq.candidate_bounds([], window=2) == (0, 0.0)
