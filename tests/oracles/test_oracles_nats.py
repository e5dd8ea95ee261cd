"""Tests of the NATS-Bench oracle on the official fixture (archs 0, 11, 284 have full records)."""

from __future__ import annotations

import bz2
import random
import shutil
from pathlib import Path

import pytest

from nasenergy.errors import ArchError, UsageError
from nasenergy.oracles import (
    AccuracyOracle,
    ArchNotInBenchmarkError,
    BenchmarkNotFoundError,
    CorruptBenchmarkError,
    MetricNotAvailableError,
    MetricSpec,
    Metrics,
    NatsBenchOracle,
    UnknownDatasetError,
)
from nasenergy.oracles.datasets import resolve
from nasenergy.oracles.nats import locate_nats

FIXTURE_ARCHS = (0, 11, 284)

TSS_DIR = "NATS-tss-v1_0-3ffb9-simple"
SPLIT_COLUMN = {"x-valid": "x_valid_acc", "x-test": "x_test_acc", "ori-test": "ori_test_acc"}
CELLS = [(d, s) for d in ("cifar10", "cifar100", "ImageNet16-120") for s in ("x-valid", "x-test", "ori-test")
         if not (d == "cifar10" and s == "x-test")]


@pytest.fixture(scope="module")
def oracle(torch_dir: Path) -> NatsBenchOracle:
    return NatsBenchOracle(torch_dir, "tss")


@pytest.fixture(scope="module")
def api(oracle: NatsBenchOracle):
    return oracle.api


def test_is_an_accuracy_oracle(oracle: NatsBenchOracle) -> None:
    assert isinstance(oracle, AccuracyOracle)
    assert oracle.space_name == "tss" and "fast mode" in oracle.describe()


@pytest.mark.parametrize("schedule", ["12", "200"])
@pytest.mark.parametrize(("dataset", "split"), CELLS)
def test_every_run_matches_the_official_records(oracle, truth, truth_seeds, dataset, split, schedule) -> None:
    metric = MetricSpec(split=split, schedule=schedule, trial="random")
    nats_dataset = resolve(dataset, split).nats_dataset
    for arch in FIXTURE_ARCHS:
        expected_seeds = truth_seeds[("tss", arch, schedule, nats_dataset)]
        seen = set()
        for seed in range(12):
            ev = oracle.query(arch, dataset, metric, seed=seed)
            run_seed = int(ev.trial.removeprefix("seed:"))
            seen.add(run_seed)
            row = truth[("tss", arch, schedule, nats_dataset, run_seed)]
            assert ev.accuracy_pct == pytest.approx(float(row[SPLIT_COLUMN[split]]), abs=1e-6)
            assert (ev.dataset, ev.split, ev.schedule) == (dataset, split, schedule)
        assert seen == set(expected_seeds)


@pytest.mark.parametrize(("dataset", "split"), CELLS)
def test_mean_over_runs_matches_the_official_records(oracle, truth, truth_seeds, dataset, split) -> None:
    nats_dataset = resolve(dataset, split).nats_dataset
    for arch in FIXTURE_ARCHS:
        seeds = truth_seeds[("tss", arch, "200", nats_dataset)]
        values = [float(truth[("tss", arch, "200", nats_dataset, s)][SPLIT_COLUMN[split]]) for s in seeds]
        ev = oracle.query(arch, dataset, MetricSpec(split, "200", "mean"))
        assert ev.accuracy_pct == pytest.approx(sum(values) / len(values), abs=1e-6)
        assert ev.trial == "mean"


def test_search_equals_simulate_train_eval(oracle, api) -> None:
    for seed in range(5):
        for dataset in ("cifar10", "cifar100", "ImageNet16-120"):
            for arch in FIXTURE_ARCHS:
                random.seed(seed)
                accuracy, _, cost_s, _ = api.simulate_train_eval(arch, dataset, hp="12", account_time=False)
                ev = oracle.evaluate(arch, dataset, seed=seed)
                assert (ev.accuracy_pct, ev.cost_s) == (accuracy, cost_s)
                assert ev.cost_source == "recorded" and ev.source == "recorded"


def test_cost_is_the_recorded_training_and_evaluation_time(oracle, api, truth) -> None:
    for arch in FIXTURE_ARCHS:
        for dataset in ("cifar10", "cifar100", "ImageNet16-120"):
            for schedule in ("12", "200"):
                ev = oracle.query(arch, dataset, MetricSpec("x-valid", schedule, "random"), seed=3)
                nats_dataset = resolve(dataset, "x-valid").nats_dataset
                run_seed = int(ev.trial.removeprefix("seed:"))
                row = truth[("tss", arch, schedule, nats_dataset, run_seed)]
                train_s = float(row["train_time_per_epoch_s"]) * int(schedule)
                info = api.get_more_info(arch, nats_dataset, hp=schedule, is_random=run_seed)
                assert ev.cost_s == pytest.approx(train_s + info["valid-per-time"], rel=1e-9)


def test_report_follows_the_nats_protocol(oracle, truth) -> None:
    ev = oracle.report(0, "cifar10")
    assert (ev.split, ev.schedule, ev.trial) == ("ori-test", "200", "mean")
    expected = [float(truth[("tss", 0, "200", "cifar10", s)]["ori_test_acc"]) for s in (777, 888, 999)]
    assert ev.accuracy_pct == pytest.approx(sum(expected) / 3, abs=1e-6)
    assert oracle.report(11, "imagenet16").split == "x-test"


