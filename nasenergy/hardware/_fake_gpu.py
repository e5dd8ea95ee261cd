"""The fake NVML's small parts: simulated GPUs' descriptions, its clock, handles, calls, errors and
NVML's constants (for `nasenergy.hardware._fake_nvml.FakeNvml`; public via ``nasenergy.testing``).

One job: the types and constants the fake's other modules share. `FakeGpu` describes one GPU
(H200-like defaults), `ManualClock` is a time source tests advance by hand, `FakeHandle` and
`FakeNvmlCall` are the handle the fake hands out and the record of one call, `FakeNVMLError` its
``NVMLError``, and `NvmlConstants` the ``NVML_*`` constants of the ``pynvml`` module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple

__all__ = ["H200_GRAPHICS_CLOCKS_MHZ", "H200_MEMORY_CLOCKS_MHZ", "FakeGpu", "FakeHandle", "FakeNVMLError",
           "FakeNvmlCall", "Load", "ManualClock", "NvmlConstants"]

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


class NvmlConstants:
    """The ``NVML_*`` constants of the ``pynvml`` module that the fake knows (return codes, sample,
    value, clock and clock-id types) and its ``NVMLError``; `FakeNvml` and its parts inherit them."""

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
