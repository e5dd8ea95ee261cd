"""Finding a workload's best SM clock with few probes, over any `ClockBackend`.

Energy per image against clock is valley-shaped (it falls, then rises below a point), so the search
is a Fibonacci search (the integer form of golden-section search) over the indices of the sorted
supported clocks, followed by a local check of the neighbours of the best point. For a
valley-shaped (unimodal) curve over ``n`` clocks it needs about ``log_phi(n) - 1`` probes: 9
for the 110 clocks of an H200 to come within one clock step, and one more (the local check) to
land on the exact minimum. `exhaustive_search` probes every clock, for comparison.

Modes:
* ``min-energy``: least energy per image.
* ``bounded-slowdown``: least energy among clocks whose throughput is at least
  ``(1 - max_slowdown)`` times the default clock's. Throughput rises with the clock, so the key
  ``(infeasible, -throughput) / (feasible, energy)`` stays valley-shaped and one search suffices.
* ``min-edp``: least energy-delay product per image.
"""

from __future__ import annotations

from typing import Callable

from nasenergy.dvfs.backends import ClockBackend
from nasenergy.dvfs.points import BOUNDED_SLOWDOWN, MIN_EDP, MIN_ENERGY, MODES, ClockPoint, OptimalClock
from nasenergy.errors import UsageError

DEFAULT_MAX_PROBES = 10

Key = tuple[int, float]


def _key_fn(mode: str, default: ClockPoint, max_slowdown: float | None) -> Callable[[ClockPoint], Key]:
    if mode == MIN_ENERGY:
        return lambda pt: (0, pt.energy_j_per_img)
    if mode == MIN_EDP:
        return lambda pt: (0, pt.edp_j_s)
    assert max_slowdown is not None
    floor = (1.0 - max_slowdown) * default.throughput_img_per_s * (1.0 - 1e-12)
    return lambda pt: ((0, pt.energy_j_per_img) if pt.throughput_img_per_s >= floor
                       else (1, -pt.throughput_img_per_s))


def _check_mode(mode: str, max_slowdown: float | None) -> None:
    if mode not in MODES:
        raise UsageError(f"unknown DVFS mode {mode!r}; choose from {', '.join(MODES)}")
    if mode == BOUNDED_SLOWDOWN:
        if max_slowdown is None or not 0.0 <= max_slowdown < 1.0:
            raise UsageError(f"mode {BOUNDED_SLOWDOWN} needs max_slowdown in [0, 1), "
                             f"e.g. 0.05 for at most 5% less throughput; got {max_slowdown!r}")
    elif max_slowdown is not None:
        raise UsageError(f"max_slowdown applies only to mode {BOUNDED_SLOWDOWN!r}, not {mode!r}")


def _fib_upto(n: int) -> list[int]:
    fib = [1, 1]
    while fib[-1] < n:
        fib.append(fib[-1] + fib[-2])
    return fib


class _Prober:
    """Probes clocks by index through a backend, once each, counting and keeping order."""

    def __init__(self, backend: ClockBackend, clocks: tuple[float, ...], key: Callable[[ClockPoint], Key],
                 seeded: dict[int, ClockPoint]) -> None:
        self.backend = backend
        self.clocks = clocks
        self.key = key
        self.points: dict[int, ClockPoint] = dict(seeded)
        self.order: list[ClockPoint] = []
        self.n_probes = 0

    def __call__(self, i: int) -> Key:
        if i < 0 or i >= len(self.clocks):
            return (2, 0.0)  # virtual padding beyond the clock range: worse than anything
        if i not in self.points:
            pt = self.backend.probe(self.clocks[i])
            self.points[i] = pt
            self.order.append(pt)
            self.n_probes += 1
        return self.key(self.points[i])


