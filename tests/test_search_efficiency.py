"""experiments/search_efficiency.py: the normalised hypervolume yardstick, the ratio curves, the
refusal of runs made on another subspace, and one-line errors for bad flags.

The subspaces here are small synthetic ones built by hand (made-up figures), so the right answers
are known exactly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nasenergy.errors import UsageError

SCRIPT = Path(__file__).resolve().parents[1] / "experiments" / "search_efficiency.py"


@pytest.fixture(scope="module")
def se(load_experiment):
    return load_experiment("search_efficiency")


def _subspace(se, points: np.ndarray):
    """A synthetic subspace over `points` (accuracy %, img/s, J/img)."""
    from nasenergy.run.objectives import front_mask, hv_hypervolume, objectives_for

    objectives = objectives_for(se.OBJECTIVES)
    front = points[front_mask(points, objectives)]
    lower, upper = points.min(axis=0), points.max(axis=0)
    return se.Subspace({}, len(points), front, hv_hypervolume(front, objectives), list(range(len(front))),
                       1.0, 0, lower, upper, se.normalised_hv(front, lower, upper))


POINTS = np.array([
    [90.0, 100.0, 0.004],  # accurate, slow, hungry
    [50.0, 300.0, 0.002],  # middle
    [10.0, 500.0, 0.001],  # fast, frugal, poor
    [40.0, 200.0, 0.003],  # dominated by the middle one
])


def test_unit_maximisation_maps_worst_to_0_and_best_to_1(se):
    unit = se.to_unit_maximisation(POINTS, POINTS.min(axis=0), POINTS.max(axis=0))
    assert unit[0] == pytest.approx([1.0, 0.0, 0.0])
    assert unit[2] == pytest.approx([0.0, 1.0, 1.0])
    assert unit[1] == pytest.approx([0.5, 0.5, 2 / 3])  # energy: (0.004 - 0.002) / 0.003


def test_normalised_hv_of_boxes(se):
    lower, upper = POINTS.min(axis=0), POINTS.max(axis=0)
    # one point: the box from the worst corner to its unit coordinates
    assert se.normalised_hv(POINTS[1:2], lower, upper) == pytest.approx(0.5 * 0.5 * 2 / 3)
    # the ideal point fills the unit cube; the extremes alone have a zero coordinate and no volume
    ideal = np.array([[90.0, 500.0, 0.001]])
    assert se.normalised_hv(ideal, lower, upper) == pytest.approx(1.0)
    assert se.normalised_hv(POINTS[[0, 2]], lower, upper) == 0.0


def test_ratio_curves_follow_the_front_under_both_yardsticks(se):
    sub = _subspace(se, POINTS)
    curves = se.ratio_curves(POINTS[[3, 1, 0]], sub)
    norm, origin = curves["normalised"], curves["origin"]
    from nasenergy.run.objectives import hv_hypervolume, objectives_for

    objectives = objectives_for(se.OBJECTIVES)
    assert norm[-1] == pytest.approx(1.0)
    assert origin[-1] == pytest.approx(hv_hypervolume(POINTS[[1, 0]], objectives) / sub.true_hv)
    assert norm[1] == pytest.approx(1.0)  # the middle point alone holds all the normalised volume
    assert norm[0] == pytest.approx(se.normalised_hv(POINTS[3:4], sub.lower, sub.upper) / sub.true_hv_norm)
    assert np.all(np.diff(norm) >= 0) and np.all(np.diff(origin) >= 0)
    assert origin[-1] < 1.0  # the fast network is missing, and it holds origin volume
    full = se.ratio_curves(POINTS, sub)
    assert full["origin"][-1] == pytest.approx(1.0) and full["normalised"][-1] == pytest.approx(1.0)


def test_exclusive_shares_differ_between_yardsticks(se):
    sub = _subspace(se, POINTS)
    origin = se.front_contributions(sub, "origin")
    norm = se.front_contributions(sub, "normalised")
    assert len(origin) == len(norm) == len(sub.true_front) == 3
    assert np.argmax(norm) == 1 and norm.max() == pytest.approx(1.0)
    assert origin.max() < 1.0 and np.all(origin > 0)


def test_front_recall_counts_true_front_points_matched_within_tolerance(se):
    sub = _subspace(se, POINTS)
    assert len(sub.true_front) == 3
    near = POINTS[1] * [1.0, 1.0 - se.RECALL_HARDWARE_REL / 2, 1.0 + se.RECALL_HARDWARE_REL / 2]
    near[0] -= se.RECALL_ACCURACY_PP / 2  # within every tolerance of the middle point
    far = POINTS[1] * [1.0, 1.0 - 2 * se.RECALL_HARDWARE_REL, 1.0]  # too slow to stand for it
    assert se.matched_front_points(near, sub.true_front).tolist() == [False, True, False]
    assert not se.matched_front_points(far, sub.true_front).any()
    curves = se.ratio_curves(np.array([POINTS[3], far, near, POINTS[0]]), sub)
    assert curves["recall"] == pytest.approx([0.0, 0.0, 1 / 3, 2 / 3])
    assert se.ratio_curves(POINTS, sub)["recall"][-1] == pytest.approx(1.0)
    assert se.front_contributions(sub, "recall") == pytest.approx([1 / 3] * 3)


def _rows(se, sub, values: np.ndarray, *, stored_scale: float = 1.0) -> list[dict[str, str]]:
    curves = se.ratio_curves(values, sub)
    return [{"outcome": "evaluated", "accuracy_pct": str(v[0]), "throughput_img_per_s": str(v[1]),
             "energy_j_per_img": str(v[2]), "hv_ratio": str(curves["origin"][k] * stored_scale)}
            for k, v in enumerate(values)]


def test_runs_of_another_subspace_are_refused(se, tmp_path):
    sub = _subspace(se, POINTS)
    rows = _rows(se, sub, POINTS[:2])
    se.check_run_matches(tmp_path / "runs" / "a.csv.gz", rows, se.ratio_curves(POINTS[:2], sub))
    stale = _rows(se, sub, POINTS[:2], stored_scale=0.9)
    with pytest.raises(UsageError, match="different measured subspace"):
        se.check_run_matches(tmp_path / "runs" / "a.csv.gz", stale, se.ratio_curves(POINTS[:2], sub))


def test_a_stalled_run_counts_with_the_ratio_it_reached(se, tmp_path):
    sub = _subspace(se, POINTS)
    values = POINTS[[3, 1]]
    curves = se.ratio_curves(values, sub)
    rows = []
    for k, v in enumerate(values):
        rows.append({"method": "tpe", "seed": 0, "candidate": len(rows), "outcome": "evaluated",
                     "accuracy_pct": v[0], "throughput_img_per_s": v[1], "energy_j_per_img": v[2],
                     "cum_cost_s": 10.0 * (k + 1), "hv_ratio": curves["origin"][k], "stop_reason": "stalled"})
        rows.append({"method": "tpe", "seed": 0, "candidate": len(rows), "outcome": "duplicate",
                     "cum_cost_s": 10.0 * (k + 1), "hv_ratio": curves["origin"][k], "stop_reason": "stalled"})
    se.write_run(se.run_path(tmp_path, "tpe", 0), rows)
    c = se.load_curves(tmp_path, ["tpe"], [0, 1], 5, sub)["tpe"]
    assert c.seeds == [0] and c.stop_reasons == ["stalled"]
    assert c.by_eval["normalised"][0] == pytest.approx([curves["normalised"][0]] + [1.0] * 4)
    assert c.by_candidate[0]["origin"] == pytest.approx(np.repeat(curves["origin"], 2))
    summary = se.summarize({"tpe": c}, 5, sub)[0]
    assert summary["stalled_runs"] == 1 and summary["runs_short_of_budget"] == 1
    assert summary["hv_norm_ratio_at_5_mean"] == pytest.approx(1.0)
    assert summary["hv_norm_ratio_evals_to_0.99_median"] == "2"


@pytest.mark.parametrize("argv, fragment", [
    (["--methods", "tpe,grid"], "--methods"),
    (["--seeds", "0"], "--seeds"),
    (["--patience", "-5"], "--patience"),
    (["--budget", "many"], "--budget"),
])
def test_bad_flags_are_one_line_errors(argv, fragment, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), *argv, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and fragment in err[0], done.stderr
    assert not (tmp_path / "out").exists()


def test_dominated_on_arrival_marks_evaluations_that_left_the_front_unchanged(se):
    values = np.array([
        [70.0, 1000.0, 0.50],   # first: never dominated
        [60.0, 900.0, 0.60],    # worse in all three than the first
        [80.0, 500.0, 0.70],    # more accurate: new front point
        [70.0, 1000.0, 0.50],   # equal to the first: weakly dominated
        [65.0, 2000.0, 0.60],   # faster than all: new front point
        [64.0, 1500.0, 0.40],   # least energy: new front point
    ])
    assert se.dominated_on_arrival(values).tolist() == [False, True, False, True, False, False]
    assert se.dominated_on_arrival(np.zeros((0, 3))).tolist() == []


def test_recall_variants_set_the_filter_target_recall(se, tmp_path, monkeypatch):
    from nasenergy.search.command.config import DEFAULT_TARGET_RECALL

    # The config only names the shared folder as its benchmark; no file of it is read here.
    monkeypatch.setenv("NASENERGY_SHARED_DATA", str(tmp_path))

    assert se.search_config("tpe+dominance@0.5", 0, 10).target_recall == 0.5
    assert se.search_config("tpe+dominance@0.8", 0, 10).filter == "dominance"
    assert se.search_config("tpe+dominance@0.8", 0, 10).target_recall == 0.8
    default = se.search_config("tpe+dominance", 0, 10).target_recall
    assert default == DEFAULT_TARGET_RECALL["dominance"] and default not in (0.5, 0.8)
    assert se.search_config("tpe+threshold", 0, 10).target_recall == DEFAULT_TARGET_RECALL["threshold"]
    assert set(se.DEFAULT_METHODS) < set(se.METHODS)


def test_the_screening_method_screens_and_the_others_do_not(se, tmp_path, monkeypatch):
    monkeypatch.setenv("NASENERGY_SHARED_DATA", str(tmp_path))
    screened = se.search_config("tpe+dominance+screen", 0, 10)
    assert (screened.sampler, screened.filter, screened.screen) == ("tpe", "dominance", 4)
    assert all(se.search_config(m, 0, 10).screen == 1 for m in se.METHODS if m != "tpe+dominance+screen")


def test_the_screening_method_is_judged_against_the_targets_too(se):
    by = {"tpe": {"n_seeds": 2, "hv_norm_ratio_at_200_mean": 0.95, "front_recall_at_200_mean": 0.4},
          "tpe+dominance+screen": {"n_seeds": 2, "hv_norm_ratio_at_200_mean": 0.995, "hv_ratio_at_200_mean": 0.98,
                                   "hv_norm_ratio_seeds_reaching_0.99": 2, "hv_ratio_seeds_reaching_0.99": 1,
                                   "front_recall_at_200_mean": 0.7}}
    speed = [{"yardstick": y, "base": "tpe", "other": "tpe+dominance+screen", "base_evals": k, "factor": 2.5}
             for y in se.YARDSTICKS for k in (50, 100, 200)]
    lines = se._target_lines(by, speed, 200, "tpe+dominance+screen")
    assert lines[0].startswith("* `tpe+dominance+screen`: ") and "met at every level" in lines[0]
    assert "with `tpe+dominance+screen`: **met**" in lines[1]


def test_filter_headroom_counts_evaluations_dominated_on_arrival(se):
    def row(acc, thr, energy):
        return {"outcome": "evaluated", "accuracy_pct": str(acc), "throughput_img_per_s": str(thr),
                "energy_j_per_img": str(energy)}

    runs = [[row(70, 1000, 0.5), row(60, 900, 0.6), row(80, 500, 0.7), row(65, 800, 0.9)],  # 2 of 4
            [row(70, 1000, 0.5), {"outcome": "filtered"}, row(71, 1000, 0.5)]]              # 0 of 2
    curves = {"m": se.MethodCurves([0, 1], {}, np.zeros((2, 1)), runs, [], [], ["budget", "budget"])}
    (h,) = se.filter_headroom(curves)
    assert h["method"] == "m" and h["n_seeds"] == 2
    assert h["dominated_share_min"] == 0.0 and h["dominated_share_max"] == 0.5
    assert h["dominated_share_median"] == pytest.approx(0.25)
    assert h["perfect_filter_factor_median"] == pytest.approx(1 / 0.75)


def test_target_verdict_names_the_levels_where_the_filter_is_twice_as_fast(se):
    by = {"tpe": {"n_seeds": 2, "hv_norm_ratio_at_200_mean": 0.9, "front_recall_at_200_mean": 0.4},
          "tpe+dominance": {"n_seeds": 2, "hv_norm_ratio_at_200_mean": 0.99, "hv_ratio_at_200_mean": 0.98,
                            "hv_norm_ratio_seeds_reaching_0.99": 1, "hv_ratio_seeds_reaching_0.99": 1,
                            "front_recall_at_200_mean": 0.7}}
    speed = [{"yardstick": y, "base": "tpe", "other": "tpe+dominance", "base_evals": k, "factor": f}
             for y in se.YARDSTICKS for k, f in ((50, 1.3), (100, 1.9), (200, 2.6))]
    first = se._target_lines(by, speed, 200)[0]
    assert "met only at the levels TPE reaches after 200 evaluations" in first
    speed = [dict(s, factor=2.5) for s in speed]
    assert "met at every level" in se._target_lines(by, speed, 200)[0]
    speed = [dict(s, factor=1.5) for s in speed]
    assert "**not met**" in se._target_lines(by, speed, 200)[0]
    assert not any("saturated" in line for line in se._target_lines(by, speed, 200))
    by["tpe"]["hv_norm_ratio_at_200_mean"] = 0.985  # TPE alone nearly fills the true hypervolume
    saturated = se._target_lines(by, speed, 200)[-1]
    assert "saturated" in saturated and "0.700 with the filter against 0.400 without" in saturated


def test_coverage_note_says_whether_the_true_front_is_the_whole_space(se):
    import dataclasses

    from nasenergy.run.network_key import DEPLOYED_UNIT

    sub = _subspace(se, POINTS)
    whole = dataclasses.replace(sub, classes={f"c{i}": None for i in range(4)}, n_cells=9, n_networks_total=4)
    assert "**Whole space.**" in se._coverage_note(whole) and "all 4 canonical TSS classes" in se._coverage_note(whole)
    part = se._coverage_note(dataclasses.replace(whole, classes={"c0": None}))
    assert "**Measured subspace only.**" in part and "covers 1 of the 4" in part
    pairs = se._coverage_note(dataclasses.replace(whole, unit=DEPLOYED_UNIT))
    assert "all 4 TSS deployed networks" in pairs


@pytest.mark.slow
def test_on_a_profile_of_deployed_networks_the_subspace_counts_networks(se):
    """Each network (class and deployed structure) is scored once, from its own recorded row of
    the profile given (``--profile``)."""
    from shared_files import TSS_TABLES, require_shared

    require_shared(*TSS_TABLES)  # the search's accuracy tables
    import nasenergy.hardware.recorded as recorded
    from nasenergy.run.network_key import DEPLOYED_UNIT
    from nasenergy.search.command.components import build_components

    config = se.search_config("tpe", 0, 10, profile=str(recorded.DEPLOYED_PROFILE))
    assert config.profile == str(recorded.DEPLOYED_PROFILE) and config.hardware == "recorded"
    sub = se.build_subspace(config)
    assert sub.profile == config.profile
    assert se.search_config("tpe", 1, 10, profile=sub.profile).profile == sub.profile  # what each run is given
    assert "`h200_tss_deployed_profile.csv.gz`" in se._coverage_note(sub)
    parts = build_components(config)
    assert (sub.unit, sub.n_networks_total) == (DEPLOYED_UNIT, 6040)
    assert len(sub.classes) == parts.coverage.covered_classes and sub.n_cells == parts.coverage.covered_cells
    for index in sub.true_front_arch_index[:5]:
        arch = parts.space.arch_at(index)
        fig = sub.classes[parts.key_of(arch)]
        assert fig.measurement.throughput_img_per_s == parts.measure(arch).throughput_img_per_s
