"""One benchmark table's values: the rows' architectures and the values of its wide or long columns.

One job: `read_table` turns one table's header and rows into a `Contribution` (the values it
gives, by metric and architecture), checking them against the space's official strings
(`SpaceStrings`, one per space: `space_strings`) and the schema (`nasenergy.oracles.table_schema`).
Joining the contributions of a folder is `nasenergy.oracles.tables`'s job.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nasenergy.errors import ArchError
from nasenergy.oracles.archs import check_space_name
from nasenergy.oracles.checks import accuracy_out_of_range, name_items
from nasenergy.oracles.data import EvalKey, MetricKey, TrainKey
from nasenergy.oracles.datasets import EVAL_IMAGES, TRAIN_IMAGES, normalize_schedule
from nasenergy.oracles.errors import (
    CorruptBenchmarkError,
    MissingColumnsError,
    NoUsableRowsError,
    UnknownDatasetError,
)
from nasenergy.oracles.table_csv import float_column, is_float, read_csv
from nasenergy.oracles.table_schema import (LONG_ACC, LONG_EVAL, PREFIX_TO_NATS, WIDE_ACC, WIDE_EVAL, WIDE_TRAIN,
                                            check_cell, is_accuracy_column, schema_columns, split_name)
from search_spaces import get_space, nats_dataset_name

__all__ = ["Contribution", "SpaceStrings", "read_table", "space_strings"]


@dataclass
class Contribution:
    """The values one table gives, by kind and key, as (rows, values[, seeds]) arrays."""

    file: str
    seeded: bool
    means: dict[MetricKey, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    trials: dict[MetricKey, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    train_s: dict[TrainKey, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    eval_s: dict[EvalKey, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.means or self.trials or self.train_s or self.eval_s)

    def has_values(self) -> bool:
        """Whether any row gives a value (an accuracy or a time)."""
        parts = (*self.means.values(), *self.trials.values(), *self.train_s.values(), *self.eval_s.values())
        return any(np.isfinite(part[1]).any() for part in parts)


class SpaceStrings:
    """The official strings of a space and string → index (built once per space, see `space_strings`)."""

    def __init__(self, space_name: str) -> None:
        self.name = space_name
        self.space = get_space(space_name)
        self.arch_strs = np.array([str(a) for a in self.space.enumerate()])
        self.arch_strs.setflags(write=False)
        self.index_of = {s: i for i, s in enumerate(self.arch_strs.tolist())}

    def index(self, text: str) -> int:
        found = self.index_of.get(text)
        if found is None:
            found = self.index_of.get(str(self.space.parse(text)), -1)
        return found


@functools.cache
def space_strings(space_name: str) -> SpaceStrings:
    return SpaceStrings(space_name)


def _row_indices(path: Path, header: list[str], rows: list[list[str]], space: SpaceStrings) -> np.ndarray:
    """Official index of every row (from ``arch_index`` and/or ``arch_str``)."""
    col = {name: i for i, name in enumerate(header)}
    size = space.arch_strs.shape[0]
    indices = None
    if "arch_index" in col:
        try:
            indices = np.array([int(r[col["arch_index"]]) for r in rows], dtype=np.int64)
        except ValueError:
            raise CorruptBenchmarkError(f"table {path}: arch_index holds a non-integer") from None
        bad = np.flatnonzero((indices < 0) | (indices >= size))
        if bad.size:
            raise CorruptBenchmarkError(
                f"table {path}: row {bad[0] + 2}: arch_index {indices[bad[0]]} is outside "
                f"0..{size - 1} of {space.name}"
            )
    if "arch_str" in col:
        strings = [r[col["arch_str"]].strip() for r in rows]
        if indices is not None:
            mismatch = np.flatnonzero(space.arch_strs[indices] != np.array(strings))
            if mismatch.size:
                i = int(mismatch[0])
                raise CorruptBenchmarkError(
                    f"table {path}: row {i + 2}: arch_index {indices[i]} is "
                    f"{space.arch_strs[indices[i]]} in {space.name}, not {strings[i]}"
                )
        else:
            try:
                indices = np.array([space.index(s) for s in strings], dtype=np.int64)
            except ArchError as exc:
                raise CorruptBenchmarkError(f"table {path}: {exc}") from None
            if (indices < 0).any():
                i = int(np.flatnonzero(indices < 0)[0])
                raise CorruptBenchmarkError(f"table {path}: row {i + 2}: {strings[i]} is not in {space.name}")
    if indices is None:
        raise MissingColumnsError(f"table {path} has no arch_str or arch_index column")
    return indices


def _read_wide(path: Path, header: list[str], rows: list[list[str]], space: SpaceStrings) -> Contribution:
    indices = _row_indices(path, header, rows, space)
    duplicated = np.flatnonzero(np.bincount(indices) > 1)
    if duplicated.size:
        raise CorruptBenchmarkError(f"table {path}: architecture {duplicated[0]} has several rows")
    out = Contribution(file=str(path), seeded=False)
    runs: dict[MetricKey, dict[int, np.ndarray]] = defaultdict(dict)
    for c, name in enumerate(header):
        cells = [r[c] for r in rows]
        if match := WIDE_ACC.match(name):
            nats_dataset = PREFIX_TO_NATS[match["ds"]]
            split = split_name(nats_dataset, match["split"])
            check_cell(path, name, nats_dataset, split)
            key = (nats_dataset, split, normalize_schedule(match["hp"]))
            values = float_column(path, name, cells)
            if match["run"] is not None:
                runs[key][int(match["run"])] = values
            else:
                out.means[key] = (indices, values)
        elif match := WIDE_TRAIN.match(name):
            nats_dataset = PREFIX_TO_NATS[match["ds"]]
            out.train_s[(nats_dataset, normalize_schedule(match["hp"]))] = (
                indices, float_column(path, name, cells))
        elif match := WIDE_EVAL.match(name):
            nats_dataset = PREFIX_TO_NATS[match["ds"]]
            split = split_name(nats_dataset, match["split"])
            check_cell(path, name, nats_dataset, split)
            out.eval_s[(nats_dataset, split)] = (indices, float_column(path, name, cells))
    for key, by_run in runs.items():
        values = np.column_stack([by_run[k] for k in sorted(by_run)])
        out.trials[key] = (indices, *_pack_left(values, np.full(values.shape, -1, np.int64)))
    return out


def _pack_left(values: np.ndarray, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each row's recorded runs to the left, keeping their order."""
    order = np.argsort(~np.isfinite(values), axis=1, kind="stable")
    return np.take_along_axis(values, order, 1), np.take_along_axis(seeds, order, 1)


