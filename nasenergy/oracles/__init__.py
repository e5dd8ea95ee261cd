"""Accuracy oracles: the expensive full evaluation of an architecture, answered from NATS-Bench.

* `NatsBenchOracle`: the official NATS-Bench files through the `nats_bench` package.
* `TableOracle`: benchmark tables (CSV; schema in `nasenergy.oracles.tables`).
* `CachedOracle`: the local benchmark file built by ``python -m nasenergy.benchmark import``.
* `EmbeddedOracle`: the compact NATS-Bench tables shipped in the package (``nasenergy/data/benchmarks``).
* `load_oracle(benchmark, space)`: the right one for a path, or the installed benchmark when it
  covers the whole space, else the embedded one (NATS-Bench pickles are read only where a path
  names them).

Every oracle follows `AccuracyOracle`: ``evaluate(arch, dataset, seed=...)`` answers the search
metric (NATS-Bench protocol: 12-epoch x-valid of one run, charging the recorded training time) and
``report(arch, dataset)`` the final metric (200-epoch test, mean over runs). Importing this package
imports neither torch nor nats_bench.
"""

from nasenergy.oracles.cache import CachedOracle, cache_dir, cache_file, install, installed, read_source
from nasenergy.oracles.datasets import DATASETS, canonical_dataset, resolve
from nasenergy.oracles.errors import (
    ArchNotInBenchmarkError,
    BenchmarkNotFoundError,
    CorruptBenchmarkError,
    CostEstimationError,
    MetricNotAvailableError,
    MissingColumnsError,
    NoUsableRowsError,
    ReplaceRefusedError,
    UnknownDatasetError,
)
from nasenergy.oracles.embedded import EmbeddedOracle
from nasenergy.oracles.evaluation import (
    AccuracyOracle,
    Evaluation,
    MetricSpec,
    Metrics,
    default_metrics,
)
from nasenergy.oracles.loader import load_oracle
from nasenergy.oracles.lookup import BenchmarkOracle, EvaluationBatch, TableOracle
from nasenergy.oracles.nats import NatsBenchOracle

__all__ = [
    "DATASETS",
    "AccuracyOracle",
    "ArchNotInBenchmarkError",
    "BenchmarkNotFoundError",
    "BenchmarkOracle",
    "CachedOracle",
    "CorruptBenchmarkError",
    "CostEstimationError",
    "EmbeddedOracle",
    "Evaluation",
    "EvaluationBatch",
    "MetricNotAvailableError",
    "MetricSpec",
    "Metrics",
    "MissingColumnsError",
    "NatsBenchOracle",
    "NoUsableRowsError",
    "ReplaceRefusedError",
    "TableOracle",
    "UnknownDatasetError",
    "cache_dir",
    "cache_file",
    "canonical_dataset",
    "default_metrics",
    "install",
    "installed",
    "load_oracle",
    "read_source",
    "resolve",
]
