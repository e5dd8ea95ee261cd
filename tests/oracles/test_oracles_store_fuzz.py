"""Benchmark file loaders on malformed input: a one-line `NasEnergyError`, never a Python error.

The local benchmark file (`nasenergy.oracles.store`) is damaged at random (bytes cut or changed,
its header or an array replaced, removed or added), and benchmark tables are generated at random
(schema and other columns, odd cells); loading either reads a valid benchmark or refuses it in
one line, and ``python -m nasenergy.benchmark info`` says so in one line too."""

from __future__ import annotations

import csv
import functools
import io
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from json_mutation import JSON_VALUES, json_paths, mutate
from nasenergy.benchmark import main as benchmark_main
from nasenergy.errors import NasEnergyError
from nasenergy.oracles.errors import CorruptBenchmarkError
from nasenergy.oracles.store import load_benchmark, save_benchmark
from nasenergy.oracles.tables import read_tables

FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DTYPES = st.sampled_from(["float64", "float32", "int64", "int8", "bool", "<U4", "complex128"])
ARRAYS = DTYPES.flatmap(lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)))


@functools.cache
def _valid_arrays() -> dict[str, np.ndarray]:
    """The arrays of a small valid benchmark file (5 architectures with runs and times)."""
    folder = Path(tempfile.mkdtemp(prefix="nasenergy-store-fuzz-"))
    table = folder / "t.csv"
    rows = [[i, 50.0 + i, 60.0 + i, 61.0 + i, 600.0 + i] for i in range(5)]
    with table.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["arch_index", "cifar10valid_valid_acc_12ep", "cifar10valid_valid_acc_12ep_run0",
                         "cifar10valid_valid_acc_12ep_run1", "cifar10valid_train_time_12ep_s"])
        writer.writerows(rows)
    path = save_benchmark(read_tables(table, "tss"), folder / "benchmark-tss.npz")
    with np.load(path, allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}



def _check(path: Path) -> None:
    try:
        load_benchmark(path)
    except NasEnergyError as exc:
        assert "\n" not in str(exc), str(exc)
    out, err = io.StringIO(), io.StringIO()
    code = benchmark_main(["info", "--cache-dir", str(path.parent)], out=out, err=err)
    assert code in (0, 1, 2) and "Traceback" not in err.getvalue()
    if code:
        assert err.getvalue().count("\n") == 1


@FUZZ
@given(data=st.data())
def test_a_damaged_benchmark_file_loads_or_is_refused_in_one_line(data):
    arrays = dict(_valid_arrays())
    how = data.draw(st.sampled_from(["meta", "replace", "remove", "add"]))
    if how == "meta":
        meta = json.loads(str(arrays["meta"]))
        meta = mutate(meta, data.draw(st.sampled_from(json_paths(meta, list_items=0))), data.draw(JSON_VALUES))
        arrays["meta"] = np.asarray(json.dumps(meta))
    elif how == "replace":
        arrays[data.draw(st.sampled_from(sorted(arrays)))] = data.draw(ARRAYS)
    elif how == "remove":
        del arrays[data.draw(st.sampled_from(sorted(arrays)))]
    else:
        name = data.draw(st.sampled_from(["mean", "trials", "seeds", "train_s", "eval_s", "est_rate", "x"]))
        key = data.draw(st.lists(st.sampled_from(["cifar10", "cifar10-valid", "x-valid", "12", "200", "?"]),
                                 max_size=3))
        arrays["|".join([name, *key])] = data.draw(ARRAYS)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "benchmark-tss.npz"
        np.savez(path, **arrays)
        _check(path)


@FUZZ
@given(data=st.data())
def test_damaged_bytes_are_refused_in_one_line(data):
    arrays = _valid_arrays()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "benchmark-tss.npz"
        np.savez(path, **arrays)
        raw = bytearray(path.read_bytes())
        if data.draw(st.booleans()):
            raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
        else:
            at = data.draw(st.integers(0, len(raw) - 1))
            raw[at] = (raw[at] + data.draw(st.integers(1, 255))) % 256
        path.write_bytes(bytes(raw))
        _check(path)


COLUMNS = st.sampled_from([
    "arch_index", "arch_str", "cifar10valid_valid_acc_12ep", "cifar10_test_acc_200ep",
    "cifar10valid_valid_acc_12ep_run1", "cifar10valid_train_time_12ep_s", "cifar10_oritest_eval_time_s",
    "dataset", "hp", "epochs", "seed", "space", "x_valid_acc", "ori_test_acc", "train_all_time_s",
    "train_time_per_epoch_s", "x_valid_all_time_s", "other",
])
CELLS = st.sampled_from([
    "", "0", "1", "3", "12", "200", "15624", "15625", "-1", "55.5", "nan", "inf", "1e400", "abc",
    "cifar10-valid", "cifar10", "ImageNet16-120", "mnist", "tss", "sss", "hp",
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|skip_connect~0|skip_connect~1|skip_connect~2|",
    "8:8:8:8:8", "|bad~0|",
]) | st.text(max_size=6)


@FUZZ
@given(header=st.lists(COLUMNS, min_size=1, max_size=6), data=st.data())
def test_any_table_is_read_or_refused_in_one_line(header, data):
    n_rows = data.draw(st.integers(0, 5))
    rows = [[data.draw(CELLS) for _ in header] for _ in range(n_rows)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        with path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(rows)
        try:
            data_read = read_tables(path, data.draw(st.sampled_from([None, "tss", "sss"])))
        except NasEnergyError as exc:
            assert "\n" not in str(exc), str(exc)
            return
        data_read.validate()
        data_read.coverage()


def test_a_header_naming_no_space_is_refused(tmp_path):
    arrays = dict(_valid_arrays())
    meta = json.loads(str(arrays["meta"]))
    meta["space"] = ["tss"]
    arrays["meta"] = np.asarray(json.dumps(meta))
    np.savez(tmp_path / "b.npz", **arrays)
    with pytest.raises(CorruptBenchmarkError, match="names no space") as ei:
        load_benchmark(tmp_path / "b.npz")
    assert "\n" not in str(ei.value)


def test_a_bit_flipped_anywhere_in_a_benchmark_file_is_refused_in_one_line(tmp_path):
    """One bit flipped at 300 offsets spread over a real benchmark file (zip headers, the
    compressed arrays, the central directory): the file loads, or is refused with one line; a
    flip inside compressed data (``zlib.error``) included."""
    path = tmp_path / "benchmark-tss.npz"
    np.savez_compressed(path, **_valid_arrays())
    good = path.read_bytes()
    refused = 0
    for offset in np.linspace(0, len(good) - 1, 300).astype(int):
        damaged = bytearray(good)
        damaged[offset] ^= 1 << (int(offset) % 8)
        path.write_bytes(bytes(damaged))
        try:
            load_benchmark(path)
        except CorruptBenchmarkError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc), str(exc)
            refused += 1
    assert refused > 0
