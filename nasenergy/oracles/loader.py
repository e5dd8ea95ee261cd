"""`load_oracle`: the right accuracy oracle for a path, or the installed (else embedded) benchmark,
asking the registered sources (`nasenergy.oracles.registry`) in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nasenergy.errors import UsageError
from nasenergy.oracles.archs import space_name_of
from nasenergy.oracles.cache import cache_file
from nasenergy.oracles.errors import GET_A_BENCHMARK, BenchmarkNotFoundError
from nasenergy.oracles.evaluation import AccuracyOracle, Metrics
from nasenergy.oracles.nats import torch_home
from nasenergy.oracles.registry import ORACLE_SOURCES
from search_spaces import SpaceProtocol


def load_oracle(
    benchmark: str | Path | None,
    space: SpaceProtocol | str = "tss",
    *,
    metrics: Metrics | None = None,
    seed: int | None = 0,
    estimate: str = "auto",
    cache_directory: str | Path | None = None,
) -> AccuracyOracle:
    """The accuracy oracle for `benchmark`.

    Args:
        benchmark: a benchmark file written by ``python -m nasenergy.benchmark import`` (``.npz``),
            a NATS-Bench fast-mode folder / folder holding one / full file, a ``.csv(.gz)`` table
            or a folder of tables. None: the installed benchmark of `space` when it covers the
            whole space, else the benchmark embedded in the package (`nasenergy.oracles.embedded`),
            else an installed partial one. NATS-Bench files are pickles: they are read only when
            `benchmark` names them, never found in ``$TORCH_HOME`` by default.
        space: ``tss`` / ``sss`` or a `search_spaces` space object.
        metrics: search and report metrics (default: NATS-Bench's protocol; for the embedded SSS
            tables, `nasenergy.oracles.embedded.embedded_metrics`).
        seed: seed of the oracle's stream for picking training runs.
        estimate: cost estimation for unrecorded cells (`nasenergy.oracles.lookup`); ignored for
            NATS-Bench files, which record every cost.
        cache_directory: the cache folder (default ``$NASENERGY_HOME`` or ``~/.cache/nasenergy``).

    Raises:
        BenchmarkNotFoundError: nothing at `benchmark`, or (None) nothing installed, no
            no embedded tables; the message says how to get one.
        CorruptBenchmarkError, MissingColumnsError: unusable files.
    """
    space_name = space_name_of(space)
    oracle = _open(benchmark, space_name, metrics, seed, estimate, cache_directory)
    if oracle.space_name != space_name:
        raise UsageError(f"benchmark {benchmark} holds the {oracle.space_name} space, not {space_name}")
    return oracle


def _open(benchmark: str | Path | None, space_name: str, metrics: Metrics | None, seed: int | None,
          estimate: str, cache_directory: str | Path | None) -> AccuracyOracle:
    options: dict[str, Any] = {"metrics": metrics, "seed": seed, "estimate": estimate,
                               "cache_directory": cache_directory}
    ORACLE_SOURCES.load_plugins()  # every source is asked: the installed plugins' ones too
    sources = [ORACLE_SOURCES.get(name) for name in ORACLE_SOURCES]
    if benchmark is None:
        for source in sources:
            oracle = source.open_default(space_name, options) if source.open_default else None
            if oracle is not None:
                return oracle
        raise BenchmarkNotFoundError(
            f"no {space_name} benchmark installed at {cache_file(space_name, cache_directory)} and no embedded "
            f"tables; {GET_A_BENCHMARK}"
        )
    path = Path(benchmark).expanduser()
    if not path.exists():
        raise BenchmarkNotFoundError(f"benchmark {path} does not exist; {GET_A_BENCHMARK}")
    for source in sources:
        oracle = source.open_path(path, space_name, options) if source.open_path else None
        if oracle is not None:
            return oracle
    raise BenchmarkNotFoundError(
        f"{path} is not a benchmark (no NATS-Bench files, no .csv tables, not a .npz); {GET_A_BENCHMARK}"
    )
