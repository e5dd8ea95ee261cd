"""The few-probe search finds the exhaustive optimum on valley-shaped and monotone curves."""

from __future__ import annotations

import numpy as np
import pytest

from nasenergy.dvfs.backends import RecordedBackend
from nasenergy.dvfs.points import BOUNDED_SLOWDOWN, MIN_EDP, MIN_ENERGY, ClockPoint
from nasenergy.dvfs.clock_search import exhaustive_search, find_optimal_clock
from nasenergy.dvfs.sweeps import Sweep
from nasenergy.errors import UsageError


def valley_sweep(rng: np.random.Generator, n: int, min_index: int) -> Sweep:
    """A strictly valley-shaped energy curve with its minimum at `min_index`."""
    clocks = 345.0 + 15.0 * np.arange(n)
    steps = rng.uniform(0.001, 0.2, size=n)
    energy = np.empty(n)
    energy[min_index] = 1.0
    for i in range(min_index - 1, -1, -1):
        energy[i] = energy[i + 1] + steps[i]
    for i in range(min_index + 1, n):
        energy[i] = energy[i - 1] + steps[i]
    time = 1e-5 * clocks[-1] / clocks * rng.uniform(0.999, 1.0, size=n)
    time = np.maximum.accumulate(time[::-1])[::-1]     # slower at lower clocks
    return Sweep.from_arrays("synthetic", f"valley-{n}-{min_index}", clocks, time, energy / time)


def _index(sweep: Sweep, clock: float) -> int:
    return int(np.argmin(np.abs(sweep.f - clock)))


@pytest.mark.parametrize("shape", ["valley", "falling", "rising"])
def test_matches_exhaustive_on_random_curves(rng: np.random.Generator, shape: str) -> None:
    for _ in range(300):
        n = int(rng.integers(2, 144))
        m = {"valley": int(rng.integers(0, n)), "falling": n - 1, "rising": 0}[shape]
        sweep = valley_sweep(rng, n, m)
        backend = RecordedBackend(sweep)
        default = sweep.point(sweep.default_clock_mhz)
        fast = find_optimal_clock(backend, default_point=default)
        full = exhaustive_search(backend, default_point=default)
        assert _index(sweep, full.sm_clock_mhz) == m
        assert _index(sweep, fast.sm_clock_mhz) == m, (n, m)
        assert fast.n_probes <= 10, (n, fast.n_probes)
        assert fast.n_probes == len(fast.probed)


def test_h200_sized_search_is_within_one_step_with_nine_probes(rng: np.random.Generator) -> None:
    for m in range(110):
        sweep = valley_sweep(rng, 110, m)
        default = sweep.point(sweep.default_clock_mhz)
        nine = find_optimal_clock(RecordedBackend(sweep), default_point=default, max_probes=9)
        assert nine.n_probes <= 9
        assert abs(_index(sweep, nine.sm_clock_mhz) - m) <= 1
        ten = find_optimal_clock(RecordedBackend(sweep), default_point=default)
        assert ten.n_probes <= 10 and _index(sweep, ten.sm_clock_mhz) == m


def test_default_point_is_probed_and_counted_when_not_given(rng: np.random.Generator) -> None:
    sweep = valley_sweep(rng, 40, 10)
    res = find_optimal_clock(RecordedBackend(sweep))
    assert res.probed[0].sm_clock_mhz == sweep.default_clock_mhz
    assert res.default.sm_clock_mhz == sweep.default_clock_mhz
    assert res.n_probes == len(res.probed)
    assert _index(sweep, res.sm_clock_mhz) == 10


def test_result_fields(rng: np.random.Generator) -> None:
    sweep = valley_sweep(rng, 60, 20)
    res = find_optimal_clock(RecordedBackend(sweep))
    e_def = sweep.energy[-1]
    assert res.mode == MIN_ENERGY and res.source == "recorded"
    assert res.energy_saving_frac == pytest.approx(1 - sweep.energy[20] / e_def)
    thr = 1 / sweep.time_s[20]
    assert res.throughput_change_frac == pytest.approx(thr * sweep.time_s[-1] - 1)


@pytest.mark.parametrize("mode", [BOUNDED_SLOWDOWN, MIN_EDP])
def test_other_modes_match_exhaustive(rng: np.random.Generator, mode: str) -> None:
    for _ in range(200):
        n = int(rng.integers(3, 120))
        clocks = 345.0 + 15.0 * np.arange(n)
        alpha = rng.uniform(0.1, 1.0)
        tau = alpha * clocks[-1] / clocks + 1 - alpha
        # power convex in clock: energy per image is valley-shaped, EDP too
        power = 60 + 300 * (clocks / clocks[-1]) ** rng.uniform(2.0, 4.0)
        sweep = Sweep.from_arrays("synthetic", "w", clocks, 1e-5 * tau, power)
        kw = {"max_slowdown": float(rng.uniform(0.0, 0.5))} if mode == BOUNDED_SLOWDOWN else {}
        default = sweep.point(sweep.default_clock_mhz)
        fast = find_optimal_clock(RecordedBackend(sweep), mode=mode, default_point=default, **kw)
        full = exhaustive_search(RecordedBackend(sweep), mode=mode, default_point=default, **kw)
        assert fast.sm_clock_mhz == full.sm_clock_mhz
        assert fast.n_probes <= 10
        if mode == BOUNDED_SLOWDOWN:
            assert fast.throughput_change_frac >= -kw["max_slowdown"] - 1e-12
            assert fast.max_slowdown_frac == kw["max_slowdown"]


def test_bounded_slowdown_of_zero_keeps_default_throughput(rng: np.random.Generator) -> None:
    sweep = valley_sweep(rng, 50, 5)
    res = find_optimal_clock(RecordedBackend(sweep), mode=BOUNDED_SLOWDOWN, max_slowdown=0.0)
    assert res.throughput_change_frac >= -1e-12


def test_bad_modes_are_usage_errors(rng: np.random.Generator) -> None:
    backend = RecordedBackend(valley_sweep(rng, 10, 3))
    with pytest.raises(UsageError, match="unknown DVFS mode"):
        find_optimal_clock(backend, mode="fastest")
    with pytest.raises(UsageError, match="needs max_slowdown"):
        find_optimal_clock(backend, mode=BOUNDED_SLOWDOWN)
    with pytest.raises(UsageError, match="applies only"):
        find_optimal_clock(backend, max_slowdown=0.1)
    with pytest.raises(UsageError):
        find_optimal_clock(backend, mode=BOUNDED_SLOWDOWN, max_slowdown=1.5)


def test_clock_point_validation() -> None:
    p = ClockPoint.from_time_power(1000, 2e-6, 300, "modelled")
    assert p.energy_j_per_img == pytest.approx(6e-4)
    assert p.throughput_img_per_s == pytest.approx(5e5)
    with pytest.raises(ValueError):
        ClockPoint.from_time_power(1000, 2e-6, 300, "guessed")
    with pytest.raises(ValueError):
        ClockPoint.from_time_power(1000, -1.0, 300, "modelled")
