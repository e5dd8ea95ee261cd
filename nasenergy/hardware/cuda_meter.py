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
options and the order of the phases above; it re-exports the names its helpers' modules define.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from typing import TYPE_CHECKING, Any, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.counters import CounterWindow, GpuCounters, counter_fields
from nasenergy.hardware.cuda_energy import (ENERGY_BASES, ENERGY_SOURCE_CHOICES, cut_windows, energy_figures,
                                            energy_reading_of, energy_source_of, nvml_float, nvml_for_cuda_device,
                                            window_throughput)
from nasenergy.hardware.cuda_formats import (FORMAT_TIE_FRAC, HostCopies, fastest_format, host_copies, memory_formats,
                                             takes_over)
from nasenergy.hardware.cuda_steps import StreamWorkload, backlog_steps, time_repeats
from nasenergy.hardware.busy_windows import MIN_BUSY_FRAC, steady_windows
from nasenergy.hardware.energy_window import idle_power_w as measure_idle_power
from nasenergy.hardware.energy_window_types import EnergySource, EnergyWindow
from nasenergy.hardware.flops import count_model
from nasenergy.hardware.meter import MeterError, check_request, repeat_stats
from nasenergy.hardware.nvml import NvmlDevice, NvmlError
from nasenergy.hardware.peaks import (PEAK_SOURCES, PeakCache, PeakKey, default_peak_cache, measure_matmul_peak_flops,
                                      resolve_peak)
from nasenergy.hardware.precision import dtype_of, precision_flags
from nasenergy.measurement import PRECISIONS, Measurement

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    import torch

__all__ = ["ENERGY_BASES", "ENERGY_SOURCE_CHOICES", "FORMAT_TIE_FRAC", "CudaMeter", "HostCopies", "backlog_steps",
           "host_copies", "memory_formats", "takes_over"]


class CudaMeter:
    """Measures networks on one CUDA GPU; see the module docstring for the method.

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
            than this share (`takes_over`).
        throughput_from_energy: with energy windows, take the throughput from the windows' own
            passes, each timed by CUDA events (`nasenergy.hardware.busy_windows.steady_throughput`),
            instead of from ``n_repeats`` timed repeats before them: one continuous run gives both
            figures, and the timed phase's GPU time is saved.
        release_every: give the GPU memory cached by the allocator back to the driver after every
            this many measurements (1: after each; more saves its time, the cache is emptied anyway
            when an allocation would fail).
        idle_power_w: idle board power to use instead of measuring it, watts.
        nvml: an NVML binding to use instead of ``pynvml`` (e.g. a fake).
    """

    precisions: tuple[str, ...] = PRECISIONS

    def __init__(
        self,
        device_index: int = 0,
        *,
        peak: str = "measured",
        peak_cache: PeakCache | str | None = None,
        measure_energy: bool = True,
        energy_basis: str = "total",
        n_repeats: int = 5,
        min_repeat_s: float = 0.01,
        energy_repeats: int = 3,
        energy_window_s: float = 0.28,
        energy_warmup_s: float = 0.05,
        energy_source: str = "counter",
        energy_max_window_s: float | None = None,
        energy_target_rel_se: float = 0.005,
        cuda_graphs: bool = True,
        cudnn_benchmark: bool = True,
        format_probe_s: float = 0.005,
        format_tie_frac: float = FORMAT_TIE_FRAC,
        throughput_from_energy: bool = False,
        release_every: int = 1,
        idle_power_w: float | None = None,
        nvml: Any = None,
    ) -> None:
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
        self.nvml_error: str | None = None
        self.nvml_device: NvmlDevice | None = None
        try:
            self.nvml_device = nvml_for_cuda_device(device_index, nvml)
        except NvmlError as exc:
            self.nvml_error = str(exc)
        self.device_name = (self.nvml_device.name if self.nvml_device is not None
                            else torch.cuda.get_device_name(self.device))
        self.driver_version = self.nvml_device.driver_version if self.nvml_device else None
        self.has_energy_counter = bool(self.nvml_device and self.nvml_device.has_energy_counter())
        self.uses_power_samples = bool(energy_source == "samples" and self.nvml_device
                                       and self.nvml_device.has_power_samples())
        """Whether energy windows read the power-sample buffer (asked for, and the GPU keeps one)."""
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
    def measure(
        self,
        model: "torch.nn.Module | HostCopies",
        input_shape: Sequence[int],
        *,
        batch_size: int,
        precision: str,
        channels_last: bool | None = None,
    ) -> Measurement:
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
        shape = check_request(input_shape, batch_size, precision)
        prepared = model if isinstance(model, HostCopies) else host_copies(model, precision, channels_last)
        t_host = time.perf_counter()
        if prepared.precision != precision:
            raise UsageError(f"host copies were made for {prepared.precision}, not {precision}")
        model = prepared.model
        formats = [f for f in prepared.formats if channels_last is None or f == channels_last]
        if not formats:
            raise UsageError("no host copy in the memory format asked for")
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
                    steps = max(1, math.ceil(self.min_repeat_s / max(one_s, 1e-6)))
                    times = time_repeats(step, steps, self.n_repeats, while_timed)
                    tput = repeat_stats([batch_size * steps / t for t in times])
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
                    workload = StreamWorkload(step, batch_size, backlog_steps(one_s))

                    def run_windows() -> tuple[list[EnergyWindow], GpuCounters | None]:
                        self.last_window_runs += 1
                        counters = CounterWindow(self.nvml_device)
                        counters.start()
                        done = cut_windows(self.nvml_device, source, workload, sample_clock,
                                           uses_power_samples=self.uses_power_samples, n_windows=self.energy_repeats,
                                           window_s=self.energy_window_s, max_window_s=self.energy_max_window_s,
                                           target_rel_se=self.energy_target_rel_se, warmup_s=self.energy_warmup_s)
                        return done, counters.stop()

                    windows, self.last_counters, self.last_busy_frac = steady_windows(
                        run_windows, None if tput is None else tput.median)
                    if self.last_busy_frac < MIN_BUSY_FRAC:
                        logger.warning("note: the device was busy for only %.0f %% of the best of its energy "
                                       "windows; its energy per image includes idle time", 100 * self.last_busy_frac)
                    self.last_windows = list(windows)
                    if tput is None:  # from the windows' own passes
                        tput = window_throughput(windows, batch_size, self.n_repeats)
                assert tput is not None
                t_energy = time.perf_counter()
                torch.cuda.synchronize(self.device)
                step = keep = net = x = None  # the GPU copies go before the cache is emptied
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
        sm_clock = statistics.median(clocks) if clocks else None
        peak, peak_source = self.peak_flops(precision, sm_clock)
        energy_j, energy_cv, avg_power, basis = energy_figures(windows, idle_w, self.energy_basis)
        return Measurement(
            device_name=self.device_name,
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
            energy_reading=self.energy_reading() if windows else None,
            **counter_fields(self.last_counters),
            gpu_uuid=self.nvml_device.uuid if self.nvml_device is not None else None,
            driver_version=self.driver_version,
            power_limit_w=self.power_limit_w(),
        )

    def close(self) -> None:
        """Release the NVML session (clocks are never changed by this meter)."""
        if self.nvml_device is not None:
            self.nvml_device.close()
