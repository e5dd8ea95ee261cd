"""The budget rescue: at its defaults a search runs without budget keeping until the stall guard's
condition first holds, then switches it on study-wide instead of stopping; a second stall stops it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from fake_parts import fake_components
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.redirect import REDIRECTED_FROM
from nasenergy.search.rescue import RESCUE_ATTR, begin_rescue, candidates_after, rescue_of
from nasenergy.search.run_files import load_run
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
