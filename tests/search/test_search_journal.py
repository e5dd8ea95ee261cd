"""The journal file: Optuna's own backend reads what it writes, and concurrent writers interleave
whole logs only."""

from __future__ import annotations

import dataclasses
import functools
import json
import multiprocessing
import tempfile
from pathlib import Path

import optuna
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nasenergy.search.storage.journal import JournalDamagedError, JournalFile


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


# ----------------------------------------------------------------------------- torn last records


def _complete_log(path) -> tuple[bytes, bytes]:
    """The journal's bytes before its last line, and that last line (a trial told COMPLETE)."""
    data = Path(path).read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    last = data[start:]
    assert json.loads(last)["op_code"] == 6  # the tell: trial state and values
    return data[:start], last


def _torn_copy(tmp_path, prefix: bytes, torn: bytes, k: int) -> Path:
    folder = tmp_path / f"cut{k}"
    folder.mkdir()
    path = folder / "study.journal"
    path.write_bytes(prefix + torn)
    return path


def _check_whole(path: Path) -> None:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    for line in data.splitlines():
        json.loads(line)


def test_a_torn_last_record_is_set_aside_at_every_byte_offset_and_the_study_resumes(tmp_path):
    source = tmp_path / "source.journal"
    _write_trials(str(source), 3)
    prefix, last = _complete_log(source)
    for k in range(len(last)):  # k bytes of the last record reached the file (k = 0: none)
        path = _torn_copy(tmp_path, prefix, last[:k], k)
        reports: list[str] = []
        storage = optuna.storages.JournalStorage(JournalFile(str(path), report=reports.append))
        study = optuna.load_study(study_name="s", storage=storage)
        sides = sorted(path.parent.glob("study.journal.torn-*"))
        if k == 0:
            assert reports == [] and sides == []
        else:
            assert len(reports) == 1 and "\n" not in reports[0] and sides[0].name in reports[0]
            assert [s.read_bytes() for s in sides] == [last[:k]]
        assert path.read_bytes() == prefix
        trials = study.get_trials()
        assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE", "RUNNING"]
        study.tell(trials[2].number, 0.5)  # resume: finish the cut trial, then carry on
        trial = study.ask()
        study.tell(trial, trial.suggest_float("x", 0.0, 1.0))
        _check_whole(path)
        theirs = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(str(path)))
        assert [t.state.name for t in optuna.load_study(study_name="s", storage=theirs).get_trials()] == ["COMPLETE"] * 4


def test_an_append_never_lands_on_a_partial_line(tmp_path):
    path = tmp_path / "study.journal"
    reports: list[str] = []
    journal = JournalFile(str(path), report=reports.append)  # opened before another process tears the file
    journal.append_logs([{"op_code": 0, "worker_id": "w", "study_name": "s", "directions": [1]}])
    with path.open("ab") as f:
        f.write(b'{"op_code":4,"worker_id":"x","study_id":0,"datetime_st')  # a writer dies mid-line
    journal.append_logs([{"op_code": 1, "worker_id": "w", "study_id": 0}])
    _check_whole(path)
    assert [log["op_code"] for log in journal.read_logs(0)] == [0, 1]
    assert len(reports) == 1 and len(list(tmp_path.glob("study.journal.torn-*"))) == 1


def test_a_damaged_whole_line_is_refused_in_one_line(tmp_path):
    path = tmp_path / "study.journal"
    path.write_bytes(b'{"op_code":0}\nnot json\n')
    with pytest.raises(JournalDamagedError) as ei:
        list(JournalFile(str(path)).read_logs(0))
    assert "line 2" in str(ei.value) and "\n" not in str(ei.value)
    path.write_bytes(b'{"op_code":0}\n[1, 2]\n')
    with pytest.raises(JournalDamagedError):
        list(JournalFile(str(path)).read_logs(0))


class _Crash(BaseException):
    """The process dying (nothing after it may touch the storage)."""


def _tear_the_nth_tell(monkeypatch, nth: int, cut: int) -> dict:
    """Make the ``nth`` COMPLETE tell of a search write only ``cut`` bytes of its line, then crash."""
    original = JournalFile.append_logs
    state = {"tells": 0, "dead": False, "torn": b""}

    def append(self, logs):
        if state["dead"]:
            raise _Crash
        if any(log.get("op_code") == 6 and log.get("state") == 1 for log in logs):
            state["tells"] += 1
            if state["tells"] == nth:
                data = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs).encode()
                state["torn"] = data[: cut % len(data)]
                with open(self.path, "ab") as f:
                    f.write(state["torn"])
                state["dead"] = True
                raise _Crash
        return original(self, logs)

    monkeypatch.setattr(JournalFile, "append_logs", append)
    return state


