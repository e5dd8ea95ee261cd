"""The re-measurement agreement of modelled optimal clocks, on fake profile rows."""

from __future__ import annotations

import csv

import pytest

from nasenergy.hardware.recorded import read_profile, write_profile
from nasenergy.testing import FakeMeter, write_fake_profile
from search_spaces import get_space


@pytest.fixture
def script(load_experiment):
    return load_experiment("dvfs_remeasure_agreement")


@pytest.fixture(scope="module")
def tss():
    return get_space("tss")


def _profiles(tmp_path, tss, power_scale):
    archs = [tss.arch_at(i) for i in (3, 40, 900)]
    earlier = write_fake_profile(tmp_path / "a.csv", archs, space=tss, meter=FakeMeter(device_name="NVIDIA H200"))
    rows = read_profile(earlier)
    later = [dict(r, avg_power_w=str(power_scale * float(r["avg_power_w"])),
                  energy_j_per_img=str(power_scale * float(r["energy_j_per_img"]))) for r in rows[1:]]
    write_profile(later, tmp_path / "b.csv")
    return earlier, tmp_path / "b.csv"


def test_same_measurements_give_the_same_optima(script, tss, tmp_path):
    a, _ = _profiles(tmp_path, tss, 1.0)
    out = tmp_path / "out"
    assert script.main([str(a), str(a), "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "per_row.csv")))
    assert len(rows) == 3
    assert all(float(r["clock_diff_mhz"]) == 0 and float(r["saving_diff_pp"]) == 0 for r in rows)
    assert "same in 3 of 3 rows" in (out / "README.md").read_text()


def test_a_later_run_drawing_more_power_shows_in_the_energy_differences(script, tss, tmp_path):
    a, b = _profiles(tmp_path, tss, 1.05)
    out = tmp_path / "out"
    assert script.main([str(a), str(b), "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "per_row.csv")))
    assert len(rows) == 2  # the rows both hold
    assert all(float(r["default_energy_rel_diff"]) == pytest.approx(0.05, abs=1e-6) for r in rows)


def test_files_without_common_rows_or_missing_are_refused(script, tss, tmp_path, capsys):
    assert script.main([str(tmp_path / "none.csv"), str(tmp_path / "none.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    a = write_fake_profile(tmp_path / "a.csv", [tss.arch_at(3)], space=tss, meter=FakeMeter(device_name="NVIDIA H200"))
    b = write_fake_profile(tmp_path / "b.csv", [tss.arch_at(900)], space=tss, meter=FakeMeter(device_name="NVIDIA H200"))
    assert script.main([str(a), str(b)]) == 2
    assert "share no network" in capsys.readouterr().err
