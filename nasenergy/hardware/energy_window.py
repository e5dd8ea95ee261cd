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
   (`steady_windows`), since its energy per image would include idle energy.

For devices without the counter, `PowerSampler` integrates the sampled power over host time
instead (less accurate: the power reading is itself updated on ticks and may be averaged).

`run_sample_windows` is the alternative for GPUs whose NVML keeps a power-sample buffer updated
more often than the counter (every 20 ms on an H200 against the counter's 100 ms): a window may
then start at any time, so it costs its length plus one sample period instead of its length plus
up to one counter period of waiting, and its mean power is the mean of the samples stamped inside
it (`results/energy_sources`: a single 0.1-s window of samples lies 0.46 % (median) and 2.0 %
(worst) from a 1-s counter window of the same network).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, TypeVar

from nasenergy.errors import CandidateError


class EnergyWindowError(CandidateError):
    """No energy window could be completed (e.g. the counter never changed)."""


class Workload(Protocol):
    """Work the device runs continuously while the host polls the energy source."""

    def keep_busy(self) -> None:
        """Queue more work if less than a short backlog is queued; must return quickly."""
        ...

    def mark(self) -> Any:
        """Place a marker after the work queued so far; returns an opaque marker."""
        ...

    def between(self, start: Any, end: Any) -> tuple[int, float]:
        """Images completed and device seconds elapsed between two markers (may block)."""
        ...


class EnergySource(Protocol):
    """A cumulative energy reading polled by `run_energy_windows`."""

    def poll(self, t_s: float) -> bool:
        """Take a reading at host time `t_s`; True if this reading can bound a window."""
        ...

    def energy_j(self) -> float:
        """Cumulative energy at the last reading, joules (any fixed origin)."""
        ...


class CounterSource:
    """The NVML total-energy counter (mJ): a window may only start or end where it changed."""

    def __init__(self, read_energy_mj: Callable[[], int]) -> None:
        self._read = read_energy_mj
        self._last: int | None = None

    def poll(self, t_s: float) -> bool:
        value = self._read()
        changed = self._last is not None and value != self._last
        self._last = value
        return changed

    def energy_j(self) -> float:
        if self._last is None:
            raise EnergyWindowError("the energy counter was never read")
        return self._last / 1000.0


class PowerSampler:
    """Integrates sampled power (W) over host time: the fallback without an energy counter.

    Each reading's power is held until the next reading (left Riemann sum), so the integral up to
    the latest reading is exact for piecewise-constant power sampled often. Any reading can bound
    a window.
    """

    def __init__(self, read_power_w: Callable[[], float]) -> None:
        self._read = read_power_w
        self._t: float | None = None
        self._p = 0.0
        self._e = 0.0

    def poll(self, t_s: float) -> bool:
        if self._t is not None:
            self._e += self._p * (t_s - self._t)
        self._t = t_s
        self._p = float(self._read())
        return True

    def energy_j(self) -> float:
        return self._e


@dataclass(frozen=True)
class EnergyWindow:
    """One window of continuous inference.

    Attributes:
        energy_j: energy between the two edges, joules.
        host_s: host seconds between the two edges.
        images: images completed between the two work-stream markers.
        device_s: device seconds between the two markers.
        avg_power_w: ``energy_j / host_s``.
        throughput_img_per_s: ``images / device_s``.
        energy_j_per_img: ``avg_power_w / throughput_img_per_s``.
    """

    energy_j: float
    host_s: float
    images: int
    device_s: float
    readings: int | None = None
    """Power samples averaged (`run_sample_windows`); ``None`` for counter and sampler windows."""
    step_s: tuple[float, ...] | None = None
    """Device seconds of each forward pass inside the window, where the workload times them
    (`steady_throughput`); ``None`` otherwise."""

    @property
    def avg_power_w(self) -> float:
        return self.energy_j / self.host_s

    @property
    def throughput_img_per_s(self) -> float:
        return self.images / self.device_s

    @property
    def energy_j_per_img(self) -> float:
        return self.avg_power_w / self.throughput_img_per_s


def _measured_window(workload: Workload, m0: Any, m1: Any, **fields: Any) -> EnergyWindow:
    """The window between two markers: images and device seconds from `workload`, and each pass's
    device seconds where the workload times them (an optional ``step_seconds(start, end)``)."""
    images, device_s = workload.between(m0, m1)
    timed = getattr(workload, "step_seconds", None)
    step_s = tuple(timed(m0, m1)) if timed is not None else None
    return EnergyWindow(images=images, device_s=device_s, step_s=step_s, **fields)


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
        windows.append(_measured_window(workload, m0, m1, energy_j=e1 - e0, host_s=t1 - t0))
    return windows


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
        windows.append(_measured_window(workload, m0, m1, energy_j=sum(inside) / len(inside) * (t1 - t0),
                                        host_s=t1 - t0, readings=len(inside)))
    return windows


MIN_BUSY_FRAC = 0.95
"""A window run whose throughput falls below this share of the timed throughput kept the device
busy only part of the time (the host fell behind and the queued work ran out), so its energy per
image holds idle energy: it is run again (`steady_windows`)."""

R = TypeVar("R")


def busy_fraction(windows: Sequence[EnergyWindow], timed_throughput_img_per_s: float) -> float:
    """Throughput over ``windows`` (all images over all device seconds) as a share of the timed
    throughput of the same network; about 1 when the device stayed busy."""
    device_s = sum(w.device_s for w in windows)
    if device_s <= 0 or timed_throughput_img_per_s <= 0:
        return 0.0
    return sum(w.images for w in windows) / device_s / timed_throughput_img_per_s


GAP_FACTOR = 1.5
"""`steady_throughput`: a pass timed at more than this many times the median pass waited for its
work (the queue ran dry) and is left out of the throughput."""


def steady_throughput(step_s: Sequence[float], images_per_step: int,
                      gap_factor: float = GAP_FACTOR) -> tuple[float, float]:
    """Throughput of a run of back-to-back passes from each pass's device seconds, and the share
    of the run's device time the device was busy.

    A pass's device seconds run from the end of the work before it to its own end, so a pass the
    host queued late also holds the device's idle wait: passes longer than ``gap_factor`` times
    the median are left out of the throughput, and the busy share is the others' time over all.

    Returns:
        ``(throughput_img_per_s, busy_frac)``; busy share 0 without passes.
    """
    if not step_s or images_per_step < 1:
        return 0.0, 0.0
    median = statistics.median(step_s)
    kept = [s for s in step_s if s <= gap_factor * median]
    total, busy = sum(step_s), sum(kept)
    if busy <= 0 or total <= 0:
        return 0.0, 0.0
    return images_per_step * len(kept) / busy, busy / total


def part_throughputs(step_s: Sequence[float], images_per_step: int, parts: int,
                     gap_factor: float = GAP_FACTOR) -> list[float]:
    """`steady_throughput` of each of ``parts`` contiguous runs of one window's passes (fewer when
    the window holds fewer passes): a single window's own repeats, whose spread stands in for that
    of timed repeats (passes that waited for work are left out by the whole window's median)."""
    if not step_s or images_per_step < 1 or parts < 1:
        return []
    limit = gap_factor * statistics.median(step_s)
    n = min(parts, len(step_s))
    bounds = [round(i * len(step_s) / n) for i in range(n + 1)]
    out = []
    for lo, hi in zip(bounds, bounds[1:]):
        kept = [x for x in step_s[lo:hi] if x <= limit]
        if kept:
            out.append(images_per_step * len(kept) / sum(kept))
    return out


def window_busy_fraction(windows: Sequence[EnergyWindow]) -> float:
    """The least busy share over ``windows`` whose passes were timed (0 when one was not): each
    window's images at its `steady_throughput` over its device seconds between the markers, so a
    wait after the last pass counts as idle too. The check of windows that are also the
    throughput measurement."""
    fracs = []
    for w in windows:
        if not w.step_s or w.device_s <= 0:
            return 0.0
        tput, _ = steady_throughput(w.step_s, w.images // len(w.step_s))
        fracs.append(w.images / tput / w.device_s if tput > 0 else 0.0)
    return min(fracs) if fracs else 0.0


def steady_windows(run: Callable[[], tuple[list[EnergyWindow], R]], timed_throughput_img_per_s: float | None, *,
                   min_busy_frac: float = MIN_BUSY_FRAC, attempts: int = 3) -> tuple[list[EnergyWindow], R, float]:
    """Run energy windows (``run()`` -> windows and whatever goes with them, e.g. counters) until
    one run kept the device busy or ``attempts`` runs are spent; returns the busiest run and its
    busy fraction (below ``min_busy_frac`` when every attempt fell short: the caller decides what
    to say). Busy: `busy_fraction` against the timed throughput at least ``min_busy_frac``; with
    ``timed_throughput_img_per_s=None`` (the windows are the throughput measurement),
    `window_busy_fraction`."""
    best: tuple[list[EnergyWindow], R, float] | None = None
    for _ in range(max(1, attempts)):
        windows, extra = run()
        frac = (window_busy_fraction(windows) if timed_throughput_img_per_s is None
                else busy_fraction(windows, timed_throughput_img_per_s))
        if best is None or frac > best[2]:
            best = (windows, extra, frac)
        if frac >= min_busy_frac:
            break
    assert best is not None
    return best


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


def window_energies(windows: Sequence[EnergyWindow], idle_w: float | None = None) -> list[float]:
    """Energy per image of each window, joules; above idle when `idle_w` is given."""
    if idle_w is None:
        return [w.energy_j_per_img for w in windows]
    return [(w.avg_power_w - idle_w) / w.throughput_img_per_s for w in windows]
