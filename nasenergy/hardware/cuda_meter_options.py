"""Setting up a `nasenergy.hardware.cuda_meter.CudaMeter`: its options (what each means, checking
them) and the GPU they name (`open_gpu`: the device's NVML session and what the meter reads of it).

`check_options` documents every keyword argument of ``CudaMeter(...)`` and raises `UsageError` on
one out of range or a CUDA device that is not there; the meter keeps the options as attributes of
the same names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nasenergy.errors import UsageError
from nasenergy.hardware.cuda_energy import ENERGY_BASES, ENERGY_SOURCE_CHOICES, nvml_for_cuda_device
from nasenergy.hardware.nvml import NvmlDevice, NvmlError
from nasenergy.hardware.peaks import PEAK_SOURCES

if TYPE_CHECKING:
    import torch

__all__ = ["OpenGpu", "check_options", "open_gpu"]


def check_options(
    *,
    device_index: int,
    peak: str,
    energy_source: str,
    energy_basis: str,
    n_repeats: int,
    min_repeat_s: float,
    energy_repeats: int,
    energy_window_s: float,
    energy_max_window_s: float | None,
    energy_target_rel_se: float,
    release_every: int,
    format_tie_frac: float,
) -> None:
    """Check `CudaMeter`'s options (those that can be out of range; the others are described too).

    Args:
        device_index: the CUDA device index.
        peak: utilization denominator, ``measured`` or ``datasheet``.
        peak_cache: a `PeakCache` or a JSON path for one (default: one in-memory cache shared by
            this process).
        measure_energy: measure energy per image (False: throughput only, energy ``None``).
        energy_basis: ``total`` board energy or ``above_idle`` (idle power subtracted).
        n_repeats: timed throughput repeats.
        min_repeat_s: least GPU seconds per throughput repeat.
        energy_repeats: consecutive energy windows.
        energy_window_s: a window ends at the first counter update at least this long after its
            start (0.28 s = three updates of an H200's 100 ms counter, allowing for jitter); with
            ``energy_source="samples"``, the window's length.
        energy_max_window_s: with ``energy_source="samples"``, let a window whose power swings
            run on up to this long, until its mean power is known within ``energy_target_rel_se``
            (`nasenergy.hardware.sample_windows.run_sample_windows`); ``None``: fixed windows.
        energy_target_rel_se: the relative standard error a lengthened window stops at.
        energy_source: ``counter`` or ``samples`` (`ENERGY_SOURCE_CHOICES`); the measurement's
            ``energy_reading`` says what was read.
        energy_warmup_s: seconds of continuous running before the first energy window.
        cuda_graphs: capture the forward pass as a CUDA graph.
        cudnn_benchmark: let cuDNN pick the fastest convolution algorithms.
        format_probe_s: least GPU seconds of each of two probes per memory format when the meter
            chooses the format (``channels_last=None``).
        format_tie_frac: a format probed after channels-last is chosen only when faster by more
            than this share (`nasenergy.hardware.cuda_formats.takes_over`).
        throughput_from_energy: with energy windows, take the throughput from the windows' own
            passes, each timed by CUDA events (`nasenergy.hardware.busy_windows.steady_throughput`),
            instead of from ``n_repeats`` timed repeats before them: one continuous run gives both
            figures, and the timed phase's GPU time is saved.
        release_every: give the GPU memory cached by the allocator back to the driver after every
            this many measurements (1: after each; more saves its time, the cache is emptied anyway
            when an allocation would fail).
        idle_power_w: idle board power to use instead of measuring it, watts.
        nvml: an NVML binding to use instead of ``pynvml`` (e.g. a fake).

    Raises:
        UsageError: an option out of range, no CUDA GPU, or no device ``device_index``.
    """
    import torch

    if peak not in PEAK_SOURCES:
        raise UsageError(f"unknown peak source {peak!r}; choose from {', '.join(PEAK_SOURCES)}")
    if energy_source not in ENERGY_SOURCE_CHOICES:
        raise UsageError(f"unknown energy source {energy_source!r}; choose from {', '.join(ENERGY_SOURCE_CHOICES)}")
    if energy_basis not in ENERGY_BASES:
        raise UsageError(f"unknown energy basis {energy_basis!r}; choose from {', '.join(ENERGY_BASES)}")
    if n_repeats < 1 or energy_repeats < 1 or min_repeat_s <= 0 or energy_window_s <= 0:
        raise UsageError("repeats must be >= 1 and durations positive")
    if energy_max_window_s is not None and energy_max_window_s < energy_window_s or energy_target_rel_se <= 0:
        raise UsageError("energy_max_window_s must be at least energy_window_s, energy_target_rel_se positive")
    if release_every < 1:
        raise UsageError(f"release_every must be at least 1, got {release_every}")
    if not 0 <= format_tie_frac < 1:
        raise UsageError(f"format_tie_frac must be in [0, 1), got {format_tie_frac}")
    if not torch.cuda.is_available():
        raise UsageError("no CUDA GPU is available on this machine")
    if not 0 <= device_index < torch.cuda.device_count():
        raise UsageError(f"no CUDA device {device_index}: {torch.cuda.device_count()} present")


@dataclass(frozen=True)
class OpenGpu:
    """The CUDA device a meter measures on and its NVML session (`open_gpu`).

    Attributes:
        nvml_device: the NVML session, ``None`` where NVML could not be opened (``nvml_error`` says why).
        nvml_error: why NVML could not be opened, else ``None``.
        device_name: the GPU's name (from NVML, else from PyTorch).
        driver_version: the NVIDIA driver version (``None`` without NVML).
        has_energy_counter: whether NVML reads the GPU's energy counter.
        uses_power_samples: whether energy windows read the power-sample buffer (asked for, and
            the GPU keeps one).
    """

    nvml_device: NvmlDevice | None
    nvml_error: str | None
    device_name: str
    driver_version: str | None
    has_energy_counter: bool
    uses_power_samples: bool


def open_gpu(device: "torch.device", nvml: Any, energy_source: str) -> OpenGpu:
    """Open NVML on the CUDA `device` (through the binding `nvml`, default ``pynvml``) and read what
    a meter needs of it; an NVML failure leaves the meter without NVML, not failed."""
    import torch

    nvml_error: str | None = None
    nvml_device: NvmlDevice | None = None
    try:
        nvml_device = nvml_for_cuda_device(device.index, nvml)
    except NvmlError as exc:
        nvml_error = str(exc)
    device_name = nvml_device.name if nvml_device is not None else torch.cuda.get_device_name(device)
    driver_version = nvml_device.driver_version if nvml_device else None
    has_energy_counter = bool(nvml_device and nvml_device.has_energy_counter())
    uses_power_samples = bool(energy_source == "samples" and nvml_device and nvml_device.has_power_samples())
    return OpenGpu(nvml_device, nvml_error, device_name, driver_version, has_energy_counter, uses_power_samples)
