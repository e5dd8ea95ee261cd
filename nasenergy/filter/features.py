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
"""Names of the columns `cheap_features` returns, in order."""


def _log10(x: float | None) -> float:
    return math.log10(x) if x is not None and x > 0 else math.nan


def cheap_features(measurement: Measurement) -> np.ndarray:
    """The cheap figures of one measurement as a feature vector (see `CHEAP_FEATURE_NAMES`).

    Sizes and rates are log10-scaled; missing or non-positive figures (e.g. energy on a device
    without an energy counter) are NaN.
    """
    m = measurement
    return np.array(
        [
            float(m.utilization),
            _log10(m.flops_per_img),
            _log10(float(m.params)),
            _log10(m.throughput_img_per_s),
            _log10(m.energy_j_per_img),
        ]
    )


def candidate_features(measurement: Measurement, extra: Sequence[float] | np.ndarray | None) -> np.ndarray:
    """`cheap_features` followed by the optional extra (structural) features."""
    base = cheap_features(measurement)
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


def feature_matrix(observations: Sequence[Observation]) -> np.ndarray:
    """Rows of `candidate_features` for each observation, shape ``(n, 5 + n_extra)``."""
    n_extra = n_extra_features(observations)
    width = len(CHEAP_FEATURE_NAMES) + n_extra
    if not observations:
        return np.empty((0, width))
    return np.vstack([candidate_features(o.measurement, o.features) for o in observations])
