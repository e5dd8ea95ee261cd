"""The cross-board step of a run on several GPUs, with fake boards of known power ratios."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest
from fake_parts import DELAY_ENV, FAKE_BOARD_POWER, fake_board_components

from nasenergy.hardware.boards import BoardMismatchError, calibrate_meters
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.components import Components
from nasenergy.search.loop import board_step
from nasenergy.search.workers import runner
from nasenergy.testing import FakeMeter

SMALL = "|nor_conv_3x3~0|+|none~0|none~1|+|skip_connect~0|none~1|none~2|"


def _fake_calibrator(config, gpu_ids):
    from search_spaces import get_space

    meters = [FakeMeter.board(int(g), power_factor=FAKE_BOARD_POWER[int(g)]) for g in gpu_ids]
    return calibrate_meters(meters, space=get_space(config.space), precision=config.precision,
                            batch_size=config.batch_size, tolerance_frac=config.board_tolerance_pct / 100)


def test_only_a_run_of_several_cuda_workers_has_boards():
    cuda = SearchConfig(hardware="cuda", workers=3)
    assert board_step.boards_of_run(cuda, ["0", "1"]) == ["0", "1"]
    assert board_step.boards_of_run(cuda, ["5"]) == ["5"]
    assert board_step.boards_of_run(dataclasses.replace(cuda, workers=1), ["0", "1"]) == []
    assert board_step.boards_of_run(SearchConfig(hardware="cpu", workers=3), ["0", "1"]) == []
    assert board_step.calibrate_run(cuda, ["5"], calibrator=_fake_calibrator) is None


@pytest.mark.parametrize(("policy", "tolerance", "normalised"),
                         [("normalise", 2.0, True), ("ignore", 2.0, False), ("normalise", 6.0, False)])
def test_the_policy_decides_whether_workers_normalise(policy, tolerance, normalised, caplog):
    config = SearchConfig(hardware="cuda", workers=2, boards=policy, board_tolerance_pct=tolerance, quiet=True)
    attr = board_step.calibrate_run(config, ["0", "1"], calibrator=_fake_calibrator)
    assert attr["normalised"] is normalised and attr["policy"] == policy
    assert attr["ratios"][1]["energy_ratio"] == pytest.approx(0.95)
    warned = [r.getMessage() for r in caplog.records if r.getMessage().startswith("warning:")]
    assert len(warned) == (0 if tolerance > 5 else 1)
    json.dumps(attr)  # a study attribute


def test_refuse_stops_before_the_run(tmp_path, monkeypatch):
    config = SearchConfig(hardware="cuda", workers=2, boards="refuse", quiet=True, out=str(tmp_path / "run"))
    with pytest.raises(BoardMismatchError, match="refusing"):
        board_step.calibrate_run(config, ["0", "1"], calibrator=_fake_calibrator)
    with pytest.raises(Exception, match="--boards must be one of|--boards"):
        SearchConfig(boards="average").validate()


def test_normalising_wraps_the_measure_only_when_told():
    from search_spaces import get_space

    tss = get_space("tss")
    board1 = FakeMeter.board(1, power_factor=0.95)
    parts = Components(space=tss, measure=lambda a: board1.measure_arch(a, precision="fp16", batch_size=1024, space=tss),
                       oracle=None, filter=None, optimal_clock=None)
    config = SearchConfig(hardware="cuda", workers=2, quiet=True)
    attr = board_step.calibrate_run(config, ["0", "1"], calibrator=_fake_calibrator)
    m = board_step.normalising(parts, attr).measure(SMALL)
    ref = FakeMeter.board(0).measure_arch(SMALL, precision="fp16", batch_size=1024, space=tss)
    assert m.energy_j_per_img == pytest.approx(ref.energy_j_per_img) and m.normalised_to_gpu_uuid == "GPU-fake-0000"
    assert board_step.normalising(parts, {**attr, "normalised": False}) is parts
    assert board_step.normalising(parts, None) is parts


def test_two_workers_on_two_fake_boards_normalise_and_say_so(tmp_path, fake_env, monkeypatch):
    monkeypatch.setenv(DELAY_ENV, "0.3")  # both workers find work on a loaded machine
    monkeypatch.setattr(runner, "boards_of_run", lambda config, gpus: ["0", "1"])
    monkeypatch.setattr(runner, "calibrate_run", functools.partial(board_step.calibrate_run, calibrator=_fake_calibrator))
    config = SearchConfig(budget=8, workers=2, dvfs="none", filter="none", quiet=True, out=str(tmp_path / "run"))
    summary = run_search(config, components_factory=fake_board_components)
    assert summary.evaluated == 8
    run = load_run(tmp_path / "run")
    measured = [r for r in run.rows if r.get("measure_gpu_uuid")]
    by_board = {r["measure_gpu_uuid"] for r in measured}
    assert by_board <= {"GPU-fake-0000", "GPU-fake-0001"}
    for r in measured:
        if r["measure_gpu_uuid"] == "GPU-fake-0001":
            assert r["normalised_to_gpu_uuid"] == "GPU-fake-0000"
            assert r["board_energy_ratio"] == pytest.approx(0.95)
        else:
            assert r["normalised_to_gpu_uuid"] is None
    assert run.env["boards"]["normalised"] is True
    report = (tmp_path / "run" / "report.md").read_text()
    assert "board calibration (`--boards normalise`): 2 boards" in report
    if "GPU-fake-0001" in by_board:
        assert "were normalised to board `GPU-fake-000`" in report
