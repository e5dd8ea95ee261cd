"""Peak FLOP/s of a device at a precision: the denominator of utilization.

Two sources, chosen by the user:

* ``datasheet``: the vendor's dense (no sparsity) peak, from `DATASHEET_PEAK_TFLOPS`.
* ``measured``: the best rate of a large matrix product on this device at this precision and
  the current SM clock, measured once and cached per (device, precision, SM clock) in memory and
  optionally in a JSON file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from nasenergy.errors import UsageError
from nasenergy.hardware.precision import dtype_of, precision_flags
import time

PEAK_SOURCES = ("measured", "datasheet")

#: Dense peak TFLOP/s per precision from vendor datasheets (``None``: no such tensor-core mode).
#: Matched against the device name by the regular expressions in `_DATASHEET_PATTERNS`.
DATASHEET_PEAK_TFLOPS: dict[str, dict[str, float | None]] = {
    "H200 SXM": {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4},
    "H100 SXM": {"fp32": 67.0, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4},
    "H100 PCIe": {"fp32": 51.0, "tf32": 378.0, "fp16": 756.0, "bf16": 756.0},
    "A100": {"fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0},
    "V100 SXM2": {"fp32": 15.7, "tf32": None, "fp16": 125.0, "bf16": None},
    "V100 PCIe": {"fp32": 14.0, "tf32": None, "fp16": 112.0, "bf16": None},
    "L40S": {"fp32": 91.6, "tf32": 183.0, "fp16": 362.05, "bf16": 362.05},
    "L4": {"fp32": 30.3, "tf32": 60.0, "fp16": 121.0, "bf16": 121.0},
    "A10": {"fp32": 31.2, "tf32": 62.5, "fp16": 125.0, "bf16": 125.0},
}

# First match wins: more specific names come first.
_DATASHEET_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bH200\b", "H200 SXM"),
    (r"\bH100\b.*\bPCIE\b", "H100 PCIe"),
    (r"\bH100\b", "H100 SXM"),
    (r"\bA100\b", "A100"),
    (r"\bV100\b.*\bPCIE\b", "V100 PCIe"),
    (r"\bV100\b", "V100 SXM2"),
    (r"\bL40S\b", "L40S"),
    (r"\bL4\b", "L4"),
    (r"\bA10\b", "A10"),
)


def datasheet_peak_flops(device_name: str, precision: str) -> float:
    """The datasheet dense peak of `device_name` at `precision`, FLOP/s.

    Raises:
        UsageError: the device is not in the table, or has no such precision mode.
    """
    upper = device_name.upper()
    for pattern, key in _DATASHEET_PATTERNS:
        if re.search(pattern, upper):
            tflops = DATASHEET_PEAK_TFLOPS[key].get(precision)
            if tflops is None:
                raise UsageError(f"the {key} datasheet lists no {precision} peak; use peak='measured'")
            return tflops * 1e12
    raise UsageError(
        f"no datasheet peak known for {device_name!r}; use peak='measured' "
        f"(known: {', '.join(DATASHEET_PEAK_TFLOPS)})"
    )


@dataclass(frozen=True)
class PeakKey:
    """What a measured peak depends on: device, precision and the SM clock the work ran at."""

    device_name: str
    precision: str
    sm_clock_mhz: float | None

    def as_str(self) -> str:
        clock = "unknown" if self.sm_clock_mhz is None else f"{self.sm_clock_mhz:.0f}"
        return f"{self.device_name}|{self.precision}|{clock}"

    @classmethod
    def from_str(cls, text: str) -> "PeakKey":
        device, precision, clock = text.rsplit("|", 2)
        return cls(device, precision, None if clock == "unknown" else float(clock))


class PeakCache:
    """Measured peaks (FLOP/s) keyed by `PeakKey`, in memory and optionally in a JSON file.

    A lookup matches an entry of the same device and precision whose SM clock is within
    ``clock_tolerance_mhz`` of the requested one (the nearest wins), so small clock jitter does not
    trigger a new measurement.

    Args:
        path: JSON file to read at start and update after each new measurement; ``None`` keeps
            the cache in memory only.
        clock_tolerance_mhz: largest clock difference that still counts as the same clock.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 clock_tolerance_mhz: float = 20.0) -> None:
        self.path = Path(path) if path is not None else None
        self.clock_tolerance_mhz = clock_tolerance_mhz
        self._peaks: dict[PeakKey, float] = {}
        if self.path is not None and self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                self._peaks = {PeakKey.from_str(k): float(v)
                               for k, v in data["peak_flops_per_s"].items()}
            except (ValueError, KeyError, AttributeError, TypeError):
                raise UsageError(f"peak cache {self.path} is not a valid JSON peak cache") from None

    def get(self, key: PeakKey) -> float | None:
        """The cached peak nearest to `key` within the clock tolerance, or ``None``."""
        best: tuple[float, float] | None = None
        for k, v in self._peaks.items():
            if k.device_name != key.device_name or k.precision != key.precision:
                continue
            if k.sm_clock_mhz is None or key.sm_clock_mhz is None:
                dist = 0.0 if k.sm_clock_mhz is key.sm_clock_mhz else None
            else:
                dist = abs(k.sm_clock_mhz - key.sm_clock_mhz)
                dist = dist if dist <= self.clock_tolerance_mhz else None
            if dist is not None and (best is None or dist < best[0]):
                best = (dist, v)
        return None if best is None else best[1]

    def get_or_measure(self, key: PeakKey, measure: Callable[[], float]) -> float:
        """The cached peak for `key`, measuring (and storing) it with `measure` if missing."""
        value = self.get(key)
        if value is None:
            value = float(measure())
            self._peaks[key] = value
            self._save()
        return value

    def _save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".peaks.")
        with os.fdopen(fd, "w") as f:
            json.dump({"peak_flops_per_s": {k.as_str(): v for k, v in self._peaks.items()}}, f,
                      indent=1, sort_keys=True)
        os.replace(tmp, self.path)


