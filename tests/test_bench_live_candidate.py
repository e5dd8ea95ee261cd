"""experiments/bench_live_candidate.py on the CPU with a fake meter: the files, the per-network
comparison against the first setting, a clean stop at the time limit, and the GPU-only refusal."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "experiments" / "bench_live_candidate.py"


@pytest.fixture(scope="module")
def bench(load_experiment):
    return load_experiment("bench_live_candidate")


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_networks_are_distinct_deployed_networks_that_can_learn(bench):
    from search_spaces import get_space

    tss = get_space("tss")
    archs = bench.pick_networks(tss, 30, seed=3)
    assert len({tss.deployed_key(a) for a in archs}) == 30
    assert all(tss.output_depends_on_input(a) for a in archs)
    assert bench.pick_networks(tss, 5, seed=3) == archs[:5]


def test_a_run_on_a_fake_meter_writes_the_comparison(bench, tmp_path):
    from nasenergy.testing import FakeMeter

    boards = {"fast": FakeMeter(), "fast:energy_window_s=0.38": FakeMeter.board(1, throughput_factor=1.1)}
    out = tmp_path / "out"
    assert bench.main(["--networks", "2", "--repeats", "2", "--setting", "fast", "--setting",
                       "fast:energy_window_s=0.38", "--out", str(out)],
                      make_meter=lambda s: boards[s.name]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "measurements.csv", "networks.csv", "summary.csv"]
    rows = _read(out / "measurements.csv")
    assert len(rows) == 2 * 2 * 2 and {r["order"] for r in rows} == {"0", "1"}
    assert all(float(r["wall_s"]) >= float(r["measure_cost_s"]) for r in rows)
    summary = {r["setting"]: r for r in _read(out / "summary.csv")}
    assert float(summary["fast"]["throughput_rel_diff_abs_max"]) == 0.0
    assert float(summary["fast:energy_window_s=0.38"]["throughput_rel_diff_median"]) == pytest.approx(0.1, rel=1e-3)
    assert summary["fast"]["networks_within_energy_cv"] == "2"
    assert "| `fast` |" in (out / "README.md").read_text()


def test_the_time_limit_stops_between_networks(bench, tmp_path):
    from nasenergy.testing import FakeMeter

    out = tmp_path / "out"
    assert bench.main(["--networks", "3", "--repeats", "2", "--setting", "fast", "--time-limit-s", "0",
                       "--out", str(out)], make_meter=lambda s: FakeMeter()) == 0
    assert {r["network"] for r in _read(out / "measurements.csv")} == {"0"}
    assert "Stopped by --time-limit-s" in (out / "README.md").read_text()


def test_without_a_gpu_or_with_a_bad_setting_it_exits_2_in_one_line(tmp_path):
    for extra in (["--setting", "quick"], ["--repeats", "1"], []):
        done = subprocess.run([sys.executable, str(SCRIPT), "--networks", "1", "--out", str(tmp_path), *extra],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(SCRIPT.parent.parent),
                                                                               "CUDA_VISIBLE_DEVICES": ""})
        if extra == [] and "needs a CUDA GPU" not in done.stderr:
            continue  # a machine with a GPU runs it
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
