"""experiments/proxies_correlation.py on a tiny table."""

import csv
import math

import numpy as np
import pytest

from nasenergy.proxies.table import TABLE_COLUMNS, TABLE_PROXIES
from search_spaces import get_space


def test_correlations_of_a_tiny_table(load_experiment, tmp_path):
    mod = load_experiment("proxies_correlation")
    space = get_space("tss")
    acc = mod.read_accuracy()["cifar10_test_acc_200ep"]
    reps = [space.deployed_representative(space.arch_at(i)) for i in range(0, 2000, 97)]
    reps = sorted({space.index(r) for r in reps})
    rep_of = np.array([space.index(space.deployed_representative(a)) for a in space.enumerate()])
    rng = np.random.default_rng(0)
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        for i in reps:
            row = {c: "0" for c in TABLE_COLUMNS} | {"dataset": "cifar10", "arch_index": str(i), "arch": "x",
                                                   "reason": "", "device": "cpu", "data": "gaussian"}
            row |= {p: repr(float(rng.standard_normal())) for p in TABLE_PROXIES}
            row["synflow"] = repr(float(acc[rep_of == i].mean()))  # a perfect predictor at network level
            row["jacov"] = "-inf" if i == reps[0] else row["jacov"]
            w.writerow(row)
    assert mod.main(["--table", str(path), "--out", str(tmp_path / "out"), "--draws", "20", "--note", "a test"]) == 0
    with open(tmp_path / "out" / "correlations.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["dataset"] for r in rows} == {"cifar10"}
    assert len(rows) == 2 * 2 * 2 * len(mod.PREDICTORS)
    net = next(r for r in rows if r["predictor"] == "synflow" and r["epochs"] == "200" and r["subset"] == "all"
               and r["level"] == "network")
    assert float(net["spearman_rho"]) == pytest.approx(1.0) and int(net["n_networks"]) == len(reps)
    assert int(net["n_cells"]) == int((np.isin(rep_of, reps)).sum())
    assert all(math.isfinite(float(r["spearman_rho"])) for r in rows if r["predictor"] == "jacov")
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "**a test**" in readme and "## cifar10" in readme and "## cifar100" not in readme
    assert "| utilization_fp16_16x16" not in readme  # ImageNet16-120's own input counts for that dataset only
    assert {r["n_networks"] for r in rows if r["predictor"].endswith("_16x16")} == {"0"}


def test_a_missing_table_is_a_one_line_error(load_experiment, tmp_path, capsys):
    mod = load_experiment("proxies_correlation")
    assert mod.main(["--table", str(tmp_path / "none.csv.gz"), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: no proxy table")