def test_metrics_are_configurable(torch_dir: Path) -> None:
    metrics = Metrics(search=MetricSpec("x-valid", "200", "mean"), report=MetricSpec("ori-test", "12", "mean"))
    oracle = NatsBenchOracle(torch_dir, metrics=metrics)
    assert oracle.evaluate(284, "cifar100").schedule == "200"
    assert oracle.report(284, "cifar100").split == "ori-test"


def test_same_seed_same_results_and_global_random_untouched(torch_dir: Path) -> None:
    random.seed(1234)
    state = random.getstate()
    first = NatsBenchOracle(torch_dir, seed=7)
    second = NatsBenchOracle(torch_dir, seed=7)
    a = [first.evaluate(arch, "cifar10") for arch in FIXTURE_ARCHS * 4]
    assert random.getstate() == state
    random.seed(99)  # the global stream must not matter either
    b = [second.evaluate(arch, "cifar10") for arch in FIXTURE_ARCHS * 4]
    assert a == b
    assert first.evaluate(0, "cifar10", seed=5) == second.evaluate(0, "cifar10", seed=5)
    assert len({ev.trial for ev in a if ev.arch_index == 0}) == 2  # both recorded runs get drawn


def test_accepts_strings_objects_and_indices(oracle) -> None:
    from search_spaces import get_space

    space = get_space("tss")
    arch = space.arch_at(284)
    by_index = oracle.evaluate(284, "cifar10", seed=0)
    assert oracle.evaluate(str(arch), "cifar10", seed=0) == by_index
    assert oracle.evaluate(arch, "cifar10", seed=0) == by_index
    assert by_index.arch == str(arch)


def test_bad_inputs(oracle) -> None:
    with pytest.raises(ArchNotInBenchmarkError, match="no record"):
        oracle.evaluate(5, "cifar10")
    with pytest.raises(ArchError):
        oracle.evaluate("|conv~0|", "cifar10")
    with pytest.raises(ArchError, match="out of range"):
        oracle.evaluate(15625, "cifar10")
    with pytest.raises(UnknownDatasetError):
        oracle.evaluate(0, "mnist")
    with pytest.raises(MetricNotAvailableError, match="schedule 90"):
        oracle.query(0, "cifar10", MetricSpec("x-valid", "90"))


def test_default_path_is_torch_home(torch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(torch_dir))
    assert NatsBenchOracle(None).evaluate(11, "cifar100", seed=0).cost_source == "recorded"


def test_missing_benchmark_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    for path in (None, tmp_path / "nowhere"):
        with pytest.raises(BenchmarkNotFoundError) as info:
            NatsBenchOracle(path)
        message = str(info.value)
        assert "NATS-tss-v1_0-3ffb9-simple" in message and "github.com/D-X-Y/NATS-Bench" in message
        assert "\n" not in message and info.value.exit_code == 2


def test_tar_archive_must_be_extracted(tmp_path: Path) -> None:
    archive = tmp_path / "NATS-tss-v1_0-3ffb9-simple.tar"
    archive.write_bytes(b"")
    with pytest.raises(UsageError, match="extract it first"):
        locate_nats(archive)


def test_corrupt_files(torch_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / TSS_DIR
    broken.mkdir()
    (broken / "meta.pickle.pbz2").write_bytes(b"not bz2 at all")
    with pytest.raises(CorruptBenchmarkError, match="cannot read NATS-Bench"):
        NatsBenchOracle(tmp_path)
    shutil.copy(torch_dir / TSS_DIR / "meta.pickle.pbz2", broken / "meta.pickle.pbz2")
    (broken / "000000.pickle.pbz2").write_bytes(bz2.compress(b"garbage"))
    oracle = NatsBenchOracle(tmp_path)
    with pytest.raises(CorruptBenchmarkError, match="architecture 0"):
        oracle.evaluate(0, "cifar10")


def test_single_full_file(torch_dir: Path, tmp_path: Path, oracle) -> None:
    from nats_bench import pickle_load, pickle_save

    folder = torch_dir / TSS_DIR
    meta = pickle_load(str(folder / "meta.pickle.pbz2"))
    full = {
        "meta_archs": meta["meta_archs"],
        "arch2infos": {i: pickle_load(str(folder / f"{i:06d}.pickle.pbz2")) for i in FIXTURE_ARCHS},
        "evaluated_indexes": list(FIXTURE_ARCHS),
    }
    pickle_save(full, str(tmp_path / "NATS-tss-v1_0-3ffb9.pickle"))  # adds .pbz2
    single = NatsBenchOracle(tmp_path / "NATS-tss-v1_0-3ffb9.pickle.pbz2")
    assert "full file" in single.describe()
    for arch in FIXTURE_ARCHS:
        assert single.evaluate(arch, "cifar100", seed=2) == oracle.evaluate(arch, "cifar100", seed=2)
    with pytest.raises(ArchNotInBenchmarkError):
        single.evaluate(5, "cifar10")


def test_size_space(torch_dir: Path, truth) -> None:
    sss = NatsBenchOracle(torch_dir, "sss")
    assert sss.metrics.report.schedule == "90"
    ev = sss.report(11, "cifar10")
    runs = [k for k in truth if k[:4] == ("sss", 11, "90", "cifar10")]
    expected = sum(float(truth[k]["ori_test_acc"]) for k in runs) / len(runs)
    assert ev.accuracy_pct == pytest.approx(expected, abs=1e-6)
    assert ev.arch == "8:8:8:16:32"
