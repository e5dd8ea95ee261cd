"""Board identity in every measurement, cross-board calibration and normalisation, on fake boards."""

from __future__ import annotations

import math

import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware.boards import (
    Board,
    BoardCalibration,
    BoardMismatchError,
    NormalisingMeasure,
    calibrate,
    calibrate_meters,
    check_boards,
    normalise,
    reference_archs,
)
from nasenergy.hardware.nvml import open_device
from nasenergy.hardware.recorded import RecordedMeter, measurement_to_row, read_profile, write_profile
from nasenergy.testing import FakeGpu, FakeMeter, FakeNvml, ManualClock, write_fake_profile

SMALL = "|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|"


def _calibrate(tss, *meters, tolerance_frac=0.02):
    return calibrate_meters(list(meters), space=tss, precision="fp16", batch_size=1024,
                            tolerance_frac=tolerance_frac)


def test_two_fake_nvml_boards_differ_in_uuid_limit_and_drawn_power():
    clock = ManualClock()
    nvml = FakeNvml([FakeGpu(uuid="GPU-aaaa"), FakeGpu(uuid="GPU-bbbb", power_limit_w=650.0, power_factor=1.05)],
                    clock=clock)
    a, b = open_device(0, nvml), open_device(1, nvml)
    assert (a.uuid, b.uuid) == ("GPU-aaaa", "GPU-bbbb")
    assert (a.power_limit_w(), b.power_limit_w()) == (700.0, 650.0)
    nvml.set_load(400.0, 0)
    nvml.set_load(400.0, 1)
    e0 = (a.total_energy_mj(), b.total_energy_mj())
    clock.advance(1.0)
    used = (a.total_energy_mj() - e0[0], b.total_energy_mj() - e0[1])
    assert used[1] / used[0] == pytest.approx(1.05, rel=1e-3)


def test_fake_boards_name_themselves_and_keep_a_known_ratio(tss):
    b0, b1 = FakeMeter.board(0), FakeMeter.board(1, throughput_factor=0.98, power_factor=1.04)
    m0 = b0.measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss)
    m1 = b1.measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss)
    assert (m0.gpu_uuid, m1.gpu_uuid) == ("GPU-fake-0000", "GPU-fake-0001")
    assert m1.driver_version and m1.power_limit_w == 700.0 and m1.sm_clock_mhz == 1980.0
    assert m1.throughput_img_per_s / m0.throughput_img_per_s == pytest.approx(0.98)
    assert m1.energy_j_per_img / m0.energy_j_per_img == pytest.approx(1.04 / 0.98)
    assert Board.of(m1) == Board("GPU-fake-0001", m1.device_name, m1.driver_version, 1980.0, 700.0)
    assert FakeMeter().measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss).gpu_uuid is None


def test_a_profile_row_keeps_its_board_and_a_replay_names_it(tmp_path, tss):
    path = write_fake_profile(tmp_path / "p.csv", [SMALL], space=tss, meter=FakeMeter.board(3))
    row = read_profile(path)[0]
    assert row["gpu_uuid"] == "GPU-fake-0003" and row["power_limit_w"] == "700"
    m = RecordedMeter(path, space=tss).measure_arch(SMALL, precision="fp16", batch_size=1024)
    assert (m.gpu_uuid, m.driver_version, m.power_limit_w) == ("GPU-fake-0003", "550.00-fake", 700.0)
    # a run column given by the caller fills a measurement that names no board
    anon = FakeMeter().measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss)
    row = measurement_to_row(anon, canonical_arch=SMALL, arch_index=0, driver_version="d",
                             torch_version="t", measured_at="x", gpu_uuid="GPU-given")
    assert row["gpu_uuid"] == "GPU-given" and row["driver_version"] == "d"
    write_profile([row], tmp_path / "q.csv")
    assert list(read_profile(tmp_path / "q.csv")[0]).count("gpu_uuid") == 1


@pytest.mark.parametrize("tput, power", [(1.0, 1.0), (0.97, 1.05), (1.02, 0.94)])
def test_calibration_recovers_the_known_ratio(tss, tput, power):
    cal = _calibrate(tss, FakeMeter.board(0, noise_cv=0.01), FakeMeter.board(1, throughput_factor=tput,
                                                                             power_factor=power, noise_cv=0.01))
    assert cal.reference_uuid == "GPU-fake-0000" and cal.networks == reference_archs("tss")
    assert (cal.precision, cal.batch_size) == ("fp16", 1024)
    ref, other = cal.ratios
    assert ref.throughput_ratio == pytest.approx(1.0) and ref.energy_ratio == pytest.approx(1.0)
    assert other.throughput_ratio == pytest.approx(tput, rel=1e-9)
    assert other.energy_ratio == pytest.approx(power / tput, rel=1e-9)
    assert len(other.throughput_ratios) == 4
    assert BoardCalibration.from_dict(cal.to_dict()) == cal


