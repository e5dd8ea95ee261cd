"""report.md states the budget, counts, costs, hypervolume and the front with its clocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from nasenergy.quality import DeployRegion
from nasenergy.run.files import RunRecord
from nasenergy.run.front import RunFront
from nasenergy.run.objectives import objectives_for, points_of
from nasenergy.run.report import render_report


def _record(env: dict | None = None) -> RunRecord:
    ev = {"state": "COMPLETE", "outcome": "evaluated", "accuracy_source": "recorded", "dvfs_source": "modelled",
          "throughput_source": "modelled", "energy_source": "modelled", "measure_source": "recorded",
          "measure_device": "NVIDIA H200", "eval_cost_source": "recorded", "measure_cost_s": 2.0,
          "accuracy_split": "x-valid", "accuracy_schedule": "12", "measure_sm_clock_mhz": 1980.0, "filter_admit": True}
    final = {"final_split": "ori-test", "final_schedule": "200", "final_source": "recorded", "final_trial": "mean"}
    rows = [
        {**ev, "trial_number": 0, "arch": "A", "canonical": "A", "arch_index": 11, "accuracy_pct": 91.0,
         "throughput_img_per_s": 1000.0, "energy_j_per_img": 0.5, "eval_cost_s": 3600.0, **final,
         "final_accuracy_pct": 94.1,
         "optimal_sm_clock_mhz": 1200.0, "default_sm_clock_mhz": 1980.0, "energy_saving_pct": 21.5},
        {**ev, "trial_number": 1, "arch": "B", "canonical": "B", "arch_index": 12, "accuracy_pct": 80.0,
         "final_error": "no 200-epoch record of B",
         "throughput_img_per_s": 4000.0, "energy_j_per_img": 0.25, "eval_cost_s": 1800.0,
         "optimal_sm_clock_mhz": 1100.0, "default_sm_clock_mhz": 1980.0, "energy_saving_pct": 30.0,
         "dvfs_label": "modelled (generic)", "energy_saving_low_pct": 24.25, "energy_saving_high_pct": 33.5},
        {**ev, "trial_number": 2, "arch": "C", "canonical": "C", "arch_index": 13, "accuracy_pct": 70.0,
         "throughput_img_per_s": 900.0, "energy_j_per_img": 0.6, "eval_cost_s": 1800.0, **final,
         "final_accuracy_pct": 88.0},
        {"trial_number": 3, "state": "PRUNED", "outcome": "filtered", "canonical": "D", "measure_cost_s": 2.0,
         "measure_source": "recorded", "measure_device": "NVIDIA H200", "filter_admit": False},
        {"trial_number": 4, "state": "PRUNED", "outcome": "duplicate", "canonical": "A", "duplicate_of": 0},
        {"trial_number": 5, "state": "PRUNED", "outcome": "not_recorded", "canonical": "E", "error": "no record of E"},
    ]
    rows = [r.as_row() for r in RunFront.mark(rows, objectives_for(["accuracy", "throughput", "energy"])).records]
    cfg = {"study_name": "demo", "budget": 5, "objectives": ["accuracy", "throughput", "energy"], "space": "tss",
           "dataset": "cifar10"}
    return RunRecord(Path("runs/demo"), cfg, rows, env or {})


COVERAGE = {"profile": "p.csv.gz", "device_name": "NVIDIA H200", "space": "tss", "setting": "fp16, batch 1024",
            "covered_classes": 1527, "total_classes": 6466, "covered_cells": 9410, "total_cells": 15625}


def test_report_states_the_figures():
    rec = _record()
    text = render_report(rec, resume_command="python -m nasenergy.search --budget 5", dashboard_command="optuna-dashboard x")
    assert "**3 of 5**" in text
    assert "filtered 1, duplicates 1" in text
    assert "2.00 h" in text  # 3600 + 1800 + 1800 s of simulated evaluation
    assert "8.00 s recorded" in text  # four cheap measurements (the duplicate is not measured again)
    assert "## Quality" in text
    assert "| 0 | 11 | `A` | 91.00 | 94.10 | 1,000 | 5.000e-01 | 1200 | 1980 | 21.5 | – | modelled |" in text
    # The band and where the clock came from, per front member.
    assert "| 1100 | 1980 | 30.0 | 24.2 to 33.5 | modelled (generic) |" in text
    assert "| 1 | 12 | `B` | 80.00 | – |" in text  # no final figure for B
    assert "`C`" not in text  # dominated by A, so not on the front
    assert "python -m nasenergy.search --budget 5" in text and "optuna-dashboard x" in text
    # The search metric and the final metric are named apart.
    assert "search metric): recorded (3), x-valid, 12 epochs" in text
    assert "final accuracy (reported, never searched on): recorded (2), ori-test, 200 epochs, mean over" in text
    assert "unavailable for 1 evaluations (no 200-epoch record of B)" in text
    # Candidates outside a recorded profile are counted; the filter's skips too.
    assert "not recorded 1" in text and "skipped 1 of 4 measured networks" in text
    # The default-clock measurement and the modelled optimal clock are told apart.
    assert "at the default SM clock (1980 MHz) only" in text and "optimal clock, are modelled" in text


def test_report_states_the_quality_measure_of_the_deploy_region():
    """The floor of --min-accuracy, references from the measured candidates, the deploy hypervolume."""
    rec = _record()
    measured = {0: (1200.0, 0.55), 1: (4500.0, 0.3), 2: (800.0, 0.7), 3: (600.0, 0.9)}
    rec = _changed(rec, {i: dict(zip(("measure_throughput_img_per_s", "measure_energy_j_per_img"),
                                     measured[r.trial_number]))
                         for i, r in enumerate(rec.rows) if r.trial_number in measured})
    rec.config["min_accuracy"] = 75.0
    text = render_report(rec)
    region = DeployRegion(75.0, 600.0, 0.9)
    volume = region.volume(points_of(rec.evaluated, rec.objectives), rec.objectives)
    assert volume > 0 and f"deploy hypervolume: **{volume:.4g}** pt x dec x dec" in text
    assert "accuracy floor: 75.00 % (--min-accuracy)" in text
    assert "references: 600 img/s, 0.9 J/img" in text
    assert "evaluated networks at or above the floor: 2 of 3; on the front: 2" in text
    rec.config["search_metric"] = "x-test/200"
    rec.config.pop("min_accuracy")
    assert "no quality measure: no floor for a --search-metric" in render_report(rec)


def test_report_states_a_partial_profile_coverage():
    env = {"workers": {"w": {"coverage": COVERAGE, "candidate_cap": 1234, "parts": {"filter energy bound": "B0"}}}}
    text = render_report(_record(env))
    assert "covers 1,527 of 6,466 canonical tss classes (9,410 of 15,625 cells)" in text
    assert "the search effectively ran over those. 1 candidates fell outside it" in text
    assert "(cap 1,234)" in text and "its energy bound at the optimal clock: B0" in text
    full = dict(COVERAGE, covered_classes=6466, covered_cells=15625)
    text = render_report(_record({"workers": {"w": {"coverage": full}}}))
    assert "covers 6,466 of 6,466" in text and "effectively" not in text


def test_report_of_an_empty_run():
    rec = RunRecord(Path("r"), {"budget": 3, "objectives": ["accuracy", "energy"]}, [], {})
    text = render_report(rec)
    assert "**0 of 3**" in text and "Pareto front (0 cells)" in text
    assert "no quality measure" in text


@pytest.mark.parametrize("reason, words", [
    ("budget", "the budget was spent"),
    ("stalled", "stopped as stalled"),
    ("max_candidates", "stopped at the candidate cap"),
    ("exhausted", "stopped: every network the recorded profile holds had been seen"),
])
def test_report_says_how_the_run_ended(reason, words):
    text = render_report(_record({"stop_reason": reason}))
    assert f"**3 of 5** ({words}" in text


def test_report_without_a_stop_reason_says_nothing_of_it():
    assert "**3 of 5**\n" in render_report(_record())


def test_a_two_objective_report_names_no_energy_bound_and_only_the_plots_drawn(tmp_path):
    from nasenergy.run.plots import draw_run

    rec = _record({"workers": {"w": {"parts": {"filter energy bound": "default-clock energy x 0.5"}}}})
    three = render_report(rec)
    assert "energy bound" in three and "pareto_projections.png" in three and "pareto_3d.png" not in three
    cfg = {**rec.config, "objectives": ["accuracy", "throughput"], "filter": "dominance"}
    two = RunRecord(tmp_path, cfg, rec.rows, rec.env)
    text = render_report(two)
    assert "energy bound" not in text and "pareto_3d.png" not in text and "img/J" not in text
    drawn = {p.name for p in draw_run(two)}
    listed = set(text.split("## Files", 1)[1].replace("`", " ").replace(",", " ").replace(".png.", ".png").split())
    assert drawn and drawn <= listed and {n for n in listed if n.endswith(".png")} == drawn


def _two_objective_record() -> RunRecord:
    rec = _record()
    rows = [{k: v for k, v in r.items() if k not in ("energy_j_per_img", "energy_source", "energy_saving_pct")}
            for r in rec.rows]
    rows = [r.as_row() for r in RunFront.mark(rows, objectives_for(["accuracy", "throughput"])).records]
    cfg = {**rec.config, "objectives": ["accuracy", "throughput"], "filter": "dominance"}
    env = {"workers": {"w": {"parts": {"filter energy bound": "default-clock energy x 0.5"}}}}
    return RunRecord(rec.run_dir, cfg, rows, env)


def test_a_two_objective_report_speaks_only_of_its_objectives():
    text = render_report(_two_objective_record())
    assert "energy bound" not in text and "J/img" not in text and "img/J" not in text
    assert "pareto_3d.png" not in text and "pareto_projections.png" in text
    assert "energy saving" not in text and "scored energy" not in text
    assert "## Quality" in text


def test_a_three_objective_report_lists_every_plot_and_the_energy_figures():
    rec = _record(env={"workers": {"w": {"parts": {"filter energy bound": "default-clock energy x 0.5"}}}})
    text = render_report(rec)
    assert "pareto_projections.png" in text and "hypervolume.png" in text
    assert "energy bound" in text and "## Quality" in text


def test_report_names_the_boards_of_the_front_and_a_normalisation():
    rec = _record()
    assert "- boards:" not in render_report(rec)  # no measurement names its board
    boards = ("GPU-aaaaaaaa-1", "GPU-bbbbbbbb-2", "GPU-aaaaaaaa-1", "GPU-cccccccc-3")
    rec = _changed(rec, {i: {"measure_gpu_uuid": board} for i, board in enumerate(boards)})
    text = render_report(rec)
    assert "- boards: 3 measured the candidates (`GPU-aaaaaaaa` (2), `GPU-bbbbbbbb` (1), `GPU-cccccccc` (1)); " \
           "2 measured the front" in text
    assert "| 0 | 11 | `A` |" in text and "| modelled | `GPU-aaaaaaaa` |" in text and "| `GPU-bbbbbbbb` |" in text
    assert "cross-board calibration" not in text
    rec = _changed(rec, {1: {"normalised_to_gpu_uuid": "GPU-aaaaaaaa-1"}})
    assert "the throughput and energy of 1 measurements were normalised to board `GPU-aaaaaaaa`" in render_report(rec)
    rec = _changed(rec, {i: {"measure_gpu_uuid": "GPU-aaaaaaaa-1"} for i in range(len(rec.rows))})  # one board
    text = render_report(rec)
    assert "1 measured the front" in text and "| board |" not in text


def _changed(rec: RunRecord, changes: dict[int, dict]) -> RunRecord:
    """``rec`` with the columns of some rows (by position) changed: a run's records are frozen."""
    rows = [r.replace(**changes.get(i, {})) for i, r in enumerate(rec.rows)]
    return RunRecord(rec.run_dir, rec.config, rows, rec.env)


