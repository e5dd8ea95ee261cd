"""The Optuna adapter in real in-memory studies: pruning, kept figures, the budget."""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState

from nasenergy.filter import (
    CHEAP_ATTR,
    DUPLICATE_ATTR,
    Candidate,
    CompleteTrialBudget,
    FilteredObjective,
    FilterError,
    PassThroughFilter,
    ThresholdFilter,
    apply_decision,
    decision_of,
    filter_trial,
    measurement_of,
    synthetic_observations,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def calibrated() -> ThresholdFilter:
    return ThresholdFilter(target_recall=0.9, min_fit=10).fit(synthetic_observations(200, seed=1))


def _study(directions) -> optuna.Study:
    return optuna.create_study(directions=directions, sampler=optuna.samplers.RandomSampler(seed=0))


def _pool():
    return synthetic_observations(200, seed=5)


def test_filtered_objective_prunes_and_keeps_figures(calibrated) -> None:
    flt = ThresholdFilter.from_dict(calibrated.to_dict())
    tau = flt.calibration.threshold
    pool = _pool()

    def propose(trial):
        o = pool[trial.suggest_int("i", 0, len(pool) - 1)]
        return Candidate(measurement=o.measurement, payload=o)

    evaluated = []

    def evaluate(trial, cand):
        evaluated.append(trial.number)
        return cand.payload.accuracy

    objective = FilteredObjective(flt, propose, evaluate)
    assert objective.directions == ["maximize", "maximize", "minimize"]
    study = _study(objective.directions)
    n_before = flt.n_observed
    study.optimize(objective, n_trials=40)

    pruned = study.get_trials(states=(TrialState.PRUNED,))
    answered = study.get_trials(states=(TrialState.COMPLETE,))
    complete = [t for t in answered if DUPLICATE_ATTR not in t.user_attrs]
    assert pruned and complete
    assert [t.number for t in complete] == evaluated
    for t in pruned:
        decision, measurement = decision_of(t), measurement_of(t)
        assert decision["admit"] is False
        assert measurement["utilization"] < tau
        assert decision["threshold"] == tau
        assert "τ" in decision["reason"]
        assert t.user_attrs[CHEAP_ATTR] == {"measurement": measurement, "decision": decision}
    for t in answered:
        o = pool[t.params["i"]]
        assert t.values == [o.accuracy, o.measurement.throughput_img_per_s, o.measurement.energy_j_per_img]
    assert flt.n_observed == n_before + len(complete)
    assert len(objective.front) >= 1
    assert set(objective.front.keys) <= {t.number for t in complete}


def test_budget_counts_only_complete_trials(calibrated) -> None:
    flt = ThresholdFilter.from_dict(calibrated.to_dict())
    pool = _pool()

    def propose(trial):
        o = pool[trial.suggest_int("i", 0, 199)]
        return Candidate(o.measurement, payload=o)

    objective = FilteredObjective(flt, propose, lambda trial, cand: cand.payload.accuracy)
    study = _study(objective.directions)
    study.optimize(objective, n_trials=500, callbacks=[CompleteTrialBudget(8)])
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert sum(DUPLICATE_ATTR not in t.user_attrs for t in complete) == 8
    assert len(study.get_trials(states=(TrialState.PRUNED,))) > 0
    with pytest.raises(FilterError):
        CompleteTrialBudget(0)


def test_a_network_is_never_trained_twice(calibrated) -> None:
    """A space of six networks and a budget of six: every network is trained exactly once; a
    repeat is answered with the first result and marked, and the budget does not count it."""
    pool = _pool()[:6]
    trained = []

    def propose(trial):
        o = pool[trial.suggest_int("depth", 1, 2) * 3 - 3 + trial.suggest_int("width", 0, 2)]
        return Candidate(o.measurement, payload=o)

    def evaluate(trial, cand):
        trained.append((trial.params["depth"], trial.params["width"]))
        return cand.payload.accuracy

    flt = PassThroughFilter()
    objective = FilteredObjective(flt, propose, evaluate)
    study = _study(objective.directions)
    study.optimize(objective, n_trials=300, callbacks=[CompleteTrialBudget(6)])
    assert sorted(trained) == sorted(set(trained)) and len(trained) == 6
    assert objective.n_evaluated == 6 and objective.n_skipped == 0
    repeats = [t for t in study.trials if DUPLICATE_ATTR in t.user_attrs]
    assert objective.n_repeated == len(repeats) > 0
    first = {(t.params["depth"], t.params["width"]): t for t in study.trials if DUPLICATE_ATTR not in t.user_attrs}
    for t in repeats:
        original = first[(t.params["depth"], t.params["width"])]
        assert t.user_attrs[DUPLICATE_ATTR] == original.number and t.values == original.values
    assert flt.n_observed == 6


def test_a_key_of_your_own_names_the_network(calibrated) -> None:
    """With ``key=``, trials whose parameters differ but build the same network are trained once."""
    pool = _pool()
    trained = []

    def propose(trial):
        trial.suggest_int("spelling", 0, 9)  # ten spellings of one network
        return Candidate(pool[0].measurement, payload=pool[0])

    def evaluate(trial, cand):
        trained.append(trial.number)
        return cand.payload.accuracy

    objective = FilteredObjective(PassThroughFilter(), propose, evaluate, key=lambda trial, cand: "the network")
    study = _study(objective.directions)
    study.optimize(objective, n_trials=12)
    assert trained == [0] and objective.n_repeated == 11


def test_ask_and_tell_answers_a_network_already_evaluated() -> None:
    """``apply_decision(..., key=, evaluated=)``: each of four networks is evaluated once; repeats
    are told the first result and marked."""
    pool = _pool()[:4]
    study = _study(["maximize", "maximize", "minimize"])
    flt, evaluated, trained = PassThroughFilter(), {}, []
    for _ in range(30):
        trial = study.ask()
        i = trial.suggest_int("i", 0, 3)
        m = pool[i].measurement
        if apply_decision(study, trial, flt.admit(m, None), m, key=i, evaluated=evaluated):
            trained.append(i)
            values = (pool[i].accuracy, m.throughput_img_per_s, m.energy_j_per_img)
            study.tell(trial, values)
            evaluated[i] = (trial.number, values)
    assert sorted(trained) == [0, 1, 2, 3]
    repeats = [t for t in study.trials if DUPLICATE_ATTR in t.user_attrs]
    assert len(repeats) == 26 and all(t.state == TrialState.COMPLETE for t in repeats)
    for t in repeats:
        assert t.values == list(evaluated[t.params["i"]][1]) and t.user_attrs[DUPLICATE_ATTR] == evaluated[t.params["i"]][0]


def test_ask_and_tell(calibrated) -> None:
    pool = _pool()
    study = _study(["maximize", "maximize", "minimize"])
    told = {"pruned": 0, "complete": 0}
    for _ in range(30):
        trial = study.ask()
        o = pool[trial.suggest_int("i", 0, 199)]
        decision = calibrated.admit(o.measurement)
        if apply_decision(study, trial, decision, o.measurement):
            study.tell(trial, [o.accuracy, o.objective("throughput"), o.objective("energy")])
            told["complete"] += 1
        else:
            told["pruned"] += 1
    assert told["pruned"] > 0 and told["complete"] > 0
    pruned = study.get_trials(states=(TrialState.PRUNED,))
    assert len(pruned) == told["pruned"]
    assert all(decision_of(t)["admit"] is False and "utilization" in measurement_of(t) for t in pruned)


def test_filter_trial_inside_a_single_objective_study(calibrated) -> None:
    pool = _pool()

    def objective(trial):
        o = pool[trial.suggest_int("i", 0, 199)]
        filter_trial(trial, calibrated.admit(o.measurement), o.measurement)
        return o.accuracy

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(objective, n_trials=20)
    states = {t.state for t in study.trials}
    assert states == {TrialState.PRUNED, TrialState.COMPLETE}


def test_missing_energy_objective_is_a_clear_error(calibrated) -> None:
    o = synthetic_observations(1, seed=0, with_energy=False)[0]
    objective = FilteredObjective(
        ThresholdFilter(min_fit=1000), lambda t: Candidate(o.measurement), lambda t, c: 80.0
    )
    study = _study(objective.directions)
    with pytest.raises(FilterError, match="energy"):
        study.optimize(objective, n_trials=1)
    two = FilteredObjective(
        ThresholdFilter(min_fit=1000, objectives=("accuracy", "throughput")),
        lambda t: Candidate(o.measurement),
        lambda t, c: 80.0,
    )
    study2 = _study(two.directions)
    study2.optimize(two, n_trials=2)
    assert all(t.state == TrialState.COMPLETE for t in study2.trials)


def test_decisions_of_earlier_versions_are_still_read() -> None:
    """Trials recorded with the flat ``filter_<field>`` / ``measurement`` attributes of earlier versions."""
    old = {"filter_admit": False, "filter_reason": "utilization 0.1 < τ", "measurement": {"utilization": 0.1}}
    assert decision_of(old) == {"admit": False, "reason": "utilization 0.1 < τ"}
    assert measurement_of(old) == {"utilization": 0.1}
    assert decision_of({}) is None and measurement_of({}) is None
