"""`CpuMeter`: throughput and utilization of a network on the CPU. Energy is unavailable.

Throughput is the median of ``n_repeats`` timed repeats (host clock), each at least
``min_repeat_s`` long, after a warm-up. Utilization is relative to the best rate of a large
matrix product with PyTorch on the threads available (measured once per precision and cached), or
nothing else: CPUs have no datasheet entry here. Energy per image is ``None`` with basis
``unavailable``: this meter has no energy reading and never invents one.
"""

from __future__ import annotations

import copy
import math
import platform
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from nasenergy.errors import UsageError
from nasenergy.hardware.flops import count_model
from nasenergy.hardware.meter import MeterError, check_request, repeat_stats
from nasenergy.hardware.peaks import (
    PeakCache,
    PeakKey,
    default_peak_cache,
    measure_matmul_peak_flops,
)
from nasenergy.hardware.precision import dtype_of, precision_flags
from nasenergy.measurement import Measurement

if TYPE_CHECKING:
    import torch


def cpu_name() -> str:
    """A description of this CPU and the threads PyTorch uses, e.g. ``"cpu: AMD EPYC ... (2 threads)"``."""
    import torch

    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    model = model or platform.processor() or platform.machine() or "unknown"
    return f"cpu: {model} ({torch.get_num_threads()} threads)"


@contextmanager
def _out_of_memory(batch_size: int) -> Iterator[None]:
    """Turn the CPU running out of memory (torch's "can't allocate memory", a `MemoryError`) into
    a `MeterError` of one line."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        if not isinstance(exc, MemoryError) and "allocate" not in str(exc):
            raise
        raise MeterError(f"out of memory at batch size {batch_size} on the CPU; try a smaller batch size") from None


class CpuMeter:
    """Measures networks on the CPU (throughput and utilization only).

    Args:
        n_repeats: timed repeats.
        min_repeat_s: least seconds per repeat.
        peak_cache: a `PeakCache` or JSON path for the measured CPU peaks (default: one in-memory
            cache shared by this process).
        peak_matmul_n: matrix size of the peak measurement.
    """

    precisions: tuple[str, ...] = ("fp32", "bf16")

    def __init__(self, *, n_repeats: int = 5, min_repeat_s: float = 0.05,
                 peak_cache: PeakCache | str | None = None, peak_matmul_n: int = 1024) -> None:
        if n_repeats < 1 or min_repeat_s <= 0:
            raise UsageError("repeats must be >= 1 and durations positive")
        self.n_repeats = n_repeats
        self.min_repeat_s = min_repeat_s
        self.peak_cache = default_peak_cache(peak_cache)
        self.peak_matmul_n = peak_matmul_n
        self.device_name = cpu_name()

    def peak_flops(self, precision: str) -> float:
        """The measured CPU peak at `precision`, FLOP/s (cached)."""
        key = PeakKey(self.device_name, precision, None)
        return self.peak_cache.get_or_measure(
            key, lambda: measure_matmul_peak_flops("cpu", precision, n=self.peak_matmul_n,
                                                   target_s=0.1))

    def measure(
        self,
        model: "torch.nn.Module",
        input_shape: Sequence[int],
        *,
        batch_size: int,
        precision: str,
        channels_last: bool | None = None,
    ) -> Measurement:
        """Measure `model` (not modified) on the CPU; energy is ``None``."""
        import torch

        t_start = time.perf_counter()
        shape = check_request(input_shape, batch_size, precision)
        if precision not in self.precisions:
            raise UsageError(
                f"precision {precision} is not measured on the CPU; choose from {', '.join(self.precisions)}"
            )
        count = count_model(model, shape)
        dtype = dtype_of(precision)
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        with precision_flags(precision), torch.inference_mode(), _out_of_memory(batch_size):
            net = copy.deepcopy(model).eval().to("cpu", dtype, memory_format=fmt)  # type: ignore[call-overload]  # (stub lacks it)
            gen = torch.Generator().manual_seed(0)
            x = torch.randn((batch_size, *shape), generator=gen, dtype=dtype).contiguous(
                memory_format=fmt)
            t0 = time.perf_counter()
            net(x)
            one_s = max(time.perf_counter() - t0, 1e-6)
            steps = max(1, math.ceil(self.min_repeat_s / one_s))
            rates = []
            for _ in range(self.n_repeats):
                t0 = time.perf_counter()
                for _ in range(steps):
                    net(x)
                rates.append(batch_size * steps / (time.perf_counter() - t0))
        tput = repeat_stats(rates)
        peak = self.peak_flops(precision)
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
            peak_source="measured",
            utilization=Measurement.utilization_of(count.flops_per_img, tput.median, peak),
            energy_j_per_img=None,
            energy_basis="unavailable",
            avg_power_w=None,
            idle_power_w=None,
            sm_clock_mhz=None,
            n_repeats=self.n_repeats,
            throughput_cv=tput.cv,
            energy_cv=None,
            measure_cost_s=time.perf_counter() - t_start,
            source="measured",
            memory_format="channels_last" if channels_last else "contiguous",
        )
