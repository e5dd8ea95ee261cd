"""`CudaMeter`: throughput, utilization and energy per image of a network on an NVIDIA GPU.

How one measurement runs (`CudaMeter.measure`):

1. Host copies of the model are cast to the precision (``fp16``/``bf16`` cast the weights and
   input; ``tf32``/``fp32`` set PyTorch's TF32 flags on/off inside a context) in each memory
   format to try (`host_copies`), and moved to the GPU; unless told which, a convolutional network
   is probed in channels-last and contiguous and measured in the faster, as a deployer would;
   contiguous must be faster by more than ``format_tie_frac`` (2 %), else channels-last is kept
   (`takes_over`): at equal speed the two formats can draw very different power, and a coin-flip
   choice would make energy per image irreproducible (`results/profile_agreement/window_0.15s`).
2. One forward pass on a fixed random batch is captured as a CUDA graph (cuts launch overhead;
   eager execution is used if capture fails) after one eager warm-up pass.
3. Throughput: ``n_repeats`` contiguous timed repeats of back-to-back replays, each lasting at
   least ``min_repeat_s`` by CUDA events; medians and CV. While the GPU runs them, the host counts
   FLOPs per image (`count_model`, cached per model object) and reads the SM clock. With
   ``throughput_from_energy=True`` this phase is skipped and the throughput is taken from the
   energy windows' own passes, each timed by CUDA events (passes that waited for work left out:
   `nasenergy.hardware.energy_window.steady_throughput`); with one window, its CV is that of
   ``n_repeats`` contiguous runs of its passes (`nasenergy.hardware.energy_window.part_throughputs`).
4. Energy (unless ``measure_energy=False``): the network runs continuously while the NVML energy
   counter is polled, and ``energy_repeats`` consecutive windows of at least ``energy_window_s``
   are cut at counter updates (see `nasenergy.hardware.energy_window`); a run whose window
   throughput falls below `MIN_BUSY_FRAC` of the timed throughput (the device idled inside the
   window; without a timed phase, its passes' busy share) is run again, up to three runs, keeping the busiest. GPUs without the counter
   integrate sampled power instead. With ``energy_source="samples"`` a window instead starts at
   once and lasts ``energy_window_s``, priced by NVML's power-sample buffer (20 ms samples on an
   H200), which saves the wait for counter updates. Idle power is measured once, at the first measurement with
   energy, after waiting for the GPU's power to settle.
5. Utilization is relative to the peak of the chosen source (``measured``: a large matrix
   product at this precision and SM clock, cached; ``datasheet``).

The GPU's clocks and settings are only read, never changed.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import logging
import math
import statistics
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.energy_window import (
    MIN_BUSY_FRAC,
    CounterSource,
    EnergySource,
    EnergyWindow,
    PowerSampler,
    idle_power_w as measure_idle_power,
    run_energy_windows,
    part_throughputs,
    run_sample_windows,
    steady_throughput,
    steady_windows,
    window_energies,
)
from nasenergy.hardware.counters import CounterWindow, GpuCounters, counter_fields
from nasenergy.hardware.flops import count_model
from nasenergy.hardware.meter import MeterError, check_request, repeat_stats
from nasenergy.hardware.nvml import NvmlDevice, NvmlError, device_count, load_nvml, open_device
from nasenergy.hardware.peaks import (
    PEAK_SOURCES,
    PeakCache,
    PeakKey,
    default_peak_cache,
    measure_matmul_peak_flops,
    resolve_peak,
)
from nasenergy.hardware.precision import dtype_of, has_conv, precision_flags
from nasenergy.measurement import PRECISIONS, Measurement

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    import torch

ENERGY_BASES = ("total", "above_idle")
ENERGY_SOURCE_CHOICES = ("counter", "samples")
"""`CudaMeter` ``energy_source``: ``counter`` cuts windows at updates of NVML's energy counter
(integrated power readings without one); ``samples`` averages NVML's power-sample buffer over
windows of any start (`nasenergy.hardware.energy_window.run_sample_windows`), falling back to
``counter`` on a GPU without the buffer."""


def backlog_steps(step_s: float) -> int:
    """Forward passes to keep queued while energy windows run: about 20 ms of work (2 to 1,000)."""
    return min(1000, max(2, math.ceil(0.02 / max(step_s, 1e-6))))


class _StreamWorkload:
    """Keeps a short backlog of forward passes queued on the current CUDA stream, each followed by
    a timing event, so a window's passes can be timed one by one (`step_seconds`)."""

    def __init__(self, step: Callable[[], Any], images_per_step: int, backlog_steps: int) -> None:
        import torch

        self._torch = torch
        self._step = step
        self._images = images_per_step
        self._backlog = backlog_steps
        self._pending: collections.deque[Any] = collections.deque()
        self._enqueued = 0
        self._events: list[tuple[Any, bool]] = []  # (timing event, follows a pass) in stream order

    def keep_busy(self) -> None:
        pending = self._pending
        while pending and pending[0].query():
            pending.popleft()
        while len(pending) < self._backlog:
            self._step()
            event = self._torch.cuda.Event(enable_timing=True)
            event.record()
            pending.append(event)
            self._events.append((event, True))
            self._enqueued += 1

    def mark(self) -> tuple[Any, int, int]:
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        self._events.append((event, False))
        return event, self._enqueued, len(self._events) - 1

    def between(self, start: tuple[Any, int, int], end: tuple[Any, int, int]) -> tuple[int, float]:
        end[0].synchronize()
        return (end[1] - start[1]) * self._images, start[0].elapsed_time(end[0]) / 1000.0

    def step_seconds(self, start: tuple[Any, int, int], end: tuple[Any, int, int]) -> list[float]:
        """Device seconds of each pass between two markers: from the event before it to its own."""
        end[0].synchronize()
        events = self._events[start[2]:end[2] + 1]
        return [a.elapsed_time(b) / 1000.0 for (a, _), (b, after_pass) in zip(events, events[1:]) if after_pass]


