"""Zero-cost proxies as filter features: `proxy_features` (a report -> a finite vector) and the
``proxies`` / ``proxies-live`` providers of `nasenergy.filter.feature_providers`.

The vector is laid out as `PROXY_FEATURE_NAMES`: log10 of synflow, snip, grad_norm, FLOPs and
params (heavy-tailed, positive); ``-log10(-jacov)`` (jacov is at most ``-batch_size``); NASWOT's
log-determinant as is (at least 0 when finite: ``K_H`` has integer entries). A degenerate score
(``-inf``, or 0 under a log) becomes `MISSING_FEATURE`, below every finite value, so tree models
rank such a network last without special cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nasenergy.errors import UsageError
from nasenergy.hardware.registry import METERS
from nasenergy.proxies.compute import ProxyReport, compute_arch_proxies
from nasenergy.proxies.data import DEFAULT_BATCH_SIZE, DEFAULT_DATA
from nasenergy.proxies.table import TABLE_PROXIES, ProxyTable
from search_spaces import SearchSpace

MISSING_FEATURE = -1e3
"""The feature value of a degenerate score (below log10 of any positive float64)."""

_LOG = {"synflow", "snip", "grad_norm", "flops", "params"}

__all__ = ["MISSING_FEATURE", "PROXY_FEATURE_NAMES", "LiveProxyFeatures", "RecordedProxyFeatures",
           "feature_names", "provider_for_hardware", "proxy_features"]


def provider_for_hardware(hardware: str) -> str:
    """The proxy feature provider a search on `hardware` (its resolved ``--hardware``) should use:
    ``proxies-live`` on a GPU meter (``cuda``, or any registered meter with
    `nasenergy.hardware.registry.MeterKind.uses_gpu`), where computing them costs a fraction of a
    second per candidate, and ``proxies`` (the recorded table) otherwise (``recorded``, ``cpu``),
    where computing them would cost seconds per candidate."""
    return "proxies-live" if METERS.get(hardware).uses_gpu else "proxies"


def feature_names(proxies: Sequence[str] = TABLE_PROXIES) -> tuple[str, ...]:
    """The feature names of `proxies`, in order."""
    return tuple(f"log10_{p}" if p in _LOG else ("neg_log10_neg_jacov" if p == "jacov" else p) for p in proxies)


PROXY_FEATURE_NAMES: tuple[str, ...] = feature_names()
"""The layout of `proxy_features` for the table's proxies."""


def _feature(name: str, score: float) -> float:
    if name in _LOG:
        value = math.log10(score) if score > 0 else -math.inf
    elif name == "jacov":
        value = -math.log10(-score) if score < 0 else -math.inf
    else:
        value = score
    return value if math.isfinite(value) else MISSING_FEATURE


def proxy_features(report: ProxyReport, proxies: Sequence[str] | None = None) -> np.ndarray:
    """The finite feature vector of `report` (see the module docstring), for `proxies` (default: all
    the report holds, in its order)."""
    names = report.names() if proxies is None else tuple(proxies)
    return np.array([_feature(n, report[n].score) for n in names])


class RecordedProxyFeatures:
    """The ``proxies`` provider: the recorded table's proxies of each architecture.

    Args:
        space: the search space.
        dataset: whose row to read.
        path: the table (default: the one shipped for the space).
        proxies: which proxies (default all of the table's).
        missing: what an architecture the table has no row for gets: ``error`` (the table's
            `UsageError`) or ``nan`` (a vector of NaN: the accuracy models of the filters impute
            missing features with the median of the evaluated candidates', see
            `nasenergy.filter.conformal.make_estimator`). A partial table (see
            ``nasenergy/data/README.md``) leaves most networks without a row.

    Raises:
        DataNotFoundError: no table.
        UsageError: an unknown ``missing``.
    """

    def __init__(self, space: SearchSpace, dataset: str = "cifar10", path: str | Path | None = None,
                 proxies: Sequence[str] = TABLE_PROXIES, missing: str = "error") -> None:
        if missing not in ("error", "nan"):
            raise UsageError(f"missing must be 'error' or 'nan', got {missing!r}")
        self.table = ProxyTable.read(space, path)
        self.dataset, self.proxies, self.missing = dataset, tuple(proxies), missing
        self.names = feature_names(self.proxies)

    def __call__(self, candidate: Any) -> np.ndarray:
        if self.missing == "nan" and (self.dataset, candidate) not in self.table:
            return np.full(len(self.proxies), np.nan)
        return proxy_features(self.table.report(candidate, self.dataset), self.proxies)


class LiveProxyFeatures:
    """The ``proxies-live`` provider: the proxies computed on each architecture's deployed network.

    Args:
        space: the search space.
        dataset: sets the input shape and class count.
        device: ``cpu`` or ``cuda``.
        proxies: which proxies (default all of the table's).
        seed: as `compute_arch_proxies`.
        init_seed: as `compute_arch_proxies`.
        batch_size: as `compute_arch_proxies`.
        data: as `compute_arch_proxies`.
    """

    def __init__(self, space: SearchSpace, dataset: str = "cifar10", device: str = "cpu",
                 proxies: Sequence[str] = TABLE_PROXIES, seed: int = 0, init_seed: int = 0,
                 batch_size: int = DEFAULT_BATCH_SIZE, data: str = DEFAULT_DATA) -> None:
        self.space, self.dataset, self.device, self.proxies = space, dataset, device, tuple(proxies)
        self.seed, self.init_seed, self.batch_size, self.data = seed, init_seed, batch_size, data
        self.names = feature_names(self.proxies)

    def __call__(self, candidate: Any) -> np.ndarray:
        report = compute_arch_proxies(self.space, candidate, self.dataset, names=self.proxies, seed=self.seed,
                                      init_seed=self.init_seed, device=self.device, batch_size=self.batch_size,
                                      data=self.data)
        return proxy_features(report, self.proxies)
