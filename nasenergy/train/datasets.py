"""The user's data as a dataset of the search's vocabulary: registered under a name of its own
(``data-<name>``) with its input shape and classes, so the spaces build and count its networks."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from nasenergy.train.data import ImageData, load_data
from search_spaces import DatasetInfo, register_dataset


def data_dataset_name(data: ImageData) -> str:
    """``data-<name>``: the data's name in letters, digits, ``.``, ``_`` and ``-`` (never one of
    NATS-Bench's dataset names)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", data.name).strip("-") or "data"
    return f"data-{slug}"[:60]


def register_data(data: ImageData) -> str:
    """Register `data` as a dataset (replacing an earlier registration of the same name) and
    return its name."""
    name = data_dataset_name(data)
    register_dataset(DatasetInfo(name, data.num_classes, tuple(data.input_shape)), replace=True)  # type: ignore[arg-type]
    return name


def data_spec(text: str) -> str:
    """The form of a ``--data`` value a study records: ``digits`` as it is, a path made absolute
    (so a resumed run or a worker elsewhere on the host reads the same files)."""
    return text if text.strip().lower() == "digits" else str(Path(text).expanduser().resolve())


@functools.lru_cache(maxsize=4)
def load_registered(spec: str, val_fraction: float) -> tuple[ImageData, str]:
    """Load `spec` (validation split seed 0) and register it; cached per process."""
    data = load_data(spec, val_fraction=val_fraction, split_seed=0)
    return data, register_data(data)
