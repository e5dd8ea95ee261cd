"""Tick-aligned energy windows against a fake GPU whose counter ticks every 100 ms."""

from __future__ import annotations

import pytest

from nasenergy.hardware.energy_window import (
    MIN_BUSY_FRAC,
    CounterSource,
    EnergyWindow,
    EnergyWindowError,
    PowerSampler,
    idle_power_w,
    busy_fraction,
    part_throughputs,
    run_energy_windows,
    run_sample_windows,
    steady_throughput,
    steady_windows,
    window_busy_fraction,
    window_energies,
)
from nasenergy.hardware.nvml import open_device
from nasenergy.testing import FakeGpu, FakeNvml, ManualClock

POWER_W = 300.0
RATE_IMG_PER_S = 10_000.0   # true energy per image: 300 W / 10k img/s = 0.03 J


class FakeWorkload:
    """Each keep_busy call is one host poll: simulated time advances by `poll_s`."""

    def __init__(self, clock: ManualClock, poll_s: float = 0.0007) -> None:
        self.clock, self.poll_s, self.images = clock, poll_s, 0.0

    def keep_busy(self) -> None:
        self.clock.advance(self.poll_s)
        self.images += RATE_IMG_PER_S * self.poll_s

    def mark(self):
        return self.clock(), self.images

    def between(self, a, b):
        return round(b[1] - a[1]), b[0] - a[0]


def _setup(**gpu):
    clock = ManualClock(1000.0)
    fake = FakeNvml(gpus=[FakeGpu(**gpu)], clock=clock, tick_s=0.1)
    dev = open_device(0, nvml=fake)
    clock.advance(0.037)                 # start between ticks
    fake.set_load(POWER_W)
    return clock, fake, dev


def test_aligned_windows_give_exact_energy():
    clock, _, dev = _setup()
    windows = run_energy_windows(CounterSource(dev.total_energy_mj), FakeWorkload(clock), clock,
                                 n_windows=4, min_window_s=0.25, warmup_s=0.05)
    assert len(windows) == 4
    for w in windows:
        assert w.energy_j == pytest.approx(90.0)           # exactly three ticks of 300 W
        assert w.host_s == pytest.approx(0.3, abs=0.0015)  # within about one poll of 3 ticks
        assert w.avg_power_w == pytest.approx(POWER_W, rel=0.005)
        assert w.energy_j_per_img == pytest.approx(0.03, rel=0.005)


def test_naive_window_is_off_by_a_tick():
    """The same 0.25 s of work measured from arbitrary start to end: quantised to whole ticks."""
    clock, _, dev = _setup()
    work = FakeWorkload(clock)
    errors = []
    for _ in range(4):
        e0, t0, i0 = dev.total_energy_mj(), clock(), work.images
        while clock() - t0 < 0.25:
            work.keep_busy()
        e1, i1 = dev.total_energy_mj(), work.images
        naive = (e1 - e0) / 1000.0 / (i1 - i0)
        errors.append(abs(naive / 0.03 - 1))
    assert max(errors) > 0.15             # 2 or 3 ticks seen in a 2.5-tick window


def test_above_idle_subtracts_idle_power():
    clock, fake, dev = _setup()
    fake.set_load(None)
    reading = idle_power_w(CounterSource(dev.total_energy_mj), _advancing(clock))
    assert reading.settled and reading.power_w == pytest.approx(84.0, rel=0.01)
    idle = reading.power_w
    fake.set_load(POWER_W)
    windows = run_energy_windows(CounterSource(dev.total_energy_mj), FakeWorkload(clock), clock,
                                 n_windows=2, min_window_s=0.2, warmup_s=0.1)
    above = window_energies(windows, idle)
    assert above[0] == pytest.approx((POWER_W - 84.0) / RATE_IMG_PER_S, rel=0.01)


