"""The command line: every bad flag value is one line on stderr and exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nasenergy.search.command.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["--budget", "0"],
        ["--budget", "ten"],
        ["--space", "nas101"],
        ["--dataset", "mnist"],
        ["--objectives", "accuracy,latency"],
        ["--objectives", ""],
        ["--target-recall", "1.5"],
        ["--target-recall", "x"],
        ["--dvfs", "measured"],
        ["--workers", "0"],
        ["--budget", "10", "--max-candidates", "5"],
        ["--study-name", "a b"],
        ["--storage", "mysql://u@h/db"],
        ["--storage", "not a url"],
        ["--storage", "postgresql://u@127.0.0.1:1/db"],
        ["--storage", "postgresql://u@127.0.0.1:abc/db"],  # a port that is not a number
        ["--storage", "postgresql+nosuchdriver://u@127.0.0.1/db"],
        ["--storage", "sqlite+nosuchdriver:///x.db"],
        ["--benchmark", "/nonexistent/bench.npz"],
        ["--lease-s", "1"],
        ["--estimate", "guess"],
        ["--objectives", "throughput,energy"],  # the filter predicts accuracy
        ["--no-such-flag"],
        ["--meter-setting", "quick"],
        ["--redirect-after", "-1"],
        ["--filter-yield-after", "two"],
        ["--filter-yield-top", "0"],
        ["--filter-yield-top", "1.5"],
        ["--seed", "4294967296"],  # seeds are 32-bit
        ["--seed", "-1"],
        ["--lease-s", "inf"],  # a heartbeat cannot schedule an infinite lease
        ["--lease-s", "nan"],
        ["--lease-s", "1e9"],
        ["--target-recall", "1e-17"],  # 1 minus it rounds to 1: no conformal level
        ["--target-recall", "nan"],
    ],
)
def test_bad_flags_exit_2_with_one_line(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as ei:
        raise SystemExit(main([*argv, "--out", str(tmp_path / "run")]))
    assert ei.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert not (tmp_path / "run" / "study.journal").exists()  # nothing started


def test_the_module_entry_point_and_help():
    done = subprocess.run([sys.executable, "-m", "nasenergy.search", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for flag in ("--budget", "--storage", "--workers", "--max-candidates", "--allow-clock-control", "--objectives"):
        assert flag in done.stdout
    bad = subprocess.run([sys.executable, "-m", "nasenergy.search", "--sampler", "grid"], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_flags_reach_the_config():
    from nasenergy.search.command.cli import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args(["--budget", "7", "--estimate", "none", "--dvfs", "none"]))
    assert (cfg.budget, cfg.estimate, cfg.dvfs) == (7, "none", "none")
    assert cfg.to_dict()["max_candidates"] is None  # the effective cap depends on the meter


def test_the_meter_setting_is_fast_unless_full_is_asked_for():
    from nasenergy.search.command.cli import build_parser, config_from_args
    from nasenergy.search.command.components import meter_options

    fast = config_from_args(build_parser().parse_args(["--estimate", "none", "--dvfs", "none"]))
    full = config_from_args(build_parser().parse_args(["--estimate", "none", "--dvfs", "none", "--meter-setting", "full"]))
    assert (fast.meter_setting, full.meter_setting) == ("fast", "full")
    assert full.to_dict()["meter_setting"] == "full"
    assert meter_options("cuda", fast)["energy_repeats"] == 1 and meter_options("cuda", fast)["throughput_from_energy"]
    assert meter_options("cuda", full) == {}                     # the CUDA meter's own defaults
    assert meter_options("recorded", fast) == meter_options("cpu", fast) == {}


def test_the_budget_keeping_flags_reach_the_config_and_default_to_the_rescue():
    from nasenergy.search.command.cli import build_parser, config_from_args
    from nasenergy.search.loop.filter_yield import YIELD_AFTER, YIELD_TOP
    from nasenergy.search.loop.redirect import REDIRECT_AFTER

    default = config_from_args(build_parser().parse_args([]))
    assert (default.redirect_after, default.filter_yield_after, default.filter_yield_top) == (None, None, YIELD_TOP)
    assert default.budget_rescue and default.rescue_possible
    assert default.keeping_in_effect(False) == (0, 0)                          # main's search until a stall
    assert default.keeping_in_effect(True) == (REDIRECT_AFTER, YIELD_AFTER)    # the rescue's settings
    off = config_from_args(build_parser().parse_args(
        ["--redirect-after", "0", "--filter-yield-after", "0", "--filter-yield-top", "0.5"]))
    assert (off.redirect_after, off.filter_yield_after, off.filter_yield_top) == (0, 0, 0.5)
    assert off.keeping_in_effect(True) == (0, 0) and not off.rescue_possible   # 0 stays off in a rescue
    assert off.resolved_study_name != default.resolved_study_name
    explicit = config_from_args(build_parser().parse_args(["--redirect-after", "3", "--filter-yield-after", "5"]))
    assert explicit.keeping_in_effect(False) == (3, 5)                        # on from the start
    no_rescue = config_from_args(build_parser().parse_args(["--budget-rescue", "off"]))
    assert not no_rescue.budget_rescue and not no_rescue.rescue_possible
    # a stopped study resumes with the rescue on: the switch does not name the study
    assert no_rescue.resolved_study_name == default.resolved_study_name
    assert no_rescue.study_defining() == default.study_defining()


def test_budget_rescue_takes_only_on_or_off(capsys):
    from nasenergy.search.command.cli import build_parser

    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--budget-rescue", "yes"])
    assert exc.value.code == 2 and "--budget-rescue" in capsys.readouterr().err
