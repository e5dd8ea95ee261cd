"""A thin, typed wrapper over NVIDIA's official NVML binding (``pynvml`` from nvidia-ml-py).

The binding is injectable: `open_device` takes any object with ``pynvml``'s function names and
constants (``nasenergy.testing.FakeNvml`` is one), so code that reads energy or changes clocks can
be tested without a GPU. Every NVML error is turned into a typed `NvmlError` with a one-line
message naming what was attempted.

Units: energy in millijoules (NVML's counter), power in watts, clocks in MHz.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Callable, TypeVar

from nasenergy.hardware.nvml_errors import (
    NvmlError,
    NvmlUnavailable,
    NvmlNotSupported,
    NvmlNoPermission,
    NvmlNotFound,
    NvmlInvalidArgument,
    _decode,
    _call,
)

T = TypeVar("T")


def load_nvml(nvml: Any = None) -> Any:
    """The NVML binding to use: `nvml` if given, else the ``pynvml`` module (imported now).

    Raises:
        NvmlUnavailable: ``pynvml`` (package nvidia-ml-py) is not installed.
    """
    if nvml is not None:
        return nvml
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        raise NvmlUnavailable(
            "the NVML binding 'pynvml' is not installed (pip install nvidia-ml-py)"
        ) from None


def device_count(nvml: Any = None) -> int:
    """Number of NVIDIA GPUs NVML sees; 0 when NVML or the driver is unavailable."""
    try:
        lib = load_nvml(nvml)
        _call(lib, "initialise", lib.nvmlInit)
    except NvmlError:
        return 0
    try:
        return int(_call(lib, "count GPUs", lib.nvmlDeviceGetCount))
    except NvmlError:
        return 0
    finally:
        try:
            lib.nvmlShutdown()
        except Exception:
            pass


def open_device(index: int = 0, nvml: Any = None) -> "NvmlDevice":
    """Initialise NVML and open GPU `index`.

    Args:
        index: the NVML device index (0-based).
        nvml: an object with ``pynvml``'s API (e.g. ``FakeNvml``); ``None`` imports ``pynvml``.

    Returns:
        An open `NvmlDevice`; close it (or use it as a context manager) to shut NVML down.

    Raises:
        NvmlUnavailable: no binding, library or driver.
        NvmlInvalidArgument / NvmlNotFound: no GPU with that index.
    """
    lib = load_nvml(nvml)
    _call(lib, "initialise", lib.nvmlInit)
    try:
        count = int(_call(lib, "count GPUs", lib.nvmlDeviceGetCount))
        if not 0 <= index < count:
            raise NvmlNotFound(f"no GPU with index {index}: NVML sees {count} GPU(s)")
        handle = _call(lib, f"open GPU {index}", lib.nvmlDeviceGetHandleByIndex, index)
        return NvmlDevice(lib, handle, index)
    except BaseException:
        try:
            lib.nvmlShutdown()
        except Exception:
            pass
        raise


def _power_samples(device: "NvmlDevice", since_us: int) -> list[tuple[int, float]]:
    """`NvmlDevice.power_samples_w`: NVML's buffered power samples after `since_us`, oldest first."""
    nvml = device._nvml
    kind = getattr(nvml, "NVML_TOTAL_POWER_SAMPLES", 0)
    try:
        _, samples = device._get(f"read the power samples of GPU {device.index}",
                                 nvml.nvmlDeviceGetSamples, kind, int(since_us))
    except NvmlNotFound:  # no sample newer than `since_us` yet
        return []
    return sorted((int(x.timeStamp), float(x.sampleValue.uiVal) / 1000.0)
                  for x in samples if int(x.timeStamp) > since_us)


def _gpm_supported(device: "NvmlDevice") -> bool:
    """`NvmlDevice.gpm_supported`: whether the GPU offers GPM metrics."""
    fn = getattr(device._nvml, "nvmlGpmQueryDeviceSupport", None)
    if fn is None:
        return False
    try:
        return bool(device._get(f"query GPM support of GPU {device.index}", fn).isSupportedDevice)
    except NvmlError:
        return False


def _gpm_metrics(device: "NvmlDevice", first: Any, second: Any, metric_ids: Sequence[int]) -> list[float]:
    """`NvmlDevice.gpm_metrics`: the GPM metrics `metric_ids` between two samples."""
    nvml = device._nvml
    request = nvml.c_nvmlGpmMetricsGet_t()
    request.version = nvml.NVML_GPM_METRICS_GET_VERSION
    request.numMetrics = len(metric_ids)
    request.sample1, request.sample2 = first, second
    for i, metric in enumerate(metric_ids):
        request.metrics[i].metricId = int(metric)
    result = _call(nvml, f"read GPM metrics of GPU {device.index}", nvml.nvmlGpmMetricsGet, request)
    return [float(result.metrics[i].value) for i in range(len(metric_ids))]


