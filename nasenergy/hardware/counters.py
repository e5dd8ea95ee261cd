"""GPU activity counters read (never set) while a network runs: what DVFS needs per network.

On Hopper and newer GPUs NVML's GPM metrics give, over a window between two samples, the share
of SMs busy, the SM occupancy (active warps against the maximum), the DRAM bandwidth used against
its peak, and the share of time any tensor core was busy. Elsewhere NVML's utilization rates
(GPU busy and memory busy, over the driver's own sample period) are what there is. Every value is
a percentage, 0..100; a counter the GPU does not offer is ``None``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from nasenergy.hardware.nvml import NvmlDevice, NvmlError
from nasenergy.measurement import COUNTER_FIELDS

CounterKind = Literal["gpm", "utilization_rates", "unavailable"]

# NVML's GPM metric ids (nvml.h: nvmlGpmMetricId_t)
GPM_SM_UTIL = 2
GPM_SM_OCCUPANCY = 3
GPM_ANY_TENSOR_UTIL = 5
GPM_DRAM_BW_UTIL = 10
GPM_METRICS: tuple[int, ...] = (GPM_SM_UTIL, GPM_SM_OCCUPANCY, GPM_DRAM_BW_UTIL, GPM_ANY_TENSOR_UTIL)


@dataclass(frozen=True)
class GpuCounters:
    """Activity of the GPU over one window of a running network, percentages 0..100.

    Attributes:
        kind: ``gpm`` (NVML GPM metrics), ``utilization_rates`` (NVML's GPU/memory busy rates
            only) or ``unavailable``.
        window_s: length of the GPM window, seconds (``None`` for utilization rates).
        sm_util_pct: share of SMs busy (GPM).
        sm_occupancy_pct: active warps against the theoretical maximum (GPM).
        dram_bw_util_pct: DRAM bandwidth used against its peak (GPM).
        tensor_util_pct: share of time any tensor core was busy (GPM).
        gpu_util_pct: NVML's GPU utilization rate (time a kernel ran).
        memory_util_pct: NVML's memory utilization rate (time memory was read or written).
    """

    kind: CounterKind
    window_s: float | None = None
    sm_util_pct: float | None = None
    sm_occupancy_pct: float | None = None
    dram_bw_util_pct: float | None = None
    tensor_util_pct: float | None = None
    gpu_util_pct: float | None = None
    memory_util_pct: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-safe dict."""
        return asdict(self)


class CounterWindow:
    """Reads counters around a stretch of running work: `start` before, `stop` after.

    Works on any `NvmlDevice`; on GPUs without GPM only the utilization rates are read at `stop`.
    Errors of the counters never fail a measurement: they give ``kind="unavailable"``.
    """

    def __init__(self, device: NvmlDevice | None, clock: Callable[[], float] = time.perf_counter) -> None:
        self._device = device
        self._clock = clock
        self._gpm = bool(device is not None and device.gpm_supported())
        self._first: Any = None
        self._t0 = 0.0

    def start(self) -> None:
        """Take the first sample (the work must already be running)."""
        if self._gpm and self._device is not None:
            try:
                self._first = self._device.gpm_sample()
            except NvmlError:
                self._first = None
        self._t0 = self._clock()

    def stop(self) -> GpuCounters:
        """Take the second sample and return the counters over the window."""
        device = self._device
        if device is None:
            return GpuCounters("unavailable")
        window_s = self._clock() - self._t0
        gpu = memory = None
        try:
            gpu, memory = device.utilization_rates_pct()
        except NvmlError:
            pass
        if self._first is not None:
            try:
                second = device.gpm_sample()
                try:
                    sm, occupancy, dram, tensor = device.gpm_metrics(self._first, second, GPM_METRICS)
                finally:
                    device.gpm_free(self._first, second)
                return GpuCounters("gpm", window_s, sm, occupancy, dram, tensor, gpu, memory)
            except NvmlError:
                pass
            finally:
                self._first = None
        if gpu is None:
            return GpuCounters("unavailable")
        return GpuCounters("utilization_rates", None, gpu_util_pct=gpu, memory_util_pct=memory)


def counter_fields(counters: GpuCounters | None) -> dict[str, Any]:
    """The `Measurement` fields of `counters` (``counters_kind`` and the ``*_pct`` figures)."""
    if counters is None:
        return {}
    return {"counters_kind": counters.kind, **{name: getattr(counters, name) for name in COUNTER_FIELDS}}
