"""The column names of the benchmark-table schema (documented in `nasenergy.oracles.tables`).

One job: what a table's header means. Patterns of the wide and long columns (`WIDE_ACC`,
`WIDE_TRAIN`, `WIDE_EVAL`, `LONG_ACC`, `LONG_EVAL`), the training-set prefix of wide columns
(`PREFIX_TO_NATS`), the NATS split a column's split names (`split_name`, `check_cell`), which
columns give values (`is_accuracy_column`, `schema_columns`) and which space a table's
architecture strings belong to (`table_space`).
"""

from __future__ import annotations

import re
from pathlib import Path

from nasenergy.oracles.datasets import EVAL_IMAGES, NATS_DATASETS
from nasenergy.oracles.errors import UnknownDatasetError
from search_spaces import DATASET_ALIASES, nats_dataset_name

__all__ = ["LONG_ACC", "LONG_EVAL", "PREFIX_TO_NATS", "WIDE_ACC", "WIDE_EVAL", "WIDE_TRAIN",
           "check_cell", "is_accuracy_column", "schema_columns", "split_name", "table_space"]

PREFIX_TO_NATS: dict[str, str] = {
    re.sub(r"[^a-z0-9]", "", spelling.lower()): nats_dataset_name(spelling)
    for spelling in (*NATS_DATASETS, *DATASET_ALIASES)
}
"""Wide column prefixes: every spelling of a training set without case or punctuation
(``cifar10valid``, ``imagenet16``, ``imagenet16120``, ...) -> its NATS name."""
_DS = "|".join(sorted(PREFIX_TO_NATS, key=len, reverse=True))
_SPLIT = "valid|test|oritest|xvalid|xtest"
WIDE_ACC = re.compile(
    rf"^(?P<ds>{_DS})_(?P<split>{_SPLIT})_acc_(?P<hp>\d+)ep(?:_(?:mean|run(?P<run>\d+)))?$"
)
WIDE_TRAIN = re.compile(rf"^(?P<ds>{_DS})_train_time_(?P<hp>\d+)ep_s$")
WIDE_EVAL = re.compile(rf"^(?P<ds>{_DS})_(?P<split>{_SPLIT})_eval_time_s$")
LONG_ACC = re.compile(r"^(?P<split>x_valid|x_test|ori_test|valid|test)_acc$")
LONG_EVAL = re.compile(r"^(?P<split>x_valid|x_test|ori_test|valid|test)_all_time_s$")


def split_name(nats_dataset: str, split: str) -> str:
    """The NATS split (``x-valid``, ``x-test``, ``ori-test``) a column's split names for `nats_dataset`."""
    split = split.replace("_", "").replace("-", "")
    if split == "valid" or split == "xvalid":
        return "x-valid"
    if split == "xtest":
        return "x-test"
    if split == "oritest":
        return "ori-test"
    return "ori-test" if nats_dataset in ("cifar10-valid", "cifar10") else "x-test"


def check_cell(path: Path, column: str, nats_dataset: str, split: str) -> None:
    """Refuse a column of table `path` naming a split that `nats_dataset` does not have."""
    if (nats_dataset, split) not in EVAL_IMAGES:
        raise UnknownDatasetError(
            f"table {path}: column {column} names split {split} of {nats_dataset}, "
            f"which NATS-Bench does not have"
        )


def table_space(header: list[str], rows: list[list[str]]) -> str | None:
    """The space whose architectures a table lists: ``sss`` when its first ``arch_str`` names widths
    (``8:16:...``), ``tss`` for a cell string; None when it cannot tell (no ``arch_str``, no rows, or
    a ``space`` column, whose rows are filtered by space)."""
    if "space" in header or "arch_str" not in header or not rows:
        return None
    text = rows[0][header.index("arch_str")].strip()
    return "sss" if ":" in text and "|" not in text else "tss"


def is_accuracy_column(name: str) -> bool:
    """Whether column `name` holds accuracies (wide or long)."""
    return bool(WIDE_ACC.match(name) or LONG_ACC.match(name))


def schema_columns(header: list[str]) -> list[str]:
    """The columns of ``header`` that give values (accuracies or times)."""
    times = (WIDE_TRAIN, WIDE_EVAL, LONG_EVAL)
    return [name for name in header if is_accuracy_column(name) or any(t.match(name) for t in times)
            or name in ("train_all_time_s", "train_time_per_epoch_s")]
