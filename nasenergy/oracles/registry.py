"""The oracle registry: where `load_oracle` looks for a benchmark, one registered `OracleSource` each.

A source answers a benchmark path it recognises (``open_path``) and/or the benchmark installed by
default (``open_default``); `load_oracle` asks the sources in registration order. A new oracle is
one module plus one call::

    from nasenergy.oracles.registry import OracleSource, register_oracle_source
    register_oracle_source(OracleSource("mine", open_path=open_my_files))
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nasenergy._registry import Registry
from nasenergy.oracles.archs import SPACE_SIZES
from nasenergy.oracles.cache import CachedOracle, cache_file
from nasenergy.oracles.checks import best_coverage
from nasenergy.oracles.store import remove_stale_temporaries
from nasenergy.oracles.embedded import EmbeddedOracle, has_embedded
from nasenergy.oracles.evaluation import AccuracyOracle
from nasenergy.oracles.lookup import TableOracle
from nasenergy.oracles.nats import NatsBenchOracle, locate_nats
from nasenergy.oracles.tables import is_table, table_files

OpenPath = Callable[[Path, str, dict[str, Any]], AccuracyOracle | None]
"""``(path, space name, options) -> oracle``, or ``None`` when the path is not of this kind.
``options``: ``metrics``, ``seed``, ``estimate`` and ``cache_directory``."""

OpenDefault = Callable[[str, dict[str, Any]], AccuracyOracle | None]
"""``(space name, options) -> oracle`` of the installed benchmark, or ``None`` when none is."""

logger = logging.getLogger(__name__)

__all__ = ["ORACLE_SOURCES", "OracleSource", "register_oracle_source"]


@dataclass(frozen=True)
class OracleSource:
    """One kind of benchmark `load_oracle` can open.

    Attributes:
        name: its name.
        open_path: opens a benchmark path of this kind (``None``: it opens no paths).
        open_default: opens the benchmark installed by default (``None``: it has no default).
    """

    name: str
    open_path: OpenPath | None = None
    open_default: OpenDefault | None = None


ORACLE_SOURCES: Registry[OracleSource] = Registry("oracle source", plugin_group="nasenergy.oracles")
"""The registered sources, in the order `load_oracle` asks them."""


def register_oracle_source(source: OracleSource, *, replace: bool = False) -> OracleSource:
    """Let `nasenergy.oracles.load_oracle` open benchmarks of ``source``'s kind."""
    return ORACLE_SOURCES.register(source.name, source, replace=replace)


def _common(options: dict[str, Any]) -> dict[str, Any]:
    return {"metrics": options["metrics"], "seed": options["seed"]}


def _cache_path(path: Path, space: str, options: dict[str, Any]) -> AccuracyOracle | None:
    if path.is_file() and path.suffix == ".npz":
        return CachedOracle(path, space, estimate=options["estimate"], **_common(options))
    return None


def _cache_default(space: str, options: dict[str, Any]) -> AccuracyOracle | None:
    """The installed benchmark; one that covers only part of the space gives way to the complete
    embedded tables, with one line (naming it with ``--benchmark`` still uses it)."""
    installed = cache_file(space, options["cache_directory"])
    if installed.parent.is_dir():
        remove_stale_temporaries(installed.parent)  # left by an import killed mid-write
    if not installed.is_file():
        return None
    oracle = CachedOracle(installed, space, estimate=options["estimate"], **_common(options))
    covered, size = best_coverage(oracle.data.coverage()), SPACE_SIZES[oracle.space_name]
    if covered < size:
        if has_embedded(space):
            logger.warning(
                "note: the installed benchmark %s covers %s of the %s %s architectures; using the complete "
                "embedded tables instead (pass --benchmark %s to search on it)", installed, f"{covered:,}",
                f"{size:,}", space, installed,
            )
            return None
        logger.warning("note: the installed benchmark %s covers only %s of the %s %s architectures",
                       installed, f"{covered:,}", f"{size:,}", space)
    return oracle


def _nats_path(path: Path, space: str, options: dict[str, Any]) -> AccuracyOracle | None:
    return NatsBenchOracle(path, space, **_common(options)) if locate_nats(path, space) is not None else None


def _table_path(path: Path, space: str, options: dict[str, Any]) -> AccuracyOracle | None:
    if is_table(path) or (path.is_dir() and table_files(path)):
        return TableOracle(path, space, estimate=options["estimate"], **_common(options))
    return None


def _embedded_default(space: str, options: dict[str, Any]) -> AccuracyOracle | None:
    return EmbeddedOracle(space, estimate=options["estimate"], **_common(options)) if has_embedded(space) else None


register_oracle_source(OracleSource("cache", open_path=_cache_path, open_default=_cache_default))
# NATS-Bench files are pickles (reading one can run code): read only where a path names them,
# never found by default in $TORCH_HOME.
register_oracle_source(OracleSource("nats", open_path=_nats_path))
register_oracle_source(OracleSource("tables", open_path=_table_path))
register_oracle_source(OracleSource("embedded", open_default=_embedded_default))
