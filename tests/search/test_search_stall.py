"""The stall guard (``--patience``): a study whose candidates stop bringing new full evaluations
stops as ``stalled``; one that keeps finding new networks never does; resuming follows the value
given then."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from fake_parts import fake_components

from nasenergy.run.files import load_run
from nasenergy.search import SearchConfig, run_search
from nasenergy.search.command.cli import build_parser, config_from_args, main
from nasenergy.search.loop.pipeline import candidates_since_evaluation, is_stalled
from nasenergy.search.workers.runner import _short_reason

N_DISTINCT = 3
"""Distinct networks the stuck sampler proposes."""


class StuckSpace:
    """The real space, except that every suggestion is one of `N_DISTINCT` fixed networks (a
    sampler that keeps re-proposing what it has seen): the trial still samples its parameters."""

    def __init__(self, space: Any) -> None:
        self._space = space
        self._archs = [space.arch_at(i) for i in _distinct_indices(space, N_DISTINCT)]

    def suggest(self, trial: Any) -> Any:
        self._space.suggest(trial)
        return self._archs[trial.number % len(self._archs)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._space, name)


def _distinct_indices(space: Any, n: int) -> list[int]:
    """The first ``n`` cells of different canonical classes."""
    seen: dict[str, int] = {}
    for i in range(space.size):
        seen.setdefault(str(space.canonical(space.arch_at(i))), i)
        if len(seen) == n:
            break
    return list(seen.values())


def stuck_components(config: SearchConfig) -> Any:
    parts = fake_components(config)
    return dataclasses.replace(parts, space=StuckSpace(parts.space))


def _config(tmp_path, **kw) -> SearchConfig:
    # the guard itself: without a budget rescue (tests/search/test_search_rescue.py), it stops at the first stall
    base = dict(budget=6, dvfs="none", filter="none", out=str(tmp_path / "run"), quiet=True, budget_rescue=False)
    return SearchConfig(**{**base, **kw})


def test_a_stuck_sampler_stops_as_stalled_after_patience_candidates(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, patience=20), components_factory=stuck_components)
    assert summary.stop_reason == "stalled"
    assert summary.evaluated == N_DISTINCT
    assert summary.candidates == N_DISTINCT + 20  # the guard counts from the newest evaluation
    rows = load_run(tmp_path / "run").rows
    assert all(r["outcome"] == "duplicate" for r in rows[N_DISTINCT:])


def test_resume_counts_the_whole_study_and_follows_the_new_patience(tmp_path, fake_env):
    run_search(_config(tmp_path, patience=20), components_factory=stuck_components)
    again = run_search(_config(tmp_path, patience=20), components_factory=stuck_components)
    assert (again.stop_reason, again.candidates) == ("stalled", N_DISTINCT + 20)  # stops at once
    raised = run_search(_config(tmp_path, patience=35), components_factory=stuck_components)
    assert (raised.stop_reason, raised.candidates) == ("stalled", N_DISTINCT + 35)
    off = run_search(_config(tmp_path, patience=0, max_candidates=60), components_factory=stuck_components)
    assert (off.stop_reason, off.candidates) == ("max_candidates", 60)  # only the cap is left


def test_a_search_that_keeps_finding_networks_is_not_stopped(tmp_path, fake_env):
    summary = run_search(_config(tmp_path, budget=20, patience=15), components_factory=fake_components)
    assert summary.stop_reason == "budget" and summary.evaluated == 20
    rows = load_run(tmp_path / "run").rows
    gaps, run_ = [], 0
    for r in rows:
        run_ = 0 if r["outcome"] == "evaluated" else run_ + 1
        gaps.append(run_)
    assert max(gaps) < 15


def _trial(outcome: str | None) -> Any:
    return SimpleNamespace(user_attrs={} if outcome is None else {"outcome": outcome})


def test_the_count_starts_at_the_newest_evaluation_and_skips_running_trials():
    trials = [_trial(o) for o in ("evaluated", "duplicate", "evaluated", "duplicate", None, "filtered",
                                  "not_recorded", None)]
    assert candidates_since_evaluation(trials) == 3
    assert candidates_since_evaluation([_trial("duplicate")] * 4) == 4  # no evaluation yet
    assert candidates_since_evaluation([]) == 0
    assert is_stalled(trials, 3) and not is_stalled(trials, 4)
    assert not is_stalled(trials, 0)  # 0: the guard is off


def test_worker_processes_stopping_short_are_reported_as_stalled():
    study = SimpleNamespace(user_attrs={"worker:a": {"candidate_cap": 1000}})
    stuck = [_trial("evaluated")] + [_trial("duplicate")] * 50
    assert _short_reason(study, stuck, 50) == "stalled"
    assert _short_reason(study, stuck, 51) == "exhausted"
    assert _short_reason(study, stuck, 0) == "exhausted"
    capped = SimpleNamespace(user_attrs={"worker:a": {"candidate_cap": 51}})
    assert _short_reason(capped, stuck, 50) == "max_candidates"  # the cap is named first


def test_the_flag_reaches_the_config_and_bad_values_are_one_line_errors(tmp_path, capsys):
    assert config_from_args(build_parser().parse_args(["--patience", "0"])).patience == 0
    assert config_from_args(build_parser().parse_args([])).patience == SearchConfig().patience > 0
    for bad in ("-1", "many"):
        with pytest.raises(SystemExit) as ei:
            main(["--patience", bad, "--out", str(tmp_path / "run")])
        assert ei.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and "--patience" in err[0]
    with pytest.raises(Exception, match="--patience"):
        SearchConfig(patience=-1).validate()


def test_the_command_stops_with_its_own_status_and_one_line_when_stalled(tmp_path, fake_env, capsys):
    code = main(["--budget", "6", "--dvfs", "none", "--filter", "none", "--patience", "10", "--quiet",
                 "--out", str(tmp_path / "run")], components_factory=stuck_components)
    assert code == 4  # EXIT_STALLED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("stopped: stalled: the last 10 candidates"), err
    assert f"{N_DISTINCT} of 6 full evaluations" in err[0]