def _clock(device: "NvmlDevice", what: str, fn: Callable[..., Any], *args: Any) -> int:
    """One clock query of `device` (``what`` names it in errors), as an int in MHz."""
    return int(device._get(f"read the {what} of GPU {device.index}", fn, *args))


def _supported_graphics_clocks(device: "NvmlDevice", memory_clock_mhz: int | None) -> list[int]:
    """`NvmlDevice.supported_graphics_clocks_mhz`: graphics clocks at a memory clock, ascending."""
    if memory_clock_mhz is None:
        mems = device.supported_memory_clocks_mhz()
        if not mems:
            raise NvmlNotSupported(f"GPU {device.index} reports no supported memory clocks")
        memory_clock_mhz = mems[-1]
    clocks = device._get(
        f"list the graphics clocks of GPU {device.index} at memory clock {memory_clock_mhz} MHz",
        device._nvml.nvmlDeviceGetSupportedGraphicsClocks, int(memory_clock_mhz))
    return sorted(int(c) for c in clocks)


class NvmlDevice:
    """One GPU seen through NVML. Create it with `open_device`.

    Attributes:
        index: the NVML device index.
        name: the product name, e.g. ``"NVIDIA H200"``.
        uuid: the GPU's UUID string.
        driver_version: the NVIDIA driver version string.
    """

    def __init__(self, nvml: Any, handle: object, index: int) -> None:
        self._nvml = nvml
        self._handle = handle
        self._open = True
        self._has_energy: bool | None = None
        self._has_samples: bool | None = None
        self.index = index
        self.name = _decode(self._get(f"read the name of GPU {index}", nvml.nvmlDeviceGetName))
        self.uuid = _decode(self._get(f"read the UUID of GPU {index}", nvml.nvmlDeviceGetUUID))
        self.driver_version = _decode(
            _call(nvml, "read the driver version", nvml.nvmlSystemGetDriverVersion)
        )

    # --- plumbing -------------------------------------------------------------------------
    def _get(self, action: str, fn: Callable[..., T], *args: Any) -> T:
        if not self._open:
            raise NvmlError(f"NVML device {self.index} is closed; cannot {action}")
        return _call(self._nvml, action, fn, self._handle, *args)

    def close(self) -> None:
        """Shut down this device's NVML session (idempotent). Locked clocks are NOT reset."""
        if self._open:
            self._open = False
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass

    def __enter__(self) -> "NvmlDevice":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"NvmlDevice(index={self.index}, name={self.name!r})"

    # --- energy and power -----------------------------------------------------------------
    def total_energy_mj(self) -> int:
        """Energy the board used since the driver was loaded, millijoules (NVML's counter).

        Raises:
            NvmlNotSupported: the GPU has no energy counter (pre-Volta); see `has_energy_counter`.
        """
        return int(self._get(f"read the energy counter of GPU {self.index}",
                             self._nvml.nvmlDeviceGetTotalEnergyConsumption))

    def has_energy_counter(self) -> bool:
        """Whether `total_energy_mj` works on this GPU (checked once, then cached)."""
        if self._has_energy is None:
            try:
                self.total_energy_mj()
                self._has_energy = True
            except NvmlNotSupported:
                self._has_energy = False
        return self._has_energy

    def power_w(self) -> float:
        """Board power draw as NVML reports it, watts (NVML gives milliwatts)."""
        return self._get(f"read the power of GPU {self.index}",
                         self._nvml.nvmlDeviceGetPowerUsage) / 1000.0

    def power_samples_w(self, since_us: int = 0) -> list[tuple[int, float]]:
        """The board-power samples NVML buffered after timestamp `since_us`, oldest first, as
        (timestamp in microseconds of the host's wall clock, watts); empty when none is newer.
        On an H200 the buffer holds a sample every 20 ms (the energy counter changes every 100 ms).

        Raises:
            NvmlNotSupported: the GPU keeps no power samples; see `has_power_samples`.
        """
        return _power_samples(self, since_us)

    def has_power_samples(self) -> bool:
        """Whether `power_samples_w` works on this GPU (checked once, then cached)."""
        if self._has_samples is None:
            try:
                self.power_samples_w()
                self._has_samples = True
            except NvmlError:
                self._has_samples = False
        return self._has_samples

    def power_limit_w(self) -> float:
        """The power-management limit in force, watts."""
        return self._get(f"read the power limit of GPU {self.index}",
                         self._nvml.nvmlDeviceGetPowerManagementLimit) / 1000.0

    def clocks_event_reasons(self) -> int:
        """NVML's current clock-event (throttle) reasons, a bit mask (nvml.h
        ``nvmlClocksEventReason*``: 0x4 software power cap, 0x20/0x40 thermal, 0x80 power brake).
        Read only; uses the older ``ClocksThrottleReasons`` call where the binding lacks the new one."""
        fn = getattr(self._nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
        if fn is None:
            fn = self._nvml.nvmlDeviceGetCurrentClocksThrottleReasons
        return int(self._get(f"read the clock-event reasons of GPU {self.index}", fn))

    # --- activity counters (read-only) -------------------------------------------------------
    def utilization_rates_pct(self) -> tuple[float, float]:
        """NVML's utilization rates over its last sample period: (GPU busy %, memory busy %)."""
        rates = self._get(f"read the utilization rates of GPU {self.index}",
                          self._nvml.nvmlDeviceGetUtilizationRates)
        return float(rates.gpu), float(rates.memory)

    def gpm_supported(self) -> bool:
        """Whether the GPU offers GPM metrics (Hopper and newer)."""
        return _gpm_supported(self)

    def gpm_sample(self) -> Any:
        """A GPM sample of the GPU's counters now (free it with `gpm_free`)."""
        sample = _call(self._nvml, "allocate a GPM sample", self._nvml.nvmlGpmSampleAlloc)
        self._get(f"take a GPM sample of GPU {self.index}", self._nvml.nvmlGpmSampleGet, sample)
        return sample

    def gpm_free(self, *samples: Any) -> None:
        """Release GPM samples."""
        for sample in samples:
            _call(self._nvml, "free a GPM sample", self._nvml.nvmlGpmSampleFree, sample)

    def gpm_metrics(self, first: Any, second: Any, metric_ids: Sequence[int]) -> list[float]:
        """The GPM metrics `metric_ids` over the time between two samples, in their own units."""
        return _gpm_metrics(self, first, second, metric_ids)

    # --- clocks ---------------------------------------------------------------------------
    def sm_clock_mhz(self) -> int:
        """The current SM clock, MHz."""
        return _clock(self, "SM clock", self._nvml.nvmlDeviceGetClockInfo, self._nvml.NVML_CLOCK_SM)

    def memory_clock_mhz(self) -> int:
        """The current memory clock, MHz."""
        return _clock(self, "memory clock", self._nvml.nvmlDeviceGetClockInfo, self._nvml.NVML_CLOCK_MEM)

    def max_sm_clock_mhz(self) -> int:
        """The highest SM clock the GPU can run, MHz."""
        return _clock(self, "maximum SM clock", self._nvml.nvmlDeviceGetMaxClockInfo, self._nvml.NVML_CLOCK_SM)

    def default_sm_clock_mhz(self) -> int:
        """The default (application) graphics clock, MHz.

        NVML's default application clock where the GPU reports one; otherwise (NOT_SUPPORTED) the
        maximum SM clock, which is what an unlocked data-centre GPU boosts to under load.
        """
        try:
            return _clock(self, "default application clock", self._nvml.nvmlDeviceGetDefaultApplicationsClock,
                          self._nvml.NVML_CLOCK_GRAPHICS)
        except NvmlNotSupported:
            return self.max_sm_clock_mhz()

    def supported_memory_clocks_mhz(self) -> list[int]:
        """Memory clocks the GPU supports, MHz, ascending."""
        clocks = self._get(f"list the memory clocks of GPU {self.index}",
                           self._nvml.nvmlDeviceGetSupportedMemoryClocks)
        return sorted(int(c) for c in clocks)

    def supported_graphics_clocks_mhz(self, memory_clock_mhz: int | None = None) -> list[int]:
        """Graphics (SM) clocks the GPU supports at a memory clock, MHz, ascending.

        Args:
            memory_clock_mhz: the memory clock; ``None`` uses the highest supported one.
        """
        return _supported_graphics_clocks(self, memory_clock_mhz)

    def set_locked_clocks(self, min_mhz: int, max_mhz: int) -> None:
        """Lock the GPU (SM) clock into ``[min_mhz, max_mhz]``. Needs root; undo with
        `reset_locked_clocks`.

        Raises:
            NvmlInvalidArgument: ``min_mhz > max_mhz``, a non-positive value, or NVML refused them.
            NvmlNoPermission: the process may not change clocks.
        """
        if min_mhz <= 0 or max_mhz <= 0 or min_mhz > max_mhz:
            raise NvmlInvalidArgument(
                f"bad clock range [{min_mhz}, {max_mhz}] MHz: need 0 < min <= max"
            )
        self._get(f"lock the clocks of GPU {self.index} to [{min_mhz}, {max_mhz}] MHz",
                  self._nvml.nvmlDeviceSetGpuLockedClocks, int(min_mhz), int(max_mhz))

    def reset_locked_clocks(self) -> None:
        """Undo `set_locked_clocks`: let the GPU choose its clocks again. Needs root."""
        self._get(f"reset the locked clocks of GPU {self.index}",
                  self._nvml.nvmlDeviceResetGpuLockedClocks)
