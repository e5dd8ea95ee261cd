"""Building the embedded benchmark's tables from the shared NATS-Bench reference data.

``python -m nasenergy.benchmark build-embedded`` runs `build_embedded`: it reads the third-party
tables named in `nasenergy.oracles.embedded_sources` from ``$NASENERGY_SHARED_DATA`` with the
ordinary table reader, keeps the columns the search needs, fits the training-rate model
(`nasenergy.oracles.cost_model`) on the recorded times, and writes

* one gzipped CSV per `TableSpec` (benchmark-table schema, `nasenergy.oracles.tables`; the cost
  model as ``arch_index,train_rate_s_per_img,eval_rate_s_per_img``);
* ``manifest.json``: the tables, their columns and sources, each source's SHA-256, the rounding,
  and the cost model's fit;
* ``ATTRIBUTION.md``: every source file with its repository, commit and licence.

The output is byte-for-byte reproducible (gzip without a timestamp, no dates), so a test can check
that the shipped files are what this module builds.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.oracles.cost_model import RateModel, fit_rate_model
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.embedded_sources import (
    ACCURACY_DECIMALS,
    ATTRIBUTION,
    MANIFEST,
    NATS_BENCH,
    NATS_BENCH_COMMIT,
    NATS_BENCH_LICENCE,
    NATS_BENCH_PAPER,
    RATE_DIGITS,
    SOURCE_BY_FILE,
    SOURCES,
    TABLES,
    TIME_DIGITS,
    TableSpec,
    figure_words,
    tables_of,
)
from nasenergy.oracles.errors import BenchmarkNotFoundError, MetricNotAvailableError
from nasenergy.oracles.tables import read_table_files

FORMAT = "nasenergy-embedded-benchmark"
FORMAT_VERSION = 1

_PREFIX: dict[str, str] = {"cifar10-valid": "cifar10valid", "cifar10": "cifar10", "cifar100": "cifar100",
                           "ImageNet16-120": "imagenet16"}
_EVAL_SPLIT: dict[str, str] = {"x-valid": "xvalid", "x-test": "xtest", "ori-test": "oritest"}


@dataclass(frozen=True)
class BuiltTable:
    """One table `build_embedded` wrote.

    Attributes:
        path: the file.
        rows: data rows.
        size_bytes: the file's size.
    """

    path: Path
    rows: int
    size_bytes: int


def accuracy_column(key: tuple[str, str, str]) -> str:
    """The table-schema column of a metric key, e.g. ``cifar10valid_valid_acc_12ep``."""
    nats_dataset, split, schedule = key
    if split == "x-valid":
        token = "valid"
    elif split == "x-test" or nats_dataset in ("cifar10", "cifar10-valid"):
        token = "test"  # the schema's `test`: ori-test for CIFAR-10, x-test otherwise
    else:
        token = "oritest"
    return f"{_PREFIX[nats_dataset]}_{token}_acc_{int(schedule)}ep"


def _fixed(value: float, decimals: int) -> str:
    if not np.isfinite(value):
        return ""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _significant(value: float, digits: int) -> str:
    return f"{value:.{digits}g}" if np.isfinite(value) else ""


def _gzip_csv(path: Path, header: Sequence[str], columns: Sequence[Sequence[str]]) -> int:
    """Write a gzipped CSV (no timestamp, so equal content gives equal bytes); return its rows."""
    lines = [",".join(header)] + [",".join(row) for row in zip(*columns)]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0))
    return len(lines) - 1


def _read_sources(shared_dir: Path, space_name: str) -> BenchmarkData:
    names = sorted({f for t in tables_of(space_name) if t.kind != "cost_model" for f in t.sources})
    paths = [shared_dir / name for name in names]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise BenchmarkNotFoundError(f"the shared data at {shared_dir} lacks {', '.join(missing)}; "
                                     f"set NASENERGY_SHARED_DATA to the folder holding it")
    return read_table_files(paths, space_name, source=shared_dir)


def _write_accuracy(spec: TableSpec, data: BenchmarkData, path: Path) -> int:
    header = ["arch_index"] + [accuracy_column(key) for key in spec.metrics]
    columns = [[str(i) for i in range(data.size)]]
    for key in spec.metrics:
        values = data.mean(key)
        if not np.isfinite(values).any():
            raise MetricNotAvailableError(f"the shared data holds no {'/'.join(key)} values for {spec.name}")
        columns.append([_fixed(v, ACCURACY_DECIMALS) for v in values.tolist()])
    return _gzip_csv(path, header, columns)


def _write_times(data: BenchmarkData, path: Path) -> int:
    train_keys, eval_keys = sorted(data.train_s), sorted(data.eval_s)
    header = (["arch_index"] + [f"{_PREFIX[d]}_train_time_{int(h)}ep_s" for d, h in train_keys]
              + [f"{_PREFIX[d]}_{_EVAL_SPLIT[s]}_eval_time_s" for d, s in eval_keys])
    arrays = [data.train_s[k] for k in train_keys] + [data.eval_s[k] for k in eval_keys]
    recorded = np.flatnonzero(np.isfinite(np.vstack(arrays)).any(axis=0))
    columns = [[str(i) for i in recorded.tolist()]]
    columns += [[_significant(v, TIME_DIGITS) for v in array[recorded].tolist()] for array in arrays]
    return _gzip_csv(path, header, columns)


def _write_cost_model(model: RateModel, path: Path) -> int:
    n = model.train_rate_s_per_img.shape[0]
    return _gzip_csv(path, ["arch_index", "train_rate_s_per_img", "eval_rate_s_per_img"], [
        [str(i) for i in range(n)],
        [_significant(v, RATE_DIGITS) for v in model.train_rate_s_per_img.tolist()],
        [_significant(v, RATE_DIGITS) for v in model.eval_rate_s_per_img.tolist()],
    ])


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_embedded(shared_dir: str | Path, out_dir: str | Path, *,
                   progress: Callable[[str], None] | None = None) -> list[BuiltTable]:
    """Build every embedded table, the manifest and the attribution file into `out_dir`.

    Args:
        shared_dir: the shared reference data folder (``$NASENERGY_SHARED_DATA``).
        out_dir: where to write (created if needed; existing files of the same names are replaced).
        progress: called with one line per table written.

    Returns:
        The tables written, in `TABLES` order.

    Raises:
        BenchmarkNotFoundError: a source file is missing.
        CorruptBenchmarkError, MissingColumnsError, MetricNotAvailableError: a source lacks the
            values, or cannot be read.
    """
    shared, out = Path(shared_dir).expanduser().resolve(), Path(out_dir).expanduser()
    sources = {space_name: _read_sources(shared, space_name) for space_name in ("tss", "sss")}
    out.mkdir(parents=True, exist_ok=True)
    built: list[BuiltTable] = []
    fits: dict[str, Any] = {}
    for space_name, data in sources.items():
        for spec in tables_of(space_name):
            path = out / spec.name
            if spec.kind == "accuracy":
                rows = _write_accuracy(spec, data, path)
            elif spec.kind == "times":
                rows = _write_times(data, path)
            else:
                model = fit_rate_model(data)
                if model is None:
                    raise MetricNotAvailableError(f"too few recorded times in the shared {space_name} "
                                                  f"tables to fit the cost model of {spec.name}")
                fits[space_name] = model.summary()
                rows = _write_cost_model(model, path)
            built.append(BuiltTable(path, rows, path.stat().st_size))
            if progress is not None:
                progress(f"{spec.name}: {rows} rows, {path.stat().st_size} bytes")
    (out / MANIFEST).write_text(json.dumps(_manifest(shared, built, fits), indent=1, sort_keys=True) + "\n")
    (out / ATTRIBUTION).write_text(attribution_text())
    return built


def _manifest(shared: Path, built: list[BuiltTable], fits: dict[str, Any]) -> dict[str, Any]:
    tables = {}
    for spec, table in zip(TABLES, built):
        with gzip.open(table.path, "rt") as fh:
            header = fh.readline().strip().split(",")
        tables[spec.name] = {"space": spec.space, "kind": spec.kind, "rows": table.rows, "columns": header,
                             "sources": list(spec.sources)}
        if spec.seeds:
            tables[spec.name]["figures"] = {"/".join(key): figure_words(seed)
                                            for key, seed in spec.seed_of().items()}
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "tables": tables,
        "sources": {s.file: {"repository": s.repository, "commit": s.commit, "path": s.path,
                             "licence": s.licence, "sha256": _sha256(shared / s.file)} for s in SOURCES},
        "original_data": {"repository": NATS_BENCH, "commit": NATS_BENCH_COMMIT, "licence": NATS_BENCH_LICENCE,
                          "paper": NATS_BENCH_PAPER},
        "rounding": {"accuracy_pct_decimals": ACCURACY_DECIMALS, "time_s_significant_digits": TIME_DIGITS,
                     "rate_s_per_img_significant_digits": RATE_DIGITS},
        "cost_model": fits,
        "built_by": "python -m nasenergy.benchmark build-embedded",
    }


def attribution_text() -> str:
    """``ATTRIBUTION.md``: each shipped table, the files it is derived from and their licences."""
    lines = [
        "# Embedded benchmark tables: sources and licences",
        "",
        "The tables in this folder are compact derived tables (selected columns, accuracies rounded to "
        f"{ACCURACY_DECIMALS} decimals, times to {TIME_DIGITS} and fitted rates to {RATE_DIGITS} "
        "significant digits) built by `python -m nasenergy.benchmark build-embedded` from third-party "
        "files of the shared reference data. No third-party file is copied here.",
        "",
        f"All values are NATS-Bench results: {NATS_BENCH_PAPER}. NATS-Bench: {NATS_BENCH} @ "
        f"{NATS_BENCH_COMMIT}, licence {NATS_BENCH_LICENCE}.",
        "",
        "| shipped table | derived from | repository @ commit | file in the repository | licence |",
        "|---|---|---|---|---|",
    ]
    for spec in TABLES:
        for name in spec.sources:
            s = SOURCE_BY_FILE[name]
            lines.append(f"| `{spec.name}` | `{s.file}` | {s.repository} @ {s.commit} | `{s.path}` | "
                         f"{s.licence} |")
    lines += [
        "",
        "What one figure per cell is (NATS-Bench recorded several training runs, with different seeds, "
        "for some settings):",
        "",
        "| shipped table | dataset / split / epochs | figure |",
        "|---|---|---|",
        *(f"| `{spec.name}` | {' / '.join(key)} | {figure_words(seed)} |"
          for spec in TABLES for key, seed in spec.seed_of().items()),
    ]
    lines += [
        "",
        "Repositories without a licence file (" + ", ".join(
            sorted({s.repository for s in SOURCES if s.licence.startswith("none")})) + ") grant no licence "
        "of their own; the values read from them are NATS-Bench (MIT) query results.",
        "",
        "`tss_cost_model.csv.gz` holds this project's least-squares fit (`nasenergy/oracles/cost_model.py`) "
        "of the training and evaluation seconds per image recorded in `tss_times.csv.gz`; its figures "
        "are estimates, labelled `estimated` wherever they are used.",
        "",
    ]
    return "\n".join(lines)
