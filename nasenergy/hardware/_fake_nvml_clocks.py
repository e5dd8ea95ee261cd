"""The fake NVML's clocks: the SM clock in force, the clock queries, and locking clocks.

One job: answer the clock calls of the ``pynvml`` API for `FakeNvml`. The SM clock is the GPU's
default clock, or, while clocks are locked, the highest supported clock not above the lock's
maximum; ``nvmlDeviceSetGpuLockedClocks`` refuses ``min > max`` or values outside the supported
range, and a lock or reset starts a new power segment at the new clock.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from nasenergy.hardware._fake_gpu import FakeNVMLError, NvmlConstants
from nasenergy.hardware._fake_nvml_power import GpuSim, Segment
from nasenergy.hardware._fake_nvml_state import SharedClockState

__all__ = ["ClockControl"]


class ClockControl(SharedClockState, NvmlConstants):
    """`FakeNvml`'s part that reports and locks clocks (kept in its `SharedClockState`)."""

    permission_denied: bool
    _gpus: list[GpuSim]

    if TYPE_CHECKING:
        def elapsed_s(self) -> float: ...
        def _enter(self, name: str, *args: Any, needs_init: bool = True) -> None: ...
        def _gpu(self, handle: object) -> int: ...
        def _advance(self, index: int) -> GpuSim: ...

    def locked_clocks_mhz(self, index: int = 0) -> tuple[int, int] | None:
        """The locked clock range of GPU `index`, or ``None`` when not locked."""
        return self._locked(index)

    def _current_sm_clock(self, index: int) -> int:
        spec = self._gpus[index].spec
        locked = self._locked(index)
        if locked is None:
            return spec.default_sm_clock_mhz
        allowed = [c for c in spec.graphics_clocks_mhz if c <= locked[1]]
        return max(allowed) if allowed else min(spec.graphics_clocks_mhz)

    def _clock_of_type(self, index: int, clock_type: int, current: bool) -> int:
        spec = self._gpus[index].spec
        if clock_type in (self.NVML_CLOCK_SM, self.NVML_CLOCK_GRAPHICS):
            return self._current_sm_clock(index) if current else spec.default_sm_clock_mhz
        if clock_type == self.NVML_CLOCK_MEM:
            return max(spec.memory_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetClockInfo(self, handle: object, clock_type: int) -> int:
        self._enter("nvmlDeviceGetClockInfo", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=True)

    def nvmlDeviceGetMaxClockInfo(self, handle: object, clock_type: int) -> int:
        self._enter("nvmlDeviceGetMaxClockInfo", handle, clock_type)
        spec = self._gpus[self._gpu(handle)].spec
        if clock_type in (self.NVML_CLOCK_SM, self.NVML_CLOCK_GRAPHICS):
            return max(spec.graphics_clocks_mhz)
        if clock_type == self.NVML_CLOCK_MEM:
            return max(spec.memory_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetApplicationsClock(self, handle: object, clock_type: int) -> int:
        self._enter("nvmlDeviceGetApplicationsClock", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=False)

    def nvmlDeviceGetDefaultApplicationsClock(self, handle: object, clock_type: int) -> int:
        self._enter("nvmlDeviceGetDefaultApplicationsClock", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=False)

    def nvmlDeviceGetClock(self, handle: object, clock_type: int, clock_id: int) -> int:
        self._enter("nvmlDeviceGetClock", handle, clock_type, clock_id)
        i = self._gpu(handle)
        if clock_id == self.NVML_CLOCK_ID_CURRENT:
            return self._clock_of_type(i, clock_type, current=True)
        if clock_id in (self.NVML_CLOCK_ID_APP_CLOCK_TARGET, self.NVML_CLOCK_ID_APP_CLOCK_DEFAULT):
            return self._clock_of_type(i, clock_type, current=False)
        if clock_id == self.NVML_CLOCK_ID_CUSTOMER_BOOST_MAX:
            return max(self._gpus[i].spec.graphics_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)

    def nvmlDeviceGetSupportedMemoryClocks(self, handle: object) -> list[int]:
        self._enter("nvmlDeviceGetSupportedMemoryClocks", handle)
        return sorted(self._gpus[self._gpu(handle)].spec.memory_clocks_mhz, reverse=True)

    def nvmlDeviceGetSupportedGraphicsClocks(self, handle: object, memory_clock_mhz: int) -> list[int]:
        self._enter("nvmlDeviceGetSupportedGraphicsClocks", handle, memory_clock_mhz)
        spec = self._gpus[self._gpu(handle)].spec
        if memory_clock_mhz not in spec.memory_clocks_mhz:
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        return sorted(spec.graphics_clocks_mhz, reverse=True)

    def nvmlDeviceSetGpuLockedClocks(self, handle: object, min_mhz: int, max_mhz: int) -> None:
        self._enter("nvmlDeviceSetGpuLockedClocks", handle, min_mhz, max_mhz)
        i = self._gpu(handle)
        if self.permission_denied:
            raise FakeNVMLError(self.NVML_ERROR_NO_PERMISSION)
        clocks = self._gpus[i].spec.graphics_clocks_mhz
        if min_mhz > max_mhz or min_mhz < min(clocks) or max_mhz > max(clocks):
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        self._advance(i)
        with self._locked_state() as state:
            state.setdefault("gpus", {})[str(i)] = {"locked_mhz": [int(min_mhz), int(max_mhz)]}
            state.setdefault("history", []).append(
                {"gpu": i, "op": "set", "min_mhz": int(min_mhz), "max_mhz": int(max_mhz),
                 "pid": os.getpid()})
        self._clock_changed(i)

    def nvmlDeviceResetGpuLockedClocks(self, handle: object) -> None:
        self._enter("nvmlDeviceResetGpuLockedClocks", handle)
        i = self._gpu(handle)
        if self.permission_denied:
            raise FakeNVMLError(self.NVML_ERROR_NO_PERMISSION)
        self._advance(i)
        with self._locked_state() as state:
            state.setdefault("gpus", {})[str(i)] = {"locked_mhz": None}
            state.setdefault("history", []).append({"gpu": i, "op": "reset", "pid": os.getpid()})
        self._clock_changed(i)

    def _clock_changed(self, index: int) -> None:
        g = self._gpus[index]
        g.segments.append(Segment(self.elapsed_s(), g.segments[-1].load,
                                   self._current_sm_clock(index)))
