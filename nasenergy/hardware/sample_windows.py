"""Energy windows priced by NVML's power-sample buffer: windows that may start at any time.

One job: `run_sample_windows`, the alternative to counter-aligned windows
(`nasenergy.hardware.energy_window.run_energy_windows`) for GPUs whose NVML keeps a power-sample
buffer updated more often than the energy counter (every 20 ms on an H200 against the counter's
100 ms): a window costs its length plus one sample period instead of its length plus up to one
counter period of waiting, and its mean power is the mean of the samples stamped inside it
(`results/energy_sources`: a single 0.1-s window of samples lies 0.46 % (median) and 2.0 % (worst)
from a 1-s counter window of the same network).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from nasenergy.hardware.energy_window_types import EnergyWindow, EnergyWindowError, Workload, measured_window

__all__ = ["run_sample_windows"]


def _rel_se(values: Sequence[float]) -> float:
    """Relative standard error of the mean of `values` (infinite for fewer than three)."""
    n = len(values)
    if n < 3:
        return float("inf")
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return (var / n) ** 0.5 / mean if mean > 0 else float("inf")


def run_sample_windows(
    read_samples: Callable[[int], list[tuple[int, float]]],
    workload: Workload,
    wall: Callable[[], float],
    *,
    n_windows: int,
    window_s: float,
    max_window_s: float | None = None,
    target_rel_se: float = 0.005,
    warmup_s: float = 0.0,
    timeout_s: float = 2.0,
    on_edge: Callable[[], None] | None = None,
) -> list[EnergyWindow]:
    """Run `workload` continuously and cut `n_windows` consecutive windows of at least `window_s`
    seconds, each priced by the mean of the power samples stamped inside it.

    A window lasts `window_s` unless `max_window_s` is longer: then it runs on until the relative
    standard error of its samples' mean is at most `target_rel_se`, or `max_window_s` is reached.
    Networks whose power swings (on an H200 some oscillate by ±5 % over ~0.2 s) so get longer
    windows, steady ones stay short.

    Args:
        read_samples: the samples after a timestamp, ``since_us -> [(timestamp_us, watts), ...]``
            oldest first (`nasenergy.hardware.nvml.NvmlDevice.power_samples_w`).
        workload: keeps the device busy and places markers.
        wall: the clock the samples are stamped with, seconds (NVML: the host's wall clock,
            `time.time`).
        n_windows: number of consecutive windows.
        window_s: the least length of each window, seconds.
        max_window_s: the most length of each window (``None``: `window_s`).
        target_rel_se: a window longer than `window_s` ends once its samples' mean is this
            precise (relative standard error).
        warmup_s: seconds of continuous work before the first window starts.
        timeout_s: give up (`EnergyWindowError`) when, this long after the last window's end, the
            buffer holds no sample past it.
        on_edge: called at every window edge (e.g. to sample the SM clock).

    Returns:
        The windows, in order (``readings``: samples averaged in each).
    """
    longest = window_s if max_window_s is None else max(window_s, max_window_s)
    if n_windows < 1 or window_s <= 0:
        raise ValueError("need n_windows >= 1 and window_s > 0")
    start = wall()
    since_us = int(start * 1e6)
    got: list[tuple[int, float]] = []

    def fetch() -> None:
        got.extend(read_samples(got[-1][0] if got else since_us))

    t = start
    while t - start < warmup_s:
        workload.keep_busy()
        t = wall()
    edges: list[tuple[float, Any]] = [(wall(), workload.mark())]
    if on_edge is not None:
        on_edge()
    last_fetch = 0.0
    while len(edges) < n_windows + 1:
        workload.keep_busy()
        now = wall()
        t0 = edges[-1][0]
        if now - t0 < window_s:
            continue
        if now - t0 < longest:
            if now - last_fetch < 0.005:
                continue
            fetch()
            last_fetch = now
            inside = [w for ts, w in got if ts >= t0 * 1e6]
            if _rel_se(inside) > target_rel_se:
                continue
        edges.append((now, workload.mark()))
        if on_edge is not None:
            on_edge()
    end_us = edges[-1][0] * 1e6
    deadline = wall() + timeout_s
    while not got or got[-1][0] < end_us:
        workload.keep_busy()
        fetch()
        if wall() > deadline:
            raise EnergyWindowError(f"no power sample past the energy window after {timeout_s:.1f} s; "
                                    "is the power-sample buffer updating?")
    windows = []
    for (t0, m0), (t1, m1) in zip(edges, edges[1:]):
        inside = [w for ts, w in got if t0 * 1e6 <= ts < t1 * 1e6]
        if not inside:
            raise EnergyWindowError(f"no power sample inside a {window_s:.3f}-s energy window; "
                                    "use a longer window than the buffer's sample period")
        windows.append(measured_window(workload, m0, m1, energy_j=sum(inside) / len(inside) * (t1 - t0),
                                        host_s=t1 - t0, readings=len(inside)))
    return windows