def test_idle_waits_until_power_settles():
    clock, fake, dev = _setup()
    start = clock()
    fake.set_load(lambda t, mhz: 84.0 + 300.0 * max(0.0, 1.0 - (t - 0.037) / 1.5))  # 1.5 s decay
    reading = idle_power_w(CounterSource(dev.total_energy_mj), _advancing(clock))
    assert reading.settled and reading.power_w == pytest.approx(84.0, abs=1.0)
    assert clock() - start > 1.4 and reading.windows >= 5
    fake.set_load(lambda t, mhz: 84.0 + 10.0 * t)                       # never settles
    never = idle_power_w(CounterSource(dev.total_energy_mj), _advancing(clock), timeout_s=1.0)
    assert not never.settled


def _advancing(clock: ManualClock, dt: float = 0.001):
    def now() -> float:
        return clock.advance(dt)
    return now


def test_power_sampling_fallback_without_counter():
    clock, fake, dev = _setup(has_energy_counter=False)
    assert not dev.has_energy_counter()
    windows = run_energy_windows(PowerSampler(dev.power_w), FakeWorkload(clock), clock,
                                 n_windows=3, min_window_s=0.3, warmup_s=0.2)
    for w in windows:
        assert w.energy_j_per_img == pytest.approx(0.03, rel=0.02)
        assert w.host_s >= 0.3


def test_counter_that_never_changes_times_out():
    clock = ManualClock()
    fake = FakeNvml(clock=clock)
    dev = open_device(0, nvml=fake)
    frozen = dev.total_energy_mj()
    with pytest.raises(EnergyWindowError, match="is the energy reading updating"):
        run_energy_windows(CounterSource(lambda: frozen), FakeWorkload(clock), clock,
                           n_windows=1, min_window_s=0.1, timeout_s=1.0)


def _window(images: int, device_s: float = 0.3) -> EnergyWindow:
    return EnergyWindow(energy_j=90.0, host_s=0.3, images=images, device_s=device_s)


def test_busy_fraction_compares_the_window_with_the_timed_throughput():
    assert busy_fraction([_window(3000)], RATE_IMG_PER_S) == pytest.approx(1.0)
    assert busy_fraction([_window(3000), _window(1000)], RATE_IMG_PER_S) == pytest.approx(4000 / 6000)
    assert busy_fraction([], RATE_IMG_PER_S) == 0.0


def test_a_window_run_that_left_the_device_idle_is_run_again():
    runs = iter([[_window(900)], [_window(2990)], [_window(3000)]])  # 30 % busy, then steady
    calls = []

    def run():
        calls.append(1)
        return next(runs), len(calls)

    windows, tag, frac = steady_windows(run, RATE_IMG_PER_S)
    assert len(calls) == 2 and tag == 2 and frac == pytest.approx(0.9967, abs=1e-3)
    assert windows[0].images == 2990


def test_when_every_run_falls_short_the_busiest_is_kept_and_says_so():
    runs = iter([[_window(900)], [_window(2400)], [_window(1500)]])
    windows, tag, frac = steady_windows(lambda: (next(runs), None), RATE_IMG_PER_S, attempts=3)
    assert windows[0].images == 2400 and frac == pytest.approx(0.8) and frac < MIN_BUSY_FRAC


# ------------------------------------------------------------------ power-sample windows
def test_sample_windows_start_at_once_and_price_each_window_by_its_samples():
    clock, fake, dev = _setup()
    work = FakeWorkload(clock)
    t0 = clock()
    windows = run_sample_windows(dev.power_samples_w, work, clock, n_windows=3, window_s=0.1, warmup_s=0.01)
    spent = clock() - t0
    assert 0.31 <= spent < 0.31 + fake.sample_s + 0.002   # no wait for a counter update, one sample at most
    for w in windows:
        assert w.readings in (4, 5)                      # 20-ms samples stamped inside 0.1 s
        assert w.host_s == pytest.approx(0.1, abs=0.001)
        assert w.avg_power_w == pytest.approx(POWER_W)
        assert w.energy_j_per_img == pytest.approx(0.03, rel=0.01)