class HostCopies:
    """CPU copies of a model made ahead of `CudaMeter.measure`, one per memory format, each in eval
    mode and already cast to the precision's dtype and memory format.

    Making them is CPU work only (`host_copies`), so a caller can do it on a thread while the GPU
    measures the previous network; `measure` then only moves each copy to the GPU. Each copy is
    used once (moving it to the GPU changes it): pass a `HostCopies` to one `measure` call.
    """

    def __init__(self, model: "torch.nn.Module", precision: str, copies: dict[bool, "torch.nn.Module"]) -> None:
        self.model = model
        self.precision = precision
        self._copies = copies

    @property
    def formats(self) -> list[bool]:
        """The memory formats still available (True: channels-last), in the order made."""
        return list(self._copies)

    def take(self, channels_last: bool) -> "torch.nn.Module":
        """The copy in that memory format (removed: it is the caller's now)."""
        try:
            return self._copies.pop(channels_last)
        except KeyError:
            fmt = "channels-last" if channels_last else "contiguous"
            raise UsageError(f"no {fmt} host copy left (copies are made by host_copies and used once)") from None


def memory_formats(model: "torch.nn.Module", channels_last: bool | None) -> list[bool]:
    """The memory formats `measure` tries (True: channels-last): the one asked for, else both for a
    network with convolutions (the faster is kept) and contiguous for one without."""
    if channels_last is not None:
        return [channels_last]
    return [True, False] if has_conv(model) else [False]


FORMAT_TIE_FRAC = 0.02
"""Default `CudaMeter` ``format_tie_frac``: probe times within this share of each other are a tie,
kept by the format probed first (channels-last)."""


def takes_over(probe_s: float, best_s: float, tie_frac: float = FORMAT_TIE_FRAC) -> bool:
    """Whether a memory format probed later, at ``probe_s`` seconds per pass, replaces the best so
    far (``best_s``): only when faster by more than ``tie_frac``. Two runs of the meter then choose
    the same format for a network whose formats tie within probe noise (with plain "the faster",
    each run chose either, and on an H200 channels-last drew ~15 % less power than contiguous at
    equal throughput for such networks)."""
    return probe_s < best_s * (1.0 - tie_frac)


def host_copies(model: "torch.nn.Module", precision: str, channels_last: bool | None = None) -> HostCopies:
    """CPU copies of `model` (not modified) for `CudaMeter.measure` at `precision`, one per memory
    format it will try; safe to call on a thread other than the measuring one."""
    import torch

    dtype = dtype_of(precision)
    copies = {}
    for cl in memory_formats(model, channels_last):
        fmt = torch.channels_last if cl else torch.contiguous_format
        copies[cl] = copy.deepcopy(model).eval().to(dtype=dtype, memory_format=fmt)
    return HostCopies(model, precision, copies)