def _without_dvfs(rec: RunRecord, *, filtered: bool = True) -> RunRecord:
    rows = [{k: v for k, v in r.items() if not k.startswith(("dvfs_", "optimal_", "default_sm", "energy_saving"))}
            for r in rec.rows if filtered or r.get("outcome") != "filtered"]
    return RunRecord(rec.run_dir, {**rec.config, "dvfs": "none"}, rows, rec.env)


def test_a_run_without_dvfs_never_speaks_of_an_optimal_clock():
    """--dvfs none, or a meter without energy (the CPU): figures at the default clock; neither the
    report, nor the plot labels, nor the filter's bound line say "optimal clock"."""
    from nasenergy.objectives import OBJECTIVES
    from nasenergy.run.plots import dvfs_applied

    env = {"workers": {"w": {"parts": {"filter energy bound": "default-clock figures as measured"}}}}
    rec = _without_dvfs(_record(env))
    text = render_report(rec)
    assert "optimal clock" not in text.lower() and "energy saving" not in text
    assert "at the default clock, as measured (no DVFS step)" in text
    assert "| 0 | 11 | `A` | 91.00 | 94.10 | 1,000 | 5.000e-01 |\n" in text  # no clock columns
    assert not dvfs_applied(rec.evaluated) and dvfs_applied(_record().evaluated)
    for obj in OBJECTIVES.values():
        assert "optimal" not in obj.axis_label(at_optimal_clock=False)
    assert OBJECTIVES["energy"].axis_label(at_optimal_clock=True) == "energy per image at optimal clock (J/img)"
    assert "optimal clock" in render_report(_record(env))


