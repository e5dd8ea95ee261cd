"""Fixtures for the oracle tests: the shared NATS-Bench data (tests skip cleanly without it)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from shared_files import TSS_TABLES, require_shared, shared_file

TRUTH_FILE = "nats_official_3arch_records__nats_bench_fixture.csv"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared reference data folder, holding at least the NATS-Bench TSS tables."""
    return require_shared(*TSS_TABLES)


@pytest.fixture(scope="session")
def torch_dir() -> Path:
    """The official NATS-Bench test fixture (``fake_torch_dir``)."""
    return shared_file("nats_bench_fixture/fake_torch_dir")


@pytest.fixture(scope="session")
def truth() -> dict[tuple[str, int, str, str, int], dict[str, str]]:
    """Official records of archs 0, 11, 284: (space, arch, hp, nats dataset, seed) -> row."""
    rows = {}
    with open(shared_file(TRUTH_FILE), newline="") as fh:
        for row in csv.DictReader(fh):
            key = (row["space"], int(row["arch_index"]), row["hp"], row["dataset"], int(row["seed"]))
            rows[key] = row
    return rows


@pytest.fixture(scope="session")
def truth_seeds(truth: dict) -> dict[tuple[str, int, str, str], list[int]]:
    """(space, arch, hp, nats dataset) -> recorded seeds."""
    seeds: dict[tuple[str, int, str, str], list[int]] = defaultdict(list)
    for space, arch, hp, dataset, seed in truth:
        seeds[(space, arch, hp, dataset)].append(seed)
    return dict(seeds)


@pytest.fixture(scope="session")
def shared_tables(shared_dir: Path):
    """The shared tables read once (a `BenchmarkData`); tests must not modify it."""
    from nasenergy.oracles.tables import read_tables

    return read_tables(shared_dir)


@pytest.fixture(scope="session")
def nats_fixture_data(torch_dir: Path):
    """The official fixture imported once (a `BenchmarkData`)."""
    from nasenergy.oracles.nats import locate_nats
    from nasenergy.oracles.nats_import import read_nats

    return read_nats(locate_nats(torch_dir, "tss"))


@pytest.fixture()
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder and an empty TORCH_HOME."""
    home = tmp_path / "home"
    monkeypatch.setenv("NASENERGY_HOME", str(home))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    return home
