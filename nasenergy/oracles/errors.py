"""Typed errors of the accuracy oracles. Each is one clear line; CLIs print it and exit non-zero."""

from __future__ import annotations

from nasenergy.errors import ArchError, CandidateError, DataNotFoundError, NasEnergyError, UsageError
from search_spaces._errors import UnknownDatasetError as UnknownDatasetError  # one class: the dataset names live in search_spaces

NATS_URL = "https://github.com/D-X-Y/NATS-Bench"

GET_A_BENCHMARK = (
    "get NATS-Bench from " + NATS_URL + " (e.g. extracted as $TORCH_HOME/NATS-tss-v1_0-3ffb9-simple, "
    "$TORCH_HOME/NATS-sss-v1_0-50262-simple for sss) and name it with --benchmark, or pass a benchmark table "
    "(CSV) or a folder of them, or install one with `python -m nasenergy.benchmark import PATH` "
    "(e.g. `python -m nasenergy.benchmark import ../shared/data`)"
)
"""The one-line advice every 'no benchmark' message ends with."""


class BenchmarkNotFoundError(DataNotFoundError):
    """No benchmark at the given path, or none installed and none at the default places."""


class CorruptBenchmarkError(NasEnergyError):
    """A benchmark file exists but cannot be read, or contradicts the search space (exit 2)."""

    exit_code = 2


class ArchNotInBenchmarkError(ArchError, CandidateError, LookupError):
    """A well-formed architecture for which the benchmark holds no record of the asked metric."""


class MissingColumnsError(UsageError):
    """A benchmark table lacks the columns needed (an architecture column, any accuracy column)."""


class NoUsableRowsError(MissingColumnsError):
    """A benchmark table, or a whole import, without one row holding a usable value."""


class ReplaceRefusedError(UsageError):
    """Installing would replace a benchmark with one holding fewer architectures or metrics."""


class IncompleteBenchmarkError(UsageError):
    """A benchmark that covers only part of its space, installed without ``--partial``."""


class ScaleError(UsageError):
    """Accuracies written as fractions (0.935) where percentages (93.5) belong."""


class MetricNotAvailableError(UsageError):
    """The benchmark holds no values at all for the asked dataset, split and schedule."""


class CostEstimationError(CandidateError):
    """Estimating a training cost on this device failed (e.g. torch cannot build the network)."""
