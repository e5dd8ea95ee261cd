"""Tests of the local benchmark file: import, round trip, corruption, and the cached oracle."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from nasenergy.oracles import (
    BenchmarkNotFoundError,
    CachedOracle,
    CorruptBenchmarkError,
    MetricSpec,
    NatsBenchOracle,
    cache_dir,
    cache_file,
    install,
    installed,
)
from nasenergy.oracles import nats_import
from nasenergy.oracles.nats import locate_nats
from nasenergy.oracles.store import load_benchmark, save_benchmark

FIXTURE_ARCHS = (0, 11, 284)


def _assert_same(a, b) -> None:
    assert a.space_name == b.space_name
    np.testing.assert_array_equal(a.arch_strs, b.arch_strs)
    for name in ("means", "trials", "trial_seeds", "train_s", "eval_s"):
        left, right = getattr(a, name), getattr(b, name)
        assert left.keys() == right.keys(), name
        for key in left:
            np.testing.assert_array_equal(left[key], right[key])
    for name in ("est_train_rate", "est_eval_rate"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None)
        if left is not None:
            np.testing.assert_array_equal(left, right)


def test_round_trip_of_the_shared_tables(shared_tables, tmp_path: Path) -> None:
    path = save_benchmark(shared_tables, tmp_path / "b.npz")
    loaded = load_benchmark(path)
    _assert_same(shared_tables, loaded)
    assert loaded.provenance == json.loads(json.dumps(shared_tables.provenance))
    with zipfile.ZipFile(path) as archive:  # plain .npy members, never pickles
        assert all(name.endswith(".npy") for name in archive.namelist())
    with np.load(path, allow_pickle=False) as npz:
        assert all(npz[name].dtype != object for name in npz.files)


def test_install_and_cached_oracle_match_the_live_oracle(torch_dir: Path, isolated_home: Path) -> None:
    result = install(torch_dir, partial=True)
    assert result.path == cache_file("tss") == isolated_home / "benchmark-tss.npz"
    assert result.size_bytes == result.path.stat().st_size > 0
    cached = CachedOracle()
    live = NatsBenchOracle(torch_dir)
    for arch in FIXTURE_ARCHS:
        for dataset in ("cifar10", "cifar100", "ImageNet16-120"):
            for seed in range(4):
                assert cached.evaluate(arch, dataset, seed=seed) == live.evaluate(arch, dataset, seed=seed)
            got, want = cached.report(arch, dataset).as_dict(), live.report(arch, dataset).as_dict()
            assert got.pop("cost_s") == pytest.approx(want.pop("cost_s"), rel=1e-12)  # mean of equal times
            assert got == want
            for split in ("x-valid", "ori-test"):
                metric = MetricSpec(split, "200", "random")
                assert cached.query_many([arch], dataset, metric, seed=1).row(0) == live.query(arch, dataset, metric, seed=1)
    stream_a = [cached.evaluate(0, "cifar10") for _ in range(6)]
    stream_b = [live.evaluate(0, "cifar10") for _ in range(6)]
    assert stream_a == stream_b  # the same private stream semantics
    (bench,) = installed()
    assert bench.space_name == "tss" and bench.provenance["kind"] == "nats-bench"
    assert bench.coverage["cifar10-valid/x-valid/12"]["archs"] == 3


def test_parallel_import_equals_inline(torch_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       nats_fixture_data) -> None:
    folder = tmp_path / "NATS-tss-v1_0-3ffb9-simple"
    shutil.copytree(torch_dir / folder.name, folder)
    monkeypatch.setattr(nats_import, "_INLINE_LIMIT", 0)
    seen = []
    data = nats_import.read_nats(locate_nats(tmp_path), workers=2, progress=lambda d, t: seen.append((d, t)))
    _assert_same(data, nats_fixture_data)
    assert seen[-1] == (3, 3)


def test_cache_dir_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NASENERGY_HOME", str(tmp_path / "h"))
    assert cache_dir() == tmp_path / "h"
    assert cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("NASENERGY_HOME")
    assert cache_dir() == Path.home() / ".cache" / "nasenergy"


def test_damaged_files(tmp_path: Path, nats_fixture_data) -> None:
    with pytest.raises(BenchmarkNotFoundError, match="nasenergy.benchmark import"):
        CachedOracle(tmp_path / "none.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"\x00" * 100)
    with pytest.raises(CorruptBenchmarkError, match="not a readable"):
        load_benchmark(garbage)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, x=np.zeros(3))
    with pytest.raises(CorruptBenchmarkError):
        load_benchmark(foreign)
    good = save_benchmark(nats_fixture_data, tmp_path / "good.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(CorruptBenchmarkError) as info:
        load_benchmark(truncated)
    assert info.value.exit_code == 2