@pytest.mark.parametrize("cut", [1, 2, 37, 120, -2, -1])
def test_a_search_torn_mid_tell_resumes_to_the_exact_budget(tmp_path, fake_env, monkeypatch, capsys, cut):
    from fake_parts import fake_components

    from nasenergy.run.files import load_run
    from nasenergy.search import SearchConfig, run_search

    config = SearchConfig(budget=5, dvfs="none", filter="none", quiet=True, out=str(tmp_path / "run"))
    torn = _tear_the_nth_tell(monkeypatch, 3, cut)
    with pytest.raises(_Crash):
        run_search(config, components_factory=fake_components)
    monkeypatch.undo()
    monkeypatch.setenv("NASENERGY_TEST_TABLE", fake_env["NASENERGY_TEST_TABLE"])
    capsys.readouterr()

    summary = run_search(config, components_factory=fake_components)
    err = capsys.readouterr().err
    assert summary.stop_reason == "budget" and summary.evaluated == 5
    warnings = [line for line in err.splitlines() if "partial record" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ")
    sides = list((tmp_path / "run").glob("study.journal.torn-*"))
    assert [s.read_bytes() for s in sides] == [torn["torn"]]
    _check_whole(tmp_path / "run" / "study.journal")
    evaluated = [r for r in load_run(tmp_path / "run").rows if r["outcome"] == "evaluated"]
    assert len(evaluated) == 5 and len({r["network"] for r in evaluated}) == 5  # none lost, none twice


def test_a_log_optuna_cannot_replay_is_refused_in_one_line(tmp_path):
    from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage

    path = tmp_path / "study.journal"
    path.write_bytes(b'{"op_code":0}\n')  # a study created without a name
    with pytest.raises(JournalDamagedError, match="cannot replay") as ei:
        open_optuna_storage(resolve_storage(None, tmp_path))
    assert "\n" not in str(ei.value)


@functools.cache
def _valid_journal() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "study.journal"
        _write_trials(str(path), 3)
        return path.read_bytes()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 20) | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["op_code", "worker_id", "study_id", "trial_id", "study_name", "state", "values",
                         "directions", "param_name", "user_attr", "x"]), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_damaged_journal_opens_or_is_refused_in_one_line(data):
    from nasenergy.errors import NasEnergyError
    from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage

    lines = _valid_journal().splitlines(keepends=True)
    at = data.draw(st.integers(0, len(lines) - 1))
    if data.draw(st.booleans()):
        log = json.loads(lines[at])
        log[data.draw(st.sampled_from(sorted(log)))] = data.draw(_JSON)
        lines[at] = json.dumps(log).encode() + b"\n"
    else:
        lines[at] = json.dumps(data.draw(_JSON)).encode() + b"\n"
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "study.journal").write_bytes(b"".join(lines))
        try:
            storage = open_optuna_storage(resolve_storage(None, Path(folder)))
        except NasEnergyError as exc:
            assert "\n" not in str(exc)
            return
        storage.get_all_studies()


# ----------------------------------------------------------------------------- a journal cut anywhere

_CUT_FRACTIONS = (0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.99)


@pytest.mark.slow
def test_a_journal_cut_at_any_offset_resumes_to_exactly_the_budget(tmp_path, fake_env, capsys):
    """The claims count only evaluations the journal still holds: a journal cut at any of 10
    offsets (its last 5 bytes, or anywhere in the middle) resumes to exactly ``budget`` COMPLETE
    trials, none evaluated twice, with no trial left running."""
    import shutil

    from fake_parts import fake_components

    from nasenergy.search import SearchConfig, run_search
    from nasenergy.search.storage.claims import ClaimStore
    from nasenergy.search.storage.storages import resolve_storage

    budget = 12
    source = tmp_path / "source"
    config = SearchConfig(budget=budget, dvfs="none", quiet=True, out=str(source))
    assert run_search(config, components_factory=fake_components).evaluated == budget
    size = (source / "study.journal").stat().st_size
    offsets = [size - 5, *(int(size * f) for f in _CUT_FRACTIONS)]
    for offset in offsets:
        run = tmp_path / f"cut{offset}"
        shutil.copytree(source, run)
        with (run / "study.journal").open("r+b") as f:
            f.truncate(offset)
        capsys.readouterr()
        summary = run_search(dataclasses.replace(config, out=str(run)), components_factory=fake_components)
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert (summary.stop_reason, summary.evaluated) == ("budget", budget), (offset, summary)
        trials = _run_trials(run)
        complete = [t for t in trials if t.state.name == "COMPLETE"]
        assert len(complete) == budget, offset
        assert all(t.user_attrs["outcome"] == "evaluated" for t in complete)
        assert len({t.user_attrs["candidate"]["network"] for t in complete}) == budget  # none twice
        assert not [t.number for t in trials if t.state.name == "RUNNING"]
        claims = ClaimStore(resolve_storage(None, run).claims_url, summary.study_name)
        try:
            status = claims.status()
        finally:
            claims.close()
        assert (status.done, status.running) == (budget, 0), offset


def _run_trials(run: Path) -> list:
    from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage

    storage = open_optuna_storage(resolve_storage(None, run))
    (summary,) = optuna.get_all_study_summaries(storage)
    return optuna.load_study(study_name=summary.study_name, storage=storage).get_trials()
