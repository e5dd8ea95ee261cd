"""Screening (``--screen K``): several measured candidates per full evaluation, the one of largest
expected hypervolume improvement evaluated, the others recorded as screened out."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fake_parts import fake_components

from nasenergy.errors import UsageError
from nasenergy.measurement import Measurement
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.cli import build_parser, config_from_args, main
from nasenergy.search.loop.screening import Screened, Screener, expected_improvement_scores, improvement_scores

SENSES = ("maximize", "maximize", "minimize")


def _measurement(throughput: float, energy: float, flops: float = 1e8) -> Measurement:
    return Measurement(
        device_name="synthetic", precision="fp16", batch_size=1024, input_shape=(3, 32, 32),
        throughput_img_per_s=throughput, latency_ms_per_batch=1.0, macs_per_img=flops / 2, flops_per_img=flops,
        params=1000, peak_flops_per_s=1e12, peak_source="datasheet", utilization=0.5,
        energy_j_per_img=energy, energy_basis="total", avg_power_w=None, idle_power_w=None,
        sm_clock_mhz=None, n_repeats=1, throughput_cv=0.0, energy_cv=0.0, measure_cost_s=0.0, source="modelled",
    )


def _figures(m: Measurement) -> tuple[float, float]:
    return m.throughput_img_per_s, float(m.energy_j_per_img)


# ------------------------------------------------------------------------------ the ranking


def test_an_improving_candidate_outranks_dominated_ones_and_the_least_dominated_comes_next():
    front = np.array([[80.0, 1000.0, 1.0], [60.0, 3000.0, 0.5]])
    cands = np.array([
        [70.0, 500.0, 2.0],   # dominated by the first point, far
        [79.0, 990.0, 1.01],  # dominated by the first point, just
        [70.0, 2000.0, 0.8],  # in the gap between the two: improves
    ])
    scores = improvement_scores(cands, front, SENSES)
    assert scores[2] > 0 > scores[1] > scores[0]
    assert list(np.argsort(-scores)) == [2, 1, 0]


def test_the_improvement_is_the_hypervolume_gained():
    front = np.array([[1.0, 1.0, -1.0]])  # maximise, maximise, minimise
    only = improvement_scores(np.array([[2.0, 2.0, -2.0]]), front, SENSES)
    # in maximisation form the rows are (1, 1, 1) and (2, 2, 2); the reference is the worst
    # corner moved out by 1 % of each range: (0.99, 0.99, 0.99)
    assert only[0] == pytest.approx(1.01**3 - 0.01**3)


def test_a_candidate_with_missing_figures_ranks_last():
    scores = improvement_scores(np.array([[50.0, math.nan, 1.0], [10.0, 10.0, 9.0]]), np.array([[80.0, 1e3, 1.0]]),
                                SENSES)
    assert scores[0] == -math.inf and scores[1] > -math.inf


def test_before_min_fit_the_sampler_s_first_proposal_is_chosen():
    s = Screener(("accuracy", "throughput", "energy"), _figures, min_fit=3)
    cands = [Screened(_measurement(1e3, 1.0)), Screened(_measurement(1e6, 1e-3))]
    ranking = s.choose(cands)
    assert ranking.chosen == 0 and ranking.reason.startswith("screened out: the sampler's first proposal")


def test_before_min_fit_candidates_that_widen_the_hardware_front_are_kept_best_first():
    s = Screener(("accuracy", "throughput", "energy"), _figures, min_fit=4, reserve=2)
    m = _measurement(1e4, 1e-2)
    s.observe(m, None, [50.0, m.throughput_img_per_s, m.energy_j_per_img])
    cands = [Screened(_measurement(2e4, 1e-2)),   # the sampler's proposal: evaluated
             Screened(_measurement(5e3, 2e-2)),   # slower and dearer than the evaluation: dropped
             Screened(_measurement(3e4, 5e-3)),   # widens the front a little
             Screened(_measurement(1e6, 1e-4))]   # widens it most
    ranking = s.choose(cands)
    assert ranking.chosen == 0
    assert ranking.kept == (3, 2)
    assert ranking.scores[1] < 0
    assert Screener(("accuracy", "throughput", "energy"), _figures, min_fit=4, reserve=0).choose(cands).kept == ()


def test_before_any_evaluation_the_fastest_and_cheapest_candidate_is_kept_first():
    s = Screener(("accuracy", "throughput", "energy"), _figures, min_fit=4, reserve=1)
    cands = [Screened(_measurement(1e3, 1.0)), Screened(_measurement(1e4, 0.5)), Screened(_measurement(1e6, 1e-3))]
    assert s.choose(cands).kept == (2,)


def test_after_min_fit_the_candidate_predicted_to_extend_the_front_is_chosen():
    """Accuracy grows with FLOPs in the run's own evaluations; of two candidates with the same
    hardware figures the one with more FLOPs is predicted more accurate and chosen."""
    s = Screener(("accuracy", "throughput", "energy"), _figures, min_fit=4, explore=0.0, estimator="rf")
    for k, flops in enumerate((1e7, 3e7, 1e8, 3e8, 1e9, 3e9)):
        m = _measurement(1e5 / (k + 1), 1e-3 * (k + 1), flops)
        s.observe(m, None, [20.0 + 10 * k, m.throughput_img_per_s, m.energy_j_per_img])
    cands = [Screened(_measurement(5e4, 1e-3, 1e7)), Screened(_measurement(5e4, 1e-3, 3e9))]
    ranking = s.choose(cands)
    assert ranking.chosen == 1
    assert ranking.predicted[1] > ranking.predicted[0]
    assert ranking.scores[1] > 0
    assert "expected hypervolume improvement" in ranking.reason


def _observed_screener(**kw) -> Screener:
    """A screener that has learnt six evaluations spread over hardware and accuracy."""
    s = Screener(("accuracy", "throughput", "energy"), _figures, min_fit=4, estimator="rf", **kw)
    for k, flops in enumerate((1e7, 3e7, 1e8, 3e8, 1e9, 3e9)):
        m = _measurement(1e5 / (k + 1), 1e-3 * (k + 1), flops)
        s.observe(m, None, [20.0 + 10 * k, m.throughput_img_per_s, m.energy_j_per_img], group=f"g{k}")
    return s


def test_a_group_evaluated_alike_twice_is_predicted_without_spread():
    s = _observed_screener()
    m = _measurement(1e5, 1e-3, 1e7)
    s.observe(m, None, [20.0, m.throughput_img_per_s, m.energy_j_per_img], group="g0")
    mean, spread = s.predict([Screened(m, group="g0"), Screened(m, group="new")])
    assert mean[0] == 20.0 and spread[0] == 0.0
    assert spread[1] > 0


def test_a_group_evaluated_once_gets_its_value_and_the_pooled_within_group_spread():
    s = _observed_screener()
    for acc in (50.0, 52.0):  # one repeated group: within-group deviation sqrt(2)
        m = _measurement(2e4, 5e-3, 1e9)
        s.observe(m, None, [acc, m.throughput_img_per_s, m.energy_j_per_img], group="rep")
    mean, spread = s.predict([Screened(_measurement(1e5, 1e-3, 1e7), group="g0")])
    assert mean[0] == 20.0 and spread[0] == pytest.approx(math.sqrt(2.0))


def test_a_repeated_group_without_spread_loses_to_an_uncertain_candidate():
    """The network of the best throughput was evaluated twice at the same accuracy: another member
    of its group cannot improve the front, a new network with the same figures may."""
    s = _observed_screener()
    m = _measurement(1e5, 1e-3, 1e7)
    s.observe(m, None, [20.0, m.throughput_img_per_s, m.energy_j_per_img], group="g0")
    ranking = s.choose([Screened(m, group="g0"), Screened(m, group="unseen")])
    assert ranking.chosen == 1 and ranking.scores[1] > 0 >= ranking.scores[0]
    assert ranking.kept == ()  # the one that promises nothing is not kept


def test_unchosen_candidates_that_promise_an_improvement_are_kept_up_to_the_reserve():
    s = _observed_screener(reserve=2)
    cands = [Screened(_measurement(2e5 * (1 + k), 1e-4, 1e8), group=f"new{k}") for k in range(4)]
    ranking = s.choose(cands)
    assert len(ranking.kept) == 2 and ranking.chosen not in ranking.kept
    assert all(ranking.scores[i] > 0 for i in ranking.kept)
    assert ranking.scores[ranking.kept[0]] >= ranking.scores[ranking.kept[1]]
    assert _observed_screener(reserve=0).choose(cands).kept == ()


def test_the_expected_improvement_rewards_spread_under_a_dominated_mean():
    front = np.array([[80.0, 1000.0, 1.0]])
    at_mean = np.array([[79.0, 1000.0, 1.0]])
    narrow = np.array([[[79.0, 1000.0, 1.0]] * 3])
    wide = np.array([[[75.0, 1000.0, 1.0], [79.0, 1000.0, 1.0], [83.0, 1000.0, 1.0]]])
    assert expected_improvement_scores(narrow, at_mean, front, SENSES)[0] < 0
    assert expected_improvement_scores(wide, at_mean, front, SENSES)[0] > 0


def test_the_screener_refuses_objectives_without_accuracy_first():
    with pytest.raises(ValueError, match="accuracy"):
        Screener(("throughput", "energy"), _figures)


# ------------------------------------------------------------------------------ the search


def _config(tmp_path, **kw) -> SearchConfig:
    base = dict(budget=14, dvfs="modelled", filter="none", out=str(tmp_path / "run"), quiet=True, screen=3)
    return SearchConfig(**{**base, **kw})


def test_a_screened_search_evaluates_the_budget_and_records_the_screened_out(tmp_path, fake_env):
    summary = run_search(_config(tmp_path), components_factory=fake_components)
    assert summary.stop_reason == "budget" and summary.evaluated == 14
    rows = load_run(tmp_path / "run").rows
    screened = [r for r in rows if r["outcome"] == "filtered"]
    assert screened, "nothing was screened out"
    assert all(r["filter_reason"].startswith("screened out") for r in screened)
    # three measured candidates per evaluation; every measured one is evaluated, screened out, or
    # (kept for a next screening when the budget ran out) over budget
    measured = [r for r in rows if r["outcome"] in ("evaluated", "filtered", "over_budget")]
    assert len(measured) == 3 * 14
    assert len(measured) - len(screened) - 14 <= 4  # at most the reserve is left at the end
    chosen = [r for r in rows if r["outcome"] == "evaluated"]
    pools = [int(r["filter_reason"].rsplit("among ", 1)[1].split()[0]) for r in chosen]
    assert min(pools) == 3
    assert max(pools) > 3  # candidates kept from a screening are ranked again in the next one
    assert not [r for r in rows if r["outcome"] in ("running", "abandoned")]  # no trial left open
    # the first evaluations take the sampler's proposal; from min_fit on the model ranks them
    assert any("expected hypervolume improvement" in r["filter_reason"] for r in screened)
    assert any("first proposal" in r["filter_reason"] for r in screened)
    # in the cold start the round's first measured candidate is evaluated, not one kept from before
    by_evaluation = sorted(chosen, key=lambda r: int(r["evaluation_number"]))
    assert [int(r["trial_number"]) for r in by_evaluation[:2]] == [int(measured[0]["trial_number"]),
                                                               int(measured[3]["trial_number"])]


@pytest.mark.slow
def test_screening_behind_the_dominance_filter_spends_the_budget(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget=26, filter="dominance"), components_factory=fake_components)
    assert summary.evaluated == 26
    rows = load_run(tmp_path / "run").rows
    filtered = [r for r in rows if r["outcome"] == "filtered"]
    screened = [r for r in filtered if r["filter_reason"].startswith("screened out")]
    assert screened
    assert not [r for r in rows if r["outcome"] in ("running", "abandoned")]


def test_screened_out_trials_are_failed_so_the_sampler_does_not_learn_from_them(tmp_path, fake_env):
    import optuna

    run_search(_config(tmp_path, budget=6), components_factory=fake_components)
    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(tmp_path / "run" / "study.journal")))
    study = optuna.load_study(study_name=optuna.get_all_study_names(storage)[0], storage=storage)
    states = {t.user_attrs.get("outcome"): t.state for t in study.get_trials()}
    assert states["filtered"] == optuna.trial.TrialState.FAIL
    assert states["evaluated"] == optuna.trial.TrialState.COMPLETE


def test_screen_one_is_the_unscreened_search(tmp_path, fake_env):
    one = run_search(_config(tmp_path, screen=1, out=str(tmp_path / "a")), components_factory=fake_components)
    plain = run_search(SearchConfig(budget=14, dvfs="modelled", filter="none", out=str(tmp_path / "b"), quiet=True),
                       components_factory=fake_components)
    rows = lambda p: [(r["arch_index"], r["outcome"]) for r in load_run(p).rows]  # noqa: E731
    assert rows(tmp_path / "a") == rows(tmp_path / "b")
    assert one.study_name == plain.study_name


def test_the_study_name_says_it_screens():
    assert "-tpe-screen4-seed0" in SearchConfig(screen=4).default_study_name
    assert "screen" not in SearchConfig().default_study_name


@pytest.mark.parametrize("value", [0, -1, 65, 2.5, True])
def test_a_bad_screen_is_refused(value):
    with pytest.raises(UsageError, match="--screen"):
        SearchConfig(screen=value).validate()


def test_screening_needs_accuracy_among_the_objectives():
    with pytest.raises(UsageError, match="--screen"):
        SearchConfig(screen=3, filter="none", objectives=("throughput", "energy")).validate()


def test_the_flag_reaches_the_config_and_bad_values_end_with_one_line(tmp_path, capsys):
    args = build_parser().parse_args(["--screen", "5", "--hardware", "recorded", "--out", str(tmp_path / "r")])
    assert config_from_args(args).screen == 5
    for bad in ("0", "x", "65"):
        with pytest.raises(SystemExit) as ei:
            raise SystemExit(main(["--screen", bad, "--hardware", "recorded", "--out", str(tmp_path / "r")]))
        err = capsys.readouterr().err.strip()
        assert ei.value.code == 2 and "--screen" in err and len(err.splitlines()) == 1, err


def test_help_describes_the_flag(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert "--screen K" in out and "wait for the next screening" in " ".join(out.split())
