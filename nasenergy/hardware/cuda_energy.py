"""`CudaMeter`'s readings through NVML: the device, its energy windows and the figures made of them.

One job: everything between a CUDA meter and NVML. It finds the NVML device of a CUDA device
(`nvml_for_cuda_device`), reads a figure that NVML may refuse (`nvml_float`), picks what energy
windows read (`energy_source_of`, `energy_reading_of`), cuts the windows while a workload runs
(`cut_windows`), and turns kept windows into a throughput (`window_throughput`) and energy per
image (`energy_figures`). torch is imported only inside `nvml_for_cuda_device`.

How windows are cut: with ``energy_source="counter"`` the network runs continuously while the
NVML energy counter is polled, and consecutive windows of at least ``energy_window_s`` are cut at
counter updates (`nasenergy.hardware.energy_window`); GPUs without the counter integrate sampled
power instead. With ``energy_source="samples"`` a window starts at once and lasts
``energy_window_s``, priced by NVML's power-sample buffer (20 ms samples on an H200), which saves
the wait for counter updates (`nasenergy.hardware.sample_windows`).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any, Callable, NamedTuple, Sequence

from nasenergy.hardware.busy_windows import part_throughputs, steady_throughput
from nasenergy.hardware.energy_window import run_energy_windows
from nasenergy.hardware.energy_window_types import (CounterSource, EnergySource, EnergyWindow, PowerSampler, Workload,
                                                    window_energies)
from nasenergy.hardware.sample_windows import run_sample_windows
from nasenergy.hardware.meter import RepeatStats, repeat_stats
from nasenergy.hardware.nvml import NvmlDevice, NvmlError, device_count, load_nvml, open_device

__all__ = ["ENERGY_BASES", "ENERGY_SOURCE_CHOICES", "EnergyFigures", "cut_windows", "energy_figures",
           "energy_reading_of", "energy_source_of", "nvml_float", "nvml_for_cuda_device", "window_throughput"]

ENERGY_BASES = ("total", "above_idle")
ENERGY_SOURCE_CHOICES = ("counter", "samples")
"""`CudaMeter` ``energy_source``: ``counter`` cuts windows at updates of NVML's energy counter
(integrated power readings without one); ``samples`` averages NVML's power-sample buffer over
windows of any start (`nasenergy.hardware.sample_windows.run_sample_windows`), falling back to
``counter`` on a GPU without the buffer."""


def nvml_for_cuda_device(index: int, nvml: Any) -> NvmlDevice:
    """The NVML device of CUDA device `index`, matched by UUID where possible."""
    import torch

    lib = load_nvml(nvml)
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    if uuid is not None:
        want = str(uuid).lower()
        for j in range(device_count(lib)):
            dev = open_device(j, lib)
            if dev.uuid.lower().endswith(want):
                return dev
            dev.close()
    return open_device(index, lib)


def nvml_float(device: NvmlDevice | None, read: Callable[[NvmlDevice], Any]) -> float | None:
    """``read(device)`` as a float; ``None`` without NVML or where NVML refuses the reading."""
    if device is None:
        return None
    try:
        return float(read(device))
    except NvmlError:
        return None


def energy_source_of(device: NvmlDevice | None, has_energy_counter: bool) -> EnergySource | None:
    """What counter windows read on `device`: its energy counter, else its sampled power reading;
    ``None`` without NVML."""
    if device is None:
        return None
    return CounterSource(device.total_energy_mj) if has_energy_counter else PowerSampler(device.power_w)


def energy_reading_of(device: NvmlDevice | None, uses_power_samples: bool, has_energy_counter: bool) -> str | None:
    """What energy windows read (`nasenergy.measurement.ENERGY_READINGS`); ``None`` without NVML."""
    if device is None:
        return None
    if uses_power_samples:
        return "power_samples"
    return "energy_counter" if has_energy_counter else "power_reading"


def cut_windows(device: NvmlDevice | None, source: EnergySource, workload: Workload,
                on_edge: Callable[[], None], *, uses_power_samples: bool, n_windows: int, window_s: float,
                max_window_s: float | None, target_rel_se: float, warmup_s: float) -> list[EnergyWindow]:
    """`n_windows` energy windows while `workload` runs: priced by `device`'s power-sample buffer
    (`run_sample_windows`, windows of `window_s`, up to `max_window_s`) when `uses_power_samples`,
    else cut at updates of `source` (`run_energy_windows`, windows of at least `window_s`)."""
    if uses_power_samples:
        assert device is not None
        return run_sample_windows(device.power_samples_w, workload, time.time,
                                  n_windows=n_windows, window_s=window_s,
                                  max_window_s=max_window_s,
                                  target_rel_se=target_rel_se,
                                  warmup_s=warmup_s, on_edge=on_edge)
    return run_energy_windows(source, workload, time.perf_counter, n_windows=n_windows,
                              min_window_s=window_s, warmup_s=warmup_s,
                              on_edge=on_edge)


def window_throughput(windows: Sequence[EnergyWindow], batch_size: int, n_repeats: int) -> RepeatStats:
    """Throughput from the windows' own timed passes, images per second: with one window, its
    steady throughput with the spread of `n_repeats` contiguous runs of its passes
    (`part_throughputs`); else one figure per window (`steady_throughput`)."""
    if len(windows) == 1 and windows[0].step_s:
        parts = part_throughputs(windows[0].step_s, batch_size, n_repeats)
        return dataclasses.replace(repeat_stats(parts or [0.0]),
                                   median=steady_throughput(windows[0].step_s, batch_size)[0])
    return repeat_stats([steady_throughput(w.step_s or (), batch_size)[0] for w in windows])


class EnergyFigures(NamedTuple):
    """A measurement's energy figures from its kept windows (all ``None`` without windows)."""

    energy_j_per_img: float | None
    """Median over the windows, joules per image."""
    energy_cv: float | None
    """Coefficient of variation over the windows (``None`` for a single window)."""
    avg_power_w: float | None
    """Median of the windows' mean board power, watts."""
    energy_basis: str
    """``total``, ``above_idle`` or ``unavailable`` (no windows)."""


def energy_figures(windows: Sequence[EnergyWindow] | None, idle_w: float | None, energy_basis: str) -> EnergyFigures:
    """Energy per image over `windows` on `energy_basis` (``above_idle`` subtracts `idle_w`)."""
    if not windows:
        return EnergyFigures(None, None, None, "unavailable")
    above = idle_w if energy_basis == "above_idle" else None
    e = repeat_stats(window_energies(windows, above))
    return EnergyFigures(e.median, e.cv if e.n > 1 else None,  # one window says nothing of repeatability
                         statistics.median(w.avg_power_w for w in windows), energy_basis)
