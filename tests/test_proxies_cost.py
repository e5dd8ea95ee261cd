"""experiments/proxies_cost.py: the cost summary, live on a tiny sample and from a recorded table."""

import csv

import pytest

from nasenergy.proxies.table import TABLE_COLUMNS, TABLE_PROXIES


def test_costs_summarised_from_a_table(load_experiment, tmp_path, capsys):
    mod = load_experiment("proxies_cost")
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        for i in range(3):
            w.writerow({c: "0" for c in TABLE_COLUMNS} | {"dataset": "cifar10", "arch_index": str(i), "reason": "",
                                                       "device": "cpu"}
                       | {f"{p}_cost_s": str(float(i + 1)) for p in TABLE_PROXIES})
    assert mod.main(["--from-table", str(path), "--out", str(tmp_path), "--tag", "x"]) == 0
    with open(tmp_path / "summary_x.csv") as f:
        rows = {r["proxy"]: r for r in csv.DictReader(f)}
    assert float(rows["jacov"]["median_s"]) == 2.0
    assert float(rows["all_proxies"]["median_s"]) == 2.0 * len(TABLE_PROXIES)
    assert "build" not in rows


def test_live_costs_on_one_network(load_experiment, tmp_path, capsys):
    pytest.importorskip("torch")
    mod = load_experiment("proxies_cost")
    assert mod.main(["--n", "1", "--seed", "3", "--dataset", "ImageNet16-120", "--batch-size", "2",
                     "--out", str(tmp_path)]) == 0
    with open(tmp_path / "summary_cpu_ImageNet16-120.csv") as f:
        names = [r["proxy"] for r in csv.DictReader(f)]
    assert names == ["build", *TABLE_PROXIES, "all_proxies"]
