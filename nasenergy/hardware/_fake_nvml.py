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
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

#: H200-like supported graphics clocks: 110 values, 345..1980 MHz in 15 MHz steps.
H200_GRAPHICS_CLOCKS_MHZ: tuple[int, ...] = tuple(range(345, 1981, 15))
#: H200-like supported memory clocks, MHz.
H200_MEMORY_CLOCKS_MHZ: tuple[int, ...] = (3201, 2201)

Load = float | Callable[[float, int], float] | None


class ManualClock:
    """A clock for tests: ``clock()`` returns the current time in seconds; `advance` moves it."""

    def __init__(self, start_s: float = 0.0) -> None:
        self.t_s = float(start_s)

    def __call__(self) -> float:
        return self.t_s

    def advance(self, dt_s: float) -> float:
        """Move time forward by `dt_s` seconds (must be >= 0) and return the new time."""
        if dt_s < 0:
            raise ValueError(f"time cannot go backwards (dt_s={dt_s})")
        self.t_s += dt_s
        return self.t_s


@dataclass(frozen=True)
class FakeGpu:
    """The static description of one simulated GPU (H200-like defaults).

    Attributes:
        name: product name reported by ``nvmlDeviceGetName``.
        uuid: reported UUID; empty means ``GPU-fake-<index>``.
        graphics_clocks_mhz: supported graphics clocks (any order; NVML lists them descending).
        memory_clocks_mhz: supported memory clocks.
        default_sm_clock_mhz: SM clock while no clocks are locked; also the default application
            clock.
        idle_power_w: board power with no load, watts.
        power_limit_w: reported power limit, watts.
        power_limit_range_w: reported (min, max) power-limit constraints, watts.
        has_energy_counter: whether the total-energy counter exists.
        initial_energy_mj: counter value at simulated time 0, millijoules.
        gpm_pct: GPM metric id -> the value (percent) every GPM window reports; empty means the
            GPU has no GPM (pre-Hopper).
        utilization_rates_pct: (GPU, memory) utilization rates reported, percent.
        clocks_event_reasons: the clock-event (throttle) reason bit mask reported.
        power_factor: every board power this GPU draws (idle and under load) is multiplied by
            this (part-to-part variation between boards of one model; 1.0: none).
    """

    name: str = "NVIDIA H200 (fake)"
    uuid: str = ""
    graphics_clocks_mhz: tuple[int, ...] = H200_GRAPHICS_CLOCKS_MHZ
    memory_clocks_mhz: tuple[int, ...] = H200_MEMORY_CLOCKS_MHZ
    default_sm_clock_mhz: int = 1980
    idle_power_w: float = 84.0
    power_limit_w: float = 700.0
    power_limit_range_w: tuple[float, float] = (200.0, 700.0)
    has_energy_counter: bool = True
    initial_energy_mj: int = 5_000_000
    gpm_pct: Mapping[int, float] = field(default_factory=lambda: {2: 90.0, 3: 40.0, 10: 20.0, 5: 5.0})
    utilization_rates_pct: tuple[float, float] = (100.0, 30.0)
    clocks_event_reasons: int = 0
    power_factor: float = 1.0


class FakeNvmlCall(NamedTuple):
    """One call made to a `FakeNvml`: the function name and its arguments."""

    name: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class FakeHandle:
    """The device handle `FakeNvml` hands out."""

    index: int


_ERROR_STRINGS = {
    1: "Uninitialized", 2: "Invalid Argument", 3: "Not Supported", 4: "Insufficient Permissions",
    5: "Already Initialized", 6: "Not Found", 7: "Insufficient Size", 8: "Insufficient External Power",
    9: "Driver Not Loaded", 10: "Timeout", 11: "Interrupt Request Issue",
    12: "NVML Shared Library Not Found", 13: "Function Not Found", 14: "Corrupted infoROM",
    15: "GPU is lost", 16: "GPU requires restart", 17: "The operating system has blocked the request.",
    18: "RM has detected an NVML/RM version mismatch.", 19: "In use", 20: "Insufficient Memory",
    21: "No data", 28: "GPU not found", 999: "Unknown Error",
}


