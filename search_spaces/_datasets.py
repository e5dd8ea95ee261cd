"""The image-classification datasets NATS-Bench trains on, their other spellings and their input
shapes: the one declaration of the dataset vocabulary (`nasenergy` reads it from here)."""

from __future__ import annotations

from typing import NamedTuple

from search_spaces._errors import UsageError

DATASETS: tuple[str, ...] = ("cifar10", "cifar100", "ImageNet16-120")
"""The dataset names NATS-Bench uses, in its order."""

DATASET_ALIASES: dict[str, str] = {
    "cifar-10": "cifar10",
    "cifar-100": "cifar100",
    "imagenet16": "ImageNet16-120",
    "imagenet16_120": "ImageNet16-120",
    "imagenet": "ImageNet16-120",
}
"""Other spellings a user may give (lower case) -> the dataset's name in `DATASETS`."""

NATS_TRAINING_SETS: dict[str, str] = {"cifar10-valid": "cifar10"}
"""Training sets NATS-Bench records besides `DATASETS` -> the dataset they belong to:
``cifar10-valid`` is CIFAR-10 trained on half its training set (the network and its input are
those of ``cifar10``)."""


class DatasetInfo(NamedTuple):
    """What a network needs to know about a dataset.

    Attributes:
        name: the canonical NATS-Bench name, one of `DATASETS`.
        num_classes: number of output logits.
        input_shape: the shape of one image, ``(channels, height, width)`` in pixels.
    """

    name: str
    num_classes: int
    input_shape: tuple[int, int, int]


_INFOS: dict[str, DatasetInfo] = {
    "cifar10": DatasetInfo("cifar10", 10, (3, 32, 32)),
    "cifar100": DatasetInfo("cifar100", 100, (3, 32, 32)),
    "ImageNet16-120": DatasetInfo("ImageNet16-120", 120, (3, 16, 16)),
}
_BY_LOWER_NAME: dict[str, str] = {n.lower(): n for n in DATASETS} | NATS_TRAINING_SETS


def dataset_info(dataset: str) -> DatasetInfo:
    """Look a dataset up by name (case-insensitive; ``cifar10-valid`` means ``cifar10``).

    Raises:
        UsageError: the name is not a NATS-Bench dataset.
    """
    name = _BY_LOWER_NAME.get(dataset.lower()) if isinstance(dataset, str) else None
    if name is None:
        raise UsageError(f"unknown dataset {dataset!r}; expected one of {', '.join(DATASETS)}")
    return _INFOS[name]
