"""RecordedMeter and the profile CSV format."""

from __future__ import annotations

import dataclasses

import gzip

import pytest

from nasenergy.errors import DataNotFoundError, UsageError
from nasenergy.hardware import recorded
from nasenergy.testing import write_fake_profile
from nasenergy.hardware.recorded import (
    OPTIONAL_COLUMNS,
    OPTIONAL_MEASUREMENT_COLUMNS,
    PROFILE_COLUMNS,
    WRITTEN_COLUMNS,
    NotRecordedError,
    RecordedMeter,
    measurement_from_row,
    read_profile,
    write_profile,
)


def test_replays_any_member_of_a_recorded_class(small_profile, tss, member_pair):
    path, canons = small_profile
    meter = RecordedMeter(path, space=tss)
    assert len(meter) == 3 and meter.precisions == ("fp16",) and meter.device_name == "fake"
    member, canon = member_pair
    a = meter.measure_arch(member, precision="fp16", batch_size=1024)
    b = meter.measure_arch(str(canon), precision="fp16", batch_size=1024)
    assert a == b and a.source == "recorded" and a.input_shape == (3, 32, 32)
    assert meter.covers(member) and meter.covers(member, precision="fp16", batch_size=1024)
    assert not meter.covers(member, precision="fp32")
    assert not meter.covers(member, dataset="ImageNet16-120")


def test_not_recorded_is_clear(small_profile, tss):
    path, canons = small_profile
    meter = RecordedMeter(path, space=tss)
    other = next(a for a in tss.enumerate() if tss.canonical(a) not in canons)
    assert not meter.covers(other)
    with pytest.raises(NotRecordedError, match="no record of .* at fp16 bs 1024") as ei:
        meter.measure_arch(other, precision="fp16", batch_size=1024)
    assert "fp16 bs 1024 3x32x32" in str(ei.value) and ei.value.exit_code == 2
    with pytest.raises(NotRecordedError):
        meter.measure_arch(canons[0], precision="fp32", batch_size=1024)


def test_replays_architectures_and_is_no_module_meter(small_profile, tss):
    from nasenergy.hardware.meter import ArchMeter, Meter, RecordedProfile

    meter = RecordedMeter(small_profile[0], space=tss)
    assert isinstance(meter, ArchMeter) and isinstance(meter, RecordedProfile)
    assert not isinstance(meter, Meter)


def test_rows_round_trip_and_bytes_are_deterministic(small_profile, tmp_path):
    path, _ = small_profile
    rows = read_profile(path)
    assert list(rows[0]) == list(WRITTEN_COLUMNS)
    m = measurement_from_row(rows[0])
    assert m.device_name == "fake" and m.idle_power_w == 84.0 and m.sm_clock_mhz == 1980.0
    again = tmp_path / "again.csv.gz"
    write_profile(rows, again)
    assert again.read_bytes() == path.read_bytes()
    plain = tmp_path / "plain.csv"
    write_profile(rows, plain)
    assert plain.read_text().splitlines()[0].startswith("canonical_arch,")


def test_missing_or_malformed_profiles(tmp_path, monkeypatch, tss):
    with pytest.raises(DataNotFoundError):
        RecordedMeter(tmp_path / "nope.csv", space=tss)
    monkeypatch.setattr(recorded, "DEFAULT_PROFILE", tmp_path / "absent.csv.gz")
    with pytest.raises(DataNotFoundError, match="not installed"):
        RecordedMeter(space=tss)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(UsageError, match="columns missing"):
        read_profile(bad)
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(gzip.compress(b"x" * 100)[:20])
    with pytest.raises(UsageError, match="cannot read profile"):
        read_profile(broken)


def test_profile_without_optional_columns_reads_them_as_empty(small_profile, tmp_path):
    import csv

    path, _ = small_profile
    old = tmp_path / "old.csv"
    rows = read_profile(path)
    with open(old, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=PROFILE_COLUMNS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    again = read_profile(old)
    assert all(r[k] == "" for r in again for k in OPTIONAL_COLUMNS)
    blank = dict.fromkeys(OPTIONAL_MEASUREMENT_COLUMNS)
    assert [measurement_from_row(r) for r in again] == [
        dataclasses.replace(measurement_from_row(r), **blank) for r in rows]


def test_an_sss_profile_answers_its_configurations_and_says_when_none_is_installed(tmp_path, monkeypatch):
    from search_spaces import get_space

    sss = get_space("sss")
    archs = sss.sample(6, seed=0)
    path = write_fake_profile(tmp_path / "sss.csv.gz", archs, space=sss)
    meter = RecordedMeter(path, space=sss)
    for arch in archs:
        m = meter.measure_arch(arch, precision="fp16", batch_size=1024)
        assert m.source == "recorded" and m.params == sss.count_deployed(arch).params
        assert m.params_official == sss.count(arch).params
    assert not meter.covers(sss.sample(1, seed=99)[0]) or sss.sample(1, seed=99)[0] in archs
    monkeypatch.setattr(recorded, "SSS_PROFILE", tmp_path / "absent.csv.gz")
    with pytest.raises(DataNotFoundError, match="sss space"):
        RecordedMeter(space=sss)