def _fibonacci_argmin(val: _Prober, n: int, max_probes: int) -> int:
    """Index of the minimum of a valley-shaped function on ``0..n-1`` (see module docstring)."""
    if n <= 3:
        return min(range(n), key=val)
    fib = _fib_upto(n + 1)
    k = len(fib) - 1                     # fib[k] >= n + 1
    a, b = -1, -1 + fib[k]               # the minimum lies strictly inside (a, b)
    c, d = a + fib[k - 2], a + fib[k - 1]
    while b - a > 5 and val.n_probes < max_probes:
        if val(c) <= val(d):
            b, d = d, c
            c = a + (b - d)
        else:
            a, c = c, d
            d = b - (c - a)
    # (a, b) now holds at most four points, c < d inside it; the better of c, d is within one
    # step of the minimum. The local check resolves the remaining neighbours while budget lasts.
    best = min((i for i in (c, d) if 0 <= i < n), key=val)
    while True:
        neighbours = [j for j in (best - 1, best + 1) if 0 <= j < n]
        unprobed = [j for j in neighbours if j not in val.points]
        if len(unprobed) > max(0, max_probes - val.n_probes):
            unprobed = unprobed[: max(0, max_probes - val.n_probes)]
        for j in unprobed:
            val(j)
        known = [j for j in neighbours if j in val.points] + [best]
        new_best = min(known, key=val)
        if new_best == best:
            return best
        best = new_best


def _result(mode: str, prober: _Prober, best_i: int, default: ClockPoint, source: str,
            caveat: str | None, max_slowdown: float | None) -> OptimalClock:
    best = prober.points[best_i]
    if prober.key(best)[0] != 0:         # nothing feasible: the default clock always is
        best = default
    return OptimalClock(
        mode=mode, best=best, default=default,
        energy_saving_frac=1.0 - best.energy_j_per_img / default.energy_j_per_img,
        throughput_change_frac=best.throughput_img_per_s / default.throughput_img_per_s - 1.0,
        n_probes=prober.n_probes, probed=tuple(prober.order), source=source, caveat=caveat,
        max_slowdown_frac=max_slowdown)


def _prepare(backend: ClockBackend, mode: str, max_slowdown: float | None,
             default_point: ClockPoint | None) -> tuple[tuple[float, ...], ClockPoint, dict[int, ClockPoint], int]:
    _check_mode(mode, max_slowdown)
    clocks = tuple(backend.clocks_mhz())
    if not clocks:
        raise UsageError("the DVFS backend offers no clocks")
    probes = 0
    seeded: dict[int, ClockPoint] = {}
    if default_point is None:
        default_point = backend.probe(backend.default_clock_mhz())
        probes = 1
    for i, f in enumerate(clocks):
        if abs(f - default_point.sm_clock_mhz) < 1e-6:
            seeded[i] = default_point
    return clocks, default_point, seeded, probes


def find_optimal_clock(backend: ClockBackend, *, mode: str = MIN_ENERGY,
                       max_slowdown: float | None = None, default_point: ClockPoint | None = None,
                       max_probes: int = DEFAULT_MAX_PROBES) -> OptimalClock:
    """The best clock of `backend`'s workload under `mode`, found with few probes.

    Args:
        backend: where points come from (``measured`` / ``modelled`` / ``recorded``).
        mode: ``min-energy`` | ``bounded-slowdown`` | ``min-edp``.
        max_slowdown: for ``bounded-slowdown``: the largest allowed throughput loss as a fraction
            (0.05 = 5%).
        default_point: the default-clock point if already known (e.g. from the measurement that
            started the search); otherwise it is probed and counted.
        max_probes: probe budget of the search (the local check stops when it is spent).

    Raises:
        UsageError: unknown mode, missing/invalid ``max_slowdown``, or an empty backend.
    """
    clocks, default, seeded, pre = _prepare(backend, mode, max_slowdown, default_point)
    prober = _Prober(backend, clocks, _key_fn(mode, default, max_slowdown), seeded)
    prober.n_probes = pre
    if pre:
        prober.order.append(default)
    best_i = _fibonacci_argmin(prober, len(clocks), max_probes + pre)
    return _result(mode, prober, best_i, default, backend.source, backend.caveat, max_slowdown)


def exhaustive_search(backend: ClockBackend, *, mode: str = MIN_ENERGY,
                      max_slowdown: float | None = None,
                      default_point: ClockPoint | None = None) -> OptimalClock:
    """Like `find_optimal_clock`, but probing every clock (the reference answer)."""
    clocks, default, seeded, pre = _prepare(backend, mode, max_slowdown, default_point)
    prober = _Prober(backend, clocks, _key_fn(mode, default, max_slowdown), seeded)
    prober.n_probes = pre
    if pre:
        prober.order.append(default)
    best_i = min(range(len(clocks)), key=prober)
    return _result(mode, prober, best_i, default, backend.source, backend.caveat, max_slowdown)
