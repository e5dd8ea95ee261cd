"""Recorded proxy tables: the row layout `experiments/proxies_table.py` writes, and `ProxyTable`,
which reads a table (``nasenergy/data/tss_proxies.csv.gz``, ``sss_proxies.csv.gz``) and answers any
architecture of the space with ``source = "recorded"`` results.

One row per network and dataset: ``dataset``, ``arch_index`` and ``arch`` name the network (for
TSS the deployed class's member of smallest official index, `SearchSpace.deployed_representative`:
every cell of the class deploys to that network, so its row is exact for all of them; for SSS each
configuration is its own network), then for each proxy its score (``<proxy>``) and cost in seconds
(``<proxy>_cost_s``), the ``reason`` of degenerate scores (``proxy: reason; ...``), and how the row
was computed (``device``, ``seed``, ``init_seed``, ``batch_size``, ``data``, ``torch_version``,
``measured_at``).
"""

from __future__ import annotations

import csv
import gzip
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nasenergy.errors import DataNotFoundError, UsageError, malformed_input, typed_first_line
from nasenergy.proxies.compute import ProxyReport
from nasenergy.proxies.registry import proxy_kind
from nasenergy.proxies.result import ProxyResult
from search_spaces import Arch, SearchSpace, get_space

TABLE_PROXIES: tuple[str, ...] = ("synflow", "jacov", "naswot", "snip", "grad_norm", "flops", "params")
"""The proxies a recorded table holds, in column order."""

KEY_COLUMNS: tuple[str, ...] = ("dataset", "arch_index", "arch")
RUN_COLUMNS: tuple[str, ...] = ("device", "seed", "init_seed", "batch_size", "data", "torch_version", "measured_at")
TABLE_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, *TABLE_PROXIES, *(f"{p}_cost_s" for p in TABLE_PROXIES),
                                  "reason", *RUN_COLUMNS)
"""Every column of a recorded table, in order."""

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def default_table_path(space: str) -> Path:
    """Where the recorded table of `space` ships: ``nasenergy/data/<space>_proxies.csv.gz``."""
    return DATA_DIR / f"{space}_proxies.csv.gz"


__all__ = ["KEY_COLUMNS", "TABLE_COLUMNS", "TABLE_PROXIES", "ProxyTable", "default_table_path",
           "read_proxy_table", "read_rows", "report_row"]


def _fmt(x: float, digits: int) -> str:
    return repr(float(x)) if not math.isfinite(x) else f"{x:.{digits}g}"


def report_row(report: ProxyReport, arch_index: int, *, torch_version: str, measured_at: str) -> dict[str, str]:
    """The table row of `report` (which must hold every proxy of `TABLE_PROXIES`)."""
    first = report[TABLE_PROXIES[1]]  # a data-dependent one: its batch settings are the row's
    row = {"dataset": report.dataset, "arch_index": str(int(arch_index)), "arch": report.network}
    for name in TABLE_PROXIES:
        row[name] = _fmt(report[name].score, 10)
    for name in TABLE_PROXIES:
        row[f"{name}_cost_s"] = _fmt(report[name].cost_s, 3)
    row["reason"] = "; ".join(f"{r.name}: {r.reason}" for r in report if r.reason)
    row.update(device=first.device, seed=str(first.seed), init_seed=str(report.init_seed),
               batch_size=str(first.batch_size), data=first.data, torch_version=torch_version,
               measured_at=measured_at)
    return row


