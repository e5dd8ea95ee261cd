"""Writing small benchmark tables for the oracle tests."""

from __future__ import annotations

import csv
from pathlib import Path


def write_table(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    """A CSV table at `path` with `header` and `rows`; returns `path`."""
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path
