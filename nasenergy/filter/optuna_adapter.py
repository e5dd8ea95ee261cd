"""Using a utilization filter inside an Optuna study.

A filtered candidate ends as a PRUNED trial whose cheap figures and decision are kept in its
``cheap`` user attribute (`nasenergy.filter.trial_attrs`, the representation the search uses too;
read it with `decision_of` and `measurement_of`). Optuna's pruners are for single-objective studies only, so the filter prunes by
raising `optuna.TrialPruned` inside the objective (`filter_trial`, `FilteredObjective`) or, in
ask-and-tell loops, by telling the study the trial was pruned (`apply_decision`).

The budget counts full evaluations only: run ``study.optimize(..., n_trials=cap,
callbacks=[CompleteTrialBudget(budget)])``; the callback stops the study once ``budget`` trials
are COMPLETE (trials answered from an earlier evaluation, marked `DUPLICATE_ATTR`, do not count),
and ``cap`` bounds the total number of trials, pruned ones included.

Optuna is imported lazily, when these helpers run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.filter.base import UtilizationFilter
from nasenergy.filter.records import DEFAULT_OBJECTIVES, OBJECTIVE_SENSES, Decision, FilterError
from nasenergy.filter.trial_attrs import record_decision
from nasenergy.measurement import Measurement
from nasenergy.pareto import Objective, ParetoFront

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial, Trial

DUPLICATE_ATTR = "duplicate_of"
"""User attribute of a trial answered from an earlier evaluation of the same network: that
trial's number. `CompleteTrialBudget` does not count such trials."""

def filter_trial(trial: Trial, decision: Decision, measurement: Measurement | None = None) -> None:
    """Inside an objective: record the decision, then raise `optuna.TrialPruned` if it skips.

    ``study.optimize`` turns the exception into a PRUNED trial; its user attributes stay.
    """
    import optuna

    record_decision(trial, decision, measurement)
    if not decision.admit:
        raise optuna.TrialPruned(decision.reason)


def apply_decision(
    study: Study,
    trial: Trial,
    decision: Decision,
    measurement: Measurement | None = None,
    *,
    key: Hashable | None = None,
    evaluated: MutableMapping[Hashable, tuple[int, Sequence[float]]] | None = None,
) -> bool:
    """In an ask-and-tell loop: record the decision; if it skips, tell the study the trial was pruned.

    With ``key`` and ``evaluated``, a network already evaluated is not evaluated again: when
    ``key`` is in ``evaluated`` (``key -> (first trial's number, its values)``), the trial is told
    the first evaluation's values and marked with `DUPLICATE_ATTR`, whatever the decision. After
    evaluating an admitted trial, store ``evaluated[key] = (trial.number, values)``.

    Returns:
        ``True`` when the candidate was admitted (evaluate it and ``study.tell`` its values),
        ``False`` when the trial has been finished (PRUNED, or answered from an earlier evaluation).
    """
    from optuna.trial import TrialState

    if key is not None and evaluated is not None and key in evaluated:
        number, values = evaluated[key]
        trial.set_user_attr(DUPLICATE_ATTR, number)
        study.tell(trial, list(values))
        return False
    record_decision(trial, decision, measurement)
    if not decision.admit:
        study.tell(trial, state=TrialState.PRUNED)
    return decision.admit


class CompleteTrialBudget:
    """An ``optimize`` callback that stops the study once ``n_complete`` trials are COMPLETE.

    Args:
        n_complete: the budget of full evaluations (pruned and failed trials do not count, nor
            COMPLETE ones answered from an earlier evaluation, marked `DUPLICATE_ATTR`).
    """

    def __init__(self, n_complete: int) -> None:
        if int(n_complete) < 1:
            raise FilterError(f"the budget must be at least 1 full evaluation, got {n_complete}")
        self.n_complete = int(n_complete)

    def __call__(self, study: Study, trial: FrozenTrial) -> None:
        from optuna.trial import TrialState

        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        done = sum(DUPLICATE_ATTR not in t.user_attrs for t in complete)
        if done >= self.n_complete:
            study.stop()


@dataclass(frozen=True)
class Candidate:
    """What a proposal step hands to `FilteredObjective`.

    Attributes:
        measurement: the candidate's cheap measurement.
        features: optional extra features for the filter (same layout for every candidate).
        payload: anything the evaluation step needs (e.g. the network).
    """

    measurement: Measurement
    features: Sequence[float] | None = None
    payload: Any = None


def _params_key(trial: Trial, candidate: Candidate) -> Hashable:
    """The default network key: the trial's parameters, in name order."""
    return tuple(sorted(trial.params.items()))