def _nvml_for_cuda_device(index: int, nvml: Any) -> NvmlDevice:
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
            (`nasenergy.hardware.energy_window.run_sample_windows`); ``None``: fixed windows.
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
            passes, each timed by CUDA events (`nasenergy.hardware.energy_window.steady_throughput`),
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
            self.nvml_device = _nvml_for_cuda_device(device_index, nvml)
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
        (`nasenergy.hardware.energy_window.busy_fraction`; None without energy windows)."""
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
        the device idle was run again, `nasenergy.hardware.energy_window.steady_windows`)."""

    # ----------------------------------------------------------------------------- helpers
    def _energy_source(self) -> EnergySource | None:
        dev = self.nvml_device
        if dev is None:
            return None
        return CounterSource(dev.total_energy_mj) if self.has_energy_counter else PowerSampler(dev.power_w)

    def energy_reading(self) -> str | None:
        """What energy windows read (`nasenergy.measurement.ENERGY_READINGS`); ``None`` without NVML."""
        if self.nvml_device is None:
            return None
        if self.uses_power_samples:
            return "power_samples"
        return "energy_counter" if self.has_energy_counter else "power_reading"

    def _cut_windows(self, source: EnergySource, workload: "_StreamWorkload",
                     on_edge: Callable[[], None]) -> list[EnergyWindow]:
        if self.uses_power_samples:
            assert self.nvml_device is not None
            return run_sample_windows(self.nvml_device.power_samples_w, workload, time.time,
                                      n_windows=self.energy_repeats, window_s=self.energy_window_s,
                                      max_window_s=self.energy_max_window_s,
                                      target_rel_se=self.energy_target_rel_se,
                                      warmup_s=self.energy_warmup_s, on_edge=on_edge)
        return run_energy_windows(source, workload, time.perf_counter, n_windows=self.energy_repeats,
                                  min_window_s=self.energy_window_s, warmup_s=self.energy_warmup_s,
                                  on_edge=on_edge)

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
        if self.nvml_device is None:
            return None
        try:
            return float(self.nvml_device.power_limit_w())
        except NvmlError:
            return None

    def _sm_clock(self) -> float | None:
        if self.nvml_device is None:
            return None
        try:
            return float(self.nvml_device.sm_clock_mhz())
        except NvmlError:
            return None

    def peak_flops(self, precision: str, sm_clock_mhz: float | None) -> tuple[float, str]:
        """Peak FLOP/s at `precision` and SM clock and its source (measured once, then cached)."""
        key = PeakKey(self.device_name, precision, sm_clock_mhz)
        p = resolve_peak(self.peak, key, self.peak_cache,
                         lambda: measure_matmul_peak_flops(str(self.device), precision))
        return p.flops_per_s, p.source

    def _make_step(self, net: "torch.nn.Module", x: "torch.Tensor") -> tuple[Callable[[], Any], Any]:
        """A callable running one forward pass (a CUDA graph replay where capture works)."""
        import torch

        if self.cuda_graphs:
            try:
                side = torch.cuda.Stream(self.device)
                side.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(side):
                    net(x)
                torch.cuda.current_stream(self.device).wait_stream(side)
                # capture_begin/end directly: `torch.cuda.graph` empties the allocator's cache before
                # every capture, so each network's buffers would be allocated from the driver anew
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.stream(side):
                    graph.capture_begin()
                    try:
                        out = net(x)
                    finally:
                        graph.capture_end()
                torch.cuda.current_stream(self.device).wait_stream(side)
                graph.replay()
                return graph.replay, (graph, out)
            except Exception:  # capture unsupported by some op: fall back to eager execution
                torch.cuda.synchronize(self.device)
        net(x)
        return (lambda: net(x)), None

    def _time_repeats(self, step: Callable[[], Any], steps: int, repeats: int,
                      while_running: Callable[[], None] | None = None) -> list[float]:
        """GPU seconds of `repeats` contiguous runs of `steps` forward passes each.

        All work is queued first; `while_running` is called while the GPU executes it.
        """
        import torch

        events = [torch.cuda.Event(enable_timing=True) for _ in range(repeats + 1)]
        events[0].record()
        for i in range(repeats):
            for _ in range(steps):
                step()
            events[i + 1].record()
        if while_running is not None:
            while_running()
        events[-1].synchronize()
        return [a.elapsed_time(b) / 1000.0 for a, b in zip(events, events[1:])]

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
                best: tuple[float, Any, Any, Any, Any, bool] | None = None
                t_copy = t_capture = 0.0
                for cl in formats:  # the faster memory format, as a deployer would choose
                    t0 = time.perf_counter()
                    fmt = torch.channels_last if cl else torch.contiguous_format
                    net = prepared.take(cl).to(self.device)
                    gen = torch.Generator(device=self.device).manual_seed(0)
                    x = torch.randn((batch_size, *shape), generator=gen, device=self.device,
                                    dtype=dtype).contiguous(memory_format=fmt)
                    t1 = time.perf_counter()
                    step, keep = self._make_step(net, x)
                    (probe_s,) = self._time_repeats(step, 1, 1)
                    t_copy, t_capture = t_copy + t1 - t0, t_capture + time.perf_counter() - t1
                    if len(formats) > 1:
                        probe_steps = max(1, math.ceil(self.format_probe_s / max(probe_s, 1e-6)))
                        probe_s = min(self._time_repeats(step, probe_steps, 2)) / probe_steps
                    if best is None or takes_over(probe_s, best[0], self.format_tie_frac):
                        best = (probe_s, net, x, step, keep, cl)
                    net = x = step = keep = None  # the slower format's copies go
                assert best is not None
                one_s, net, x, step, keep, channels_last = best
                best = None
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
                    times = self._time_repeats(step, steps, self.n_repeats, while_timed)
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
                    workload = _StreamWorkload(step, batch_size, backlog_steps(one_s))

                    def run_windows() -> tuple[list[EnergyWindow], GpuCounters | None]:
                        self.last_window_runs += 1
                        counters = CounterWindow(self.nvml_device)
                        counters.start()
                        done = self._cut_windows(source, workload, sample_clock)
                        return done, counters.stop()

                    windows, self.last_counters, self.last_busy_frac = steady_windows(
                        run_windows, None if tput is None else tput.median)
                    if self.last_busy_frac < MIN_BUSY_FRAC:
                        logger.warning("note: the device was busy for only %.0f %% of the best of its energy "
                                       "windows; its energy per image includes idle time", 100 * self.last_busy_frac)
                    self.last_windows = list(windows)
                    if tput is None and len(windows) == 1 and windows[0].step_s:
                        # one window: its throughput, with the spread of n_repeats runs of its passes
                        parts = part_throughputs(windows[0].step_s, batch_size, self.n_repeats)
                        tput = dataclasses.replace(repeat_stats(parts or [0.0]),
                                                   median=steady_throughput(windows[0].step_s, batch_size)[0])
                    if tput is None:
                        tput = repeat_stats([steady_throughput(w.step_s or (), batch_size)[0] for w in windows])
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
        energy_j = energy_cv = avg_power = None
        basis = "unavailable"
        if windows:
            above = idle_w if self.energy_basis == "above_idle" else None
            e = repeat_stats(window_energies(windows, above))
            energy_j, basis = e.median, self.energy_basis
            energy_cv = e.cv if e.n > 1 else None  # one window says nothing of repeatability
            avg_power = statistics.median(w.avg_power_w for w in windows)
        return Measurement(
            device_name=self.device_name,
            precision=precision,
            batch_size=batch_size,
            input_shape=shape,
            throughput_img_per_s=tput.median,
            latency_ms_per_batch=1000.0 * batch_size / tput.median,
            macs_per_img=count.macs_per_img,
            flops_per_img=count.flops_per_img,
            params=count.params,
            peak_flops_per_s=peak,
            peak_source=peak_source,
            utilization=Measurement.utilization_of(count.flops_per_img, tput.median, peak),
            energy_j_per_img=energy_j,
            energy_basis=basis,
            avg_power_w=avg_power,
            idle_power_w=idle_w,
            sm_clock_mhz=sm_clock,
            n_repeats=tput.n,
            throughput_cv=tput.cv,
            energy_cv=energy_cv,
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
