"""Reading benchmark-table files: which files are tables, and their cells as text or numbers.

One job: the file level of `nasenergy.oracles.tables`. `is_table` and `table_files` find ``.csv``
and ``.csv.gz`` tables; `read_csv` reads one into a header and rows of text (refusing unreadable
or ragged files); `float_column` turns one column's cells into numbers (empty cells: NaN).
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np

from nasenergy.oracles.errors import CorruptBenchmarkError

__all__ = ["TABLE_SUFFIXES", "float_column", "is_float", "is_table", "read_csv", "table_files"]

TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".csv.gz")


def is_table(path: Path) -> bool:
    """Whether `path` names a CSV table (``.csv`` or ``.csv.gz``)."""
    return path.is_file() and path.name.lower().endswith(TABLE_SUFFIXES)


def table_files(folder: Path) -> list[Path]:
    """The tables directly inside `folder`, by name."""
    return sorted(p for p in folder.iterdir() if is_table(p))


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header (stripped) and non-empty rows of table `path` (gzipped where named ``.gz``)."""
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


def float_column(path: Path, name: str, cells: list[str]) -> np.ndarray:
    """Column `name`'s `cells` as float64 (empty cells: NaN), naming the first non-number."""
    try:
        return np.array([float(c) if c.strip() else np.nan for c in cells], dtype=np.float64)
    except ValueError:
        bad = next(i for i, c in enumerate(cells) if c.strip() and not is_float(c))
        raise CorruptBenchmarkError(
            f"table {path}: column {name}, row {bad + 2}: {cells[bad]!r} is not a number"
        ) from None


def is_float(text: str) -> bool:
    """Whether `text` reads as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True