class FilteredObjective:
    """An Optuna objective that measures cheaply, filters, and fully evaluates only admitted candidates.

    For each trial: ``propose(trial)`` builds and measures a `Candidate`; the filter decides
    against the front of completed trials; a skipped trial ends PRUNED (figures kept); an admitted
    one is evaluated by ``evaluate(trial, candidate)``, which returns the accuracy (throughput and
    energy are then the measurement's) or the full objective vector in ``objectives`` order (e.g.
    figures at the energy-optimal clock). The filter observes each evaluation and the front is
    updated. Use with ``optuna.create_study(directions=objective.directions)`` and one worker
    (``n_jobs=1``).

    A network evaluated once is never evaluated again: a later trial with the same ``key`` is
    answered with the first evaluation's values, without asking the filter or calling
    ``evaluate``; it is marked with the first trial's number in its `DUPLICATE_ATTR` user
    attribute, and `CompleteTrialBudget` does not count it.

    Args:
        flt: the filter.
        propose: trial → `Candidate`.
        evaluate: (trial, candidate) → accuracy or objective vector.
        front: a front to start from (e.g. when resuming); default empty.
        key: (trial, candidate) → a hashable name of the candidate's network; default: the
            trial's parameters (``trial.params``), so two trials with the same parameters are the
            same network. Supply one where different parameters can build the same network.
        objectives: the objectives of the study's values, in order (default: the filter's own,
            else accuracy, throughput and energy); a pass-through filter (mode ``none``) has none of its own.

    Attributes:
        n_evaluated: trials fully evaluated (``evaluate`` called).
        n_skipped: trials the filter skipped (PRUNED).
        n_repeated: trials answered from an earlier evaluation of the same key.
    """

    def __init__(
        self,
        flt: UtilizationFilter,
        propose: Callable[[Trial], Candidate],
        evaluate: Callable[[Trial, Candidate], float | Sequence[float]],
        *,
        front: ParetoFront | None = None,
        key: Callable[[Trial, Candidate], Hashable] | None = None,
        objectives: Sequence[str] | None = None,
    ) -> None:
        self.filter = flt
        self.propose = propose
        self.evaluate = evaluate
        self.key = key if key is not None else _params_key
        self.n_evaluated = 0
        self.n_skipped = 0
        self.n_repeated = 0
        self._evaluated: dict[Hashable, tuple[int, tuple[float, ...]]] = {}
        self.objectives: tuple[str, ...] = tuple(
            objectives if objectives is not None else getattr(flt, "objectives", DEFAULT_OBJECTIVES))
        senses = [Objective(o, OBJECTIVE_SENSES[o]) for o in self.objectives]
        self.front = front if front is not None else ParetoFront(senses)
        if self.front.senses != tuple(o.sense for o in senses):
            raise FilterError(f"the front's senses {self.front.senses} do not match objectives {self.objectives}")

    @property
    def directions(self) -> list[str]:
        """Study directions matching the returned values."""
        return [OBJECTIVE_SENSES[o] for o in self.objectives]

    def __call__(self, trial: Trial) -> tuple[float, ...]:
        cand = self.propose(trial)
        if not isinstance(cand, Candidate):
            raise FilterError("propose() must return a nasenergy.filter.Candidate")
        key = self.key(trial, cand)
        first = self._evaluated.get(key)
        if first is not None:
            self.n_repeated += 1
            trial.set_user_attr(DUPLICATE_ATTR, first[0])
            return first[1]
        decision = self.filter.admit(cand.measurement, self.front, features=cand.features)
        if not decision.admit:
            self.n_skipped += 1
        filter_trial(trial, decision, cand.measurement)
        self.n_evaluated += 1
        result = self.evaluate(trial, cand)
        values = self._objective_vector(result, cand.measurement)
        by_name = dict(zip(self.objectives, values))
        self.filter.observe(
            cand.measurement,
            by_name["accuracy"],
            features=cand.features,
            throughput_img_per_s=by_name.get("throughput"),
            energy_j_per_img=by_name.get("energy"),
        )
        self.front.add(values, key=trial.number)
        self._evaluated[key] = (trial.number, tuple(values))
        return tuple(values)

    def _objective_vector(self, result: float | Sequence[float], m: Measurement) -> list[float]:
        if np.ndim(result) == 0:
            figures = {
                "accuracy": float(result),  # type: ignore[arg-type]
                "throughput": m.throughput_img_per_s,
                "energy": math.nan if m.energy_j_per_img is None else m.energy_j_per_img,
            }
            values = [float(figures[o]) for o in self.objectives]
        else:
            values = [float(v) for v in result]  # type: ignore[union-attr]
            if len(values) != len(self.objectives):
                raise FilterError(f"evaluate() returned {len(values)} values for objectives {self.objectives}")
        bad = [o for o, v in zip(self.objectives, values) if not math.isfinite(v)]
        if bad:
            raise FilterError(
                f"objective(s) {', '.join(bad)} unavailable for trial values; leave them out of the filter's objectives"
            )
        return values
