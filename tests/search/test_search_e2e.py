"""End to end on CPU: the fake meter, the table oracle over a test table, the real pipeline."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from fake_parts import dashboard_get, fake_components

import nasenergy
from nasenergy.pareto import dominates
from nasenergy.run.files import load_run
from nasenergy.run.objectives import objectives_for, points_of
from nasenergy.run.quality import run_region
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.loop.pipeline import evaluation_seed

EXPECTED_FILES = (
    "candidates.csv", "pareto_front.csv", "report.md", "env.json", "config.json",
    "pareto_projections.png", "hypervolume.png",
)


def _config(tmp_path, **kw) -> SearchConfig:
    base = dict(budget=24, dvfs="none", out=str(tmp_path / "run"), quiet=True, filter="threshold", target_recall=0.9)
    return SearchConfig(**{**base, **kw})


def test_a_run_spends_exactly_its_budget_and_leaves_consistent_files(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, max_candidates=400, dvfs="modelled"), components_factory=fake_components)
    run = load_run(tmp_path / "run")
    for name in EXPECTED_FILES:
        assert (run.run_dir / name).is_file(), name
    assert summary.stop_reason == "budget" and summary.complete

    # Exactly the budget of full evaluations, each a different network.
    evaluated = run.evaluated
    assert len(evaluated) == 24 == summary.evaluated
    assert len({r["network"] for r in evaluated}) == 24
    assert [r["evaluation_number"] for r in evaluated] == list(range(1, 25))
    outcomes = Counter(r["outcome"] for r in run.rows)
    assert outcomes["filtered"] > 0  # the threshold filter was active after its cold start
    assert sum(outcomes.values()) == summary.candidates

    # Filtered candidates are recorded with their cheap figures and no accuracy.
    for r in run.rows:
        if r["outcome"] == "filtered":
            assert r["state"] == "PRUNED" and r["filter_admit"] is False and r["filter_reason"]
            assert r["utilization"] > 0 and r["measure_source"] == "modelled" and r["accuracy_pct"] is None
        if r["outcome"] == "evaluated":
            assert r["accuracy_source"] == "recorded" and r["eval_cost_source"] == "recorded"
            # Searched on the 12-epoch validation accuracy; the 200-epoch test accuracy is reported.
            assert (r["accuracy_split"], r["accuracy_schedule"]) == ("x-valid", "12")
            assert (r["final_split"], r["final_schedule"]) == ("ori-test", "200")
            assert r["final_trial"] == "mean" or r["final_trial"].startswith("cells:")  # a network's cells: their mean
            assert r["final_accuracy_pct"] == pytest.approx(min(99.0, r["accuracy_pct"] + 8.0), abs=2e-3)
            assert r["eval_seed"] == evaluation_seed(0, r["trial_number"])
            assert r["throughput_source"] == "modelled" == r["energy_source"] == r["dvfs_source"]
            # Scored at the energy-optimal clock: never more energy than at the default clock.
            assert r["optimal_sm_clock_mhz"] <= r["default_sm_clock_mhz"] == r["measure_sm_clock_mhz"]
            assert r["energy_j_per_img"] <= r["default_energy_j_per_img"] * (1 + 1e-12)
            assert r["energy_saving_pct"] == pytest.approx(
                100 * (1 - r["energy_j_per_img"] / r["default_energy_j_per_img"]))
        if r["outcome"] == "duplicate":  # answered from the earlier trial of the same network
            original = next(o for o in run.rows if o["trial_number"] == r["duplicate_of"])
            assert original["network"] == r["network"] and original["outcome"] != "duplicate"
            assert r["accuracy_pct"] == original["accuracy_pct"]
            assert r["state"] == "PRUNED"  # told once to the sampler, never twice

    # The front is non-dominated, and everything off it is dominated by it.
    objs = objectives_for(["accuracy", "throughput", "energy"])
    senses = [o.sense for o in objs]
    front = points_of(run.front, objs)
    rest = points_of([r for r in evaluated if not r["on_front"]], objs)
    assert len(front) >= 1
    assert not any(dominates(a, b, senses) for a in points_of(evaluated, objs) for b in front)
    assert all(any(dominates(f, p, senses) for f in front) for p in rest)
    front_csv = load_run(tmp_path / "run").rows  # re-read: pareto_front.csv holds the same rows
    assert {r["trial_number"] for r in front_csv if r["on_front"]} == {r["trial_number"] for r in run.front}

    # The report's quality is the deploy hypervolume of the evaluated networks; it names both accuracies.
    region = run_region(run.config, run.rows)
    assert region is not None and region.accuracy_floor_pct == pytest.approx(71.648)  # the shipped median
    hv = region.volume(points_of(evaluated, objs), objs)
    report = (run.run_dir / "report.md").read_text()
    assert f"deploy hypervolume: **{hv:.4g}**" in report
    assert "final accuracy (reported, never searched on): recorded (24), ori-test, 200 epochs" in report

    # config.json and env.json say what ran.
    assert run.config["budget"] == 24 and run.config["study_name"] == summary.study_name
    assert run.env["seed"] == 0 and run.env["versions"]["optuna"]
    assert run.env["versions"]["nasenergy"] == nasenergy.__version__  # the code that ran, installed or not
    assert run.env["stop_reason"] == summary.stop_reason == "budget"
    assert "**24 of 24** (the budget was spent)" in report
    assert [w["seed"] for w in run.env["workers"].values()] == [0]

    # optuna-dashboard opens the storage the printed command names, and sees every trial with
    # named objectives.
    program, storage = summary.dashboard_command.split(" ", 1)
    assert program == "optuna-dashboard"
    studies = dashboard_get(storage, "/api/studies")["study_summaries"]
    assert [s["study_name"] for s in studies] == [summary.study_name]
    detail = dashboard_get(storage, f"/api/studies/{studies[0]['study_id']}")
    assert len(detail["trials"]) == summary.candidates
    assert detail["objective_names"] == ["accuracy_pct", "throughput_img_per_s", "energy_j_per_img"]


def test_running_again_resumes_and_a_larger_budget_extends(tmp_path, fake_env):
    cfg = _config(tmp_path, budget=6, filter="none", objectives=("accuracy", "throughput"), min_accuracy=50.0)
    first = run_search(cfg, components_factory=fake_components)
    before = load_run(tmp_path / "run").rows
    again = run_search(cfg, components_factory=fake_components)
    assert again.evaluated == first.evaluated == 6 and again.candidates == first.candidates
    extended = run_search(_config(tmp_path, budget=9, filter="none", objectives=("accuracy", "throughput"), min_accuracy=50.0),
                          components_factory=fake_components)
    rows = load_run(tmp_path / "run").rows
    assert extended.evaluated == 9 == sum(r["outcome"] == "evaluated" for r in rows)
    old = {r["trial_number"]: r["accuracy_pct"] for r in before if r["outcome"] == "evaluated"}
    assert all(rows[n]["accuracy_pct"] == acc for n, acc in old.items())  # nothing lost or changed

    # Two objectives: the report's hypervolume matches an independent staircase sum.
    ev = [r for r in rows if r["outcome"] == "evaluated"]
    run = load_run(tmp_path / "run")
    region = run_region(run.config, run.rows)
    floor, ref = region.accuracy_floor_pct, region.throughput_ref_img_per_s
    pts = sorted(((r["accuracy_pct"] - floor, math.log10(r["throughput_img_per_s"] / ref)) for r in ev
                  if r["accuracy_pct"] >= floor), reverse=True)
    area, best_thr = 0.0, 0.0
    for acc, thr in pts:  # sweep accuracy downwards; each new throughput record adds a slab
        if thr > best_thr:
            area += acc * (thr - best_thr)
            best_thr = thr
    objs2 = objectives_for(["accuracy", "throughput"])
    hv = region.volume(points_of(ev, objs2), objs2)
    assert area > 0 and hv == pytest.approx(area, rel=1e-12)
    assert f"**{hv:.4g}** pt x dec" in (tmp_path / "run" / "report.md").read_text()


def test_the_candidate_cap_stops_a_run_that_cannot_fill_its_budget(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget=30, max_candidates=30, filter="none"), components_factory=fake_components)
    assert summary.candidates == 30
    if summary.evaluated < 30:  # duplicates used some of the 30 candidates
        assert summary.stop_reason == "max_candidates"
    assert load_run(tmp_path / "run").rows


def test_changed_settings_are_refused(tmp_path, fake_env):
    from nasenergy.errors import UsageError

    run_search(_config(tmp_path, budget=3, filter="none"), components_factory=fake_components)
    with pytest.raises(UsageError, match="precision"):
        run_search(_config(tmp_path, budget=3, filter="none", precision="fp32"), components_factory=fake_components)
    with pytest.raises(UsageError, match="--budget 3"):
        run_search(_config(tmp_path, budget=2, filter="none"), components_factory=fake_components)


def test_energy_objective_without_energy_is_a_clear_error(tmp_path, fake_env, monkeypatch):
    import fake_parts

    from nasenergy.search.loop.pipeline import EnergyUnavailableError

    original = fake_parts.fake_components

    def no_energy(config):
        parts = original(config)
        measure = parts.measure

        def measure_without_energy(arch):
            import dataclasses

            m = measure(arch)
            return dataclasses.replace(m, energy_j_per_img=None, energy_basis="unavailable", avg_power_w=None)

        parts.measure = measure_without_energy
        return parts

    with pytest.raises(EnergyUnavailableError, match="--objectives"):
        run_search(_config(tmp_path, budget=3, filter="none"), components_factory=no_energy)
    without_energy = _config(tmp_path, budget=3, filter="none", objectives=("accuracy", "throughput"),
                             study_name="no-energy", out=str(tmp_path / "r2"))
    assert run_search(without_energy, components_factory=no_energy).evaluated == 3


def test_unmeasurable_networks_fail_once_and_cost_no_budget(tmp_path, fake_env):
    from nasenergy.errors import NasEnergyError

    class NotRecorded(NasEnergyError, LookupError):
        exit_code = 2

    def partial_profile(config):  # as a recorded profile holding only some classes
        parts = fake_components(config)
        measure, space = parts.measure, parts.space

        def measure_some(arch):
            if space.index(space.canonical(arch)) % 3 == 0:
                raise NotRecorded(f"{arch} is not in the profile")
            return measure(arch)

        parts.measure = measure_some
        return parts

    summary = run_search(_config(tmp_path, budget=10, filter="none"), components_factory=partial_profile)
    rows = load_run(tmp_path / "run").rows
    failed = [r for r in rows if r["outcome"] == "failed"]
    assert summary.evaluated == 10 == sum(r["outcome"] == "evaluated" for r in rows)
    assert failed and all(r["state"] == "FAIL" and "not in the profile" in r["error"] for r in failed)
    assert len({r["network"] for r in failed}) == len(failed)  # each measured (and failed) once
    for r in rows:
        if r["outcome"] == "duplicate" and r["network"] in {f["network"] for f in failed}:
            assert r["state"] == "FAIL"