def measure_matmul_peak_flops(device: str, precision: str, *, n: int = 8192,
                              target_s: float = 0.05, trials: int = 3, seed: int = 0) -> float:
    """The best rate of an ``n x n`` matrix product on `device` at `precision`, FLOP/s.

    Operands are random normal (never zeros). After a warm-up, each trial times enough products
    to last about `target_s` seconds (CUDA events on a GPU, the host clock on a CPU); the best
    trial counts, since the peak is what the hardware can reach.
    """
    import torch


    dev = torch.device(device)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    dtype = dtype_of(precision)
    a = torch.randn(n, n, generator=gen).to(dev, dtype)
    b = torch.randn(n, n, generator=gen).to(dev, dtype)
    flops = 2.0 * n**3
    cuda = dev.type == "cuda"

    def timed(iters: int) -> float:
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                torch.mm(a, b)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0
        t0 = time.perf_counter()
        for _ in range(iters):
            torch.mm(a, b)
        return time.perf_counter() - t0

    with precision_flags(precision), torch.inference_mode():
        timed(2)
        one = max(timed(1), 1e-6)
        iters = max(1, round(target_s / one))
        best = min(timed(iters) / iters for _ in range(trials))
    return flops / best


@dataclass(frozen=True)
class Peak:
    """A peak FLOP/s and where it came from (``measured`` or ``datasheet``)."""

    flops_per_s: float
    source: str


def resolve_peak(mode: str, key: PeakKey, cache: PeakCache, measure: Callable[[], float]) -> Peak:
    """The peak for `key` from the datasheet or the cache (measuring on a miss).

    Raises:
        UsageError: `mode` is not ``measured`` or ``datasheet``, or no datasheet entry exists.
    """
    if mode == "datasheet":
        return Peak(datasheet_peak_flops(key.device_name, key.precision), "datasheet")
    if mode == "measured":
        return Peak(cache.get_or_measure(key, measure), "measured")
    raise UsageError(f"unknown peak source {mode!r}; choose from {', '.join(PEAK_SOURCES)}")


_PROCESS_CACHE: PeakCache | None = None


def default_peak_cache(cache: PeakCache | str | os.PathLike[str] | None = None) -> PeakCache:
    """`cache` itself, a `PeakCache` on that JSON path, or (for ``None``) this process's shared
    in-memory cache."""
    global _PROCESS_CACHE
    if isinstance(cache, PeakCache):
        return cache
    if cache is not None:
        return PeakCache(cache)
    if _PROCESS_CACHE is None:
        _PROCESS_CACHE = PeakCache()
    return _PROCESS_CACHE
