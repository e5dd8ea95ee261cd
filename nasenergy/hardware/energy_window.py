"""Energy per image from tick-aligned windows of continuous inference.

NVML's total-energy counter (and its power reading) on recent data-centre GPUs changes only every
~100 ms. A window that starts and ends at arbitrary times therefore sees the energy of a whole
number of ticks while its host timestamps cover a fractional number: with a 0.3 s window the
error is up to a third. This module avoids that:

1. the device runs the network *continuously* (the workload keeps work queued ahead);
2. the host polls the counter in a tight loop and notes the host time of each change;
3. a window runs from one observed change to a later one, at least ``min_window_s`` apart, so
   the counter difference is the energy of exactly the interval between the two updates, and the
   host timestamps of the two changes measure that interval (each to within one poll);
4. at each window edge a marker is placed in the device's work stream; the images and device
   seconds between two markers give the throughput over the same steady run;
5. energy per image = (energy / interval) / throughput = mean power / throughput;
6. a run whose window throughput falls short of the network's timed throughput (the host fell
   behind, the queue ran dry and the device idled inside the window) is run again
   (`steady_windows`, in `nasenergy.hardware.busy_windows`), since its energy per image would
   include idle energy.

For devices without the counter, `PowerSampler` integrates the sampled power over host time
instead (less accurate: the power reading is itself updated on ticks and may be averaged).

`run_sample_windows` (`nasenergy.hardware.sample_windows`) is the alternative for GPUs whose NVML
keeps a power-sample buffer updated more often than the counter: a window may then start at any time.

This module's job is cutting counter-aligned windows (`run_energy_windows`) and reading the idle
power with them (`idle_power_w`); the windows' parts are in `nasenergy.hardware.energy_window_types`,
and it re-exports the names of the modules above, where they were defined before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from nasenergy.hardware.busy_windows import (GAP_FACTOR, MIN_BUSY_FRAC, busy_fraction, part_throughputs,
                                             steady_throughput, steady_windows, window_busy_fraction)
from nasenergy.hardware.energy_window_types import (CounterSource, EnergySource, EnergyWindow, EnergyWindowError,
                                                    PowerSampler, Workload, measured_window, window_energies)
from nasenergy.hardware.sample_windows import run_sample_windows

__all__ = ["GAP_FACTOR", "MIN_BUSY_FRAC", "CounterSource", "EnergySource", "EnergyWindow", "EnergyWindowError",
           "IdleReading", "PowerSampler", "Workload", "busy_fraction", "idle_power_w", "part_throughputs",
           "run_energy_windows", "run_sample_windows", "steady_throughput", "steady_windows",
           "window_busy_fraction", "window_energies"]


def run_energy_windows(
    source: EnergySource,
    workload: Workload,
    now: Callable[[], float],
    *,
    n_windows: int,
    min_window_s: float,
    warmup_s: float = 0.0,
    timeout_s: float = 30.0,
    on_edge: Callable[[], None] | None = None,
) -> list[EnergyWindow]:
    """Run `workload` continuously and cut `n_windows` consecutive energy windows.

    Args:
        source: the energy reading (`CounterSource` or `PowerSampler`).
        workload: keeps the device busy and places markers.
        now: host clock, seconds.
        n_windows: number of consecutive windows (repeats).
        min_window_s: a window ends at the first usable reading at least this long after its start.
        warmup_s: seconds of continuous work before the first window may start.
        timeout_s: give up (`EnergyWindowError`) when the windows are not done after this long.
        on_edge: called at every window edge (e.g. to sample the SM clock).

    Returns:
        The windows, in order.
    """
    if n_windows < 1 or min_window_s <= 0:
        raise ValueError("need n_windows >= 1 and min_window_s > 0")
    start = now()
    deadline = start + warmup_s + timeout_s
    t = start
    while t - start < warmup_s:
        workload.keep_busy()
        source.poll(t)
        t = now()
    edges: list[tuple[float, float, Any]] = []
    while len(edges) < n_windows + 1:
        workload.keep_busy()
        t = now()
        usable = source.poll(t)
        if usable and (not edges or t - edges[-1][0] >= min_window_s):
            edges.append((t, source.energy_j(), workload.mark()))
            if on_edge is not None:
                on_edge()
        elif t > deadline:
            raise EnergyWindowError(
                f"energy windows not complete after {timeout_s:.0f} s "
                f"({max(0, len(edges) - 1)} of {n_windows}); is the energy reading updating?"
            )
    windows = []
    for (t0, e0, m0), (t1, e1, m1) in zip(edges, edges[1:]):
        windows.append(measured_window(workload, m0, m1, energy_j=e1 - e0, host_s=t1 - t0))
    return windows


@dataclass(frozen=True)
class IdleReading:
    """Idle board power.

    Attributes:
        power_w: mean power of the last idle window, watts.
        settled: whether two consecutive windows agreed within the tolerance (False: the device
            was still cooling down when the time ran out; then `power_w` is the lowest window,
            an upper bound of the idle power).
        windows: number of windows read.
    """

    power_w: float
    settled: bool
    windows: int


def idle_power_w(source: EnergySource, now: Callable[[], float], *, window_s: float = 0.2,
                 tolerance_w: float = 1.0, timeout_s: float = 6.0) -> IdleReading:
    """Power of the idle device once it has settled after earlier work.

    Reads consecutive windows of at least `window_s` until two in a row differ by less than
    `tolerance_w` (a GPU's power stays high for a while after load), or `timeout_s` passes.
    """

    class _Idle:
        def keep_busy(self) -> None:
            pass

        def mark(self) -> None:
            return None

        def between(self, start: Any, end: Any) -> tuple[int, float]:
            return 0, 0.0

    start = now()
    powers: list[float] = []
    while True:
        (window,) = run_energy_windows(source, _Idle(), now, n_windows=1, min_window_s=window_s,
                                       timeout_s=max(1.0, timeout_s))
        powers.append(window.avg_power_w)
        if len(powers) >= 2 and abs(powers[-1] - powers[-2]) < tolerance_w:
            return IdleReading(powers[-1], True, len(powers))
        if now() - start > timeout_s:
            return IdleReading(min(powers), False, len(powers))
