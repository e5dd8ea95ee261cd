"""The budget rescue: at its defaults a search runs without budget keeping until the stall guard's
condition first holds, then switches it on study-wide instead of stopping; a second stall stops it."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from fake_parts import fake_components

from nasenergy.run import outcomes as oc
from nasenergy.run import trial_record as tr
from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.loop.redirect import REDIRECTED_FROM
from nasenergy.search.loop.rescue import (
    RESCUE_ATTR,
    TRICKLE_SHARE,
    begin_rescue,
    candidates_after,
    is_trickling,
    rescue_of,
)
from search_spaces import get_space

PATIENCE = 15
STUCK = (0, 1, 2)
"""Cells the converged sampler keeps proposing."""


class _Converged:
    """The real space, except that a trial the sampler proposed is one of the `STUCK` networks; a
    trial the worker enqueued (redirected) proposes its own parameters. With ``record_at`` set,
    the trial of that number records a budget rescue in the study, as another worker would."""

    def __init__(self, space: Any, record_at: int | None = None) -> None:
        self._space = space
        self._archs = [space.arch_at(i) for i in STUCK]
        self._record_at = record_at

    def suggest(self, trial: Any) -> Any:
        arch = self._space.suggest(trial)
        if trial.number == self._record_at:
            begin_rescue(trial.study, trial.number - 1, trial.number, 1)
        if REDIRECTED_FROM in trial.user_attrs:
            return arch
        return self._archs[trial.number % len(self._archs)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._space, name)


class _Trickle(_Converged):
    """`_Converged`, except that every `TRICKLE_EVERY`-th trial the sampler proposes a network not
    seen before: the study gains an evaluation every few candidates and never stalls."""

    def __init__(self, space: Any) -> None:
        super().__init__(space)
        stuck = {str(space.canonical(a)) for a in self._archs}
        self._fresh: list[Any] = []
        for i in range(space.size):
            arch = space.arch_at(i)
            key = str(space.canonical(arch))
            if key not in stuck and key not in {str(space.canonical(a)) for a in self._fresh}:
                self._fresh.append(arch)
            if len(self._fresh) == 40:
                break

    def suggest(self, trial: Any) -> Any:
        arch = super().suggest(trial)
        if REDIRECTED_FROM not in trial.user_attrs and trial.number and trial.number % TRICKLE_EVERY == 0:
            return self._fresh[trial.number // TRICKLE_EVERY]
        return arch


TRICKLE_PATIENCE = 100
"""Needs ceil(2 % x 100) = 2 evaluations per 100 candidates."""
TRICKLE_EVERY = 70
"""A fresh network every 70 candidates: shorter than the patience, so the stall guard never holds."""


def _converged(record_at: int | None = None):
    def factory(config: SearchConfig) -> Any:
        parts = fake_components(config)
        return dataclasses.replace(parts, space=_Converged(parts.space, record_at))
    return factory


def _config(tmp_path, **kw) -> SearchConfig:
    base = dict(budget=12, dvfs="none", filter="none", out=str(tmp_path / "run"), quiet=True, patience=PATIENCE)
    return SearchConfig(**{**base, **kw})


def _distinct_stuck() -> int:
    space = get_space("tss")
    return len({str(space.canonical(space.arch_at(i))) for i in STUCK})


def test_the_rescue_begins_only_at_the_stall_and_then_spends_the_budget(tmp_path, fake_env):
    summary = run_search(_config(tmp_path), components_factory=_converged())
    assert (summary.stop_reason, summary.evaluated) == ("budget", 12)
    began = summary.rescue
    stall_at = _distinct_stuck() + PATIENCE  # the evaluations of the stuck networks, then `patience` duplicates
    assert began == {"trial": stall_at - 1, "candidates": stall_at, "evaluations": _distinct_stuck()}
    rows = load_run(tmp_path / "run").rows
    assert [r["outcome"] for r in rows[_distinct_stuck():stall_at]] == ["duplicate"] * PATIENCE  # as without it
    env = load_run(tmp_path / "run").env
    assert env[RESCUE_ATTR]["redirected"] >= 12 - _distinct_stuck()
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"budget rescue: began after evaluation {_distinct_stuck()} at candidate {stall_at}" in report


def test_a_search_that_does_not_stall_never_rescues(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget=20), components_factory=fake_components)
    assert (summary.stop_reason, summary.evaluated, summary.rescue) == ("budget", 20, None)
    assert RESCUE_ATTR not in load_run(tmp_path / "run").env
    assert "budget rescue:" not in (tmp_path / "run" / "report.md").read_text()


def test_off_stops_at_the_first_stall_as_before(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget_rescue=False), components_factory=_converged())
    assert summary.stop_reason == "stalled" and summary.rescue is None
    assert (summary.evaluated, summary.candidates) == (_distinct_stuck(), _distinct_stuck() + PATIENCE)
    assert "--budget-rescue on" in summary.stall_cause


def test_a_second_stall_in_the_rescue_stops_and_says_so(tmp_path, fake_env):
    # redirection stays off (0) in the rescue; the yield has nothing to yield on: the rescue cannot help
    summary = run_search(_config(tmp_path, redirect_after=0), components_factory=_converged())
    assert summary.stop_reason == "stalled" and summary.rescue is not None
    assert summary.candidates == _distinct_stuck() + 2 * PATIENCE  # the count restarted at the rescue
    assert "in the budget rescue that began after evaluation" in summary.stall_cause
    assert "redirection was off" in summary.stall_cause


def test_an_explicit_setting_works_from_the_start_without_a_rescue(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, redirect_after=2), components_factory=_converged())
    assert (summary.stop_reason, summary.evaluated, summary.rescue) == ("budget", 12, None)
    assert summary.study_name.endswith("-redirect2-seed0")


def test_a_rescue_another_worker_began_is_followed_at_the_next_candidate(tmp_path, fake_env):
    # patience so large that this worker would never begin the rescue itself: it reads the study's
    summary = run_search(_config(tmp_path, patience=1000, max_candidates=300),
                         components_factory=_converged(record_at=6))
    assert (summary.stop_reason, summary.evaluated) == ("budget", 12)
    assert summary.rescue == {"trial": 5, "candidates": 6, "evaluations": 1}
    assert summary.candidates < 60


def test_off_ignores_a_rescue_recorded_in_the_study(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget_rescue=False, patience=40), components_factory=_converged(record_at=6))
    assert summary.stop_reason == "stalled" and summary.rescue is None


def test_the_rescue_record():
    class Study:
        user_attrs: dict[str, Any] = {}

        def set_user_attr(self, key: str, value: Any) -> None:
            self.user_attrs = {**self.user_attrs, key: value}

    study = Study()
    assert rescue_of(study.user_attrs) is None and candidates_after(None) == -1
    first = begin_rescue(study, 41, 42, 7)
    assert begin_rescue(study, 50, 51, 7) == first == rescue_of(study.user_attrs)  # the first one stays
    assert candidates_after(first) == 41


@pytest.mark.parametrize("kw", [{}, {"budget_rescue": False}])
def test_the_defaults_keep_the_study_name(kw):
    name = SearchConfig(**kw).resolved_study_name
    assert name == "tss-cifar10-acc.thr.energy-fp16-b1024-dominance0.95-feat.size.structure-dvfs.auto-tpe-seed0"
    assert not {"redirect_after", "filter_yield_after", "budget_rescue"} & set(SearchConfig(**kw).study_defining())


def _trickle(config: SearchConfig) -> Any:
    parts = fake_components(config)
    return dataclasses.replace(parts, space=_Trickle(parts.space))


def _outcomes(*outcomes: str | None) -> list[Any]:
    return [SimpleNamespace(user_attrs={} if o is None else {tr.OUTCOME: o}) for o in outcomes]


def test_is_trickling_counts_evaluations_in_the_last_patience_finished_candidates():
    assert TRICKLE_SHARE == pytest.approx(0.02)
    ev, dup = oc.EVALUATED, oc.DUPLICATE
    assert is_trickling(_outcomes(ev, *[dup] * 99), 100)  # 1 of the last 100 < 2
    assert not is_trickling(_outcomes(ev, ev, *[dup] * 98), 100)  # 2 of 100
    assert is_trickling(_outcomes(ev, ev, ev, *[dup] * 99), 100)  # the third-newest is outside the window
    assert not is_trickling(_outcomes(*[dup] * 99), 100)  # fewer than `patience` finished: not yet
    assert not is_trickling(_outcomes(ev, *[dup] * 98, None, None), 100)  # in progress: not counted
    assert is_trickling(_outcomes(*[dup] * 5), 5)  # at least one evaluation needed
    assert not is_trickling(_outcomes(*[dup] * 500), 0) and not is_trickling(_outcomes(*[dup] * 500), 500, share=0)


def test_a_trickle_begins_the_rescue_where_the_stall_guard_never_would(tmp_path, fake_env):
    config = _config(tmp_path, budget=14, patience=TRICKLE_PATIENCE, max_candidates=2000)
    summary = run_search(config, components_factory=_trickle)
    assert (summary.stop_reason, summary.evaluated) == ("budget", 14)
    began = summary.rescue
    assert began is not None
    # the rescue began at the first window of 100 finished candidates with fewer than 2 evaluations
    rows = load_run(tmp_path / "run").rows
    outcomes = [r["outcome"] for r in rows[:began["candidates"]]]
    assert sum(o == "evaluated" for o in outcomes[-TRICKLE_PATIENCE:]) < 2
    assert all(sum(o == "evaluated" for o in outcomes[k - TRICKLE_PATIENCE:k]) >= 2
               for k in range(TRICKLE_PATIENCE, len(outcomes)))
    gaps = [b - a for a, b in zip([0, *[i for i, o in enumerate(outcomes) if o == "evaluated"]],
                                  [i for i, o in enumerate(outcomes) if o == "evaluated"])]
    assert max(gaps, default=0) < TRICKLE_PATIENCE  # the stall guard's condition never held


def test_without_the_rescue_a_trickle_searches_on_unchanged(tmp_path, fake_env):
    config = _config(tmp_path, budget=14, patience=TRICKLE_PATIENCE, max_candidates=400, budget_rescue=False)
    summary = run_search(config, components_factory=_trickle)
    assert summary.rescue is None and summary.stop_reason == "max_candidates"
    assert summary.evaluated < 14
