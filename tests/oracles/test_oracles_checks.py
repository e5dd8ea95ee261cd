"""Import validation: accuracies in [0, 100], tables with no usable row, and installs that are
atomic and never shrink the installed benchmark without --force."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from nasenergy.errors import OutputError

from nasenergy.oracles import CorruptBenchmarkError, MissingColumnsError, install
from nasenergy.oracles.checks import bad_accuracies, fraction_scaled, losses, name_items
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.errors import IncompleteBenchmarkError, NoUsableRowsError, ReplaceRefusedError, ScaleError
from nasenergy.oracles.store import load_benchmark, save_benchmark
from nasenergy.oracles.tables import read_tables
from table_files import write_table

ACC12 = "cifar10valid_valid_acc_12ep"
ACC200 = "cifar10_test_acc_200ep"


def _table(path: Path, n: int, *, columns: tuple[str, ...] = (ACC12, ACC200)) -> Path:
    return write_table(path, ["arch_index", *columns], [[i, *(50.0 + i % 40 for _ in columns)] for i in range(n)])


@pytest.mark.parametrize("bad", ["100.5", "-0.1", "inf", "-inf", "250"])
@pytest.mark.parametrize("column", [ACC12, f"{ACC12}_run1"])
def test_wide_accuracies_outside_0_100_are_refused_naming_the_rows(tmp_path, bad, column):
    rows = [[i, "70"] for i in range(8)]
    rows[3][1] = bad
    rows[6][1] = bad
    path = write_table(tmp_path / "t.csv", ["arch_index", column], rows)
    with pytest.raises(CorruptBenchmarkError) as ei:
        read_tables(path, "tss")
    message = str(ei.value)
    assert "\n" not in message and column in message and "[0, 100]" in message
    assert "row 5 " in message and "row 8 " in message and "row 2 " not in message
    assert ei.value.exit_code == 2


def test_long_run_accuracies_outside_0_100_are_refused(tmp_path):
    header = ["arch_index", "dataset", "hp", "seed", "x_valid_acc"]
    rows = [[0, "cifar10-valid", 12, 777, 88.0], [0, "cifar10-valid", 12, 888, 188.0]]
    with pytest.raises(CorruptBenchmarkError, match=r"x_valid_acc .*row 3 \(188\)"):
        read_tables(write_table(tmp_path / "t.csv", header, rows), "tss")


def test_the_boundaries_and_missing_values_pass(tmp_path):
    rows = [[0, "0"], [1, "100"], [2, ""], [3, "nan"], [4, "55.5"]]
    data = read_tables(write_table(tmp_path / "t.csv", ["arch_index", ACC12], rows), "tss")
    assert np.isfinite(data.means[("cifar10-valid", "x-valid", "12")]).sum() == 3


def test_many_bad_rows_are_named_in_one_line():
    items = [(i, 101.0) for i in range(2, 40)]
    text = name_items(items, "row")
    assert text.startswith("row 2 (101), row 3 (101)") and text.endswith("and 33 more") and "\n" not in text


@pytest.mark.parametrize(
    ("header", "rows", "needle"),
    [
        (["arch_index", ACC12], [], "no data rows"),
        (["arch_index", ACC12, ACC200], [[0, "", ""], [1, "", ""]], "none of its 2 rows (rows 2-3)"),
        (["arch_index", "dataset", "hp", "space", "train_all_time_s"],
         [[0, "cifar10-valid", 12, "sss", 100.0]], "for tss"),
    ],
)
def test_a_table_with_no_usable_row_is_refused(tmp_path, header, rows, needle):
    path = write_table(tmp_path / "t.csv", header, rows)
    with pytest.raises(NoUsableRowsError) as ei:
        read_tables(path, "tss")
    assert needle in str(ei.value) and "no usable row" in str(ei.value) and "\n" not in str(ei.value)
    assert ei.value.exit_code == 2


def test_a_folder_skips_an_unusable_table_and_refuses_when_none_is_usable(tmp_path):
    write_table(tmp_path / "a_empty.csv", ["arch_index", ACC12], [[0, ""]])
    _table(tmp_path / "b_good.csv", 5)
    data = read_tables(tmp_path, "tss")
    assert data.provenance["files"] == ["b_good.csv"]
    assert any("a_empty.csv" in s and "no usable row" in s for s in data.provenance["skipped"])
    (tmp_path / "b_good.csv").unlink()
    with pytest.raises(MissingColumnsError):
        read_tables(tmp_path, "tss")


def test_times_without_any_accuracy_are_refused(tmp_path):
    path = write_table(tmp_path / "t.csv", ["arch_index", "cifar10valid_train_time_12ep_s"], [[0, 600.0], [1, 610.0]])
    with pytest.raises(NoUsableRowsError, match="gives an accuracy"):
        read_tables(path, "tss")


def test_benchmark_data_refuses_accuracies_outside_0_100():
    n = 15_625
    strs = np.array([f"a{i}" for i in range(n)])
    means = np.full(n, 50.0)
    means[[7, 9]] = [100.01, -3.0]
    data = BenchmarkData("tss", strs, means={("cifar10-valid", "x-valid", "12"): means})
    with pytest.raises(CorruptBenchmarkError, match=r"architecture 7 \(100.01\), architecture 9 \(-3\)"):
        data.validate()
    runs = np.full((n, 2), np.nan)
    runs[4, 1] = 101.0
    assert bad_accuracies(runs) == [(4, 101.0)]


# ---------------------------------------------------------------------------------- installs


def test_an_install_never_shrinks_the_installed_benchmark_without_force(tmp_path):
    cache = tmp_path / "cache"
    first = install(_table(tmp_path / "big.csv", 30), space_name="tss", directory=cache, partial=True)
    before = first.path.read_bytes()

    with pytest.raises(ReplaceRefusedError) as ei:  # fewer architectures
        install(_table(tmp_path / "small.csv", 10), space_name="tss", directory=cache, partial=True)
    message = str(ei.value)
    assert "10 architectures instead of 30" in message and "--force" in message and "\n" not in message
    with pytest.raises(ReplaceRefusedError, match="1 metric it lacks \\(cifar10/ori-test/200\\)"):  # a metric lost
        install(_table(tmp_path / "one.csv", 30, columns=(ACC12,)), space_name="tss", directory=cache, partial=True)
    assert first.path.read_bytes() == before

    grown = install(_table(tmp_path / "bigger.csv", 40), space_name="tss", directory=cache, partial=True)  # more: fine
    assert grown.data.coverage()["cifar10-valid/x-valid/12"]["archs"] == 40
    forced = install(_table(tmp_path / "small.csv", 10), space_name="tss", directory=cache, force=True, partial=True)
    assert load_benchmark(forced.path).coverage()["cifar10-valid/x-valid/12"]["archs"] == 10


def test_a_damaged_installed_file_is_replaced(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "benchmark-tss.npz").write_bytes(b"junk")
    result = install(_table(tmp_path / "t.csv", 5), space_name="tss", directory=cache, partial=True)
    assert load_benchmark(result.path).coverage()["cifar10-valid/x-valid/12"]["archs"] == 5


def test_a_failed_write_leaves_the_installed_file_and_no_temporary_file(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = install(_table(tmp_path / "a.csv", 5), space_name="tss", directory=cache, partial=True)
    before = first.path.read_bytes()

    def broken(file, **arrays):
        Path(file).write_bytes(b"PK half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", broken)
    with pytest.raises(OutputError, match="disk full"):  # one line, not the OSError's traceback
        install(_table(tmp_path / "b.csv", 9), space_name="tss", directory=cache, partial=True)
    assert first.path.read_bytes() == before
    assert sorted(p.name for p in cache.iterdir()) == ["benchmark-tss.npz"]


def test_losses_of_equal_benchmarks_are_none(tmp_path):
    data = read_tables(_table(tmp_path / "t.csv", 5), "tss")
    assert losses(data, data) == []
    save_benchmark(data, tmp_path / "x.npz")
    assert losses(load_benchmark(tmp_path / "x.npz"), data) == []


def _scaled_table(path: Path, n: int, scale: float) -> Path:
    rows = [[i, *((50.0 + i % 40) * scale for _ in (ACC12, ACC200))] for i in range(n)]
    return write_table(path, ["arch_index", ACC12, ACC200], rows)


def test_accuracies_written_as_fractions_are_refused_and_the_installed_file_kept(tmp_path):
    cache = tmp_path / "cache"
    first = install(_table(tmp_path / "good.csv", 30), space_name="tss", directory=cache, partial=True)
    before = first.path.read_bytes()
    for force in (False, True):  # as many rows, every accuracy divided by 100: never installed
        with pytest.raises(ScaleError) as ei:
            install(_scaled_table(tmp_path / "fractions.csv", 30, 0.01), space_name="tss", directory=cache,
                    partial=True, force=force)
        assert "fractions" in str(ei.value) and "\n" not in str(ei.value)
    assert first.path.read_bytes() == before


def test_other_accuracies_for_the_same_architectures_need_force(tmp_path):
    cache = tmp_path / "cache"
    first = install(_table(tmp_path / "good.csv", 30), space_name="tss", directory=cache, partial=True)
    before = first.path.read_bytes()
    with pytest.raises(ReplaceRefusedError) as ei:
        install(_scaled_table(tmp_path / "other.csv", 30, 1.1), space_name="tss", directory=cache, partial=True)
    assert "other accuracies for 30 architectures" in str(ei.value) and "--force" in str(ei.value)
    assert first.path.read_bytes() == before
    install(_table(tmp_path / "same.csv", 30), space_name="tss", directory=cache, partial=True)  # same values: fine


def test_a_table_cut_short_is_refused_without_partial(tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(IncompleteBenchmarkError) as ei:  # a CSV cut at 2,999 of 15,625 rows
        install(_table(tmp_path / "cut.csv", 2999), space_name="tss", directory=cache)
    assert "covers 2,999 of the 15,625 tss architectures" in str(ei.value) and "--partial" in str(ei.value)
    assert not (cache / "benchmark-tss.npz").exists()


def test_fraction_scaled_names_each_metric_in_fractions():
    assert fraction_scaled(_Fake({("a",): np.array([0.5, 0.9, np.nan]), ("b",): np.array([50.0, 0.9])})) == ["a"]
    assert fraction_scaled(_Fake({("a",): np.array([np.nan])})) == []


class _Fake:
    def __init__(self, means):
        self._means = means

    def metric_keys(self):
        return list(self._means)

    def mean(self, key):
        return self._means[key]


_KILLED_WRITER = """
import sys, time
import numpy as np
from nasenergy.oracles.store import save_benchmark
from nasenergy.oracles.tables import read_tables

