"""Sanity checks of benchmark values: accuracies in [0, 100], and what a new benchmark would lose.

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
