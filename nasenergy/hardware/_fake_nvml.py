"""`FakeNvml`: a deterministic stand-in for the ``pynvml`` module (public via ``nasenergy.testing``).

It simulates one or more GPUs well enough to test code that reads energy, power and clocks or
locks clocks, without a GPU:

* **Time** comes from an injectable ``clock`` (default `time.monotonic`); `ManualClock` is a
  clock tests advance by hand. Simulated time starts at 0 when the fake is created.
* **Energy counter** (``nvmlDeviceGetTotalEnergyConsumption``, mJ) changes only on ticks every
  ``tick_s`` seconds (0.1 s by default, as on an H200): at simulated time ``t`` it reports
  ``initial_energy_mj + floor(E(k * tick_s))`` with ``k = floor(t / tick_s)``, where ``E(x)`` is
  the exact integral of board power over ``[0, x]``.
* **Power** (``nvmlDeviceGetPowerUsage``, mW) is updated on the same ticks: it is the mean board
  power over the last completed tick interval (idle power before the first tick).
* **Power samples** (``nvmlDeviceGetSamples`` with ``NVML_TOTAL_POWER_SAMPLES``): one sample every
  ``sample_s`` seconds (0.02 s by default, as on an H200), the mean board power over the interval it
  ends, stamped with its end in microseconds of the fake's ``clock`` (real NVML stamps the host's
  wall clock); the buffer keeps the last 120; NOT_FOUND when none is newer than asked.
* **Load**: board power is ``idle_power_w`` unless `FakeNvml.set_load` set a constant wattage or a
  callable ``(t_s, sm_clock_mhz) -> watts`` (integrated with a midpoint rule, 50 steps per tick),
  times the GPU's ``power_factor`` (1.0 unless a board is meant to draw more or less than its twin).
* **Clocks**: the SM clock is the GPU's default clock, or, while clocks are locked, the highest
  supported clock not above the lock's maximum. ``nvmlDeviceSetGpuLockedClocks`` raises
  INVALID_ARGUMENT for ``min > max`` or values outside the supported range.
* **Errors**: ``has_energy_counter=False`` makes the counter raise NOT_SUPPORTED;
  ``permission_denied=True`` makes Set/Reset of locked clocks raise NO_PERMISSION; ``fail_on``
  maps any function name to an NVML error code (or an exception) raised on every call of it.
  Any call before ``nvmlInit`` raises UNINITIALIZED.
* **Shared state**: with ``state_file``, the locked-clock state and a history of lock/reset calls
  live in a JSON file, so several processes (each with its own `FakeNvml` on the same file) see
  one GPU; a parent can check whether a killed child left clocks locked. Energy is per process.
* **Call log**: `FakeNvml.calls` lists every call as `FakeNvmlCall` (name, arguments; handles are
  shown as their index).

This module's job is `FakeNvml` itself: its options, the call plumbing (the call log, injected
errors, initialisation) and the device-identity and power-limit calls. Its other parts are
`nasenergy.hardware._fake_nvml_power` (power and energy), `nasenergy.hardware._fake_nvml_clocks`,
`nasenergy.hardware._fake_nvml_counters` (GPM and utilization) and
`nasenergy.hardware._fake_nvml_state` (the shared locked-clock state); the small types are in
`nasenergy.hardware._fake_gpu`, re-exported here.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from nasenergy.hardware._fake_gpu import (
    H200_GRAPHICS_CLOCKS_MHZ,
    H200_MEMORY_CLOCKS_MHZ,
    FakeGpu,
    FakeHandle,
    FakeNvmlCall,
    FakeNVMLError,
    Load,
    ManualClock,
)
from nasenergy.hardware._fake_nvml_clocks import ClockControl
from nasenergy.hardware._fake_nvml_counters import ActivityCounters
from nasenergy.hardware._fake_nvml_power import GpuSim, PowerSimulation, Segment

__all__ = ["H200_GRAPHICS_CLOCKS_MHZ", "H200_MEMORY_CLOCKS_MHZ", "FakeGpu", "FakeHandle", "FakeNVMLError", "FakeNvml",
           "FakeNvmlCall", "Load", "ManualClock"]


class FakeNvml(PowerSimulation, ClockControl, ActivityCounters):
    """A simulated ``pynvml`` module; see the module docstring for the model.

    Args:
        gpus: number of identical default GPUs, or a sequence of `FakeGpu`.
        clock: time source in seconds (default `time.monotonic`).
        tick_s: update period of the energy counter and the power reading, seconds.
        sample_s: period of the power-sample buffer, seconds.
        driver_version: reported driver version.
        permission_denied: Set/Reset of locked clocks raise NO_PERMISSION.
        fail_on: function name -> NVML error code (int) or exception raised on each call.
        state_file: JSON file holding locked-clock state shared between processes.
    """

    def __init__(
        self,
        gpus: int | Sequence[FakeGpu] = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        tick_s: float = 0.1,
        sample_s: float = 0.02,
        driver_version: str = "550.00-fake",
        permission_denied: bool = False,
        fail_on: Mapping[str, int | BaseException] | None = None,
        state_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if tick_s <= 0 or sample_s <= 0:
            raise ValueError(f"tick_s and sample_s must be positive, got {tick_s} and {sample_s}")
        specs = [FakeGpu() for _ in range(gpus)] if isinstance(gpus, int) else list(gpus)
        self._clock = clock
        self._t0 = clock()
        self.tick_s = float(tick_s)
        self.sample_s = float(sample_s)
        self.driver_version = driver_version
        self.permission_denied = permission_denied
        self.fail_on: dict[str, int | BaseException] = dict(fail_on or {})
        self.state_file = Path(state_file) if state_file is not None else None
        self.calls: list[FakeNvmlCall] = []
        self._init_count = 0
        self._mem_state: dict[str, Any] = {"gpus": {}, "history": []}
        self._gpus = [GpuSim(spec) for spec in specs]
        for i, g in enumerate(self._gpus):
            g.segments.append(Segment(0.0, None, self._current_sm_clock(i)))

    # ------------------------------------------------------------------ test controls
    def elapsed_s(self) -> float:
        """Simulated seconds since this fake was created."""
        return self._clock() - self._t0

    def call_names(self) -> list[str]:
        """The names of all calls made so far, in order."""
        return [c.name for c in self.calls]

    # ------------------------------------------------------------------ call plumbing
    def _enter(self, name: str, *args: Any, needs_init: bool = True) -> None:
        shown = tuple(a.index if isinstance(a, FakeHandle) else a for a in args)
        self.calls.append(FakeNvmlCall(name, shown))
        fail = self.fail_on.get(name)
        if fail is not None:
            if isinstance(fail, BaseException):
                raise fail
            raise FakeNVMLError(int(fail))
        if needs_init and self._init_count <= 0:
            raise FakeNVMLError(self.NVML_ERROR_UNINITIALIZED)

    def _gpu(self, handle: object) -> int:
        if not isinstance(handle, FakeHandle) or not 0 <= handle.index < len(self._gpus):
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        return handle.index

    # ------------------------------------------------------------------ the pynvml API
    def nvmlInit(self) -> None:
        self._enter("nvmlInit", needs_init=False)
        self._init_count += 1

    def nvmlShutdown(self) -> None:
        self._enter("nvmlShutdown")
        self._init_count -= 1

    def nvmlErrorString(self, code: int) -> str:
        return str(FakeNVMLError(code))

    def nvmlSystemGetDriverVersion(self) -> str:
        self._enter("nvmlSystemGetDriverVersion")
        return self.driver_version

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        return len(self._gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeHandle:
        self._enter("nvmlDeviceGetHandleByIndex", index)
        if not 0 <= index < len(self._gpus):
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        return FakeHandle(index)

    def nvmlDeviceGetIndex(self, handle: object) -> int:
        self._enter("nvmlDeviceGetIndex", handle)
        return self._gpu(handle)

    def nvmlDeviceGetName(self, handle: object) -> str:
        self._enter("nvmlDeviceGetName", handle)
        return self._gpus[self._gpu(handle)].spec.name

    def nvmlDeviceGetUUID(self, handle: object) -> str:
        self._enter("nvmlDeviceGetUUID", handle)
        i = self._gpu(handle)
        return self._gpus[i].spec.uuid or f"GPU-fake-{i:04d}"

    def nvmlDeviceGetPowerManagementLimit(self, handle: object) -> int:
        self._enter("nvmlDeviceGetPowerManagementLimit", handle)
        return round(self._gpus[self._gpu(handle)].spec.power_limit_w * 1000.0)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: object) -> int:
        self._enter("nvmlDeviceGetEnforcedPowerLimit", handle)
        return round(self._gpus[self._gpu(handle)].spec.power_limit_w * 1000.0)

    def nvmlDeviceGetPowerManagementLimitConstraints(self, handle: object) -> list[int]:
        self._enter("nvmlDeviceGetPowerManagementLimitConstraints", handle)
        lo, hi = self._gpus[self._gpu(handle)].spec.power_limit_range_w
        return [round(lo * 1000.0), round(hi * 1000.0)]
