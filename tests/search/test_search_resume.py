"""Interrupted runs: ``kill -9`` loses no finished evaluation; Ctrl-C stops cleanly; both resume
to exactly the budget."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest
from fake_parts import DELAY_ENV, start_search

from nasenergy.run.files import load_run


def _done(run_dir: Path) -> int:
    path = run_dir / "claims.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=30) as conn:
        try:
            return conn.execute("SELECT count(*) FROM nasenergy_cells WHERE status = 'done'").fetchone()[0]
        except sqlite3.OperationalError:  # tables not created yet
            return 0


def _wait_for(run_dir: Path, n: int, proc, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while _done(run_dir) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.1)


def _trials(run_dir: Path):
    import optuna

    from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage

    storage = open_optuna_storage(resolve_storage(None, run_dir))
    return optuna.load_study(study_name=optuna.get_all_study_names(storage)[0], storage=storage).get_trials()


@pytest.mark.slow
def test_kill_9_then_resume_loses_nothing_and_keeps_the_budget_exact(tmp_path, fake_env):
    run_dir = tmp_path / "run"
    # 19 evaluations of at least 0.15 s each remain after the 5th: seconds of slack on a slow machine.
    args = ["--budget", "24", "--filter", "none", "--dvfs", "none", "--quiet", "--out", str(run_dir)]
    proc = start_search(args, {**fake_env, DELAY_ENV: "0.15"})
    _wait_for(run_dir, 5, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)

    before = _trials(run_dir)
    finished = {t.number: (t.values, t.user_attrs["candidate"]["network"]) for t in before if t.state.name == "COMPLETE"}
    assert len(finished) >= 5
    assert not (run_dir / "candidates.csv").exists()  # it died before writing its outputs

    resumed = start_search(args, fake_env)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err

    after = {t.number: t for t in _trials(run_dir)}
    for number, (values, canonical) in finished.items():  # every finished evaluation survived as it was
        assert after[number].state.name == "COMPLETE"
        assert after[number].values == values and after[number].user_attrs["candidate"]["network"] == canonical
    assert not [t for t in after.values() if t.state.name == "RUNNING"]
    rows = load_run(run_dir).rows
    evaluated = [r for r in rows if r["outcome"] == "evaluated"]
    assert len(evaluated) == 24 == _done(run_dir)
    assert len({r["network"] for r in evaluated}) == 24
    # A candidate cut short by the kill is either finished by the resumed run (its claim adopted)
    # or marked abandoned; none is left half-done.
    cut = [t for t in before if t.state.name == "RUNNING"]
    assert all(after[t.number].user_attrs.get("outcome") in ("evaluated", "abandoned") for t in cut)


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_writes_files_and_prints_the_resume_command(tmp_path, fake_env):
    run_dir = tmp_path / "run"
    args = ["--budget", "20", "--filter", "none", "--dvfs", "none", "--quiet", "--out", str(run_dir)]
    proc = start_search(args, {**fake_env, DELAY_ENV: "0.15"})
    _wait_for(run_dir, 3, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "resume with" in err and f"--out {run_dir}" in err and "Traceback" not in err
    rows = load_run(run_dir).rows  # the outputs were written
    n_done = sum(r["outcome"] == "evaluated" for r in rows)
    assert 3 <= n_done < 20
    assert not [r for r in rows if r["state"] == "RUNNING"]

    resumed = start_search(args, fake_env)
    _, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert sum(r["outcome"] == "evaluated" for r in load_run(run_dir).rows) == 20


BUDGET = 40


def _search(out: Path, *, sampler: str = "tpe", cap: int | None = None):
    from nasenergy.search import SearchConfig, run_search

    config = SearchConfig(budget=BUDGET, seed=0, sampler=sampler, quiet=True, out=str(out), max_candidates=cap)
    return run_search(config, resume_command=f"python -m nasenergy.search --budget {BUDGET}")


def _history(run_dir: Path) -> list[tuple]:
    run = load_run(run_dir)
    return [(r["trial_number"], r["outcome"], r["network"], r.get("accuracy_pct"), bool(r.get("on_front")))
            for r in run.rows]


def _stopped_and_resumed(tmp_path: Path, sampler: str, cuts: tuple[float, ...]) -> tuple[list, list]:
    """The history of a run made in one go, and that of the same run stopped at the candidate cap
    at each of ``cuts`` (fractions of the way from the budget to the whole run's candidates),
    each time resumed with a new sampler (as a new process has)."""
    whole = tmp_path / "whole"
    assert _search(whole, sampler=sampler).stop_reason == "budget"
    n = len(load_run(whole).rows)
    assert n > BUDGET + 4, "the filter skipped too few candidates to stop the run part-way"
    cut = tmp_path / "cut"
    for at in sorted({BUDGET + round(f * (n - BUDGET)) for f in cuts}):
        assert _search(cut, sampler=sampler, cap=at).stop_reason == "max_candidates"
    assert _search(cut, sampler=sampler).stop_reason == "budget"
    return _history(whole), _history(cut)


def test_a_resumed_run_ends_as_an_uninterrupted_one(tmp_path):
    """Stopped part-way and run again, a search proposes, filters and evaluates exactly what the
    same search run through would have: same candidates, same evaluations, same front."""
    whole, resumed = _stopped_and_resumed(tmp_path, "tpe", (0.5,))
    assert resumed == whole


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["tpe", "nsga2", "random"])
def test_a_run_stopped_twice_ends_as_an_uninterrupted_one(tmp_path, sampler):
    whole, resumed = _stopped_and_resumed(tmp_path, sampler, (0.3, 0.7))
    assert resumed == whole
