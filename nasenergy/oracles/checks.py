"""Sanity checks of benchmark values: accuracies in [0, 100] and in percent, coverage of the space,
and what a new benchmark would lose or change.

Every check raises (or returns) one line that names the offending rows or architectures, the
first `SHOWN` of them and how many more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np


class _Covered(Protocol):
    """What `losses` reads of a benchmark (`nasenergy.oracles.data.BenchmarkData.coverage`)."""

    def coverage(self) -> Mapping[str, Mapping[str, int]]: ...


class _Valued(_Covered, Protocol):
    """What `fraction_scaled` and `changed_values` read of a benchmark (`BenchmarkData`)."""

    def metric_keys(self) -> list[tuple[str, str, str]]: ...

    def mean(self, key: tuple[str, str, str]) -> np.ndarray: ...

FRACTION_MAX = 1.0
"""A metric whose every recorded accuracy is at most this many percent was written as fractions."""

SAME_VALUE_PCT = 1e-6
"""Two accuracies closer than this (percentage points) are the same value."""

ACCURACY_RANGE_PCT: tuple[float, float] = (0.0, 100.0)
"""Every accuracy is a percentage."""

SHOWN = 5
"""How many offending rows a message names before saying how many more there are."""


def accuracy_out_of_range(value: float) -> bool:
    """Whether ``value`` (a recorded accuracy, %) lies outside [0, 100]; NaN means missing."""
    low, high = ACCURACY_RANGE_PCT
    return not math.isnan(value) and not low <= value <= high


def name_items(items: Sequence[tuple[int, float]], noun: str) -> str:
    """``row 5 (101.2), row 9 (-1) and 3 more``-style text of (number, value) pairs."""
    shown = ", ".join(f"{noun} {number} ({value:g})" for number, value in items[:SHOWN])
    more = len(items) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def bad_accuracies(values: np.ndarray) -> list[tuple[int, float]]:
    """(architecture index, value) of every accuracy outside [0, 100] in ``values`` (``[N]`` or
    ``[N, K]``; the first bad run of an architecture is named)."""
    low, high = ACCURACY_RANGE_PCT
    array = np.asarray(values, dtype=np.float64)
    bad = ~np.isnan(array) & ((array < low) | (array > high))
    if array.ndim == 1:
        return [(int(i), float(array[i])) for i in np.flatnonzero(bad)]
    rows = np.flatnonzero(bad.any(axis=1))
    return [(int(i), float(array[i][bad[i]][0])) for i in rows]


def losses(installed: _Covered, new: _Covered) -> list[str]:
    """What replacing ``installed`` by ``new`` would lose: metrics ``new`` lacks, and metrics for
    which it holds fewer architectures. Empty when nothing is lost."""
    old_cov, new_cov = installed.coverage(), new.coverage()
    lost = [key for key in old_cov if key not in new_cov]
    fewer = [
        (key, old_cov[key]["archs"], new_cov[key]["archs"])
        for key in old_cov
        if key in new_cov and new_cov[key]["archs"] < old_cov[key]["archs"]
    ]
    out = []
    if lost:
        more = f" and {len(lost) - SHOWN} more" if len(lost) > SHOWN else ""
        out.append(f"{len(lost)} metric{'s' if len(lost) > 1 else ''} it lacks ({', '.join(lost[:SHOWN])}{more})")
    for key, old, now in fewer[:SHOWN]:
        out.append(f"{key}: {now:,} architectures instead of {old:,}")
    if len(fewer) > SHOWN:
        out.append(f"{len(fewer) - SHOWN} more metrics with fewer architectures")
    return out


def fraction_scaled(data: _Valued) -> list[str]:
    """The metrics of ``data`` whose every accuracy is at most `FRACTION_MAX` %: fractions (0.935)
    written where percentages (93.5) belong."""
    found = []
    for key in data.metric_keys():
        values = np.asarray(data.mean(key), dtype=np.float64)
        values = values[np.isfinite(values)]
        if values.size and float(values.max()) <= FRACTION_MAX:
            found.append("/".join(key))
    return found


def best_coverage(coverage: Mapping[str, Mapping[str, int]]) -> int:
    """The most architectures any one metric of a benchmark covers (0 for none)."""
    return max((int(c["archs"]) for c in coverage.values()), default=0)


def changed_values(installed: _Valued, new: _Valued) -> list[str]:
    """Metrics for which ``new`` records another accuracy than ``installed`` for an architecture
    both hold, with how many architectures differ. Empty when the two agree."""
    out = []
    new_keys = set(new.metric_keys())
    for key in installed.metric_keys():
        if key not in new_keys:
            continue
        old, now = np.asarray(installed.mean(key), np.float64), np.asarray(new.mean(key), np.float64)
        if old.shape != now.shape:
            continue
        both = np.isfinite(old) & np.isfinite(now)
        differ = int((both & (np.abs(old - now) > SAME_VALUE_PCT)).sum())
        if differ:
            out.append(f"{'/'.join(key)}: other accuracies for {differ:,} architectures")
    return out
