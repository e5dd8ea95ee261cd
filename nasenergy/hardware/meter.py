"""The `Meter` protocol every hardware meter follows, and the statistics they share."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from nasenergy.errors import NasEnergyError, UsageError
from nasenergy.measurement import PRECISIONS, Measurement

if TYPE_CHECKING:
    import torch


class MeterError(NasEnergyError):
    """A measurement could not be made (e.g. the device failed or ran out of memory)."""


@runtime_checkable
class Meter(Protocol):
    """Measures a network's throughput, utilization and (where possible) energy per image."""

    def measure(
        self,
        model: "torch.nn.Module",
        input_shape: Sequence[int],
        *,
        batch_size: int,
        precision: str,
        channels_last: bool | None = None,
    ) -> Measurement:
        """Measure `model` on batches of `batch_size` images of `input_shape` (``(C, H, W)``).

        Args:
            model: the network; meters do not modify it.
            input_shape: one image's shape.
            batch_size: images per forward pass.
            precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
            channels_last: use the channels-last memory format; ``None`` lets the meter choose.
        """
        ...


@dataclass(frozen=True)
class RepeatStats:
    """Median and coefficient of variation of repeated readings.

    Attributes:
        median: the median reading.
        cv: sample standard deviation over mean (0.0 for a single reading).
        n: number of readings.
    """

    median: float
    cv: float
    n: int


def repeat_stats(values: Sequence[float]) -> RepeatStats:
    """Median and CV of `values` (at least one)."""
    if not values:
        raise ValueError("repeat_stats needs at least one value")
    vals = [float(v) for v in values]
    mean = statistics.fmean(vals)
    cv = statistics.stdev(vals) / mean if len(vals) > 1 and mean != 0 else 0.0
    return RepeatStats(median=statistics.median(vals), cv=cv, n=len(vals))


def check_request(input_shape: Sequence[int], batch_size: int, precision: str) -> tuple[int, ...]:
    """Validate a measurement request; returns the input shape as a tuple of ints.

    Raises:
        UsageError: bad precision, batch size or shape.
    """
    if precision not in PRECISIONS:
        raise UsageError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise UsageError(f"batch size must be a positive integer, got {batch_size!r}")
    shape = tuple(int(s) for s in input_shape)
    if len(shape) != 3 or any(s < 1 for s in shape):
        raise UsageError(f"input shape must be (C, H, W) with positive sizes, got {tuple(input_shape)}")
    return shape

