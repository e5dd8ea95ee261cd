"""The meter protocols and the statistics meters share.

A meter of the search is a `Meter` (it measures a built network) or an `ArchMeter` (it answers an
architecture of a search space directly, e.g. a recorded profile); it may be both. Optional
capabilities are declared protocols too, checked with ``isinstance``:

* `ArchMeter`: ``measure_arch`` answers an architecture without building it (preferred by the
  search when present).
* `RecordedProfile`: the meter replays recorded rows (``rows()``) at some settings only
  (``settings``); the search checks its setting and coverage against them.
* `ClockControlMeter`: the meter measures on an NVIDIA GPU whose clocks the DVFS step may set
  (``--dvfs measured``).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from nasenergy.errors import CandidateError, UsageError
from nasenergy.measurement import PRECISIONS, Measurement

if TYPE_CHECKING:
    import torch

    from nasenergy.hardware.nvml import NvmlDevice
    from search_spaces import Arch, SpaceProtocol


class MeterError(CandidateError):
    """A measurement could not be made (e.g. the device failed or ran out of memory)."""


@runtime_checkable
class Meter(Protocol):
    """Measures a network's throughput, utilization and (where possible) energy per image.

    Attributes:
        device_name: the device it measures on, as reported (e.g. ``NVIDIA H200``).
    """

    device_name: str

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


@runtime_checkable
class ArchMeter(Protocol):
    """Answers an architecture of a search space without building its network (optional capability)."""

    device_name: str

    def measure_arch(self, arch: Arch, *, precision: str, batch_size: int, dataset: str = "cifar10",
                     space: SpaceProtocol | None = None) -> Measurement:
        """The measurement of `arch` (an architecture of `space`, or its string).

        Args:
            arch: the architecture.
            precision: ``fp32`` | ``tf32`` | ``fp16`` | ``bf16``.
            batch_size: images per forward pass.
            dataset: sets the input shape and class count.
            space: the architecture's search space (``None``: the meter's own, else ``tss``).

        Raises:
            nasenergy.hardware.recorded.NotRecordedError: a replaying meter holds no record of it.
        """
        ...


@runtime_checkable
class RecordedProfile(Protocol):
    """Replays recorded measurements (optional capability).

    Attributes:
        settings: the ``(precision, batch_size, input_shape)`` settings the profile holds, the
            shape spelled as `nasenergy.hardware.recorded.shape_to_str` does.
    """

    settings: Sequence[tuple[str, int, str]]

    def rows(self) -> Iterator[dict[str, str]]:
        """The recorded rows (`nasenergy.hardware.recorded` columns)."""
        ...


@runtime_checkable
class ClockControlMeter(Meter, Protocol):
    """A `Meter` measuring on an NVIDIA GPU whose clocks can be set (optional capability).

    Attributes:
        device: the device it measures on.
        nvml_device: its NVML handle (``None`` when NVML is unavailable).
        has_energy_counter: whether the GPU reports an energy counter.
    """

    device: "torch.device"
    nvml_device: NvmlDevice | None
    has_energy_counter: bool


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

