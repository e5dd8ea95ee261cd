"""Cheap per-candidate features, read off a `Measurement`, for the accuracy predictor."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nasenergy.filter.records import FilterError, Observation
from nasenergy.measurement import Measurement

CHEAP_FEATURE_NAMES: tuple[str, ...] = (
    "utilization",
    "log10_flops_per_img",
    "log10_params",
    "log10_throughput_img_per_s",
    "log10_energy_j_per_img",
)
"""Names of the columns `cheap_features` returns by default, in order."""

CHEAP_FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "measured": ("utilization", "log10_throughput_img_per_s", "log10_energy_j_per_img"),
    "size": ("log10_flops_per_img", "log10_params"),
}
"""The cheap columns by what they cost: ``measured`` needs the cheap measurement of the network on
the device; ``size`` (FLOPs and parameters) is known from the architecture alone, for free."""


def check_cheap_columns(columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` in `CHEAP_FEATURE_NAMES` order (the layout `cheap_features` gives them in).

    Raises:
        FilterError: a name not in `CHEAP_FEATURE_NAMES`, or one given twice.
    """
    names = [str(c) for c in columns]
    unknown = [c for c in names if c not in CHEAP_FEATURE_NAMES]
    if unknown:
        raise FilterError(f"unknown cheap feature columns {unknown}; choose from {', '.join(CHEAP_FEATURE_NAMES)}")
    if len(set(names)) != len(names):
        raise FilterError(f"cheap feature columns named twice: {names}")
    return tuple(c for c in CHEAP_FEATURE_NAMES if c in names)


def _log10(x: float | None) -> float:
    return math.log10(x) if x is not None and x > 0 else math.nan


def cheap_features(measurement: Measurement, columns: Sequence[str] = CHEAP_FEATURE_NAMES) -> np.ndarray:
    """The cheap figures of one measurement as a feature vector: ``columns`` (default all of
    `CHEAP_FEATURE_NAMES`), which must be in that order (`check_cheap_columns`).

    Sizes and rates are log10-scaled; missing or non-positive figures (e.g. energy on a device
    without an energy counter) are NaN.
    """
    m = measurement
    values = {
        "utilization": lambda: float(m.utilization),
        "log10_flops_per_img": lambda: _log10(m.flops_per_img),
        "log10_params": lambda: _log10(float(m.params)),
        "log10_throughput_img_per_s": lambda: _log10(m.throughput_img_per_s),
        "log10_energy_j_per_img": lambda: _log10(m.energy_j_per_img),
    }
    return np.array([values[c]() for c in columns], dtype=float)


def candidate_features(measurement: Measurement, extra: Sequence[float] | np.ndarray | None,
                       columns: Sequence[str] = CHEAP_FEATURE_NAMES) -> np.ndarray:
    """`cheap_features` (of ``columns``) followed by the optional extra features (structural
    features, zero-cost proxies, ...)."""
    base = cheap_features(measurement, columns)
    if extra is None:
        return base
    return np.concatenate([base, np.asarray(extra, dtype=float).ravel()])


def n_extra_features(observations: Sequence[Observation]) -> int:
    """The common number of extra features of ``observations`` (0 for none).

    Raises:
        FilterError: some observations carry extra features and others do not, or lengths differ.
    """
    lengths = {0 if o.features is None else len(o.features) for o in observations}
    if len(lengths) > 1:
        raise FilterError(
            f"evaluated candidates carry different numbers of extra features {sorted(lengths)}; "
            "pass the same feature vector layout for every candidate (or none)"
        )
    return lengths.pop() if lengths else 0


def feature_matrix(observations: Sequence[Observation], columns: Sequence[str] = CHEAP_FEATURE_NAMES) -> np.ndarray:
    """Rows of `candidate_features` for each observation, shape ``(n, len(columns) + n_extra)``."""
    n_extra = n_extra_features(observations)
    width = len(columns) + n_extra
    if not observations:
        return np.empty((0, width))
    return np.vstack([candidate_features(o.measurement, o.features, columns) for o in observations])
