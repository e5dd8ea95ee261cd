"""The journal file: Optuna's own backend reads what it writes, and concurrent writers interleave
whole logs only."""

from __future__ import annotations

import multiprocessing

import optuna

from nasenergy.search.journal import JournalFile


def _study(path: str, name: str = "s") -> optuna.Study:
    storage = optuna.storages.JournalStorage(JournalFile(path))
    return optuna.create_study(storage=storage, study_name=name, load_if_exists=True, directions=["maximize"])


def _write_trials(path: str, n: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = _study(path)
    for _ in range(n):
        trial = study.ask()
        x = trial.suggest_float("x", 0.0, 1.0)
        trial.set_user_attr("note", "y" * 300)  # long lines, so torn writes would show
        study.tell(trial, x)


def test_optunas_own_backend_reads_the_journal(tmp_path):
    path = str(tmp_path / "study.journal")
    _write_trials(path, 5)
    theirs = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(path))
    trials = optuna.load_study(study_name="s", storage=theirs).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE"] * 5
    assert [t.value for t in trials] == [t.params["x"] for t in trials]
    assert _study(path).get_trials()[3].user_attrs["note"] == "y" * 300


def test_concurrent_writers_lose_and_tear_nothing(tmp_path):
    path = str(tmp_path / "study.journal")
    _study(path)  # create the study once
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_trials, args=(path, 15)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    trials = _study(path).get_trials()
    assert len(trials) == 45 and sorted(t.number for t in trials) == list(range(45))
    assert all(t.state.name == "COMPLETE" and t.user_attrs["note"] == "y" * 300 for t in trials)
