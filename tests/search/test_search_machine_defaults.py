"""Settings fitted to the meter: on the CPU meter the search takes fp32, a smaller batch and drops
energy with a one-line note; asked for what the meter cannot measure, it refuses before the first
candidate."""

from __future__ import annotations

import pytest

from nasenergy.errors import UsageError
from nasenergy.hardware.cpu_meter import CpuMeter
from nasenergy.search.command.cli import build_parser, config_from_args, main
from nasenergy.search.command.config import SearchConfig
from nasenergy.search.command.machine_defaults import check_meter_serves, fit_to_meter


def test_the_cpu_meter_gets_a_precision_it_measures_and_no_energy():
    notes: list[str] = []
    cfg = config_from_args(build_parser().parse_args(["--hardware", "cpu", "--budget", "3"]), notes)
    assert cfg.precision in CpuMeter.precisions and cfg.precision == "fp32"
    assert cfg.objectives == ("accuracy", "throughput")
    assert cfg.batch_size < SearchConfig().batch_size
    assert len(notes) == 1 and "energy" in notes[0] and "\n" not in notes[0]


def test_other_meters_keep_the_general_defaults():
    cfg = config_from_args(build_parser().parse_args(["--hardware", "recorded"]))
    assert (cfg.precision, cfg.batch_size, cfg.objectives) == ("fp16", 1024, ("accuracy", "throughput", "energy"))
    assert fit_to_meter("cuda").precision == "fp16"


def test_given_flags_are_kept_on_the_cpu():
    fitted = fit_to_meter("cpu", precision="bf16", batch_size=32, objectives=("accuracy",))
    assert (fitted.precision, fitted.batch_size, fitted.objectives, fitted.notes) == ("bf16", 32, ("accuracy",), ())


@pytest.mark.parametrize(("argv", "flag"), [(["--precision", "fp16"], "--precision"),
                                           (["--objectives", "accuracy,energy"], "--objectives")])
def test_what_the_cpu_meter_cannot_measure_is_refused_in_one_line(argv, flag, tmp_path, capsys):
    code = main(["--hardware", "cpu", *argv, "--out", str(tmp_path / "run")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and flag in err[0]
    assert not (tmp_path / "run").exists()


def test_a_config_built_in_code_is_checked_against_the_cpu_meter():
    with pytest.raises(UsageError, match="--precision fp16"):
        check_meter_serves("cpu", SearchConfig(hardware="cpu"))
    check_meter_serves("cpu", SearchConfig(hardware="cpu", precision="fp32", objectives=("accuracy", "throughput")))
    check_meter_serves("recorded", SearchConfig())


def test_the_cpu_kind_declares_what_the_cpu_meter_measures():
    from nasenergy.hardware.registry import METERS

    kind = METERS.get("cpu")
    assert kind.precisions == CpuMeter.precisions and not kind.measures_energy


def test_a_new_meter_kind_declares_its_own_precisions_and_energy():
    from pathlib import Path

    from nasenergy.hardware.registry import METERS, MeterKind, register_meter

    register_meter(MeterKind("toy-cap", "nasenergy.hardware.cpu_meter:CpuMeter", precisions=("fp16",),
                             measures_energy=False, default_batch_size=8, label="the toy meter"))
    try:
        fitted = fit_to_meter("toy-cap")
        assert (fitted.precision, fitted.batch_size, fitted.objectives) == ("fp16", 8, ("accuracy", "throughput"))
        assert fitted.notes == ("note: the toy meter has no energy counter: energy dropped, searching "
                                "accuracy and throughput",)
        with pytest.raises(UsageError, match="--precision fp32 is not measured by the toy meter; use fp16"):
            fit_to_meter("toy-cap", precision="fp32")
        with pytest.raises(UsageError, match="the toy meter has no energy counter"):
            check_meter_serves("toy-cap", SearchConfig(hardware="cpu", precision="fp16"))
    finally:
        METERS.unregister("toy-cap")
    components = Path(__file__).resolve().parents[2] / "nasenergy" / "search" / "command" / "components.py"
    assert "CpuMeter" not in components.read_text(encoding="utf-8")


def test_fp32_on_the_recorded_profile_takes_the_batch_it_was_recorded_at():
    notes: list[str] = []
    cfg = config_from_args(build_parser().parse_args(["--hardware", "recorded", "--precision", "fp32"]), notes)
    assert (cfg.precision, cfg.batch_size) == ("fp32", 256)
    assert len(notes) == 1 and "batch 256" in notes[0] and "\n" not in notes[0]
    given = config_from_args(build_parser().parse_args(["--hardware", "recorded", "--precision", "fp32",
                                                        "--batch-size", "1024"]))
    assert given.batch_size == 1024
    assert fit_to_meter("recorded", precision="fp16").batch_size == 1024


@pytest.mark.parametrize("dataset", ["cifar10", "ImageNet16-120"])
def test_a_recorded_fp32_search_runs_without_a_batch_size(dataset, tmp_path, capsys):
    code = main(["--hardware", "recorded", "--precision", "fp32", "--dataset", dataset, "--budget", "3",
                 "--quiet", "--out", str(tmp_path / "run")])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "run" / "pareto_front.csv").exists()
