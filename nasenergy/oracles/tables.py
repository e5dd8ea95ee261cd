"""Benchmark tables: CSV files (optionally gzipped) of accuracies and times, one or a folder.

Schema
======

Every table has an architecture column: ``arch_str`` (official NATS-Bench string) and/or
``arch_index`` (official index). When both are present they must agree. Other columns are read by
name; columns the schema does not name (``op_code``, ``isomorph_str``, losses, ...) are ignored.

**Wide tables** (one row per architecture). Names use a dataset prefix ``<ds>``:
``cifar10valid`` (CIFAR-10 trained on its train half), ``cifar10`` (trained on train+valid),
``cifar100``, ``imagenet16`` (ImageNet16-120), and a split ``<split>``: ``valid`` (x-valid),
``test`` (ori-test for CIFAR-10, x-test otherwise), ``oritest``, ``xvalid``, ``xtest``.

===================================  =========================================================
column                               meaning
===================================  =========================================================
``<ds>_<split>_acc_<E>ep``           top-1 %, after the ``E``-epoch schedule, mean over runs
``<ds>_<split>_acc_<E>ep_mean``      the same
``<ds>_<split>_acc_<E>ep_run<k>``    top-1 % of run ``k`` (seed not recorded); empty if none
``<ds>_train_time_<E>ep_s``          seconds to train for the whole schedule (optional)
``<ds>_<split>_eval_time_s``         seconds of one evaluation pass over the split (optional)
===================================  =========================================================

e.g. ``cifar10valid_valid_acc_12ep`` is NATS-Bench's search metric and ``cifar10_test_acc_200ep``
its CIFAR-10 report metric.

**Long tables** (one row per architecture, NATS training set, schedule, and optionally seed):
columns ``dataset`` (``cifar10-valid``, ``cifar10``, ``cifar100``, ``ImageNet16-120``), ``hp``
(or ``epochs``), optionally ``seed`` and ``space`` (rows of another space are skipped), and

===================================  =========================================================
column                               meaning
===================================  =========================================================
``x_valid_acc``, ``x_test_acc``,     top-1 % of that run on that split (``valid_acc`` and
``ori_test_acc``                     ``test_acc`` name the split as in wide tables); read only
                                     with a ``seed`` column (otherwise the run is unknown and
                                     the columns are reported as ignored)
``train_all_time_s``                 seconds to train for the whole schedule
``train_time_per_epoch_s``           seconds per training epoch (used without the above)
``<split>_all_time_s``               seconds of all the evaluation passes of the schedule
                                     (one per epoch), for ``test``, ``valid``, ``x_valid``,
                                     ``x_test``, ``ori_test``
===================================  =========================================================

Runs of a long table with seeds are ordered by seed. A **folder** is every ``*.csv`` and
``*.csv.gz`` directly in it, joined by architecture; files without an architecture column or any
schema column, and tables whose ``arch_str`` names architectures of the other space (SSS widths
``8:16:24:32:40`` in a TSS read, or cell strings in an SSS read), are skipped (and listed). Where two files give the same value they must agree to
within `TOLERANCE`; otherwise the first is kept (tables with seeds first, then by file name) and the
disagreement is recorded in the provenance. The shared NATS-Bench tables
(``nb201_*.csv.gz``, ``nats_tss_first1000_train_time__*.csv.gz``,
``nats_official_3arch_records__*.csv``, and for SSS ``nats_sss_hp90_*.csv.gz``) are examples of
this schema; that folder read as TSS (the default) skips the SSS tables, and read as SSS
(``--space sss``) skips the TSS ones.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import ArchError, UsageError
from nasenergy.oracles.archs import check_space_name
from nasenergy.oracles.data import BenchmarkData, EvalKey, MetricKey, TrainKey
from nasenergy.oracles.datasets import EVAL_IMAGES, NATS_DATASETS, TRAIN_IMAGES, normalize_schedule
from nasenergy.oracles.checks import accuracy_out_of_range, name_items
from nasenergy.oracles.errors import (
    GET_A_BENCHMARK,
    BenchmarkNotFoundError,
    CorruptBenchmarkError,
    MissingColumnsError,
    NoUsableRowsError,
    UnknownDatasetError,
)
from search_spaces import DATASET_ALIASES, get_space, nats_dataset_name

TOLERANCE = 1e-4
"""Largest difference (in % or s) between two tables' values that still counts as agreement."""

TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".csv.gz")

_PREFIX_TO_NATS: dict[str, str] = {
    re.sub(r"[^a-z0-9]", "", spelling.lower()): nats_dataset_name(spelling)
    for spelling in (*NATS_DATASETS, *DATASET_ALIASES)
}
"""Wide column prefixes: every spelling of a training set without case or punctuation
(``cifar10valid``, ``imagenet16``, ``imagenet16120``, ...) -> its NATS name."""
_DS = "|".join(sorted(_PREFIX_TO_NATS, key=len, reverse=True))
_SPLIT = "valid|test|oritest|xvalid|xtest"
_WIDE_ACC = re.compile(
    rf"^(?P<ds>{_DS})_(?P<split>{_SPLIT})_acc_(?P<hp>\d+)ep(?:_(?:mean|run(?P<run>\d+)))?$"
)
_WIDE_TRAIN = re.compile(rf"^(?P<ds>{_DS})_train_time_(?P<hp>\d+)ep_s$")
_WIDE_EVAL = re.compile(rf"^(?P<ds>{_DS})_(?P<split>{_SPLIT})_eval_time_s$")
_LONG_ACC = re.compile(r"^(?P<split>x_valid|x_test|ori_test|valid|test)_acc$")
_LONG_EVAL = re.compile(r"^(?P<split>x_valid|x_test|ori_test|valid|test)_all_time_s$")


def is_table(path: Path) -> bool:
    """Whether `path` names a CSV table (``.csv`` or ``.csv.gz``)."""
    return path.is_file() and path.name.lower().endswith(TABLE_SUFFIXES)


def table_files(folder: Path) -> list[Path]:
    """The tables directly inside `folder`, by name."""
    return sorted(p for p in folder.iterdir() if is_table(p))


def _split_name(nats_dataset: str, split: str) -> str:
    split = split.replace("_", "").replace("-", "")
    if split == "valid" or split == "xvalid":
        return "x-valid"
    if split == "xtest":
        return "x-test"
    if split == "oritest":
        return "ori-test"
    return "ori-test" if nats_dataset in ("cifar10-valid", "cifar10") else "x-test"


@dataclass
class _Contribution:
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


class _Space:
    """The official strings of a space and string → index (built once per space, see `_space`)."""

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
def _space(space_name: str) -> _Space:
    return _Space(space_name)


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    try:
        raw = path.read_bytes()
        if path.name.lower().endswith(".gz"):
            raw = gzip.decompress(raw)
        reader = csv.reader(io.StringIO(raw.decode("utf-8-sig")))
        header = [h.strip() for h in next(reader, [])]
        rows = [row for row in reader if row]
    except (OSError, EOFError, UnicodeDecodeError, csv.Error, gzip.BadGzipFile) as exc:
        raise CorruptBenchmarkError(f"cannot read table {path}: {type(exc).__name__}: {exc}") from exc
    if any(len(row) != len(header) for row in rows):
        bad = next(i for i, row in enumerate(rows) if len(row) != len(header))
        raise CorruptBenchmarkError(
            f"table {path}: row {bad + 2} has {len(rows[bad])} fields, the header has {len(header)}"
        )
    return header, rows


def _floats(path: Path, name: str, cells: list[str]) -> np.ndarray:
    try:
        return np.array([float(c) if c.strip() else np.nan for c in cells], dtype=np.float64)
    except ValueError:
        bad = next(i for i, c in enumerate(cells) if c.strip() and not _is_float(c))
        raise CorruptBenchmarkError(
            f"table {path}: column {name}, row {bad + 2}: {cells[bad]!r} is not a number"
        ) from None


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _row_indices(path: Path, header: list[str], rows: list[list[str]], space: _Space) -> np.ndarray:
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


def _check_cell(path: Path, column: str, nats_dataset: str, split: str) -> None:
    if (nats_dataset, split) not in EVAL_IMAGES:
        raise UnknownDatasetError(
            f"table {path}: column {column} names split {split} of {nats_dataset}, "
            f"which NATS-Bench does not have"
        )


