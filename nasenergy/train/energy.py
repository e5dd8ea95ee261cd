"""The board energy a training draws, read from NVML's total-energy counter (millijoules since
the driver loaded) at the training's start and end: the whole board's energy over the window,
idle power included, as the meter's counter windows read it. ``energy_source`` says
``measured``; where several trainings shared the board, `nasenergy.train.packing` apportions the
board's windows and says ``apportioned``."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from nasenergy.hardware.cuda_energy import nvml_for_cuda_device
from nasenergy.hardware.nvml_errors import NvmlError


class EnergyCounter(Protocol):
    """Anything with a monotonic energy counter in millijoules (an `NvmlDevice`, a fake)."""

    def total_energy_mj(self) -> int:
        """The counter's value, mJ."""
        ...


@dataclass
class EnergyLog:
    """Reads a training's energy counter with the time of each reading."""

    counter: EnergyCounter
    now: Callable[[], float] = time.monotonic

    def mark(self) -> tuple[float, int]:
        """Read the counter now: ``(time_s, energy_mj)`` (``time.monotonic`` seconds)."""
        return self.now(), int(self.counter.total_energy_mj())

    def energy_j(self, start: tuple[float, int], end: tuple[float, int]) -> float:
        """Joules between two readings (the counter wraps at no realistic length)."""
        return (end[1] - start[1]) / 1000.0


def board_counter(device: str, nvml: Any = None) -> EnergyCounter | None:
    """The NVML energy counter of CUDA device `device` (``cuda`` or ``cuda:<n>``), or ``None``
    where there is no NVML or the board has no energy counter."""
    if not device.startswith("cuda"):
        return None
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    try:
        handle = nvml_for_cuda_device(index, nvml)
        if not handle.has_energy_counter():
            handle.close()
            return None
        return handle
    except (NvmlError, OSError, ImportError):
        return None