def test_a_line_with_nothing_to_say_is_left_out():
    """Nothing filtered: no "evaluation time the filter avoided: ≈ 0.00 s" line."""
    assert "the filter avoided: ≈" in render_report(_record())
    assert "the filter avoided" not in render_report(_without_dvfs(_record(), filtered=False))


def test_the_budget_rescue_line_and_its_settings():
    from nasenergy.run.report import RESCUE_ENV, RESCUE_REDIRECT_AFTER, RESCUE_YIELD_AFTER, _budget_keeping_lines
    from nasenergy.search.loop.filter_yield import YIELD_AFTER
    from nasenergy.search.loop.redirect import REDIRECT_AFTER
    from nasenergy.search.loop.rescue import RESCUE_ATTR

    assert (RESCUE_REDIRECT_AFTER, RESCUE_YIELD_AFTER, RESCUE_ENV) == (REDIRECT_AFTER, YIELD_AFTER, RESCUE_ATTR)
    cfg = {"redirect_after": None, "filter_yield_after": None, "filter_yield_top": 0.2, "budget_rescue": True}
    quiet = _budget_keeping_lines(cfg, {}, [])
    assert len(quiet) == 1 and "off until a budget rescue" in quiet[0]
    env = {RESCUE_ENV: {"trial": 589, "candidates": 590, "evaluations": 90, "yielded": 31, "redirected": 640}}
    lines = _budget_keeping_lines(cfg, env, [{"filter_reason": "dominated; the filter yields after 10 rejections"}])
    assert "redirection after 2 proposals" in lines[0] and "from the budget rescue on" in lines[0]
    assert "(`--redirect-after 0`) off" in _budget_keeping_lines({**cfg, "redirect_after": 0}, env, [])[0]
    assert lines[1] == ("- budget rescue: began after evaluation 90 at candidate 590; evaluations yielded 31, "
                        "redirected proposals 640")
    assert _budget_keeping_lines({**cfg, "budget_rescue": False}, env, [])[1:] == []  # off: no rescue line