def _read_wide(path: Path, header: list[str], rows: list[list[str]], space: _Space) -> _Contribution:
    indices = _row_indices(path, header, rows, space)
    duplicated = np.flatnonzero(np.bincount(indices) > 1)
    if duplicated.size:
        raise CorruptBenchmarkError(f"table {path}: architecture {duplicated[0]} has several rows")
    out = _Contribution(file=str(path), seeded=False)
    runs: dict[MetricKey, dict[int, np.ndarray]] = defaultdict(dict)
    for c, name in enumerate(header):
        cells = [r[c] for r in rows]
        if match := _WIDE_ACC.match(name):
            nats_dataset = _PREFIX_TO_NATS[match["ds"]]
            split = _split_name(nats_dataset, match["split"])
            _check_cell(path, name, nats_dataset, split)
            key = (nats_dataset, split, normalize_schedule(match["hp"]))
            values = _floats(path, name, cells)
            if match["run"] is not None:
                runs[key][int(match["run"])] = values
            else:
                out.means[key] = (indices, values)
        elif match := _WIDE_TRAIN.match(name):
            nats_dataset = _PREFIX_TO_NATS[match["ds"]]
            out.train_s[(nats_dataset, normalize_schedule(match["hp"]))] = (
                indices, _floats(path, name, cells))
        elif match := _WIDE_EVAL.match(name):
            nats_dataset = _PREFIX_TO_NATS[match["ds"]]
            split = _split_name(nats_dataset, match["split"])
            _check_cell(path, name, nats_dataset, split)
            out.eval_s[(nats_dataset, split)] = (indices, _floats(path, name, cells))
    for key, by_run in runs.items():
        values = np.column_stack([by_run[k] for k in sorted(by_run)])
        out.trials[key] = (indices, *_pack_left(values, np.full(values.shape, -1, np.int64)))
    return out


