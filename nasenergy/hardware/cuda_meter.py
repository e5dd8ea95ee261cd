"""`CudaMeter`: throughput, utilization and energy per image of a network on an NVIDIA GPU.

How one measurement runs (`CudaMeter.measure`):

1. Host copies of the model are cast to the precision (``fp16``/``bf16`` cast the weights and
   input; ``tf32``/``fp32`` set PyTorch's TF32 flags on/off inside a context) in each memory
   format to try (`host_copies`), and moved to the GPU; unless told which, a convolutional network
   is probed in channels-last and contiguous and measured in the faster, as a deployer would;
   contiguous must be faster by more than ``format_tie_frac`` (2 %), else channels-last is kept
   (`takes_over`; the choice is `nasenergy.hardware.cuda_formats`'s job).
2. One forward pass on a fixed random batch is captured as a CUDA graph (cuts launch overhead;
   eager execution is used if capture fails) after one eager warm-up pass
   (`nasenergy.hardware.cuda_steps`).
3. Throughput: ``n_repeats`` contiguous timed repeats of back-to-back replays, each lasting at
   least ``min_repeat_s`` by CUDA events; medians and CV. While the GPU runs them, the host counts
   FLOPs per image (`count_model`, cached per model object) and reads the SM clock. With
   ``throughput_from_energy=True`` this phase is skipped and the throughput is taken from the
   energy windows' own passes, each timed by CUDA events (passes that waited for work left out:
   `nasenergy.hardware.busy_windows.steady_throughput`); with one window, its CV is that of
   ``n_repeats`` contiguous runs of its passes (`nasenergy.hardware.busy_windows.part_throughputs`).
4. Energy (unless ``measure_energy=False``): the network runs continuously while ``energy_repeats``
   consecutive energy windows of ``energy_window_s`` are cut, read from NVML's energy counter or
   power-sample buffer (``energy_source``; how: `nasenergy.hardware.cuda_energy`); a run whose
   window throughput falls below `MIN_BUSY_FRAC` of the timed throughput (the device idled inside
   the window; without a timed phase, its passes' busy share) is run again, up to three runs,
   keeping the busiest. Idle power is measured once, at the first measurement with energy, after
   waiting for the GPU's power to settle.
5. Utilization is relative to the peak of the chosen source (``measured``: a large matrix
   product at this precision and SM clock, cached; ``datasheet``).

The GPU's clocks and settings are only read, never changed. This module's job is the meter: its
state and the order of the phases above; its options are checked and described, and its GPU opened,
by `nasenergy.hardware.cuda_meter_options`, the phases' steps and the result's assembly are
`nasenergy.hardware.cuda_meter_phases`'. It re-exports the names its helpers' modules define.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Sequence

from nasenergy.hardware.counters import GpuCounters
from nasenergy.hardware.cuda_energy import (ENERGY_BASES, ENERGY_SOURCE_CHOICES, energy_reading_of, energy_source_of,
                                            nvml_float, window_throughput)
from nasenergy.hardware.cuda_formats import (FORMAT_TIE_FRAC, HostCopies, fastest_format, host_copies, memory_formats,
                                             takes_over)
from nasenergy.hardware.cuda_meter_options import check_options, open_gpu
from nasenergy.hardware.cuda_meter_phases import energy_windows, measurement_of, prepared_copies, timed_throughput
from nasenergy.hardware.cuda_steps import backlog_steps
from nasenergy.hardware.energy_window import idle_power_w as measure_idle_power
from nasenergy.hardware.energy_window_types import EnergySource, EnergyWindow
from nasenergy.hardware.flops import count_model
from nasenergy.hardware.meter import MeterError
from nasenergy.hardware.nvml import NvmlDevice
from nasenergy.hardware.peaks import PeakCache, PeakKey, default_peak_cache, measure_matmul_peak_flops, resolve_peak
from nasenergy.hardware.precision import dtype_of, precision_flags
from nasenergy.measurement import PRECISIONS, Measurement

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    import torch

__all__ = ["ENERGY_BASES", "ENERGY_SOURCE_CHOICES", "FORMAT_TIE_FRAC", "CudaMeter", "HostCopies", "backlog_steps",
           "host_copies", "memory_formats", "takes_over"]


class CudaMeter:
    """Measures networks on one CUDA GPU; see the module docstring for the method.

    Args: the options, each kept as an attribute of its name (``peak``, ``n_repeats``, ...), are
    described at `nasenergy.hardware.cuda_meter_options.check_options`, which checks them.
    """

    precisions: tuple[str, ...] = PRECISIONS

    def __init__(
        self, device_index: int = 0, *, peak: str = "measured", peak_cache: PeakCache | str | None = None,
        measure_energy: bool = True, energy_basis: str = "total", n_repeats: int = 5, min_repeat_s: float = 0.01,
        energy_repeats: int = 3, energy_window_s: float = 0.28, energy_warmup_s: float = 0.05,
        energy_source: str = "counter", energy_max_window_s: float | None = None, energy_target_rel_se: float = 0.005,
        cuda_graphs: bool = True, cudnn_benchmark: bool = True, format_probe_s: float = 0.005,
        format_tie_frac: float = FORMAT_TIE_FRAC, throughput_from_energy: bool = False, release_every: int = 1,
        idle_power_w: float | None = None, nvml: Any = None,
    ) -> None:
        import torch

        check_options(device_index=device_index, peak=peak, energy_source=energy_source, energy_basis=energy_basis,
                      n_repeats=n_repeats, min_repeat_s=min_repeat_s, energy_repeats=energy_repeats,
                      energy_window_s=energy_window_s, energy_max_window_s=energy_max_window_s,
                      energy_target_rel_se=energy_target_rel_se, release_every=release_every,
                      format_tie_frac=format_tie_frac)
        self.device = torch.device("cuda", device_index)
        self.peak = peak
        self.peak_cache = default_peak_cache(peak_cache)
        self.measure_energy = measure_energy
        self.energy_basis = energy_basis
        self.n_repeats = n_repeats
        self.min_repeat_s = min_repeat_s
        self.energy_repeats = energy_repeats
        self.energy_window_s = energy_window_s
        self.energy_warmup_s = energy_warmup_s
        self.energy_max_window_s = energy_max_window_s
        self.energy_target_rel_se = energy_target_rel_se
        self.cuda_graphs = cuda_graphs
        self.cudnn_benchmark = cudnn_benchmark
        self.format_probe_s = format_probe_s
        self.format_tie_frac = format_tie_frac
        self.throughput_from_energy = throughput_from_energy
        self.release_every = release_every
        self._measured = 0
        self._idle_w = idle_power_w
        self.idle_settled: bool | None = None if idle_power_w is None else True
        gpu = open_gpu(self.device, nvml, energy_source)
        self.nvml_error: str | None = gpu.nvml_error
        self.nvml_device: NvmlDevice | None = gpu.nvml_device
        self.device_name, self.driver_version = gpu.device_name, gpu.driver_version
        self.has_energy_counter, self.uses_power_samples = gpu.has_energy_counter, gpu.uses_power_samples
        """``uses_power_samples``: whether energy windows read the power-sample buffer (asked for, and
        the GPU keeps one)."""
        self.last_counters: GpuCounters | None = None
        """GPU counters over the energy windows of the last `measure` (read-only; None without energy)."""
        self.last_busy_frac: float | None = None
        """The last `measure`'s energy-window throughput over its timed throughput
        (`nasenergy.hardware.busy_windows.busy_fraction`; None without energy windows)."""
        self.last_phases_s: dict[str, float] = {}
        """Wall seconds of the last `measure` by phase: ``prepare`` (copies, graph captures, format
        probes; of which ``host``, making the host copies, ``copy``, moving the copies to the GPU,
        and ``capture`` with its first replay), ``throughput`` (the timed repeats, or without them
        the FLOP count where it is not cached), ``energy`` (warm-up, the wait for the first counter
        update, the windows and any re-run of them) and ``release`` (for tuning the meter)."""
        self.last_windows: list[EnergyWindow] = []
        """The energy windows the last `measure` kept (empty without energy)."""
        self.last_window_runs = 0
        """How many runs of energy windows the last `measure` took (more than one: a run that left
        the device idle was run again, `nasenergy.hardware.busy_windows.steady_windows`)."""

    # ----------------------------------------------------------------------------- helpers
    def _energy_source(self) -> EnergySource | None:
        return energy_source_of(self.nvml_device, self.has_energy_counter)

    def energy_reading(self) -> str | None:
        """What energy windows read (`nasenergy.measurement.ENERGY_READINGS`); ``None`` without NVML."""
        return energy_reading_of(self.nvml_device, self.uses_power_samples, self.has_energy_counter)

    def idle_power_w(self) -> float | None:
        """Board power of the idle GPU, watts; ``None`` without NVML.

        Measured once, on first use, after the power has settled (``idle_settled`` tells whether
        it did within the time allowed; if not, the value is an upper bound).
        """
        if self._idle_w is None:
            source = self._energy_source()
            if source is None:
                return None
            import torch

            torch.cuda.synchronize(self.device)
            reading = measure_idle_power(source, time.perf_counter)
            self._idle_w, self.idle_settled = reading.power_w, reading.settled
        return self._idle_w

    def power_limit_w(self) -> float | None:
        """The board's power limit in force now, watts; ``None`` without NVML or where unreadable."""
        return nvml_float(self.nvml_device, lambda dev: dev.power_limit_w())

    def _sm_clock(self) -> float | None:
        return nvml_float(self.nvml_device, lambda dev: dev.sm_clock_mhz())

    def peak_flops(self, precision: str, sm_clock_mhz: float | None) -> tuple[float, str]:
        """Peak FLOP/s at `precision` and SM clock and its source (measured once, then cached)."""
        key = PeakKey(self.device_name, precision, sm_clock_mhz)
        p = resolve_peak(self.peak, key, self.peak_cache,
                         lambda: measure_matmul_peak_flops(str(self.device), precision))
        return p.flops_per_s, p.source

    # ----------------------------------------------------------------------------- measure
    def measure(self, model: "torch.nn.Module | HostCopies", input_shape: Sequence[int], *, batch_size: int,
                precision: str, channels_last: bool | None = None) -> Measurement:
        """Measure `model` (not modified) on batches of `batch_size` images of `input_shape`.

        Args:
            model: the network, or `HostCopies` of it made ahead for this precision (then only
                their memory formats are tried).
            channels_last: the memory format; ``None`` (default) probes channels-last and
                contiguous (for networks with convolutions) and measures in the faster, as a
                deployer would (a tie within ``format_tie_frac`` keeps channels-last). The
                result's ``memory_format`` says which.
        """
        import torch

        t_start = time.perf_counter()
        shape, prepared, formats, t_host = prepared_copies(model, input_shape, batch_size, precision, channels_last)
        model = prepared.model
        idle_w = self.idle_power_w() if self.measure_energy else None
        dtype = dtype_of(precision)
        clocks: list[float] = []

        def sample_clock() -> None:
            clock = self._sm_clock()
            if clock is not None:
                clocks.append(clock)

        try:
            with precision_flags(precision, cudnn_benchmark=self.cudnn_benchmark), \
                    torch.inference_mode():
                one_s, net, x, step, keep, channels_last, t_copy, t_capture = fastest_format(
                    prepared, formats, device=self.device, batch_size=batch_size, input_shape=shape, dtype=dtype,
                    cuda_graphs=self.cuda_graphs, format_probe_s=self.format_probe_s, tie_frac=self.format_tie_frac)
                counted: list[Any] = []

                def while_timed() -> None:
                    sample_clock()
                    counted.append(count_model(model, shape, run_on=net))

                t_prepared = time.perf_counter()
                source = self._energy_source() if self.measure_energy else None
                from_windows = self.throughput_from_energy and source is not None
                tput = None
                if not from_windows:
                    tput = timed_throughput(step, one_s, batch_size, min_repeat_s=self.min_repeat_s,
                                            n_repeats=self.n_repeats, while_timed=while_timed)
                else:
                    while_timed()  # the count is cached for prepared networks; the GPU waits otherwise
                t_timed = time.perf_counter()
                count = counted[0]
                windows = None
                self.last_counters = None
                self.last_busy_frac = None
                self.last_windows = []
                self.last_window_runs = 0
                if source is not None:
                    windows, self.last_counters, self.last_busy_frac = energy_windows(
                        self, source, step, one_s, batch_size, sample_clock, None if tput is None else tput.median)
                    self.last_windows = list(windows)
                    if tput is None:  # from the windows' own passes
                        tput = window_throughput(windows, batch_size, self.n_repeats)
                assert tput is not None
                t_energy = time.perf_counter()
                torch.cuda.synchronize(self.device)
                del step, keep, net, x  # the GPU copies go before the cache is emptied
                self._measured += 1
                if self._measured % self.release_every == 0:
                    torch.cuda.empty_cache()  # each graph's private memory pool goes back to the driver
                self.last_phases_s = {"prepare": t_prepared - t_start, "host": t_host - t_start,
                                      "copy": t_copy, "capture": t_capture,
                                      "throughput": t_timed - t_prepared, "energy": t_energy - t_timed,
                                      "release": time.perf_counter() - t_energy}
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            raise MeterError(
                f"out of GPU memory at batch size {batch_size}; try a smaller batch size"
            ) from None
        return measurement_of(self, precision=precision, batch_size=batch_size, shape=shape, tput=tput, count=count,
                              clocks=clocks, windows=windows, idle_w=idle_w, channels_last=channels_last,
                              t_start=t_start)

    def close(self) -> None:
        """Release the NVML session (clocks are never changed by this meter)."""
        if self.nvml_device is not None:
            self.nvml_device.close()
