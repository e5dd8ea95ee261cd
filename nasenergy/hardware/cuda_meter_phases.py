"""The phases of one `nasenergy.hardware.cuda_meter.CudaMeter.measure` around its memory-format
choice: taking the host copies to measure, the timed throughput repeats, the runs of energy windows,
and assembling the `Measurement` from what they gave.

The meter decides the order of the phases and keeps their state; the functions here read what they
need of it through `WindowMeter` and `ResultMeter`.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.busy_windows import MIN_BUSY_FRAC, steady_windows
from nasenergy.hardware.counters import CounterWindow, GpuCounters, counter_fields
from nasenergy.hardware.cuda_energy import cut_windows, energy_figures
from nasenergy.hardware.cuda_formats import HostCopies, host_copies
from nasenergy.hardware.cuda_steps import StreamWorkload, backlog_steps, time_repeats
from nasenergy.hardware.energy_window_types import EnergySource, EnergyWindow
from nasenergy.hardware.meter import RepeatStats, check_request, repeat_stats
from nasenergy.hardware.nvml import NvmlDevice
from nasenergy.measurement import Measurement

if TYPE_CHECKING:
    import torch

logger = logging.getLogger("nasenergy.hardware.cuda_meter")
"""The meter's logger: its notes come from `CudaMeter`'s module, as before these phases moved here."""

__all__ = ["ResultMeter", "WindowMeter", "energy_windows", "measurement_of", "prepared_copies", "timed_throughput"]


class WindowMeter(Protocol):
    """What `energy_windows` reads of the meter, and its count of window runs (which it bumps)."""

    last_window_runs: int

    @property
    def nvml_device(self) -> NvmlDevice | None: ...
    @property
    def uses_power_samples(self) -> bool: ...
    @property
    def energy_repeats(self) -> int: ...
    @property
    def energy_window_s(self) -> float: ...
    @property
    def energy_max_window_s(self) -> float | None: ...
    @property
    def energy_target_rel_se(self) -> float: ...
    @property
    def energy_warmup_s(self) -> float: ...


class ResultMeter(Protocol):
    """What `measurement_of` reads of the meter."""

    @property
    def device_name(self) -> str: ...
    @property
    def energy_basis(self) -> str: ...
    @property
    def driver_version(self) -> str | None: ...
    @property
    def nvml_device(self) -> NvmlDevice | None: ...
    @property
    def last_counters(self) -> GpuCounters | None: ...
    def peak_flops(self, precision: str, sm_clock_mhz: float | None) -> tuple[float, str]: ...
    def energy_reading(self) -> str | None: ...
    def power_limit_w(self) -> float | None: ...


def prepared_copies(
    model: "torch.nn.Module | HostCopies", input_shape: Sequence[int], batch_size: int, precision: str,
    channels_last: bool | None,
) -> tuple[tuple[int, ...], HostCopies, list[bool], float]:
    """Check the request and take the host copies to measure (made now unless `model` is
    `HostCopies`); returns the input shape, the copies, their memory formats to try and the time
    (`time.perf_counter`) the copies were ready."""
    shape = check_request(input_shape, batch_size, precision)
    prepared = model if isinstance(model, HostCopies) else host_copies(model, precision, channels_last)
    t_host = time.perf_counter()
    if prepared.precision != precision:
        raise UsageError(f"host copies were made for {prepared.precision}, not {precision}")
    formats = [f for f in prepared.formats if channels_last is None or f == channels_last]
    if not formats:
        raise UsageError("no host copy in the memory format asked for")
    return shape, prepared, formats, t_host


def timed_throughput(step: Callable[[], Any], one_s: float, batch_size: int, *, min_repeat_s: float,
                     n_repeats: int, while_timed: Callable[[], None]) -> RepeatStats:
    """Images per second over `n_repeats` contiguous repeats of back-to-back passes of `step`, each
    lasting at least `min_repeat_s` (one pass takes about `one_s`); `while_timed` runs on the host
    meanwhile."""
    steps = max(1, math.ceil(min_repeat_s / max(one_s, 1e-6)))
    times = time_repeats(step, steps, n_repeats, while_timed)
    return repeat_stats([batch_size * steps / t for t in times])


def energy_windows(
    meter: WindowMeter, source: EnergySource, step: Callable[[], Any], one_s: float, batch_size: int,
    on_edge: Callable[[], None], timed_img_per_s: float | None,
) -> tuple[list[EnergyWindow], GpuCounters | None, float]:
    """The meter's energy windows while `step` runs continuously, run again while they left the
    device idle (`steady_windows`, against `timed_img_per_s`); returns the busiest run's windows,
    the GPU counters over them and its busy fraction."""
    workload = StreamWorkload(step, batch_size, backlog_steps(one_s))

    def run_windows() -> tuple[list[EnergyWindow], GpuCounters | None]:
        meter.last_window_runs += 1
        counters = CounterWindow(meter.nvml_device)
        counters.start()
        done = cut_windows(meter.nvml_device, source, workload, on_edge,
                           uses_power_samples=meter.uses_power_samples, n_windows=meter.energy_repeats,
                           window_s=meter.energy_window_s, max_window_s=meter.energy_max_window_s,
                           target_rel_se=meter.energy_target_rel_se, warmup_s=meter.energy_warmup_s)
        return done, counters.stop()

    windows, counters, busy_frac = steady_windows(run_windows, timed_img_per_s)
    if busy_frac < MIN_BUSY_FRAC:
        logger.warning("note: the device was busy for only %.0f %% of the best of its energy "
                       "windows; its energy per image includes idle time", 100 * busy_frac)
    return windows, counters, busy_frac


def measurement_of(
    meter: ResultMeter, *, precision: str, batch_size: int, shape: tuple[int, ...], tput: RepeatStats,
    count: Any, clocks: Sequence[float], windows: Sequence[EnergyWindow] | None, idle_w: float | None,
    channels_last: bool, t_start: float,
) -> Measurement:
    """The `Measurement` of one `measure` call (begun at `t_start`) from its phases' figures."""
    sm_clock = statistics.median(clocks) if clocks else None
    peak, peak_source = meter.peak_flops(precision, sm_clock)
    energy_j, energy_cv, avg_power, basis = energy_figures(windows, idle_w, meter.energy_basis)
    return Measurement(
        device_name=meter.device_name,
        precision=precision,
        batch_size=batch_size,
        input_shape=shape,
        throughput_img_per_s=tput.median,
        latency_ms_per_batch=1000.0 * batch_size / tput.median,
        macs_per_img=count.macs_per_img, flops_per_img=count.flops_per_img, params=count.params,
        peak_flops_per_s=peak, peak_source=peak_source,
        utilization=Measurement.utilization_of(count.flops_per_img, tput.median, peak),
        energy_j_per_img=energy_j, energy_basis=basis, avg_power_w=avg_power, idle_power_w=idle_w,
        sm_clock_mhz=sm_clock,
        n_repeats=tput.n, throughput_cv=tput.cv, energy_cv=energy_cv,
        measure_cost_s=time.perf_counter() - t_start,
        source="measured",
        memory_format="channels_last" if channels_last else "contiguous",
        energy_reading=meter.energy_reading() if windows else None,
        **counter_fields(meter.last_counters),
        gpu_uuid=meter.nvml_device.uuid if meter.nvml_device is not None else None,
        driver_version=meter.driver_version,
        power_limit_w=meter.power_limit_w(),
    )