def test_normalising_brings_the_second_board_onto_the_first(tss):
    b0, b1 = FakeMeter.board(0, cost_s=0.5), FakeMeter.board(1, throughput_factor=0.97, power_factor=1.05, cost_s=0.5)
    cal = _calibrate(tss, b0, b1)
    assert cal.cost_s == pytest.approx(8 * 0.5)
    arch = "|nor_conv_1x1~0|+|nor_conv_3x3~0|skip_connect~1|+|avg_pool_3x3~0|none~1|nor_conv_3x3~2|"
    m0 = b0.measure_arch(arch, precision="fp16", batch_size=1024, space=tss)
    m1 = b1.measure_arch(arch, precision="fp16", batch_size=1024, space=tss)
    n1 = normalise(m1, cal)
    assert n1.throughput_img_per_s == pytest.approx(m0.throughput_img_per_s)
    assert n1.energy_j_per_img == pytest.approx(m0.energy_j_per_img)
    assert n1.utilization == pytest.approx(m0.utilization)
    assert n1.normalised_to_gpu_uuid == "GPU-fake-0000" and n1.gpu_uuid == "GPU-fake-0001"
    assert n1.board_energy_ratio == pytest.approx(1.05 / 0.97)
    assert normalise(n1, cal) == n1 and normalise(m0, cal) == m0  # once, and never the reference board
    wrapped = NormalisingMeasure(lambda a: b1.measure_arch(a, precision="fp16", batch_size=1024, space=tss), cal)
    assert wrapped(arch) == n1
    with pytest.raises(UsageError, match="not calibrated"):
        normalise(FakeMeter.board(7).measure_arch(arch, precision="fp16", batch_size=1024, space=tss), cal)


def test_policy_warns_in_one_line_and_refuses_on_request(tss):
    near = _calibrate(tss, FakeMeter.board(0), FakeMeter.board(1, power_factor=1.01))
    assert check_boards(near, "refuse") is None
    far = _calibrate(tss, FakeMeter.board(0), FakeMeter.board(1, power_factor=1.01),
                     FakeMeter.board(2, power_factor=0.95))
    line = check_boards(far)
    assert line is not None and "\n" not in line and "1 of 3 boards" in line and "normalised" in line
    assert "GPU-fake-000" in line and "x0.950" in line
    assert "kept as read" in check_boards(far, "ignore")
    with pytest.raises(BoardMismatchError, match="refusing") as ei:
        check_boards(far, "refuse")
    assert ei.value.exit_code == 2
    with pytest.raises(UsageError, match="unknown board policy"):
        check_boards(far, "average")


def test_calibration_rejects_one_board_twice_and_empty_input(tss):
    with pytest.raises(UsageError, match="one board"):
        _calibrate(tss, FakeMeter.board(0), FakeMeter.board(0))
    with pytest.raises(UsageError):
        calibrate([], ["x"])


def test_a_module_meter_measures_the_deployed_reference_networks(tss):
    meters = [FakeMeter.board(0), FakeMeter.board(1, power_factor=1.1)]

    class ModuleOnly:  # a `Meter` without measure_arch
        def __init__(self, fake):
            self.fake = fake

        def measure(self, model, input_shape, *, batch_size, precision):
            return self.fake.measure(model, input_shape, batch_size=batch_size, precision=precision)

    cal = calibrate_meters([ModuleOnly(m) for m in meters], space=tss, precision="fp32", batch_size=8,
                           networks=reference_archs("tss")[:2])
    assert cal.ratios[1].energy_ratio == pytest.approx(1.1) and math.isclose(cal.ratios[1].throughput_ratio, 1.0)


def test_calibration_json_round_trip_and_bad_file(tmp_path, tss):
    cal = _calibrate(tss, FakeMeter.board(0), FakeMeter.board(1, power_factor=1.03))
    assert BoardCalibration.load(cal.save(tmp_path / "boards.json")) == cal
    assert "2 boards" in cal.summary() and "1.030" in cal.summary()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(UsageError, match="not a board calibration"):
        BoardCalibration.load(tmp_path / "bad.json")


def test_a_saved_measurement_from_before_the_board_fields_still_loads(tss):
    from nasenergy.filter.records import measurement_from_saved
    from nasenergy.filter.records import FilterError

    m = FakeMeter.board(1).measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss)
    old = {k: v for k, v in m.to_dict().items()
           if k not in ("gpu_uuid", "driver_version", "power_limit_w", "normalised_to_gpu_uuid",
                        "board_throughput_ratio", "board_energy_ratio")}
    assert measurement_from_saved(old).gpu_uuid is None
    assert measurement_from_saved(m.to_dict()) == m
    with pytest.raises(FilterError, match="lacks throughput_img_per_s"):
        measurement_from_saved({k: v for k, v in old.items() if k != "throughput_img_per_s"})
