"""The parts energy windows are made of: the workload and energy-source protocols, the two NVML
energy sources (`CounterSource`, `PowerSampler`) and one window's figures (`EnergyWindow`).

One job: what an energy window is and what it reads, shared by the ways of cutting windows
(`nasenergy.hardware.energy_window.run_energy_windows`,
`nasenergy.hardware.sample_windows.run_sample_windows`) and of judging them
(`nasenergy.hardware.busy_windows`). `measured_window` fills a window's images and device seconds
from the workload's markers; `window_energies` gives each window's energy per image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from nasenergy.errors import CandidateError

__all__ = ["CounterSource", "EnergySource", "EnergyWindow", "EnergyWindowError", "PowerSampler", "Workload",
           "measured_window", "window_energies"]


class EnergyWindowError(CandidateError):
    """No energy window could be completed (e.g. the counter never changed)."""


class Workload(Protocol):
    """Work the device runs continuously while the host polls the energy source."""

    def keep_busy(self) -> None:
        """Queue more work if less than a short backlog is queued; must return quickly."""
        ...

    def mark(self) -> Any:
        """Place a marker after the work queued so far; returns an opaque marker."""
        ...

    def between(self, start: Any, end: Any) -> tuple[int, float]:
        """Images completed and device seconds elapsed between two markers (may block)."""
        ...


class EnergySource(Protocol):
    """A cumulative energy reading polled by `run_energy_windows`."""

    def poll(self, t_s: float) -> bool:
        """Take a reading at host time `t_s`; True if this reading can bound a window."""
        ...

    def energy_j(self) -> float:
        """Cumulative energy at the last reading, joules (any fixed origin)."""
        ...


class CounterSource:
    """The NVML total-energy counter (mJ): a window may only start or end where it changed."""

    def __init__(self, read_energy_mj: Callable[[], int]) -> None:
        self._read = read_energy_mj
        self._last: int | None = None

    def poll(self, t_s: float) -> bool:
        value = self._read()
        changed = self._last is not None and value != self._last
        self._last = value
        return changed

    def energy_j(self) -> float:
        if self._last is None:
            raise EnergyWindowError("the energy counter was never read")
        return self._last / 1000.0


class PowerSampler:
    """Integrates sampled power (W) over host time: the fallback without an energy counter.

    Each reading's power is held until the next reading (left Riemann sum), so the integral up to
    the latest reading is exact for piecewise-constant power sampled often. Any reading can bound
    a window.
    """

    def __init__(self, read_power_w: Callable[[], float]) -> None:
        self._read = read_power_w
        self._t: float | None = None
        self._p = 0.0
        self._e = 0.0

    def poll(self, t_s: float) -> bool:
        if self._t is not None:
            self._e += self._p * (t_s - self._t)
        self._t = t_s
        self._p = float(self._read())
        return True

    def energy_j(self) -> float:
        return self._e


@dataclass(frozen=True)
class EnergyWindow:
    """One window of continuous inference.

    Attributes:
        energy_j: energy between the two edges, joules.
        host_s: host seconds between the two edges.
        images: images completed between the two work-stream markers.
        device_s: device seconds between the two markers.
        avg_power_w: ``energy_j / host_s``.
        throughput_img_per_s: ``images / device_s``.
        energy_j_per_img: ``avg_power_w / throughput_img_per_s``.
    """

    energy_j: float
    host_s: float
    images: int
    device_s: float
    readings: int | None = None
    """Power samples averaged (`run_sample_windows`); ``None`` for counter and sampler windows."""
    step_s: tuple[float, ...] | None = None
    """Device seconds of each forward pass inside the window, where the workload times them
    (`steady_throughput`); ``None`` otherwise."""

    @property
    def avg_power_w(self) -> float:
        return self.energy_j / self.host_s

    @property
    def throughput_img_per_s(self) -> float:
        return self.images / self.device_s

    @property
    def energy_j_per_img(self) -> float:
        return self.avg_power_w / self.throughput_img_per_s


def measured_window(workload: Workload, m0: Any, m1: Any, **fields: Any) -> EnergyWindow:
    """The window between two markers: images and device seconds from `workload`, and each pass's
    device seconds where the workload times them (an optional ``step_seconds(start, end)``)."""
    images, device_s = workload.between(m0, m1)
    timed = getattr(workload, "step_seconds", None)
    step_s = tuple(timed(m0, m1)) if timed is not None else None
    return EnergyWindow(images=images, device_s=device_s, step_s=step_s, **fields)


def window_energies(windows: Sequence[EnergyWindow], idle_w: float | None = None) -> list[float]:
    """Energy per image of each window, joules; above idle when `idle_w` is given."""
    if idle_w is None:
        return [w.energy_j_per_img for w in windows]
    return [(w.avg_power_w - idle_w) / w.throughput_img_per_s for w in windows]