def _read_long(path: Path, header: list[str], rows: list[list[str]], space: SpaceStrings) -> Contribution:
    col = {name: i for i, name in enumerate(header)}
    if "space" in col:
        rows = [r for r in rows if check_space_name(r[col["space"]]) == space.name]
    out = Contribution(file=str(path), seeded="seed" in col)
    if not rows:
        return out
    indices = _row_indices(path, header, rows, space)
    hp_col = col["hp"] if "hp" in col else col["epochs"]  # read_table calls this only with one of them
    datasets, schedules = [], []
    for r in rows:
        try:
            name = nats_dataset_name(r[col["dataset"]])
        except UnknownDatasetError:
            raise UnknownDatasetError(
                f"table {path}: unknown dataset {r[col['dataset']]!r}; expected one of "
                f"{', '.join(TRAIN_IMAGES)}"
            ) from None
        datasets.append(name)
        schedules.append(normalize_schedule(r[hp_col]))
    try:
        seeds = [int(r[col["seed"]]) for r in rows] if out.seeded else [-1] * len(rows)
    except ValueError:
        raise CorruptBenchmarkError(f"table {path}: the seed column holds a non-integer") from None
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(datasets, schedules)):
        groups[key].append(i)
    for (nats_dataset, schedule), members in groups.items():
        member = np.array(members)
        member = member[np.lexsort((np.array(seeds)[member], indices[member]))]
        rows_idx, seeds_g = indices[member], np.array(seeds, dtype=np.int64)[member]
        keys = list(zip(rows_idx.tolist(), seeds_g.tolist()))
        if len(set(keys)) != len(keys):
            raise CorruptBenchmarkError(
                f"table {path}: repeated rows for {nats_dataset}, hp {schedule}"
                + (" and seed" if out.seeded else " (add a seed column for runs)")
            )
        epochs = int(schedule)
        for name, c in col.items():
            cells = [rows[i][c] for i in member]
            if match := LONG_ACC.match(name):
                split = split_name(nats_dataset, match["split"])
                if (nats_dataset, split) not in EVAL_IMAGES:
                    continue
                if not out.seeded:
                    if name not in out.ignored:
                        out.ignored.append(name)
                    continue
                out.trials[(nats_dataset, split, schedule)] = _runs(rows_idx, seeds_g, float_column(path, name, cells))
            elif match := LONG_EVAL.match(name):
                split = split_name(nats_dataset, match["split"])
                if (nats_dataset, split) in EVAL_IMAGES:
                    rows_u, mean = _per_arch_mean(rows_idx, float_column(path, name, cells) / epochs)
                    out.eval_s[(nats_dataset, split)] = _merge_same_key(out.eval_s.get((nats_dataset, split)), rows_u, mean)
        train = _train_time(path, col, rows, member, epochs)
        if train is not None:
            out.train_s[(nats_dataset, schedule)] = _per_arch_mean(rows_idx, train)
    return out


