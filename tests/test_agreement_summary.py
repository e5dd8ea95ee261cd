"""``experiments/agreement_summary.py``: the summary of re-measured samples and their comparison."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

FIELDS = ("precision", "canonical_arch", "throughput_old", "throughput_new", "throughput_rel_diff",
          "energy_old", "energy_new", "energy_rel_diff", "measured_old", "measured_new", "gpu_uuid_old", "gpu_uuid_new")


@pytest.fixture
def mod(load_experiment):
    return load_experiment("agreement_summary")


def _sample(folder: Path, energy_factor: float, outlier: float = 1.0, n: int = 20) -> Path:
    folder.mkdir()
    with open(folder / "agreement.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for i in range(n):
            t, e = 1000.0 + 10 * i, 0.01 * (1 + i)
            e_new = e * energy_factor * (outlier if i == 3 else 1.0)
            w.writerow({"precision": "fp16", "canonical_arch": f"a{i}", "throughput_old": t, "throughput_new": t,
                        "throughput_rel_diff": 0.0, "energy_old": e, "energy_new": e_new,
                        "energy_rel_diff": e_new / e - 1, "measured_old": "x", "measured_new": "y",
                        "gpu_uuid_old": "GPU-rec", "gpu_uuid_new": "GPU-new"})
    return folder


def test_describe_gives_signed_median_and_worst(mod) -> None:
    d = mod.describe_pct(np.array([-0.02, 0.01, 0.03]))
    assert d["rows"] == 3 and d["signed_median_pct"] == pytest.approx(1.0)
    assert d["median_abs_pct"] == pytest.approx(2.0) and d["worst_abs_pct"] == pytest.approx(3.0)


def test_a_planted_board_offset_shows_between_samples(mod, tmp_path) -> None:
    a = mod.read_sample(_sample(tmp_path / "a", 1.00))
    b = mod.read_sample(_sample(tmp_path / "b", 0.97))
    energy = [line for line in mod.between_lines(("a", "b"), a, b) if "| energy |" in line]
    assert energy == ["| b / a | fp16 | energy | 20 | 3.00 % | -3.00 % (-3.00 .. -3.00 %) | 3.00 % | 1.0000 |"]


def test_a_row_both_samples_disagree_with_is_flagged_as_the_recorded_outlier(mod, tmp_path) -> None:
    a = mod.read_sample(_sample(tmp_path / "a", 1.00, outlier=0.88))
    b = mod.read_sample(_sample(tmp_path / "b", 0.99, outlier=0.90))
    flagged = mod.flagged_lines(["a", "b"], [a, b], 6.0)
    assert len(flagged) == 1 and "`a3`" in flagged[0] and "the recorded row is off" in flagged[0]
    one_sided = mod.flagged_lines(["a", "b"], [a, mod.read_sample(_sample(tmp_path / "c", 1.0))], 6.0)
    assert len(one_sided) == 1 and "the recorded row is off" not in one_sided[0]


def test_cli_prints_both_tables_and_rejects_a_missing_sample(mod, tmp_path, capsys) -> None:
    a, b = _sample(tmp_path / "a", 1.0), _sample(tmp_path / "b", 1.02)
    assert mod.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "| a | fp16 | energy | 20 | 0.00 %" in out and "| b / a | fp16 | throughput | 20 | 0.00 %" in out
    with pytest.raises(SystemExit, match="not found"):
        mod.main([str(tmp_path / "missing")])
    with pytest.raises(SystemExit):
        mod.main(["--flag-pct", "0", str(a)])


def test_a_file_that_is_not_an_agreement_table_is_one_line(mod, tmp_path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "agreement.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match="lacks the column"):
        mod.main([str(tmp_path / "x")])
    sample = _sample(tmp_path / "y", 1.0)
    with open(sample / "agreement.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["energy_new"] = "oops"
    with open(sample / "agreement.csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(SystemExit, match="not a number"):
        mod.main([str(sample)])
