"""The image-classification datasets NATS-Bench trains on, their other spellings and their input
shapes: the one declaration of the dataset vocabulary (`nasenergy` reads it from here)."""

from __future__ import annotations

from typing import NamedTuple

from search_spaces._errors import UnknownDatasetError

DATASETS: tuple[str, ...] = ("cifar10", "cifar100", "ImageNet16-120")
"""The dataset names NATS-Bench uses, in its order."""

DATASET_ALIASES: dict[str, str] = {
    "cifar-10": "cifar10",
    "cifar-100": "cifar100",
    "imagenet16": "ImageNet16-120",
    "imagenet16_120": "ImageNet16-120",
    "imagenet": "ImageNet16-120",
}
"""Other spellings a user may give (lower case) -> the dataset's name in `DATASETS`. Every
reader of a dataset name resolves it with `canonical_dataset`, which reads this table only."""

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
_BY_SPELLING: dict[str, str] = {n.lower(): n for n in DATASETS} | DATASET_ALIASES


def register_dataset(info: DatasetInfo, *, aliases: tuple[str, ...] = (), replace: bool = False) -> DatasetInfo:
    """Add a dataset to the vocabulary: the spaces then build and count networks for its input
    shape and class count, and `canonical_dataset` resolves its name and `aliases` (any case).
    Its accuracies come from an oracle of the user's (NATS-Bench's tables hold only `DATASETS`).

    Raises:
        ValueError: a malformed `info`, a name or alias already taken (unless `replace`, which
            may not replace one of `DATASETS`), or a NATS training-set name.
    """
    name = info.name.strip() if isinstance(info.name, str) else ""
    shape = tuple(info.input_shape)
    if not name or len(shape) != 3 or any(not isinstance(v, int) or v < 1 for v in shape) \
            or not isinstance(info.num_classes, int) or info.num_classes < 1:
        raise ValueError(f"a dataset needs a name, an input shape (C, H, W) of positive ints and a positive "
                         f"class count; got {info!r}")
    spellings = [name.lower(), *(a.strip().lower() for a in aliases)]
    for spelling in spellings:
        taken = _BY_SPELLING.get(spelling)
        if spelling in NATS_TRAINING_SETS or (taken is not None and taken in DATASETS):
            raise ValueError(f"dataset spelling {spelling!r} belongs to NATS-Bench's {taken or spelling!r}")
        if taken is not None and taken != name and not replace:
            raise ValueError(f"dataset spelling {spelling!r} is taken by {taken!r} (pass replace=True)")
        if taken == name and not replace:
            raise ValueError(f"dataset {name!r} is already registered (pass replace=True)")
    info = DatasetInfo(name, info.num_classes, (shape[0], shape[1], shape[2]))
    _INFOS[name] = info
    _BY_SPELLING.update(dict.fromkeys(spellings, name))
    return info


def dataset_names() -> tuple[str, ...]:
    """Every dataset name `canonical_dataset` resolves to: `DATASETS`, then the registered ones."""
    return tuple(_INFOS)


def canonical_dataset(name: str) -> str:
    """The name in `DATASETS` of a dataset given in any of its spellings: the name itself or an
    alias of `DATASET_ALIASES`, case-insensitive, surrounding blanks ignored (``CIFAR-10`` ->
    ``cifar10``, ``imagenet16`` -> ``ImageNet16-120``).

    Raises:
        UnknownDatasetError: no dataset is spelled so; a NATS training set (``cifar10-valid``)
            is named with the split that asks for it.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key is not None and key in _BY_SPELLING:
        return _BY_SPELLING[key]
    if key is not None and key in NATS_TRAINING_SETS:
        raise UnknownDatasetError(
            f"dataset {key!r} is a NATS training set: ask for dataset {NATS_TRAINING_SETS[key]!r} with split "
            "'x-valid' instead"
        )
    aliases = ", ".join(DATASET_ALIASES)
    raise UnknownDatasetError(f"unknown dataset {name!r}; expected one of {', '.join(_INFOS)} "
                              f"(or an alias: {aliases})")


def nats_dataset_name(name: str) -> str:
    """The name of a NATS-Bench training set (`NATS_TRAINING_SETS` or a dataset of `DATASETS`)
    given in any spelling `canonical_dataset` takes, or ``cifar10-valid`` in any case.

    Raises:
        UnknownDatasetError: no training set is spelled so.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key is not None and key in NATS_TRAINING_SETS:
        return key
    return canonical_dataset(name)


def dataset_info(dataset: str) -> DatasetInfo:
    """Look a dataset up by any spelling `canonical_dataset` takes (``cifar10-valid`` means
    ``cifar10``: its networks and inputs are CIFAR-10's).

    Raises:
        UnknownDatasetError: the name is not a NATS-Bench dataset (a `UsageError`).
    """
    name = nats_dataset_name(dataset)
    return _INFOS[NATS_TRAINING_SETS.get(name, name)]
