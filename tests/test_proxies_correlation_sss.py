"""experiments/proxies_correlation_sss.py on a tiny table."""

import csv
import math

import numpy as np
import pytest

from nasenergy.proxies.table import TABLE_COLUMNS, TABLE_PROXIES


def _write_table(path, mod, indices, rng):
    acc = mod.read_accuracy()
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        for i in indices:
            row = {c: "0" for c in TABLE_COLUMNS} | {"dataset": "ImageNet16-120", "arch_index": str(i), "arch": "x",
                                                   "reason": "", "device": "cpu", "data": "gaussian"}
            row |= {p: repr(float(rng.standard_normal())) for p in TABLE_PROXIES}
            row["synflow"] = repr(acc[i]["imagenet16_test_acc_90ep"])  # a perfect predictor of test accuracy
            row["params"] = repr(-acc[i]["imagenet16_test_acc_90ep"])  # a perfectly wrong one
            w.writerow(row)


def test_correlations_of_a_tiny_sss_table(load_experiment, tmp_path):
    mod = load_experiment("proxies_correlation_sss")
    profiled = sorted(mod.read_utilization()["3x16x16"])
    indices = profiled[:40] + [i for i in range(0, 32768, 997) if i not in profiled][:20]
    _write_table(tmp_path / "t.csv", mod, indices, np.random.default_rng(0))
    assert mod.main(["--table", str(tmp_path / "t.csv"), "--out", str(tmp_path / "out"), "--draws", "20"]) == 0
    with open(tmp_path / "out" / "correlations.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["dataset"] for r in rows} == {"ImageNet16-120"}
    assert len(rows) == 2 * 2 * len(mod.PREDICTORS)

    def one(predictor, accuracy="test_90ep", subset="all"):
        return next(r for r in rows if r["predictor"] == predictor and r["accuracy"] == accuracy
                    and r["subset"] == subset)

    assert float(one("synflow")["spearman_rho"]) == pytest.approx(1.0)
    assert float(one("params")["spearman_rho"]) == pytest.approx(-1.0)
    assert float(one("synflow", "valid_90ep")["spearman_rho"]) < 1.0  # validation is another column
    assert int(one("synflow")["n_networks"]) == 60
    assert int(one("utilization_fp16")["n_networks"]) == 40  # only the 16x16 profile rows count
    assert all(math.isfinite(float(r["spearman_rho"])) for r in rows)
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "## ImageNet16-120" in readme and "## cifar10" not in readme


def test_a_missing_sss_table_is_a_one_line_error(load_experiment, tmp_path, capsys):
    mod = load_experiment("proxies_correlation_sss")
    assert mod.main(["--table", str(tmp_path / "none.csv.gz"), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: no proxy table")
