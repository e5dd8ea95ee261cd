"""Dataset, split and schedule names of NATS-Bench, and the number of images in each set.

Users name three datasets: ``cifar10``, ``cifar100`` and ``ImageNet16-120``, in any spelling
`search_spaces.canonical_dataset` takes (``cifar-10``, ``imagenet16``, ...; re-exported here).
NATS-Bench itself trains CIFAR-10 two ways, so a (dataset, split) pair resolves to one of
four NATS training sets:

* ``cifar10`` + ``x-valid`` → ``cifar10-valid``: trained on the 25k-image half of the CIFAR-10
  train set, scored on the other half (the search split of the NATS-Bench protocol).
* ``cifar10`` + ``ori-test`` → ``cifar10``: trained on all 50k train images, scored on the test set.
* ``cifar100`` and ``ImageNet16-120``: trained on their train sets; ``x-valid`` and ``x-test`` are
  the two halves of the original test set and ``ori-test`` is all of it.

``valid`` and ``test`` are accepted as aliases (``test`` is ``ori-test`` for CIFAR-10 and ``x-test``
otherwise, as in NATS-Bench). A schedule is NATS-Bench's ``hp``: ``"12"`` or ``"200"`` epochs for the
topology space, ``"01"``, ``"12"`` or ``"90"`` for the size space.
"""

from __future__ import annotations

from dataclasses import dataclass

from nasenergy.oracles.errors import UnknownDatasetError
from search_spaces import DATASETS, NATS_TRAINING_SETS, canonical_dataset

NATS_DATASETS: tuple[str, ...] = (*NATS_TRAINING_SETS, *DATASETS)
"""The training sets NATS-Bench records."""

SPLITS: tuple[str, ...] = ("x-valid", "x-test", "ori-test")

TRAIN_IMAGES: dict[str, int] = {
    "cifar10-valid": 25_000,
    "cifar10": 50_000,
    "cifar100": 50_000,
    "ImageNet16-120": 151_700,
}
"""Images in each NATS training set (one epoch)."""

EVAL_IMAGES: dict[tuple[str, str], int] = {
    ("cifar10-valid", "x-valid"): 25_000,
    ("cifar10-valid", "ori-test"): 10_000,
    ("cifar10", "ori-test"): 10_000,
    ("cifar100", "x-valid"): 5_000,
    ("cifar100", "x-test"): 5_000,
    ("cifar100", "ori-test"): 10_000,
    ("ImageNet16-120", "x-valid"): 3_000,
    ("ImageNet16-120", "x-test"): 3_000,
    ("ImageNet16-120", "ori-test"): 6_000,
}
"""Images in each NATS evaluation set, by (NATS training set, split)."""


@dataclass(frozen=True)
class NatsCell:
    """Where one metric lives in NATS-Bench.

    Attributes:
        dataset: the user-level dataset (``cifar10``, ``cifar100``, ``ImageNet16-120``).
        nats_dataset: the NATS training set (``cifar10-valid`` for CIFAR-10 validation).
        split: ``x-valid``, ``x-test`` or ``ori-test``.
    """

    dataset: str
    nats_dataset: str
    split: str

    @property
    def train_images(self) -> int:
        """Images per training epoch."""
        return TRAIN_IMAGES[self.nats_dataset]

    @property
    def eval_images(self) -> int:
        """Images in one pass over the scored split."""
        return EVAL_IMAGES[(self.nats_dataset, self.split)]


def resolve(dataset: str, split: str) -> NatsCell:
    """Map a user-level dataset and split to NATS-Bench's training set and split.

    Args:
        dataset: ``cifar10``, ``cifar100``, ``ImageNet16-120`` or an alias.
        split: ``x-valid``, ``x-test``, ``ori-test``, or the aliases ``valid`` and ``test``.

    Raises:
        UnknownDatasetError: unknown dataset or split, or a split the dataset lacks (CIFAR-10 has
            no ``x-test``).
    """
    ds = canonical_dataset(dataset)
    sp = str(split).strip().lower().replace("_", "-")
    if sp == "valid":
        sp = "x-valid"
    elif sp == "test":
        sp = "ori-test" if ds == "cifar10" else "x-test"
    if sp not in SPLITS:
        raise UnknownDatasetError(
            f"unknown split {split!r}; choose one of {', '.join(SPLITS)} (or valid, test)"
        )
    if ds == "cifar10":
        if sp == "x-test":
            raise UnknownDatasetError(
                "cifar10 has no x-test split in NATS-Bench; use x-valid (search) or ori-test (report)"
            )
        return NatsCell(ds, "cifar10-valid" if sp == "x-valid" else "cifar10", sp)
    return NatsCell(ds, ds, sp)


def user_dataset(nats_dataset: str) -> str:
    """The user-level dataset a NATS training set belongs to (``cifar10-valid`` → ``cifar10``)."""
    if nats_dataset not in NATS_DATASETS:
        raise UnknownDatasetError(
            f"unknown NATS dataset {nats_dataset!r}; expected one of {', '.join(NATS_DATASETS)}"
        )
    return NATS_TRAINING_SETS.get(nats_dataset, nats_dataset)


def normalize_schedule(schedule: str | int) -> str:
    """NATS-Bench's spelling of a schedule: ``12`` → ``"12"``, ``1`` → ``"01"``, ``200`` → ``"200"``.

    Raises:
        UnknownDatasetError: not a positive whole number of epochs.
    """
    text = str(schedule).strip().lower().removesuffix("ep").removesuffix("epochs").strip()
    if not text.isdigit() or int(text) <= 0:
        raise UnknownDatasetError(
            f"unknown schedule {schedule!r}; a schedule is a number of epochs such as 12 or 200"
        )
    return f"{int(text):02d}"


def schedule_epochs(schedule: str) -> int:
    """Epochs of a schedule (``"01"`` → 1)."""
    return int(normalize_schedule(schedule))
