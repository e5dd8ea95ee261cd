"""The embedded benchmark: compact NATS-Bench tables shipped inside the package.

When no benchmark covering the whole space is installed (``python -m nasenergy.benchmark
import``), the oracles answer from the tables in ``nasenergy/data/benchmarks``
(sources and licences in its ``ATTRIBUTION.md``; rebuilt by
``python -m nasenergy.benchmark build-embedded``):

* TSS: the search metric (12-epoch x-valid: the mean over the recorded seeds on CIFAR-10, seed 111
  on CIFAR-100 and ImageNet16-120) and the report metric (200-epoch test, mean over the seeds) on
  CIFAR-10, CIFAR-100 and ImageNet16-120; the
  recorded training and evaluation times of archs 0-999; and the training-rate model
  (`nasenergy.oracles.cost_model`) fitted on them, which prices every other cell (``estimated``).
* SSS: the 90-epoch x-valid and test accuracies (one seed) on the three datasets. There are no
  12-epoch values, so the search metric is the 90-epoch x-valid accuracy (`embedded_metrics`),
  and no recorded times, so costs are estimated as for any benchmark without them.

The tables hold one figure per cell (no per-seed runs), with accuracies rounded to 4 decimals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.oracles.archs import check_space_name
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.embedded_sources import MANIFEST, SOURCE_BY_FILE, tables_of
from nasenergy.oracles.errors import GET_A_BENCHMARK, BenchmarkNotFoundError, CorruptBenchmarkError
from nasenergy.oracles.evaluation import MetricSpec, Metrics, default_metrics
from nasenergy.oracles.lookup import BenchmarkOracle
from nasenergy.oracles.table_csv import float_column, read_csv
from nasenergy.oracles.tables import read_table_files

EMBEDDED_LABEL = "nasenergy/data/benchmarks"


def embedded_dir() -> Path:
    """The folder of the embedded tables inside the installed package."""
    return Path(__file__).resolve().parent.parent / "data" / "benchmarks"


def has_embedded(space_name: str, directory: str | Path | None = None) -> bool:
    """Whether the embedded tables of a space are present."""
    folder = Path(directory) if directory is not None else embedded_dir()
    return (folder / MANIFEST).is_file() and all(
        (folder / spec.name).is_file() for spec in tables_of(check_space_name(space_name)))


def embedded_metrics(space_name: str) -> Metrics:
    """The embedded benchmark's protocol: NATS-Bench's for TSS; for SSS, whose embedded tables hold
    no 12-epoch values, search on the 90-epoch x-valid accuracy and report the 90-epoch test."""
    if check_space_name(space_name) == "sss":
        return Metrics(search=MetricSpec(split="x-valid", schedule="90", trial="random"),
                       report=MetricSpec(split="test", schedule="90", trial="mean"))
    return default_metrics("tss")


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise BenchmarkNotFoundError(f"no embedded benchmark at {folder}; {GET_A_BENCHMARK}")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CorruptBenchmarkError(f"embedded benchmark manifest {path} is unreadable: {exc}") from exc


def _read_rates(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    header, rows = read_csv(path)
    col = {name: i for i, name in enumerate(header)}
    needed = ("arch_index", "train_rate_s_per_img", "eval_rate_s_per_img")
    if any(name not in col for name in needed):
        raise CorruptBenchmarkError(f"cost model {path} lacks one of the columns {', '.join(needed)}")
    index = float_column(path, "arch_index", [r[col["arch_index"]] for r in rows])
    if not np.array_equal(index, np.arange(size)):
        raise CorruptBenchmarkError(f"cost model {path} does not list architectures 0..{size - 1} in order")
    return tuple(float_column(path, name, [r[col[name]] for r in rows]) for name in needed[1:])  # type: ignore[return-value]


def load_embedded(space_name: str, directory: str | Path | None = None) -> BenchmarkData:
    """The embedded benchmark of a space as a `BenchmarkData`.

    Args:
        space_name: ``tss`` or ``sss``.
        directory: the tables' folder (default: `embedded_dir`).

    Raises:
        BenchmarkNotFoundError: the tables are not there.
        CorruptBenchmarkError: damaged tables or manifest.
    """
    space_name = check_space_name(space_name)
    folder = Path(directory) if directory is not None else embedded_dir()
    manifest = _manifest(folder)
    specs = tables_of(space_name)
    missing = [spec.name for spec in specs if not (folder / spec.name).is_file()]
    if missing:
        raise BenchmarkNotFoundError(f"the embedded benchmark at {folder} lacks {', '.join(missing)}; "
                                     f"{GET_A_BENCHMARK}")
    tables = [folder / spec.name for spec in specs if spec.kind != "cost_model"]
    data = read_table_files(tables, space_name, source=folder)
    for spec in specs:
        if spec.kind == "cost_model":
            data.est_train_rate, data.est_eval_rate = _read_rates(folder / spec.name, data.size)
    data.means_seed = {key: seed for spec in specs for key, seed in spec.seed_of().items() if seed is not None}
    sources = sorted({f for spec in specs for f in spec.sources})
    data.provenance = {
        "kind": "embedded",
        "source": str(folder),
        "files": [spec.name for spec in specs],
        "built_from": {name: f"{SOURCE_BY_FILE[name].repository}@{SOURCE_BY_FILE[name].commit} "
                             f"({SOURCE_BY_FILE[name].licence})" for name in sources},
        "skipped": data.provenance.get("skipped", []),
        "ignored_columns": data.provenance.get("ignored_columns", {}),
        "conflicts": data.provenance.get("conflicts", []),
    }
    model = manifest.get("cost_model", {}).get(space_name)
    if model and data.est_train_rate is not None:
        data.provenance["cost_model"] = model
    return data


class EmbeddedOracle(BenchmarkOracle):
    """Accuracy oracle answering from the embedded benchmark.

    Args:
        space: ``tss`` or ``sss``.
        directory: the tables' folder (default: `embedded_dir`).
        metrics: search and report metrics (default: `embedded_metrics`).
        **options: `BenchmarkOracle` options (``seed``, ``estimate``, ...).

    Raises:
        BenchmarkNotFoundError: the tables are not there.
    """

    def __init__(self, space: str = "tss", *, directory: str | Path | None = None,
                 metrics: Metrics | None = None, **options: Any) -> None:
        space_name = check_space_name(space)
        data = load_embedded(space_name, directory)
        chosen = metrics or embedded_metrics(space_name)
        note = ""
        if space_name == "sss" and metrics is None:
            note = "; search metric 90-epoch x-valid (no 12-epoch values embedded)"
        description = (f"embedded {space_name} benchmark ({EMBEDDED_LABEL}: NATS-Bench tables, sources "
                       f"in its ATTRIBUTION.md; one figure per cell, no per-seed runs{note})")
        super().__init__(data, metrics=chosen, description=description, **options)