def test_sample_windows_follow_a_changing_power():
    clock, fake, dev = _setup()
    fake.set_load(lambda t, mhz: 200.0 + 1000.0 * t)    # rising 1 W per millisecond
    work = FakeWorkload(clock)
    (w,) = run_sample_windows(dev.power_samples_w, work, clock, n_windows=1, window_s=0.2)
    start = fake.elapsed_s()
    exact = 200.0 + 1000.0 * (start - 0.0 - 0.1 - fake.sample_s)  # mean power over the window
    assert w.avg_power_w == pytest.approx(exact, rel=0.05)


def test_power_samples_are_empty_when_none_is_newer_and_unsupported_gpus_say_so():
    clock, fake, dev = _setup()
    latest = dev.power_samples_w()[-1][0]
    assert dev.power_samples_w(latest) == []
    assert dev.has_power_samples()
    none = open_device(0, nvml=FakeNvml(fail_on={"nvmlDeviceGetSamples": FakeNvml.NVML_ERROR_NOT_SUPPORTED}))
    assert not none.has_power_samples()


def test_sample_windows_time_out_when_the_buffer_stops():
    clock, _, _ = _setup()
    with pytest.raises(EnergyWindowError, match="power-sample buffer"):
        run_sample_windows(lambda since_us: [], FakeWorkload(clock), clock, n_windows=1, window_s=0.05,
                           timeout_s=0.1)


def test_a_sample_window_shorter_than_the_sample_period_is_refused():
    clock, fake, dev = _setup()
    with pytest.raises(EnergyWindowError, match="longer window"):
        run_sample_windows(dev.power_samples_w, FakeWorkload(clock), clock, n_windows=8, window_s=0.005)


def test_a_swinging_power_gets_a_longer_window_and_a_steady_one_does_not():
    import math

    clock, fake, dev = _setup()
    work = FakeWorkload(clock)
    (steady,) = run_sample_windows(dev.power_samples_w, work, clock, n_windows=1, window_s=0.1, max_window_s=0.5,
                                   warmup_s=0.05)  # past the step from idle
    assert steady.host_s == pytest.approx(0.1, abs=0.006)
    fake.set_load(lambda t, mhz: POWER_W + 20.0 * math.sin(2 * math.pi * t / 0.2))  # ±20 W every 0.2 s
    short, long_ = (run_sample_windows(dev.power_samples_w, work, clock, n_windows=1, window_s=0.1,
                                       max_window_s=m)[0] for m in (None, 0.5))
    assert short.host_s == pytest.approx(0.1, abs=0.002)
    assert 0.2 < long_.host_s <= 0.5 + 0.006
    assert abs(long_.avg_power_w - POWER_W) < abs(short.avg_power_w - POWER_W)
    assert abs(long_.avg_power_w / POWER_W - 1) < 0.02


# ------------------------------------------------------------------ throughput from the windows' passes
class TimedPassWorkload(FakeWorkload):
    """Passes of 5 ms of device time, each timed; `stall` adds a host delay (an idle device) before
    a pass at those pass numbers."""

    def __init__(self, clock: ManualClock, stalls: dict[int, float] | None = None) -> None:
        super().__init__(clock, poll_s=0.005)
        self.stalls, self.passes = stalls or {}, []

    def keep_busy(self) -> None:
        wait = self.stalls.get(len(self.passes), 0.0)
        self.clock.advance(wait)
        super().keep_busy()
        self.passes.append(0.005 + wait)      # device seconds since the previous pass ended

    def mark(self):
        return super().mark() + (len(self.passes),)

    def step_seconds(self, a, b):
        return self.passes[a[2]:b[2]]


def test_steady_throughput_leaves_out_passes_that_waited_for_work():
    assert steady_throughput([0.01] * 10, 100) == pytest.approx((10_000.0, 1.0))
    tput, busy = steady_throughput([0.01] * 9 + [0.05], 100)   # one pass held 40 ms of idle
    assert tput == pytest.approx(10_000.0) and busy == pytest.approx(0.09 / 0.14)
    assert steady_throughput([], 100) == (0.0, 0.0)
    # a gradual slow-down within the gap factor is throughput, not idle
    tput, busy = steady_throughput([0.01, 0.011, 0.012, 0.013], 100)
    assert busy == 1.0 and tput == pytest.approx(400 / 0.046)


