"""The local benchmark cache: importing a benchmark once into one fast file, and answering from it.

The cache folder is ``--cache-dir`` when given, else ``$NASENERGY_HOME``, else
``~/.cache/nasenergy``. It holds one file per space, ``benchmark-<space>.npz``
(`nasenergy.oracles.store`), plus ``step_times.sqlite`` when training steps were timed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy.errors import NasEnergyError, writing
from nasenergy.oracles.archs import SPACE_SIZES, check_space_name
from nasenergy.oracles.checks import FRACTION_MAX, SHOWN, best_coverage, changed_values, fraction_scaled, losses
from nasenergy.oracles.cost_model import attach_rate_model
from nasenergy.oracles.data import BenchmarkData
from nasenergy.oracles.errors import (
    GET_A_BENCHMARK,
    BenchmarkNotFoundError,
    IncompleteBenchmarkError,
    ReplaceRefusedError,
    ScaleError,
)
from nasenergy.oracles.lookup import BenchmarkOracle
from nasenergy.oracles.nats import locate_nats
from nasenergy.oracles.nats_import import ProgressCallback, read_nats
from nasenergy.oracles.store import load_benchmark, remove_stale_temporaries, save_benchmark
from nasenergy.oracles.tables import is_table, read_tables, table_files
from nasenergy.paths import cache_dir

def cache_file(space_name: str, directory: str | Path | None = None) -> Path:
    """Where the benchmark of a space is installed."""
    return cache_dir(directory) / f"benchmark-{check_space_name(space_name)}.npz"


def read_source(path: str | Path, space_name: str | None = None, *, workers: int | None = None,
                progress: ProgressCallback | None = None) -> BenchmarkData:
    """Read any benchmark source: NATS-Bench files, one table, or a folder of tables.

    Args:
        path: a NATS-Bench fast-mode folder / folder holding one / full file, a ``.csv(.gz)``
            table, or a folder of tables.
        space_name: ``tss`` / ``sss``; None: ``tss`` for NATS-Bench, inferred for tables.
        workers: processes reading NATS-Bench fast-mode files.
        progress: progress callback for NATS-Bench imports.

    Raises:
        BenchmarkNotFoundError: nothing usable at `path`.
        CorruptBenchmarkError, MissingColumnsError: unreadable or unusable files.
    """
    source = Path(path).expanduser()
    if not source.exists():
        raise BenchmarkNotFoundError(f"{source} does not exist; {GET_A_BENCHMARK}")
    location = locate_nats(source, space_name or "tss")
    if location is not None:
        return read_nats(location, workers=workers, progress=progress)
    if is_table(source) or (source.is_dir() and table_files(source)):
        return read_tables(source, space_name)
    raise BenchmarkNotFoundError(
        f"{source} holds neither NATS-Bench files nor .csv tables; {GET_A_BENCHMARK}"
    )


@dataclass(frozen=True)
class InstallResult:
    """What `install` did.

    Attributes:
        path: the benchmark file written.
        data: the benchmark read.
        size_bytes: the file's size.
    """

    path: Path
    data: BenchmarkData
    size_bytes: int


def install(path: str | Path, *, space_name: str | None = None, directory: str | Path | None = None,
            workers: int | None = None, progress: ProgressCallback | None = None, force: bool = False,
            partial: bool = False) -> InstallResult:
    """Import a benchmark source into the cache (replacing the space's previous file).

    Everything is checked before anything is replaced: accuracies in percent (a metric whose
    every value is at most 1 % was written as fractions: refused), the architectures covered
    against the space's size, and what replacing the installed benchmark would lose or change.
    The rate model for unrecorded costs (`nasenergy.oracles.cost_model`) is fitted here, once.
    The file is written beside the target and renamed into place, so a failed import leaves the
    installed file as it was.

    Args:
        force: replace an installed benchmark even when the new one holds fewer architectures
            or metrics, or other accuracies for architectures both hold.
        partial: install a benchmark that covers only part of the space (a search without
            ``--benchmark`` then prefers the complete embedded tables, saying so).

    Raises:
        ScaleError: accuracies written as fractions.
        IncompleteBenchmarkError: without ``partial``, fewer architectures than the space holds.
        ReplaceRefusedError: without ``force``, the installed benchmark holds a metric the new
            one lacks, more architectures for some metric, or other accuracies.
        OutputError: the file cannot be written (a read-only place, a full disk).
    """
    data = read_source(path, space_name, workers=workers, progress=progress)
    fractions = fraction_scaled(data)
    if fractions:
        raise ScaleError(
            f"{path}: every accuracy of {', '.join(fractions[:SHOWN])} is at most {FRACTION_MAX:g} %: fractions, not "
            "percentages; write them in percent (93.5, not 0.935)"
        )
    size, covered = SPACE_SIZES[data.space_name], best_coverage(data.coverage())
    if covered < size and not partial:
        raise IncompleteBenchmarkError(
            f"{path} covers {covered:,} of the {size:,} {data.space_name} architectures; pass --partial to install "
            "it anyway (searches without --benchmark then keep the complete embedded tables)"
        )
    target = cache_file(data.space_name, directory)
    if not force:
        _refuse_replacing(target, data)
    attach_rate_model(data)
    with writing(target):  # a read-only place, a full disk: one line, the installed file untouched
        target = save_benchmark(data, target)
    return InstallResult(target, data, target.stat().st_size)


def _refuse_replacing(target: Path, data: BenchmarkData) -> None:
    """Raise `ReplaceRefusedError` when ``data`` would lose something the file at ``target`` holds,
    or record other accuracies than it (a damaged or unreadable installed file is replaced)."""
    if not target.is_file():
        return
    try:
        old = load_benchmark(target)
    except NasEnergyError:
        return
    lost = losses(old, data) + changed_values(old, data)
    if lost:
        raise ReplaceRefusedError(
            f"not replacing {target} ({old.provenance.get('source', '?')}): the new benchmark would hold "
            f"{'; '.join(lost)}; pass --force to replace it anyway"
        )


@dataclass(frozen=True)
class InstalledBenchmark:
    """One installed benchmark file, as `info` reports it.

    Attributes:
        path: the file.
        size_bytes: its size.
        space_name: ``tss`` / ``sss``.
        provenance: where it came from (kind, source path, files, date, cost model).
        coverage: per metric key: archs with values, runs and recorded costs.
    """

    path: Path
    size_bytes: int
    space_name: str
    provenance: dict[str, Any]
    coverage: dict[str, Any]


def installed(directory: str | Path | None = None) -> list[InstalledBenchmark]:
    """The benchmarks installed in the cache folder (reads each file)."""
    found = []
    folder = cache_dir(directory)
    if folder.is_dir():
        remove_stale_temporaries(folder)
    for space_name in SPACE_SIZES:
        path = cache_file(space_name, directory)
        if path.is_file():
            data = load_benchmark(path)
            found.append(InstalledBenchmark(path, path.stat().st_size, data.space_name,
                                            data.provenance, data.coverage()))
    return found


class CachedOracle(BenchmarkOracle):
    """Accuracy oracle answering from the local benchmark file.

    Args:
        path: a benchmark ``.npz``; None for the installed file of `space`.
        space: ``tss`` / ``sss`` (used when `path` is None).
        cache_directory: the cache folder (default: `cache_dir`).
        **options: `BenchmarkOracle` options (``metrics``, ``seed``, ``estimate``, ...).

    Raises:
        BenchmarkNotFoundError: nothing installed (the message says how to install it).
        CorruptBenchmarkError: a damaged file.
    """

    def __init__(self, path: str | Path | None = None, space: str = "tss", *,
                 cache_directory: str | Path | None = None, **options: Any) -> None:
        target = Path(path).expanduser() if path is not None else cache_file(space, cache_directory)
        if not target.is_file():
            raise BenchmarkNotFoundError(f"no benchmark installed at {target}; {GET_A_BENCHMARK}")
        data = load_benchmark(target)
        source = data.provenance.get("source", "?")
        super().__init__(data, description=f"benchmark file {target} (from {source})", **options)