def _train_time(path: Path, col: dict[str, int], rows: list[list[str]], member: np.ndarray,
                epochs: int) -> np.ndarray | None:
    if "train_all_time_s" in col:
        return float_column(path, "train_all_time_s", [rows[i][col["train_all_time_s"]] for i in member])
    if "train_time_per_epoch_s" in col:
        name = "train_time_per_epoch_s"
        return float_column(path, name, [rows[i][col[name]] for i in member]) * epochs
    return None


def _per_arch_mean(rows_idx: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unique, inverse = np.unique(rows_idx, return_inverse=True)
    finite = np.isfinite(values)
    total = np.bincount(inverse, weights=np.where(finite, values, 0.0), minlength=unique.size)
    count = np.bincount(inverse, weights=finite.astype(float), minlength=unique.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return unique, np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _merge_same_key(old: tuple[np.ndarray, np.ndarray] | None, rows: np.ndarray,
                    values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Evaluation times of one split come from every schedule; keep the first per architecture."""
    if old is None:
        return rows, values
    keep = ~np.isin(rows, old[0])
    return np.concatenate([old[0], rows[keep]]), np.concatenate([old[1], values[keep]])


def _runs(rows_idx: np.ndarray, seeds: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, values[n, K], seeds[n, K]) from one value per (row, seed), rows sorted."""
    unique, inverse, counts = np.unique(rows_idx, return_inverse=True, return_counts=True)
    width = int(counts.max())
    out_v = np.full((unique.size, width), np.nan)
    out_s = np.full((unique.size, width), -1, np.int64)
    slot = np.zeros(unique.size, np.int64)
    for i, u in enumerate(inverse):
        out_v[u, slot[u]] = values[i]
        out_s[u, slot[u]] = seeds[i]
        slot[u] += 1
    packed_v, packed_s = _pack_left(out_v, out_s)
    return unique, packed_v, packed_s


def read_table(path: Path, space: SpaceStrings,
               content: tuple[list[str], list[list[str]]] | None = None) -> Contribution:
    """One table's values.

    Args:
        path: the table.
        space: the space's official strings.
        content: the table's header and rows when already read.

    Raises:
        MissingColumnsError: no architecture column, or no column of the schema.
        CorruptBenchmarkError: unreadable, malformed or inconsistent with the space.
    """
    header, rows = content if content is not None else read_csv(path)
    if "arch_str" not in header and "arch_index" not in header:
        raise MissingColumnsError(
            f"table {path} has no arch_str or arch_index column (see `python -m nasenergy.benchmark "
            f"schema`)"
        )
    _check_accuracies(path, header, rows)
    if "dataset" in header and ("hp" in header or "epochs" in header):
        contribution = _read_long(path, header, rows, space)
    else:
        contribution = _read_wide(path, header, rows, space)
    if contribution.empty() and not contribution.ignored and not (rows and schema_columns(header)):
        raise MissingColumnsError(
            f"table {path} has no accuracy or time column of the schema, e.g. "
            f"cifar10valid_valid_acc_12ep (see `python -m nasenergy.benchmark schema`)"
        )
    if not contribution.has_values() and not contribution.ignored:
        raise NoUsableRowsError(f"table {path} has no usable row: {_why_unusable(header, rows, space)}")
    return contribution


def _why_unusable(header: list[str], rows: list[list[str]], space: SpaceStrings) -> str:
    if not rows:
        return "it has a header and no data rows"
    if "space" in header:
        return f"none of its {len(rows)} rows (rows 2-{len(rows) + 1}) gives a value for {space.name}"
    return f"none of its {len(rows)} rows (rows 2-{len(rows) + 1}) gives an accuracy or a time"


def _check_accuracies(path: Path, header: list[str], rows: list[list[str]]) -> None:
    """Refuse accuracies outside [0, 100] %, naming the rows.

    Raises:
        CorruptBenchmarkError: an accuracy column holds a value outside [0, 100].
    """
    for c, name in enumerate(header):
        if not is_accuracy_column(name):
            continue
        bad = [(i + 2, float(r[c])) for i, r in enumerate(rows)
               if r[c].strip() and is_float(r[c]) and accuracy_out_of_range(float(r[c]))]
        if bad:
            raise CorruptBenchmarkError(
                f"table {path}: column {name} holds accuracies outside [0, 100] %: {name_items(bad, 'row')}"
            )
