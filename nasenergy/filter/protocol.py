"""`CandidateFilter`: what the search asks of a utilization filter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from nasenergy.filter.records import Decision
from nasenergy.measurement import Measurement
from nasenergy.pareto import ParetoFront

FrontRows = ParetoFront | np.ndarray | Sequence[Sequence[float]] | None
"""What a filter's ``admit`` gets as the front: a `ParetoFront`, or rows in the filter's objective
order, or ``None`` (no front yet)."""

__all__ = ["CandidateFilter"]


@runtime_checkable
class CandidateFilter(Protocol):
    """Decides from a cheap measurement whether a candidate deserves a full evaluation, and learns
    from each full evaluation. `nasenergy.filter.UtilizationFilter` and its subclasses follow it.

    Attributes:
        mode: the filter's registered name (`nasenergy.filter.registry`).
    """

    mode: str

    def admit(
        self,
        measurement: Measurement,
        front: FrontRows = None,
        *,
        features: Sequence[float] | np.ndarray | None = None,
    ) -> Decision:
        """The decision on a measured candidate, given the current Pareto front (rows in the
        filter's objective order) and optional extra features."""
        ...

    def observe(
        self,
        measurement: Measurement,
        accuracy: float,
        *,
        features: Sequence[float] | np.ndarray | None = None,
        throughput_img_per_s: float | None = None,
        energy_j_per_img: float | None = None,
    ) -> None:
        """Learn the result of one full evaluation."""
        ...
