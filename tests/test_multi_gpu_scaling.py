"""experiments/multi_gpu_scaling.py on the CPU with fake boards: the exact budget, no duplicate,
each worker's start-up and board; a clean refusal when fewer GPUs are visible than asked for."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "experiments" / "multi_gpu_scaling.py"


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **env}
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=full, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def scaling(load_experiment):
    return load_experiment("multi_gpu_scaling")


def test_default_worker_counts_double_up_to_every_gpu(scaling):
    assert scaling.default_workers(1) == [1]
    assert scaling.default_workers(6) == [1, 2, 4, 6]
    assert scaling.default_workers(8) == [1, 2, 4, 8]


def test_fewer_gpus_than_asked_is_refused_in_one_line(tmp_path):
    done = _run(["--hardware", "cuda", "--workers-list", "1,2", "--out", str(tmp_path / "r")],
                CUDA_VISIBLE_DEVICES="0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: 2 workers need 2 GPUs, and 1 are visible (0); give --workers-list up to 1, or --share-gpus "
        "for a smoke test of the pinning"]
    assert not (tmp_path / "r" / "scaling.csv").exists()
    done = _run(["--hardware", "cuda", "--out", str(tmp_path / "r")], CUDA_VISIBLE_DEVICES="")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no GPU is visible" in done.stderr


def test_a_fake_two_worker_run_spends_the_exact_budget_and_times_each_start_up(tmp_path):
    out = tmp_path / "results"
    done = _run(["--hardware", "fake", "--budget", "6", "--workers-list", "1,2", "--dvfs", "none",
                 "--out", str(out), "--work", str(tmp_path / "work")])
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((out / "scaling.csv").open()))
    assert [(r["storage"], r["workers"]) for r in rows] == [("journal", "1"), ("journal", "2")]
    for r in rows:
        assert r["exact_budget"] == "True" and r["evaluated"] == "6" and r["trials_running"] == "0"
        assert r["duplicate_evaluations"] == "0" and r["networks_measured_twice"] == "0"
        assert float(r["candidates_per_s"]) > 0 and r["source"] == "measured" and r["gpus_shared"] == "False"
    assert rows[0]["speedup"] == "1" and float(rows[1]["efficiency"]) == pytest.approx(float(rows[1]["speedup"]) / 2, rel=1e-3)
    starts = list(csv.DictReader((out / "startup.csv").open()))
    # a worker that started after the budget was spent has no first candidate, hence no row
    ranks = sorted((s["workers"], s["rank"]) for s in starts)
    assert ranks[0] == ("1", "0") and set(ranks[1:]) <= {("2", "0"), ("2", "1")} and len(ranks) >= 2
    for s in starts:
        parts = [float(s[k]) for k in ("spawn_to_factory_s", "factory_s", "factory_to_first_candidate_s")]
        assert all(p >= 0 for p in parts)
        assert float(s["spawn_to_first_candidate_s"]) == pytest.approx(sum(parts), rel=2e-3, abs=2e-3)  # 4 digits written
    # each worker measured on its own fake board, and the candidates say which
    run = next((tmp_path / "work").glob("journal-n2-*"))
    boards = {r["worker"]: r["measure_gpu_uuid"] for r in csv.DictReader((run / "candidates.csv").open())
              if r["measure_gpu_uuid"]}
    assert len(set(boards.values())) == len(boards) and set(boards.values()) <= {"GPU-fake-0000", "GPU-fake-0001"}


def test_appended_rows_take_their_speed_up_from_an_earlier_one_worker_row(scaling):
    base = {"storage": "journal", "hardware": "cuda", "budget": "50", "seed": "0", "workers": "1",
            "gpus_shared": "False", "candidates_per_s": "2.0"}
    rows = [base, {**base, "workers": "4", "candidates_per_s": "7.0"},
            {**base, "workers": "2", "gpus_shared": "True", "candidates_per_s": "3.0"},
            {**base, "workers": "2", "seed": "1", "candidates_per_s": "3.0"}]
    scaling._speedups(rows)
    assert rows[1]["speedup"] == pytest.approx(3.5) and rows[1]["efficiency"] == pytest.approx(0.875)
    assert rows[2].get("speedup") is None and rows[3].get("speedup") is None