def test_sample_windows_carry_each_pass_and_their_busy_share_is_checked():
    clock, fake, dev = _setup()
    steady = run_sample_windows(dev.power_samples_w, TimedPassWorkload(clock), clock, n_windows=2, window_s=0.1)
    assert all(w.step_s and len(w.step_s) == pytest.approx(20, abs=2) for w in steady)
    assert window_busy_fraction(steady) == pytest.approx(1.0)
    assert steady_throughput(steady[0].step_s, 50)[0] == pytest.approx(10_000.0)   # 50 images in 5 ms
    stalled = run_sample_windows(dev.power_samples_w, TimedPassWorkload(clock, {5: 0.05}), clock,
                                 n_windows=1, window_s=0.1)
    assert window_busy_fraction(stalled) < MIN_BUSY_FRAC
    untimed = run_sample_windows(dev.power_samples_w, FakeWorkload(clock), clock, n_windows=1, window_s=0.1)
    assert untimed[0].step_s is None and window_busy_fraction(untimed) == 0.0


def test_windows_that_are_the_throughput_measurement_are_run_again_when_the_device_idled():
    idle = EnergyWindow(energy_j=30.0, host_s=0.12, images=1000, device_s=0.12, step_s=(0.01,) * 8 + (0.02,) * 2)
    busy = EnergyWindow(energy_j=30.0, host_s=0.1, images=1000, device_s=0.1, step_s=(0.01,) * 10)
    runs = iter([[idle], [busy]])
    windows, _, frac = steady_windows(lambda: (next(runs), None), None)
    assert windows == [busy] and frac == 1.0


def test_a_wait_after_the_last_pass_of_a_window_counts_as_idle():
    tail = EnergyWindow(energy_j=30.0, host_s=0.15, images=1000, device_s=0.15, step_s=(0.01,) * 10)
    assert window_busy_fraction([tail]) == pytest.approx(0.1 / 0.15)


def test_one_counter_window_without_warm_up_gives_throughput_and_energy_in_little_time():
    """The search's ``fast`` setting: one counter window of at least 0.28 s, no warm-up, the
    throughput from the window's own timed passes (`steady_windows` without a timed throughput)."""
    clock, _, dev = _setup()
    source, workload = CounterSource(dev.total_energy_mj), TimedPassWorkload(clock)
    start = clock()
    windows, _, frac = steady_windows(
        lambda: (run_energy_windows(source, workload, clock, n_windows=1, min_window_s=0.28, warmup_s=0.0), None), None)
    elapsed = clock() - start
    (w,) = windows
    assert frac == pytest.approx(1.0)
    tput, busy = steady_throughput(w.step_s, 50)          # 50 images per 5-ms pass
    assert tput == pytest.approx(RATE_IMG_PER_S) and busy == pytest.approx(1.0)
    assert w.avg_power_w == pytest.approx(POWER_W, rel=0.01)
    assert w.avg_power_w / tput == pytest.approx(POWER_W / RATE_IMG_PER_S, rel=0.01)
    assert 0.28 <= w.host_s <= 0.31                       # three counter updates
    assert elapsed <= 0.1 + 0.31                           # at most one update's wait before it


def test_a_single_window_gives_its_own_repeats_from_runs_of_its_passes():
    steady = [0.01] * 10 + [0.0125] * 10                     # the second half 20 % slower
    assert part_throughputs(steady, 100, 2) == pytest.approx([10_000.0, 8_000.0])
    assert part_throughputs(steady, 100, 5) == pytest.approx([10_000.0, 10_000.0, 400 / 0.045, 8_000.0, 8_000.0])
    stalled = [0.01] * 9 + [0.05] + [0.01] * 10              # one pass waited 40 ms for work: left out
    assert part_throughputs(stalled, 100, 2) == pytest.approx([10_000.0, 10_000.0])
    assert part_throughputs([0.01] * 3, 100, 5) == pytest.approx([10_000.0] * 3)   # fewer passes than parts
    assert part_throughputs([], 100, 5) == []