class FakeNVMLError(Exception):
    """The fake's ``NVMLError``: carries NVML's return code in ``.value`` like ``pynvml``'s."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return _ERROR_STRINGS.get(self.value, f"NVML Error with code {self.value}")


@dataclass
class _Segment:
    start_s: float
    load: Load
    sm_clock_mhz: int


@dataclass
class _GpuSim:
    spec: FakeGpu
    segments: list[_Segment] = field(default_factory=list)
    energy_j: float = 0.0          # exact energy over [0, tick_index * tick_s]
    tick_index: int = 0
    last_tick_power_w: float | None = None


class FakeNvml:
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

    NVMLError = FakeNVMLError
    NVML_SUCCESS = 0
    NVML_ERROR_UNINITIALIZED = 1
    NVML_ERROR_INVALID_ARGUMENT = 2
    NVML_ERROR_NOT_SUPPORTED = 3
    NVML_ERROR_NO_PERMISSION = 4
    NVML_ERROR_ALREADY_INITIALIZED = 5
    NVML_ERROR_NOT_FOUND = 6
    NVML_ERROR_INSUFFICIENT_SIZE = 7
    NVML_ERROR_INSUFFICIENT_POWER = 8
    NVML_ERROR_DRIVER_NOT_LOADED = 9
    NVML_ERROR_TIMEOUT = 10
    NVML_ERROR_IRQ_ISSUE = 11
    NVML_ERROR_LIBRARY_NOT_FOUND = 12
    NVML_ERROR_FUNCTION_NOT_FOUND = 13
    NVML_ERROR_CORRUPTED_INFOROM = 14
    NVML_ERROR_GPU_IS_LOST = 15
    NVML_ERROR_RESET_REQUIRED = 16
    NVML_ERROR_OPERATING_SYSTEM = 17
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
    NVML_ERROR_IN_USE = 19
    NVML_ERROR_MEMORY = 20
    NVML_ERROR_NO_DATA = 21
    NVML_ERROR_GPU_NOT_FOUND = 28
    NVML_ERROR_UNKNOWN = 999
    NVML_TOTAL_POWER_SAMPLES = 0
    NVML_VALUE_TYPE_UNSIGNED_INT = 1
    NVML_CLOCK_GRAPHICS = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_CLOCK_VIDEO = 3
    NVML_CLOCK_ID_CURRENT = 0
    NVML_CLOCK_ID_APP_CLOCK_TARGET = 1
    NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2
    NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3

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
        self._gpus = [_GpuSim(spec) for spec in specs]
        for i, g in enumerate(self._gpus):
            g.segments.append(_Segment(0.0, None, self._current_sm_clock(i)))

    # ------------------------------------------------------------------ test controls
    def elapsed_s(self) -> float:
        """Simulated seconds since this fake was created."""
        return self._clock() - self._t0

    def set_load(self, load: Load, index: int = 0) -> None:
        """Set GPU `index`'s board power from now on.

        Args:
            load: watts (constant), ``None`` for idle, or a callable
                ``(elapsed_s, sm_clock_mhz) -> watts``.
            index: which GPU.
        """
        self._advance(index)
        g = self._gpus[index]
        g.segments.append(_Segment(self.elapsed_s(), load, self._current_sm_clock(index)))

    def exact_energy_j(self, start_s: float, end_s: float, index: int = 0) -> float:
        """The true energy (no tick quantisation) of GPU `index` over simulated ``[start_s, end_s]``."""
        return self._integrate(self._gpus[index], start_s, end_s)

    def locked_clocks_mhz(self, index: int = 0) -> tuple[int, int] | None:
        """The locked clock range of GPU `index`, or ``None`` when not locked."""
        return self._locked(index)

    def lock_history(self) -> list[dict[str, Any]]:
        """Set/reset calls recorded in the state file (or in memory), oldest first."""
        return list(self._read_state().get("history", []))

    def call_names(self) -> list[str]:
        """The names of all calls made so far, in order."""
        return [c.name for c in self.calls]

    # ------------------------------------------------------------------ shared clock state
    def _read_state(self) -> dict[str, Any]:
        if self.state_file is None:
            return self._mem_state
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return {"gpus": {}, "history": []}

    @contextlib.contextmanager
    def _locked_state(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write the state, holding an exclusive lock across processes."""
        if self.state_file is None:
            yield self._mem_state
            return
        lock_path = self.state_file.with_name(self.state_file.name + ".lock")
        with open(lock_path, "a+") as lock:
            try:
                import fcntl  # lazy: POSIX only
                fcntl.flock(lock, fcntl.LOCK_EX)
            except ImportError:  # non-POSIX: best effort
                pass
            state = self._read_state()
            yield state
            fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".fake_nvml.")
            with os.fdopen(fd, "w") as f:
                json.dump(state, f)
            os.replace(tmp, self.state_file)

    def _locked(self, index: int) -> tuple[int, int] | None:
        entry = self._read_state().get("gpus", {}).get(str(index))
        if not entry or entry.get("locked_mhz") is None:
            return None
        lo, hi = entry["locked_mhz"]
        return int(lo), int(hi)

    def _current_sm_clock(self, index: int) -> int:
        spec = self._gpus[index].spec
        locked = self._locked(index)
        if locked is None:
            return spec.default_sm_clock_mhz
        allowed = [c for c in spec.graphics_clocks_mhz if c <= locked[1]]
        return max(allowed) if allowed else min(spec.graphics_clocks_mhz)

    # ------------------------------------------------------------------ energy simulation
    def _power_at(self, seg: _Segment, t_s: float, spec: FakeGpu) -> float:
        if seg.load is None:
            return spec.idle_power_w * spec.power_factor
        if callable(seg.load):
            return float(seg.load(t_s, seg.sm_clock_mhz)) * spec.power_factor
        return float(seg.load) * spec.power_factor

    def _integrate(self, g: _GpuSim, a: float, b: float) -> float:
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

    def _advance(self, index: int) -> _GpuSim:
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

    def _gpu(self, handle: Any) -> int:
        if not isinstance(handle, FakeHandle) or not 0 <= handle.index < len(self._gpus):
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        return handle.index

    # ------------------------------------------------------------------ the pynvml API
    NVML_GPM_METRICS_GET_VERSION = 1

    class c_nvmlGpmMetricsGet_t:  # noqa: N801 - pynvml's name
        """pynvml's request structure for `nvmlGpmMetricsGet`, as plain attributes."""

        def __init__(self) -> None:
            self.version = 0
            self.numMetrics = 0
            self.sample1: Any = None
            self.sample2: Any = None
            self.metrics = [types.SimpleNamespace(metricId=0, value=0.0) for _ in range(210)]

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        self._enter("nvmlDeviceGetUtilizationRates", handle)
        gpu, memory = self._gpus[self._gpu(handle)].spec.utilization_rates_pct
        return types.SimpleNamespace(gpu=gpu, memory=memory)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetCurrentClocksEventReasons", handle)
        return int(self._gpus[self._gpu(handle)].spec.clocks_event_reasons)

    def nvmlGpmQueryDeviceSupport(self, handle: Any) -> Any:
        self._enter("nvmlGpmQueryDeviceSupport", handle)
        return types.SimpleNamespace(isSupportedDevice=int(bool(self._gpus[self._gpu(handle)].spec.gpm_pct)))

    def nvmlGpmSampleAlloc(self) -> Any:
        self._enter("nvmlGpmSampleAlloc")
        return types.SimpleNamespace(gpu=None, t_s=None)

    def nvmlGpmSampleGet(self, handle: Any, sample: Any) -> Any:
        self._enter("nvmlGpmSampleGet", handle)
        i = self._gpu(handle)
        if not self._gpus[i].spec.gpm_pct:
            raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        sample.gpu, sample.t_s = i, self.elapsed_s()
        return sample

    def nvmlGpmSampleFree(self, sample: Any) -> None:
        self._enter("nvmlGpmSampleFree")

    def nvmlGpmMetricsGet(self, request: Any) -> Any:
        self._enter("nvmlGpmMetricsGet")
        first, second = request.sample1, request.sample2
        if first.gpu is None or second.gpu != first.gpu or not second.t_s > first.t_s:
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        values = self._gpus[first.gpu].spec.gpm_pct
        for metric in request.metrics[: request.numMetrics]:
            metric.value = float(values.get(metric.metricId, 0.0))
        return request

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

    def nvmlDeviceGetIndex(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetIndex", handle)
        return self._gpu(handle)

    def nvmlDeviceGetName(self, handle: Any) -> str:
        self._enter("nvmlDeviceGetName", handle)
        return self._gpus[self._gpu(handle)].spec.name

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        self._enter("nvmlDeviceGetUUID", handle)
        i = self._gpu(handle)
        return self._gpus[i].spec.uuid or f"GPU-fake-{i:04d}"

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetTotalEnergyConsumption", handle)
        i = self._gpu(handle)
        if not self._gpus[i].spec.has_energy_counter:
            raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)
        g = self._advance(i)
        return g.spec.initial_energy_mj + math.floor(g.energy_j * 1000.0 + 1e-6)

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetPowerUsage", handle)
        g = self._advance(self._gpu(handle))
        power = g.spec.idle_power_w if g.last_tick_power_w is None else g.last_tick_power_w
        return round(power * 1000.0)

    def nvmlDeviceGetSamples(self, handle: Any, sample_type: int, last_seen_us: int) -> tuple[int, list[Any]]:
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

    def nvmlDeviceGetPowerManagementLimit(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetPowerManagementLimit", handle)
        return round(self._gpus[self._gpu(handle)].spec.power_limit_w * 1000.0)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> int:
        self._enter("nvmlDeviceGetEnforcedPowerLimit", handle)
        return round(self._gpus[self._gpu(handle)].spec.power_limit_w * 1000.0)

    def nvmlDeviceGetPowerManagementLimitConstraints(self, handle: Any) -> list[int]:
        self._enter("nvmlDeviceGetPowerManagementLimitConstraints", handle)
        lo, hi = self._gpus[self._gpu(handle)].spec.power_limit_range_w
        return [round(lo * 1000.0), round(hi * 1000.0)]

    def _clock_of_type(self, index: int, clock_type: int, current: bool) -> int:
        spec = self._gpus[index].spec
        if clock_type in (self.NVML_CLOCK_SM, self.NVML_CLOCK_GRAPHICS):
            return self._current_sm_clock(index) if current else spec.default_sm_clock_mhz
        if clock_type == self.NVML_CLOCK_MEM:
            return max(spec.memory_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetClockInfo(self, handle: Any, clock_type: int) -> int:
        self._enter("nvmlDeviceGetClockInfo", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=True)

    def nvmlDeviceGetMaxClockInfo(self, handle: Any, clock_type: int) -> int:
        self._enter("nvmlDeviceGetMaxClockInfo", handle, clock_type)
        spec = self._gpus[self._gpu(handle)].spec
        if clock_type in (self.NVML_CLOCK_SM, self.NVML_CLOCK_GRAPHICS):
            return max(spec.graphics_clocks_mhz)
        if clock_type == self.NVML_CLOCK_MEM:
            return max(spec.memory_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetApplicationsClock(self, handle: Any, clock_type: int) -> int:
        self._enter("nvmlDeviceGetApplicationsClock", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=False)

    def nvmlDeviceGetDefaultApplicationsClock(self, handle: Any, clock_type: int) -> int:
        self._enter("nvmlDeviceGetDefaultApplicationsClock", handle, clock_type)
        return self._clock_of_type(self._gpu(handle), clock_type, current=False)

    def nvmlDeviceGetClock(self, handle: Any, clock_type: int, clock_id: int) -> int:
        self._enter("nvmlDeviceGetClock", handle, clock_type, clock_id)
        i = self._gpu(handle)
        if clock_id == self.NVML_CLOCK_ID_CURRENT:
            return self._clock_of_type(i, clock_type, current=True)
        if clock_id in (self.NVML_CLOCK_ID_APP_CLOCK_TARGET, self.NVML_CLOCK_ID_APP_CLOCK_DEFAULT):
            return self._clock_of_type(i, clock_type, current=False)
        if clock_id == self.NVML_CLOCK_ID_CUSTOMER_BOOST_MAX:
            return max(self._gpus[i].spec.graphics_clocks_mhz)
        raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)

    def nvmlDeviceGetSupportedMemoryClocks(self, handle: Any) -> list[int]:
        self._enter("nvmlDeviceGetSupportedMemoryClocks", handle)
        return sorted(self._gpus[self._gpu(handle)].spec.memory_clocks_mhz, reverse=True)

    def nvmlDeviceGetSupportedGraphicsClocks(self, handle: Any, memory_clock_mhz: int) -> list[int]:
        self._enter("nvmlDeviceGetSupportedGraphicsClocks", handle, memory_clock_mhz)
        spec = self._gpus[self._gpu(handle)].spec
        if memory_clock_mhz not in spec.memory_clocks_mhz:
            raise FakeNVMLError(self.NVML_ERROR_INVALID_ARGUMENT)
        return sorted(spec.graphics_clocks_mhz, reverse=True)

    def nvmlDeviceSetGpuLockedClocks(self, handle: Any, min_mhz: int, max_mhz: int) -> None:
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

    def nvmlDeviceResetGpuLockedClocks(self, handle: Any) -> None:
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
        g.segments.append(_Segment(self.elapsed_s(), g.segments[-1].load,
                                   self._current_sm_clock(index)))