def slow(file, **arrays):
    with open(file, "wb") as f:
        f.write(b"PK half a zip")
        f.flush()
    print("writing", flush=True)
    time.sleep(60)

np.savez_compressed = slow
save_benchmark(read_tables(sys.argv[1], "tss"), sys.argv[2])
"""


def test_a_temporary_file_left_by_a_killed_import_is_removed_on_the_next_start(tmp_path):
    import signal
    import subprocess
    import sys

    from nasenergy.oracles.cache import installed

    cache = tmp_path / "cache"
    first = install(_table(tmp_path / "a.csv", 5), space_name="tss", directory=cache, partial=True)
    before = first.path.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(_table(tmp_path / "b.csv", 9)),
                             str(first.path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        os.kill(proc.pid, signal.SIGKILL)  # killed mid-write
    finally:
        proc.wait(timeout=60)
    left = sorted(p.name for p in cache.iterdir() if p.name.startswith(".tmp-"))
    assert len(left) == 1 and left[0].startswith(f".tmp-{proc.pid}-")
    live = cache / f".tmp-{os.getpid()}-being-written.npz"  # a live writer's file stays
    live.write_bytes(b"PK")
    assert len(installed(cache)) == 1  # the next start (here: benchmark info)
    assert sorted(p.name for p in cache.iterdir()) == [live.name, "benchmark-tss.npz"]
    assert first.path.read_bytes() == before
