"""Tests of dataset, split and schedule names (nasenergy.oracles.datasets)."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.oracles.datasets import canonical_dataset, normalize_schedule, resolve, user_dataset
from nasenergy.oracles.errors import UnknownDatasetError


@pytest.mark.parametrize(
    ("dataset", "split", "nats_dataset", "nats_split"),
    [
        ("cifar10", "x-valid", "cifar10-valid", "x-valid"),
        ("cifar10", "valid", "cifar10-valid", "x-valid"),
        ("cifar10", "test", "cifar10", "ori-test"),
        ("cifar10", "ori-test", "cifar10", "ori-test"),
        ("cifar100", "test", "cifar100", "x-test"),
        ("cifar100", "ori_test", "cifar100", "ori-test"),
        ("imagenet16", "valid", "ImageNet16-120", "x-valid"),
        ("ImageNet16-120", "test", "ImageNet16-120", "x-test"),
    ],
)
def test_resolve_follows_nats_bench(dataset: str, split: str, nats_dataset: str, nats_split: str) -> None:
    cell = resolve(dataset, split)
    assert (cell.nats_dataset, cell.split) == (nats_dataset, nats_split)
    assert user_dataset(cell.nats_dataset) == cell.dataset


def test_image_counts_are_nats_set_sizes() -> None:
    assert resolve("cifar10", "valid").train_images == 25_000
    assert resolve("cifar10", "valid").eval_images == 25_000
    assert resolve("cifar10", "test").train_images == 50_000
    assert resolve("imagenet16", "test").train_images == 151_700
    assert resolve("cifar100", "ori-test").eval_images == 10_000


@pytest.mark.parametrize("name", ["mnist", "", "cifar-1000"])
def test_unknown_dataset_is_a_usage_error(name: str) -> None:
    with pytest.raises(UnknownDatasetError, match="unknown dataset") as info:
        canonical_dataset(name)
    assert isinstance(info.value, UsageError) and info.value.exit_code == 2


def test_cifar10_valid_is_explained() -> None:
    with pytest.raises(UnknownDatasetError, match="x-valid"):
        canonical_dataset("cifar10-valid")


def test_bad_splits() -> None:
    with pytest.raises(UnknownDatasetError, match="no x-test"):
        resolve("cifar10", "x-test")
    with pytest.raises(UnknownDatasetError, match="unknown split"):
        resolve("cifar100", "train")


def test_schedules() -> None:
    assert normalize_schedule(12) == "12"
    assert normalize_schedule("200") == "200"
    assert normalize_schedule("1") == "01"
    assert normalize_schedule("90ep") == "90"
    for bad in ("0", "-3", "twelve"):
        with pytest.raises(UnknownDatasetError, match="schedule"):
            normalize_schedule(bad)
