"""Recorded sweeps: CSV round trip and clear errors for bad files."""

from __future__ import annotations

import pytest

from dvfs_helpers import model_sweep
from nasenergy.dvfs.sweeps import Sweep, read_sweep_csv, read_sweeps_csv, write_sweeps_csv
from nasenergy.errors import DataNotFoundError, UsageError


def test_round_trip(tmp_path, params) -> None:
    a = model_sweep(params, 0.3, workload="a", clocks=(990.0, 1500.0, 1980.0), sm_active=0.9,
                    gpu_busy=0.97)
    b = model_sweep(params, 0.8, workload="b", clocks=(1005.0, 1980.0))
    path = write_sweeps_csv([a, b], tmp_path / "s.csv")
    back = {s.workload: s for s in read_sweeps_csv(path)}
    assert back["a"].clocks_mhz == a.clocks_mhz
    assert back["a"].time_s == pytest.approx(a.time_s) and back["a"].power_w == pytest.approx(a.power_w)
    assert back["a"].sm_active == 0.9 and back["a"].gpu_busy == 0.97 and back["b"].sm_active is None
    assert read_sweep_csv(path, "b").clocks_mhz == (1005.0, 1980.0)
    with pytest.raises(UsageError, match="holds 2 workloads"):
        read_sweep_csv(path)
    with pytest.raises(UsageError, match="not in"):
        read_sweep_csv(path, "c")


def test_alternative_columns(tmp_path) -> None:
    p = tmp_path / "alt.csv"
    p.write_text("sm_clock_mhz,throughput_img_per_s,energy_j_per_img\n1980,1000,0.4\n990,600,0.3\n")
    s = read_sweep_csv(p)
    assert s.workload == "alt" and s.clocks_mhz == (990.0, 1980.0)
    assert s.point(1980).power_w == pytest.approx(400.0)
    assert s.point(990).energy_j_per_img == pytest.approx(0.3)


@pytest.mark.parametrize("text, match", [
    ("clock,time\n1,2\n", "needs columns"),
    ("sm_clock_mhz,time_s_per_img,power_w\n1980,abc,300\n990,1,2\n", "not a number"),
    ("sm_clock_mhz,time_s_per_img,power_w\n1980,-1,300\n990,1,2\n", "must be positive"),
    ("sm_clock_mhz,time_s_per_img,power_w\n1980,1,300\n1980,1,2\n", "same clock twice"),
    ("sm_clock_mhz,time_s_per_img,power_w\n1980,1,300\n", "need >= 2 clocks"),
    ("sm_clock_mhz,time_s_per_img,power_w\n", "no sweep rows"),
])
def test_bad_files(tmp_path, text, match) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(UsageError, match=match):
        read_sweeps_csv(p)


def test_missing_file(tmp_path) -> None:
    with pytest.raises(DataNotFoundError):
        read_sweeps_csv(tmp_path / "none.csv")


def test_sweep_validation() -> None:
    with pytest.raises(UsageError, match="ascending"):
        Sweep("g", "w", (2.0, 1.0), (1.0, 1.0), (1.0, 1.0))
    s = Sweep.from_arrays("g", "w", [2, 1], [1, 2], [3, 4])
    assert s.clocks_mhz == (1.0, 2.0) and s.time_s == (2.0, 1.0) and s.group == "w"
