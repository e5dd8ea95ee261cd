"""Measuring networks on hardware: NVML access, meters (CUDA, CPU, recorded) and their helpers.

Public names (imported lazily, so importing this package is cheap and needs neither torch nor a
GPU): the protocols `Meter`, `ArchMeter`, `RecordedProfile`, `ClockControlMeter`; the registry
(`MeterKind`, `register_meter`); `Coverage` (what a recorded profile holds); `MeterError`, `CudaMeter`, `CpuMeter`, `RecordedMeter`, `NotRecordedError`,
`select_meter`, `count_model`, `ModelCount`, `open_device`, `NvmlDevice` and the `NvmlError`
family. Fakes for tests are in `nasenergy.testing`.
"""

from __future__ import annotations

from nasenergy._lazy import lazy_getattr

_EXPORTS = {
    "Meter": "meter",
    "ArchMeter": "meter",
    "RecordedProfile": "meter",
    "ClockControlMeter": "meter",
    "Coverage": "coverage",
    "MeterKind": "registry",
    "register_meter": "registry",
    "MeterError": "meter",
    "RepeatStats": "meter",
    "CudaMeter": "cuda_meter",
    "CpuMeter": "cpu_meter",
    "RecordedMeter": "recorded",
    "NotRecordedError": "recorded",
    "select_meter": "select",
    "count_model": "flops",
    "ModelCount": "flops",
    "open_device": "nvml",
    "NvmlDevice": "nvml",
    "NvmlError": "nvml",
    "NvmlUnavailable": "nvml",
    "NvmlNotSupported": "nvml",
    "NvmlNoPermission": "nvml",
    "NvmlNotFound": "nvml",
    "NvmlInvalidArgument": "nvml",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(__name__, _EXPORTS)