def _pack_left(values: np.ndarray, seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each row's recorded runs to the left, keeping their order."""
    order = np.argsort(~np.isfinite(values), axis=1, kind="stable")
    return np.take_along_axis(values, order, 1), np.take_along_axis(seeds, order, 1)


def _read_long(path: Path, header: list[str], rows: list[list[str]], space: _Space) -> _Contribution:
    col = {name: i for i, name in enumerate(header)}
    if "space" in col:
        rows = [r for r in rows if check_space_name(r[col["space"]]) == space.name]
    out = _Contribution(file=str(path), seeded="seed" in col)
    if not rows:
        return out
    indices = _row_indices(path, header, rows, space)
    hp_col = col.get("hp", col.get("epochs"))
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
            if match := _LONG_ACC.match(name):
                split = _split_name(nats_dataset, match["split"])
                if (nats_dataset, split) not in EVAL_IMAGES:
                    continue
                if not out.seeded:
                    if name not in out.ignored:
                        out.ignored.append(name)
                    continue
                out.trials[(nats_dataset, split, schedule)] = _runs(rows_idx, seeds_g, _floats(path, name, cells))
            elif match := _LONG_EVAL.match(name):
                split = _split_name(nats_dataset, match["split"])
                if (nats_dataset, split) in EVAL_IMAGES:
                    rows_u, mean = _per_arch_mean(rows_idx, _floats(path, name, cells) / epochs)
                    out.eval_s[(nats_dataset, split)] = _merge_same_key(out.eval_s.get((nats_dataset, split)), rows_u, mean)
        train = _train_time(path, col, rows, member, epochs)
        if train is not None:
            out.train_s[(nats_dataset, schedule)] = _per_arch_mean(rows_idx, train)
    return out


def _train_time(path: Path, col: dict[str, int], rows: list[list[str]], member: np.ndarray,
                epochs: int) -> np.ndarray | None:
    if "train_all_time_s" in col:
        return _floats(path, "train_all_time_s", [rows[i][col["train_all_time_s"]] for i in member])
    if "train_time_per_epoch_s" in col:
        name = "train_time_per_epoch_s"
        return _floats(path, name, [rows[i][col[name]] for i in member]) * epochs
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


def _runs(rows_idx: np.ndarray, seeds: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, ...]:
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
    return (unique, *_pack_left(out_v, out_s))


def read_table(path: Path, space: _Space,
               content: tuple[list[str], list[list[str]]] | None = None) -> _Contribution:
    """One table's values.

    Args:
        path: the table.
        space: the space's official strings.
        content: the table's header and rows when already read.

    Raises:
        MissingColumnsError: no architecture column, or no column of the schema.
        CorruptBenchmarkError: unreadable, malformed or inconsistent with the space.
    """
    header, rows = content if content is not None else _read_csv(path)
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
    if contribution.empty() and not contribution.ignored and not (rows and _schema_columns(header)):
        raise MissingColumnsError(
            f"table {path} has no accuracy or time column of the schema, e.g. "
            f"cifar10valid_valid_acc_12ep (see `python -m nasenergy.benchmark schema`)"
        )
    if not contribution.has_values() and not contribution.ignored:
        raise NoUsableRowsError(f"table {path} has no usable row: {_why_unusable(header, rows, space)}")
    return contribution


def _table_space(header: list[str], rows: list[list[str]]) -> str | None:
    """The space whose architectures a table lists: ``sss`` when its first ``arch_str`` names widths
    (``8:16:...``), ``tss`` for a cell string; None when it cannot tell (no ``arch_str``, no rows, or
    a ``space`` column, whose rows are filtered by space)."""
    if "space" in header or "arch_str" not in header or not rows:
        return None
    text = rows[0][header.index("arch_str")].strip()
    return "sss" if ":" in text and "|" not in text else "tss"

def _is_accuracy_column(name: str) -> bool:
    return bool(_WIDE_ACC.match(name) or _LONG_ACC.match(name))


def _schema_columns(header: list[str]) -> list[str]:
    """The columns of ``header`` that give values (accuracies or times)."""
    times = (_WIDE_TRAIN, _WIDE_EVAL, _LONG_EVAL)
    return [name for name in header if _is_accuracy_column(name) or any(t.match(name) for t in times)
            or name in ("train_all_time_s", "train_time_per_epoch_s")]


def _why_unusable(header: list[str], rows: list[list[str]], space: _Space) -> str:
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
        if not _is_accuracy_column(name):
            continue
        bad = [(i + 2, float(r[c])) for i, r in enumerate(rows)
               if r[c].strip() and _is_float(r[c]) and accuracy_out_of_range(float(r[c]))]
        if bad:
            raise CorruptBenchmarkError(
                f"table {path}: column {name} holds accuracies outside [0, 100] %: {name_items(bad, 'row')}"
            )


def _infer_space(contents: list[tuple[list[str], list[list[str]]]]) -> str:
    """The one space the tables' strings show; ``tss`` (the default space) when they show none or both."""
    shown = {name for name in (_table_space(*content) for content in contents) if name is not None}
    return shown.pop() if len(shown) == 1 else "tss"


def read_tables(path: str | Path, space_name: str | None = None) -> BenchmarkData:
    """Read one table or a folder of tables into a `BenchmarkData`.

    Args:
        path: a ``.csv`` / ``.csv.gz`` file or a folder of them.
        space_name: ``tss`` or ``sss``; None infers it from the architecture strings (``tss`` when
            a folder holds tables of both spaces). Tables of the other space are skipped (and
            listed in the provenance).

    Raises:
        UsageError: a lone table of the other space.
        BenchmarkNotFoundError: no such file or folder, or a folder without tables.
        MissingColumnsError: a lone table without the needed columns, or a folder none of whose
            tables has them.
        CorruptBenchmarkError: unreadable or inconsistent tables.
    """
    path = Path(path).expanduser()
    if path.is_dir():
        files = table_files(path)
        if not files:
            raise BenchmarkNotFoundError(f"no .csv or .csv.gz tables in {path}; {GET_A_BENCHMARK}")
    elif is_table(path):
        files = [path]
    else:
        raise BenchmarkNotFoundError(f"no benchmark table at {path}; {GET_A_BENCHMARK}")
    return read_table_files(files, space_name, source=path)


def read_table_files(files: Sequence[Path], space_name: str | None = None, *,
                     source: Path) -> BenchmarkData:
    """Read and join the given tables (as `read_tables` joins a folder's).

    Args:
        files: the tables, at least one.
        space_name: ``tss`` / ``sss``; None infers it as `read_tables` does.
        source: the file or folder the provenance names as the source.

    Raises:
        The errors of `read_tables`.
    """
    files = list(files)
    contents = [_read_csv(file) for file in files]
    space = _space(check_space_name(space_name) if space_name else _infer_space(contents))
    contributions, skipped = [], []
    for file, content in zip(files, contents):
        other = _table_space(*content)
        if other is not None and other != space.name:
            if len(files) == 1:
                raise UsageError(f"table {file} lists {other} architectures, not {space.name}")
            skipped.append(f"{file.name}: lists {other} architectures, not {space.name}")
            continue
        try:
            contributions.append(read_table(file, space, content))
        except MissingColumnsError as exc:
            if len(files) == 1:
                raise
            skipped.append(f"{file.name}: {exc}")
    usable = [c for c in contributions if not c.empty()]
    if not usable:
        raise MissingColumnsError(f"no table in {source} has accuracy columns of the schema "
                                  f"(see `python -m nasenergy.benchmark schema`)")
    usable.sort(key=lambda c: (not c.seeded, c.file))
    data = _merge(usable, space)
    if not any(np.isfinite(v).any() for v in (*data.means.values(), *data.trials.values())):
        raise NoUsableRowsError(
            f"no row of {source} gives an accuracy (only times: {', '.join(Path(c.file).name for c in usable)}); "
            "an accuracy benchmark needs at least one accuracy column with values"
        )
    data.provenance.update({
        "kind": "tables",
        "source": str(Path(source).resolve()),
        "files": [Path(c.file).name for c in usable],
        "skipped": skipped,
        "ignored_columns": {Path(c.file).name: c.ignored for c in contributions if c.ignored},
        "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })
    return data


def _merge(contributions: list[_Contribution], space: _Space) -> BenchmarkData:
    n = space.arch_strs.shape[0]
    data = BenchmarkData(space_name=space.name, arch_strs=space.arch_strs)
    conflicts: list[dict[str, Any]] = []
    for c in contributions:
        name = Path(c.file).name
        for target, part in ((data.means, c.means), (data.train_s, c.train_s), (data.eval_s, c.eval_s)):
            for key, (rows, values) in part.items():
                if not np.isfinite(values).any():
                    continue
                array = target.setdefault(key, np.full(n, np.nan))
                _fill(array, rows, values, "/".join(key), name, conflicts)
    for key in sorted({k for c in contributions for k in c.trials}):
        parts = [(Path(c.file).name, c.trials[key]) for c in contributions
                 if key in c.trials and np.isfinite(c.trials[key][1]).any()]
        if not parts:
            continue
        width = max(p[1][1].shape[1] for p in parts)
        values = np.full((n, width), np.nan)
        seeds = np.full((n, width), -1, np.int64)
        for name, (rows, vals, sds) in parts:
            has = np.isfinite(values[rows]).any(axis=1)
            fresh = rows[~has]
            values[fresh, : vals.shape[1]] = vals[~has]
            seeds[fresh, : sds.shape[1]] = sds[~has]
            if has.any():
                old = values[rows[has], : vals.shape[1]]
                differ = ~np.isclose(old, vals[has], atol=TOLERANCE, rtol=0, equal_nan=True)
                if differ.any():
                    conflicts.append({"values": "runs " + "/".join(key), "file": name,
                                      "archs": int(differ.any(axis=1).sum())})
        data.trials[key] = values
        data.trial_seeds[key] = seeds
    data.provenance["conflicts"] = conflicts
    data.validate()
    return data


def _fill(array: np.ndarray, rows: np.ndarray, values: np.ndarray, label: str, file: str,
          conflicts: list[dict[str, Any]]) -> None:
    current = array[rows]
    fresh = np.isnan(current) & np.isfinite(values)
    array[rows[fresh]] = values[fresh]
    both = np.isfinite(current) & np.isfinite(values)
    differ = both & (np.abs(current - values) > TOLERANCE)
    if differ.any():
        conflicts.append({"values": label, "file": file, "archs": int(differ.sum())})
