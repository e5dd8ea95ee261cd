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
# This docstring is the schema that ``python -m nasenergy.benchmark schema`` prints. This module's
# job is reading one table or a folder and joining the tables (`read_tables`, `read_table_files`);
# the files are read by `nasenergy.oracles.table_csv`, one table's values by
# `nasenergy.oracles.table_read`, column names by `nasenergy.oracles.table_schema`.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from nasenergy.errors import UsageError
from nasenergy.oracles.archs import check_space_name
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.errors import GET_A_BENCHMARK, BenchmarkNotFoundError, MissingColumnsError, NoUsableRowsError
from nasenergy.oracles.table_csv import TABLE_SUFFIXES, is_table, read_csv, table_files
from nasenergy.oracles.table_read import Contribution, SpaceStrings, read_table, space_strings
from nasenergy.oracles.table_schema import table_space

_Key = TypeVar("_Key", bound=tuple[str, ...])

__all__ = ["TABLE_SUFFIXES", "TOLERANCE", "is_table", "read_table", "read_table_files", "read_tables", "table_files"]

TOLERANCE = 1e-4
"""Largest difference (in % or s) between two tables' values that still counts as agreement."""


def _infer_space(contents: list[tuple[list[str], list[list[str]]]]) -> str:
    """The one space the tables' strings show; ``tss`` (the default space) when they show none or both."""
    shown = {name for name in (table_space(*content) for content in contents) if name is not None}
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
    contents = [read_csv(file) for file in files]
    space = space_strings(check_space_name(space_name) if space_name else _infer_space(contents))
    contributions, skipped = [], []
    for file, content in zip(files, contents):
        other = table_space(*content)
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


def _merge(contributions: list[Contribution], space: SpaceStrings) -> BenchmarkData:
    n = space.arch_strs.shape[0]
    data = BenchmarkData(space_name=space.name, arch_strs=space.arch_strs)
    conflicts: list[dict[str, Any]] = []
    for c in contributions:
        name = Path(c.file).name
        _merge_part(data.means, c.means, n, name, conflicts)
        _merge_part(data.train_s, c.train_s, n, name, conflicts)
        _merge_part(data.eval_s, c.eval_s, n, name, conflicts)
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


def _merge_part(target: dict[_Key, np.ndarray], part: Mapping[_Key, tuple[np.ndarray, np.ndarray]], n: int,
                file: str, conflicts: list[dict[str, Any]]) -> None:
    """Fill `target`'s per-architecture columns from one file's `part` (rows, values)."""
    for key, (rows, values) in part.items():
        if not np.isfinite(values).any():
            continue
        array = target.setdefault(key, np.full(n, np.nan))
        _fill(array, rows, values, "/".join(key), file, conflicts)


def _fill(array: np.ndarray, rows: np.ndarray, values: np.ndarray, label: str, file: str,
          conflicts: list[dict[str, Any]]) -> None:
    current = array[rows]
    fresh = np.isnan(current) & np.isfinite(values)
    array[rows[fresh]] = values[fresh]
    both = np.isfinite(current) & np.isfinite(values)
    differ = both & (np.abs(current - values) > TOLERANCE)
    if differ.any():
        conflicts.append({"values": label, "file": file, "archs": int(differ.sum())})
