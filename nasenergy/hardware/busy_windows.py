"""Whether energy windows kept the device busy, and the throughput of their timed passes.

One job: judge a run of energy windows. A run whose window throughput falls short of the
network's timed throughput (the host fell behind, the queue ran dry and the device idled inside
the window) holds idle energy and is run again (`steady_windows`, against `MIN_BUSY_FRAC`:
`busy_fraction` against a timed throughput, else `window_busy_fraction`); the throughput of a
window's own timed passes, leaving out passes that waited for work, is `steady_throughput`, and
`part_throughputs` splits one window into repeats.
"""

from __future__ import annotations

import statistics
from typing import Callable, Sequence, TypeVar

from nasenergy.hardware.energy_window_types import EnergyWindow

__all__ = ["GAP_FACTOR", "MIN_BUSY_FRAC", "busy_fraction", "part_throughputs", "steady_throughput",
           "steady_windows", "window_busy_fraction"]


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
