"""The fake NVML's board power: load segments, the tick-quantised energy counter, the power
reading and the power-sample buffer.

One job: simulate each GPU's board power over time and answer the energy and power calls of the
``pynvml`` API from it (the model is described in `nasenergy.hardware._fake_nvml`). A GPU's power
follows `Segment`s (a load from a start time, at an SM clock); `GpuSim` holds them and the energy
of the completed ticks.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nasenergy.hardware._fake_gpu import FakeGpu, FakeNVMLError, Load, NvmlConstants

__all__ = ["GpuSim", "PowerSimulation", "Segment"]


@dataclass
class Segment:
    """A GPU's load from simulated time ``start_s`` on, at SM clock ``sm_clock_mhz``."""

    start_s: float
    load: Load
    sm_clock_mhz: int


@dataclass
class GpuSim:
    """One simulated GPU: its description, its load segments and the energy of its completed ticks."""

    spec: FakeGpu
    segments: list[Segment] = field(default_factory=list)
    energy_j: float = 0.0          # exact energy over [0, tick_index * tick_s]
    tick_index: int = 0
    last_tick_power_w: float | None = None


class PowerSimulation(NvmlConstants):
    """`FakeNvml`'s part that simulates board power and reports energy, power and power samples."""

    tick_s: float
    sample_s: float
    _t0: float
    _gpus: list[GpuSim]

    if TYPE_CHECKING:
        def elapsed_s(self) -> float: ...
        def _enter(self, name: str, *args: Any, needs_init: bool = True) -> None: ...
        def _gpu(self, handle: object) -> int: ...
        def _current_sm_clock(self, index: int) -> int: ...

    def set_load(self, load: Load, index: int = 0) -> None:
        """Set GPU `index`'s board power from now on.

        Args:
            load: watts (constant), ``None`` for idle, or a callable
                ``(elapsed_s, sm_clock_mhz) -> watts``.
            index: which GPU.
        """
        self._advance(index)
        g = self._gpus[index]
        g.segments.append(Segment(self.elapsed_s(), load, self._current_sm_clock(index)))

    def exact_energy_j(self, start_s: float, end_s: float, index: int = 0) -> float:
        """The true energy (no tick quantisation) of GPU `index` over simulated ``[start_s, end_s]``."""
        return self._integrate(self._gpus[index], start_s, end_s)

    # ------------------------------------------------------------------ energy simulation
    def _power_at(self, seg: Segment, t_s: float, spec: FakeGpu) -> float:
        if seg.load is None:
            return spec.idle_power_w * spec.power_factor
        if callable(seg.load):
            return float(seg.load(t_s, seg.sm_clock_mhz)) * spec.power_factor
        return float(seg.load) * spec.power_factor

    def _integrate(self, g: GpuSim, a: float, b: float) -> float:
        total = 0.0
        for i, seg in enumerate(g.segments):
            seg_end = g.segments[i + 1].start_s if i + 1 < len(g.segments) else math.inf
            lo, hi = max(a, seg.start_s), min(b, seg_end)
            if hi <= lo:
                continue
            if callable(seg.load):
                n = max(1, math.ceil((hi - lo) / (self.tick_s / 50)))
                h = (hi - lo) / n
                total += sum(self._power_at(seg, lo + (j + 0.5) * h, g.spec) for j in range(n)) * h
            else:
                total += self._power_at(seg, lo, g.spec) * (hi - lo)
        return total

    def _advance(self, index: int) -> GpuSim:
        g = self._gpus[index]
        k = math.floor(self.elapsed_s() / self.tick_s + 1e-9)
        if k > g.tick_index:
            prev_end = g.tick_index * self.tick_s
            last_start = (k - 1) * self.tick_s
            if k - 1 > g.tick_index:
                g.energy_j += self._integrate(g, prev_end, last_start)
            last = self._integrate(g, last_start, k * self.tick_s)
            g.energy_j += last
            g.last_tick_power_w = last / self.tick_s
            g.tick_index = k
        return g

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: object) -> int:
        self._enter("nvmlDeviceGetTotalEnergyConsumption", handle)
        i = self._gpu(handle)
        if not self._gpus[i].spec.has_energy_counter:
            raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        g = self._advance(i)
        return g.spec.initial_energy_mj + math.floor(g.energy_j * 1000.0 + 1e-6)

    def nvmlDeviceGetPowerUsage(self, handle: object) -> int:
        self._enter("nvmlDeviceGetPowerUsage", handle)
        g = self._advance(self._gpu(handle))
        power = g.spec.idle_power_w if g.last_tick_power_w is None else g.last_tick_power_w
        return round(power * 1000.0)

    def nvmlDeviceGetSamples(self, handle: object, sample_type: int, last_seen_us: int) -> tuple[int, list[Any]]:
        self._enter("nvmlDeviceGetSamples", handle, sample_type, last_seen_us)
        if sample_type != self.NVML_TOTAL_POWER_SAMPLES:
            raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        g = self._gpus[self._gpu(handle)]
        now = self.elapsed_s()
        last = math.floor(now / self.sample_s + 1e-9)
        out = []
        for k in range(max(1, last - 119), last + 1):
            end = k * self.sample_s
            stamp = round((self._t0 + end) * 1e6)
            if stamp <= last_seen_us:
                continue
            watts = self._integrate(g, end - self.sample_s, end) / self.sample_s
            value = types.SimpleNamespace(uiVal=round(watts * 1000.0))
            out.append(types.SimpleNamespace(timeStamp=stamp, sampleValue=value))
        if not out:
            raise FakeNVMLError(self.NVML_ERROR_NOT_FOUND)
        return self.NVML_VALUE_TYPE_UNSIGNED_INT, out