def read_rows(path: Path) -> list[dict[str, str]]:
    """The complete rows of a table or chunk CSV (plain or ``.gz``); a torn last line is left out.

    Raises:
        DataNotFoundError: no such file.
        UsageError: the header lacks a column of `TABLE_COLUMNS`.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"no proxy table at {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in TABLE_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise UsageError(f"{path}: not a proxy table (missing columns {', '.join(missing)})")
            return [r for r in reader if None not in r and all(r.get(c) is not None for c in TABLE_COLUMNS)]
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:  # binary, a cut gzip stream, bad bytes
        raise UsageError(f"{path} is not a readable proxy table: {typed_first_line(exc)}") from None


def _reasons(text: str) -> dict[str, str]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, why = part.partition(":")
        out[name.strip()] = why.strip()
    return out


class ProxyTable:
    """A recorded proxy table of one space, answering any architecture of it.

    Args:
        rows: the table's rows (`read_rows`).
        space: the search space the rows belong to (`search_spaces.get_space`).
        name: where the rows came from, for messages.
    """

    def __init__(self, rows: Iterable[Mapping[str, str]], space: SearchSpace, name: str = "the proxy table") -> None:
        self.space = space
        self.name = name
        self._rows: dict[tuple[str, int], Mapping[str, str]] = {}
        with malformed_input(UsageError, name):
            for r in rows:
                self._rows.setdefault((r["dataset"], int(r["arch_index"])), r)

    @classmethod
    def read(cls, space: SearchSpace, path: str | Path | None = None) -> ProxyTable:
        """The table at `path` (default: the one shipped for `space`, `default_table_path`).

        Raises:
            DataNotFoundError: no table there.
        """
        p = Path(path) if path is not None else default_table_path(space.name)
        if not p.is_file():
            hint = "" if path is not None else " (build it with experiments/proxies_table.py)"
            raise DataNotFoundError(f"no recorded proxy table for {space.name} at {p}{hint}")
        return cls(read_rows(p), space, name=str(p))

    def __len__(self) -> int:
        return len(self._rows)

    def count(self, dataset: str) -> int:
        """How many rows the table holds for `dataset`."""
        return sum(1 for d, _ in self._rows if d == dataset)

    def datasets(self) -> tuple[str, ...]:
        """The datasets with rows, in first-seen order."""
        return tuple(dict.fromkeys(d for d, _ in self._rows))

    def row_index(self, arch: Arch | str) -> int:
        """The official index of the row that stands for `arch` (its deployed class's representative)."""
        representative = getattr(self.space, "deployed_representative", None)
        a = self.space.parse(arch)
        return self.space.index(representative(a) if representative is not None else a)

    def __contains__(self, key: tuple[str, Any]) -> bool:
        dataset, arch = key
        return (dataset, self.row_index(arch)) in self._rows

    def row(self, arch: Arch | str, dataset: str = "cifar10") -> Mapping[str, str]:
        """The raw row standing for `arch` on `dataset`.

        Raises:
            UsageError: the table has no row for it.
        """
        key = (dataset, self.row_index(arch))
        if key not in self._rows:
            raise UsageError(f"{self.name} has no row for {self.space.parse(arch)} on {dataset}")
        return self._rows[key]

    def report(self, arch: Arch | str, dataset: str = "cifar10") -> ProxyReport:
        """The recorded proxies of `arch` on `dataset` as a `ProxyReport` (``source = "recorded"``)."""
        r = self.row(arch, dataset)
        with malformed_input(UsageError, f"{self.name}, row of {self.space.parse(arch)} on {dataset}"):
            return self._report(r, arch, dataset)

    def _report(self, r: Mapping[str, str], arch: Arch | str, dataset: str) -> ProxyReport:
        why = _reasons(r.get("reason", ""))
        results = []
        for name in TABLE_PROXIES:
            kind = proxy_kind(name)
            batch, data = {"data": (int(r["batch_size"]), r["data"]), "ones": (1, "ones"), "none": (0, "none")}[kind.batch]
            results.append(ProxyResult(name=name, score=float(r[name]), unit=kind.unit,
                                       cost_s=float(r[f"{name}_cost_s"]), source="recorded", seed=int(r["seed"]),
                                       batch_size=batch, data=data, device=r["device"], reason=why.get(name, "")))
        dataset_shape = self.space.input_shape(dataset)
        return ProxyReport(tuple(results), dataset_shape, self.space.num_classes(dataset),
                           network=str(self.space.parse(arch)), dataset=dataset, init_seed=int(r["init_seed"]))


def read_proxy_table(space: str | Any = "tss", path: str | Path | None = None) -> ProxyTable:
    """`ProxyTable.read` for a space given by name or object."""
    if isinstance(space, str):
        space = get_space(space)
    return ProxyTable.read(space, path)
