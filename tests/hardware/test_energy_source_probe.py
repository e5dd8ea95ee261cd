"""The energy-source probe's analysis (the measuring part needs a GPU)."""

from __future__ import annotations

import pytest


@pytest.fixture
def probe(load_experiment):
    return load_experiment("energy_source_probe")


def _rows(source, p, arch, energies, cost=0.1):
    return [{"source": source, "pass": p, "arch_index": arch, "window": k, "energy_j_per_img": e, "cost_s": cost}
            for k, e in enumerate(energies)]


def test_summarise_compares_each_source_with_its_pass_reference_and_the_other_pass(probe):
    rows = []
    for p in (0, 1):
        rows += _rows("reference", p, 7, [1.0])
        rows += _rows("reference", p, 9, [2.0])
    rows += _rows("instant", 0, 7, [1.10, 1.02, 1.04])  # median 1.04: 4 % off
    rows += _rows("instant", 1, 7, [0.98])              # 2 % off; passes differ by 1.04/0.98
    rows += _rows("instant", 0, 9, [2.0])
    rows += _rows("instant", 1, 9, [2.2])
    by = {r["source"]: r for r in probe.summarise(rows)}
    inst = by["instant"]
    assert inst["classes"] == 2
    assert inst["vs_reference_worst_pct"] == "10.00"          # class 9, pass 1
    assert inst["vs_reference_median_pct"] == "3.00"          # of 4, 2, 0, 10
    assert inst["pass_to_pass_worst_pct"] == f"{100 * 0.2 / 2.2:.2f}"
    assert by["reference"]["vs_reference_median_pct"] == ""
    assert "counter_1tick" not in by
    first = by["instant_first"]  # the first window alone: 1.10 (not the median 1.04) for class 7, pass 0
    assert first["vs_reference_worst_pct"] == "10.00"
    assert first["pass_to_pass_worst_pct"] == f"{100 * 0.12 / 0.98:.2f}"


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        self.t += 0.001  # every reading of the clock takes a millisecond
        return self.t


class _Work:
    """A device finishing 1,000 images per second of host time."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock

    def keep_busy(self) -> None:
        pass

    def mark(self) -> float:
        return self.clock.t

    def between(self, a: float, b: float) -> tuple[int, float]:
        return round(1000 * (b - a)), b - a


def test_sample_windows_average_the_samples_stamped_inside_each_window(probe):
    clock = _Clock()
    watts = lambda ts_us: 200.0 if (ts_us // 20_000) % 2 else 300.0  # noqa: E731 - alternating 20-ms samples

    def read(since_us):  # samples every 20 ms, visible 30 ms after their stamp
        now_us = int(clock.t * 1e6) - 30_000
        first = (since_us // 20_000 + 1) * 20_000
        return [(ts, watts(ts)) for ts in range(first, now_us + 1, 20_000)]

    wins = probe.sample_windows(read, _Work(clock), 2, 0.1, wall=clock)
    assert len(wins) == 2
    for w in wins:
        assert w.samples == 5
        assert 0.03 <= w.lag_s < 0.06
        assert w.energy_j / w.host_s in (pytest.approx(240.0), pytest.approx(260.0))  # 3 of one, 2 of the other
        assert w.energy_j_per_img == pytest.approx(w.energy_j / w.host_s / 1000.0, rel=0.02)


def test_sample_windows_give_up_when_the_buffer_stops(probe):
    clock = _Clock()
    with pytest.raises(RuntimeError, match="did not reach"):
        probe.sample_windows(lambda since: [], _Work(clock), 1, 0.05, wall=clock, timeout_s=0.2)


def test_update_periods_need_three_changes(probe):
    assert probe.update_periods({"a": [0.0, 0.1, 0.2, 0.31], "b": [0.0, 0.1]}) == {"a": pytest.approx(0.1), "b": None}


def test_run_refuses_without_a_gpu(probe, capsys, tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert probe.main(["run", "--out", str(tmp_path)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
