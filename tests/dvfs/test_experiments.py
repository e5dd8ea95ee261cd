"""The DVFS experiment scripts fail clearly on bad input and run on a small synthetic profile."""

from __future__ import annotations

import csv
import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np

from dvfs_helpers import make_measurement
from nasenergy.hardware.recorded import measurement_to_row, write_profile

ROOT = Path(__file__).resolve().parents[2]
SAVINGS = ROOT / "experiments" / "dvfs_h200_savings.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SAVINGS), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_missing_profile_is_a_clear_error(tmp_path) -> None:
    r = _run("--profile", str(tmp_path / "none.csv.gz"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.startswith("error: H200 profile not found") and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_savings_on_synthetic_profile(tmp_path) -> None:
    """Synthetic H200 rows (made-up numbers) exercise the whole pipeline."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(24):
        thr = float(rng.uniform(5e4, 9e5))
        power = float(rng.uniform(120, 650))
        m = make_measurement(device_name="NVIDIA H200", throughput_img_per_s=thr,
                             avg_power_w=power, energy_j_per_img=power / thr, source="recorded")
        rows.append(measurement_to_row(m, canonical_arch=f"|arch{i}|", arch_index=i,
                                       driver_version="fake", torch_version="fake",
                                       measured_at="2026-01-01T00:00:00Z"))
    profile = tmp_path / "p.csv.gz"
    write_profile(rows, profile)
    out = tmp_path / "out"
    r = _run("--profile", str(profile), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert {"per_cell.csv.gz", "summary.csv", "README.md", "savings_hist.png"} <= {
        p.name for p in out.iterdir()}
    summary = list(csv.DictReader((out / "summary.csv").open()))
    main = [s for s in summary if s["mode"] == "min-energy" and s["params"].startswith("a100")]
    assert main and int(main[0]["n_cells"]) == 24
    assert 0 < float(main[0]["saving_median"]) < 1
    assert int(main[0]["max_probes"]) <= 10 and int(main[0]["search_max_steps_off"]) <= 1
    cells = list(csv.DictReader(gzip.open(out / "per_cell.csv.gz", "rt")))
    assert all(c["source_best"] == "modelled" and c["source_default"] == "recorded" for c in cells)
    assert "EXTRAPOLATED" in (out / "README.md").read_text()


def test_too_few_cells(tmp_path) -> None:
    m = make_measurement(device_name="NVIDIA H200", source="recorded")
    rows = [measurement_to_row(m, canonical_arch="|a|", arch_index=0, driver_version="x",
                               torch_version="x", measured_at="")]
    write_profile(rows, tmp_path / "p.csv")
    r = _run("--profile", str(tmp_path / "p.csv"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "fewer than 20" in r.stderr


def test_per_cell_rows_of_one_cell_are_adjacent(load_experiment) -> None:
    """Every variant and mode of a cell sits in one run of rows (keeps the gzipped table small)."""
    module = load_experiment("dvfs_h200_savings")
    rows = []
    for i in range(module.MIN_CELLS):
        m = make_measurement(device_name="NVIDIA H200", source="recorded", throughput_img_per_s=1000.0 + 50 * i)
        rows.append(measurement_to_row(m, canonical_arch=f"|arch{i}|", arch_index=i, driver_version="x",
                                       torch_version="x", measured_at=""))
    h200 = module.shipped_params()["h200"]
    per_cell, summary = module.savings_tables(module._group_by_setting(rows), module._variants(h200))
    runs = [c["arch_index"] for k, c in enumerate(per_cell) if k == 0 or c["arch_index"] != per_cell[k - 1]["arch_index"]]
    assert len(runs) == len(set(runs)) == module.MIN_CELLS
    assert len(per_cell) == module.MIN_CELLS * len(summary)


def test_deployed_spread_on_synthetic_profile(tmp_path, load_experiment) -> None:
    """Synthetic H200 rows with GPM counters (made-up numbers): memory-bound rows save more."""
    module = load_experiment("dvfs_h200_deployed_spread")
    rng = np.random.default_rng(3)
    rows = []
    for i in range(module.MIN_CLASSES):
        thr, power = float(rng.uniform(5e4, 9e5)), 400.0
        m = make_measurement(device_name="NVIDIA H200", throughput_img_per_s=thr, avg_power_w=power,
                             energy_j_per_img=power / thr, source="recorded", counters_kind="gpm",
                             sm_util_pct=95.0 - 2.0 * i, dram_bw_util_pct=3.0 + 3.0 * i,
                             gpu_util_pct=100.0)
        rows.append(measurement_to_row(m, canonical_arch=f"|arch{i}|", arch_index=i, driver_version="x",
                                       torch_version="x", measured_at=""))
    write_profile(rows, tmp_path / "p.csv")
    out = tmp_path / "out"
    assert module.main(["--profile", str(tmp_path / "p.csv"), "--out", str(out)]) == 0
    summary = list(csv.DictReader((out / "summary.csv").open()))
    after = next(s for s in summary if s["variant"].startswith("compute share"))
    before = next(s for s in summary if s["variant"].startswith("power fraction"))
    assert int(after["n_classes"]) == module.MIN_CLASSES
    # same power for every row: without counters every class gets the same saving
    assert float(before["saving_max"]) - float(before["saving_min"]) < 1e-6
    assert float(after["saving_max"]) - float(after["saving_min"]) > 0.01
    cells = list(csv.DictReader(gzip.open(out / "per_class.csv.gz", "rt")))
    first, last = (next(c for c in cells if c["canonical_arch"] == a and c["variant"] == after["variant"])
                   for a in ("|arch0|", f"|arch{module.MIN_CLASSES - 1}|"))
    assert float(last["saving_frac"]) > float(first["saving_frac"])  # the DRAM-bound one
    assert all(c["source_optimum"] == "modelled (extrapolated)" for c in cells)
    assert "Partial" in (out / "README.md").read_text()
