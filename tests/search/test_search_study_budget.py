"""The study is the one record of what was spent: a claims database deleted, emptied, damaged or
older than the study never lets a resumed run spend the budget again, and a study that cannot say
what it spent, or that was spent against a larger budget, is refused in one line."""

from __future__ import annotations

import csv
import json
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest
from fake_parts import fake_components

from nasenergy.search.command.cli import main

BUDGET = 6


def _search(out: Path, budget: int = BUDGET, *extra: str) -> int:
    argv = ["--budget", str(budget), "--filter", "none", "--dvfs", "none", "--quiet", "--out", str(out), *extra]
    return main(argv, components_factory=fake_components)


def _evaluated(out: Path) -> int:
    with (out / "candidates.csv").open() as f:
        return sum(1 for row in csv.DictReader(f) if row["outcome"] == "evaluated")


def _report_line(out: Path) -> str:
    return next(line for line in (out / "report.md").read_text().splitlines() if "full accuracy evaluations" in line)


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def finished(tmp_path, fake_env) -> Path:
    """A run folder whose study spent its budget of `BUDGET` (a pristine copy: ``finished / 'copy'``)."""
    out = tmp_path / "run"
    assert _search(out) == 0
    assert _evaluated(out) == BUDGET
    shutil.copytree(out, tmp_path / "pristine")
    return out


@pytest.fixture
def larger(tmp_path, fake_env) -> Path:
    """A run folder of the same study with a budget of `BUDGET` + 4."""
    out = tmp_path / "larger"
    assert _search(out, BUDGET + 4) == 0
    return out


@pytest.mark.parametrize("damage", ["delete", "empty", "drop_cells", "older_copy"])
def test_a_lost_claims_database_is_rebuilt_from_the_study_and_spends_nothing_again(finished, tmp_path, damage,
                                                                                   capsys):
    claims = finished / "claims.sqlite"
    if damage == "delete":
        claims.unlink()
    elif damage == "empty":
        claims.write_bytes(b"")
    elif damage == "drop_cells":
        with sqlite3.connect(claims) as conn:
            conn.execute("DELETE FROM nasenergy_cells")
    else:  # the claims of a shorter run of the same study: a first run to 3, kept, then the study went on
        short = tmp_path / "short"
        assert _search(short, 3) == 0
        shutil.copy(short / "claims.sqlite", claims)
    capsys.readouterr()
    assert _search(finished) == 0
    assert "restored from the study" in capsys.readouterr().err
    assert _evaluated(finished) == BUDGET
    assert f"**{BUDGET} of {BUDGET}**" in _report_line(finished)
    with sqlite3.connect(claims) as conn:
        assert conn.execute("SELECT count(*) FROM nasenergy_cells WHERE status = 'done'").fetchone()[0] == BUDGET


def test_a_lost_claims_database_after_a_stop_short_of_the_budget_ends_at_exactly_the_budget(tmp_path, fake_env):
    out = tmp_path / "run"
    assert _search(out, BUDGET, "--max-candidates", str(BUDGET)) in (0, 3)
    first = _evaluated(out)
    assert first <= BUDGET
    (out / "claims.sqlite").unlink()
    assert _search(out) == 0
    assert _evaluated(out) == BUDGET
    assert json.loads((out / "env.json").read_text())["stop_reason"] == "budget"


def test_a_damaged_claims_database_is_refused_with_the_repair_and_rebuilt_after_it(finished, capsys):
    claims = finished / "claims.sqlite"
    data = bytearray(claims.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a page torn in the middle of the file
    claims.write_bytes(bytes(data))
    capsys.readouterr()
    assert _search(finished) == 2
    line = _one_error_line(capsys)
    assert "claims.sqlite is damaged" in line and "mv " in line
    assert claims.read_bytes() == bytes(data)  # nothing touched
    claims.rename(claims.with_name("claims.sqlite.damaged"))  # the repair the line names
    assert _search(finished) == 0
    assert _evaluated(finished) == BUDGET


def test_a_claims_file_that_is_no_database_is_refused(finished, capsys):
    (finished / "claims.sqlite").write_text("not a database\n")
    capsys.readouterr()
    assert _search(finished) == 2
    assert "is not an SQLite database" in _one_error_line(capsys)


def test_a_study_copied_from_a_larger_run_is_refused(finished, larger, capsys):
    shutil.copy(larger / "study.journal", finished / "study.journal")
    before = _report_line(finished)
    capsys.readouterr()
    assert _search(finished) == 2
    assert f"has a budget of {BUDGET + 4}" in _one_error_line(capsys)
    assert _report_line(finished) == before
    (finished / "claims.sqlite").unlink()  # the same without claims to compare with
    assert _search(finished) == 2
    assert f"--budget {BUDGET + 4}" in _one_error_line(capsys)


def test_a_study_holding_more_evaluations_than_the_budget_is_refused_without_its_budget_attribute(
        finished, tmp_path, capsys):
    """A study written before it kept its budget: its evaluations alone refuse a smaller budget."""
    import optuna

    from nasenergy.search.sampling.study_budget import BUDGET_ATTR
    from nasenergy.search.storage.storages import open_optuna_storage, resolve_storage

    storage = open_optuna_storage(resolve_storage(None, finished))
    name = optuna.get_all_study_names(storage)[0]
    storage.set_study_user_attr(storage.get_study_id_from_name(name), BUDGET_ATTR, None)
    (finished / "claims.sqlite").unlink()  # nor any claims that remember it
    capsys.readouterr()
    assert _search(finished, BUDGET - 2) == 2
    assert f"holds {BUDGET} full evaluations, more than --budget {BUDGET - 2}" in _one_error_line(capsys)


def _swap_outcome_and_state(journal: Path) -> int:
    """Reorder the journal: the last trials' states come before their outcomes (Optuna then drops
    the outcome it cannot set on a finished trial). Returns how many trials were touched."""
    lines = journal.read_text().splitlines(keepends=True)
    logs = [json.loads(line) for line in lines]
    swapped = 0
    for i in range(len(logs) - 2, -1, -1):
        a, b = logs[i], logs[i + 1]
        if (a.get("op_code") == 8 and "outcome" in a.get("user_attr", {}) and b.get("op_code") == 6
                and swapped < 2):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
            swapped += 1
    journal.write_text("".join(lines))
    return swapped


def test_a_journal_whose_records_were_reordered_is_refused_not_reported_as_spent(finished, capsys):
    assert _swap_outcome_and_state(finished / "study.journal") == 2
    before = (finished / "report.md").read_text()
    capsys.readouterr()
    assert _search(finished) == 2
    assert "record no outcome" in _one_error_line(capsys)
    assert (finished / "report.md").read_text() == before


def test_a_study_resumed_with_other_settings_is_refused_without_its_claims(finished, capsys):
    (finished / "claims.sqlite").unlink()
    capsys.readouterr()
    assert _search(finished, BUDGET, "--study-name", _study_name(finished), "--min-accuracy", "10") == 2
    assert "exists with other settings" in _one_error_line(capsys)


def _study_name(out: Path) -> str:
    return json.loads((out / "config.json").read_text())["study_name"]


def test_a_storage_file_that_is_no_database_is_refused(tmp_path, fake_env, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    assert _search(tmp_path / "run", 2, "--storage", f"sqlite:///{bad}") == 2
    assert "is not an SQLite database" in _one_error_line(capsys)
    assert bad.read_text() == "hello\n"


def test_a_full_disk_mid_run_is_one_line_and_the_resume_keeps_the_budget_exact(tmp_path, fake_env, capsys,
                                                                               monkeypatch):
    import errno

    from nasenergy.search.storage import journal

    real_write, calls = journal.os.write, [0]

    def filling_up(fd, data):
        calls[0] += 1
        if calls[0] > 40:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    out = tmp_path / "run"
    monkeypatch.setattr(journal.os, "write", filling_up)
    status = _search(out)
    monkeypatch.setattr(journal.os, "write", real_write)
    line = _one_error_line(capsys)
    assert status == 2 and "No space left on device" in line and "run the same command again" in line
    assert _search(out) == 0
    assert _evaluated(out) == BUDGET


@pytest.mark.parametrize(("name", "needle"), [("study.journal", "cannot open the journal"),
                                              ("claims.sqlite", "cannot be read")])
def test_a_folder_where_a_run_file_should_be_is_one_line(finished, name, needle, capsys):
    (finished / name).unlink()
    (finished / name).mkdir()
    capsys.readouterr()
    assert _search(finished) == 2
    assert needle in _one_error_line(capsys)


def test_a_database_storage_whose_claims_were_lost_is_restored_from_its_study(tmp_path, fake_env, capsys):
    """The same truth on an RDB storage: the study's trials, not the ``nasenergy_*`` tables."""
    db = tmp_path / "study.db"
    out = tmp_path / "run"
    storage = ["--storage", f"sqlite:///{db}"]
    assert _search(out, BUDGET, *storage) == 0
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM nasenergy_cells")
        conn.execute("DELETE FROM nasenergy_studies")
    capsys.readouterr()
    assert _search(out, BUDGET, *storage) == 0
    assert "restored from the study" in capsys.readouterr().err
    assert _evaluated(out) == BUDGET
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM nasenergy_studies")
    assert _search(out, BUDGET - 1, *storage) == 2  # the study keeps its budget, whatever the claims say
    assert f"has a budget of {BUDGET}" in _one_error_line(capsys)


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_claims_lost_after_an_interrupted_run_never_spend_the_budget_twice(tmp_path, fake_env, stop):
    """Ctrl-C or ``kill -9`` part-way, the claims deleted, the same command: exactly the budget."""
    from fake_parts import DELAY_ENV, start_search
    from test_search_resume import _wait_for

    run_dir = tmp_path / "run"
    args = ["--budget", "12", "--filter", "none", "--dvfs", "none", "--quiet", "--out", str(run_dir)]
    proc = start_search(args, {**fake_env, DELAY_ENV: "0.15"})
    _wait_for(run_dir, 4, proc)
    proc.send_signal(stop)
    proc.communicate(timeout=60)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{run_dir / 'claims.sqlite'}{suffix}").unlink(missing_ok=True)
    resumed = start_search(args, fake_env)
    _, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert "Traceback" not in err
    assert _evaluated(run_dir) == 12
    assert "**12 of 12**" in _report_line(run_dir)


def test_claims_copied_from_a_larger_run_take_the_study_s_budget(finished, larger, capsys):
    """The claims of a --budget 10 run of the same study copied in: the study (budget 6) decides."""
    shutil.copy(larger / "claims.sqlite", finished / "claims.sqlite")
    capsys.readouterr()
    assert _search(finished) == 0
    assert _evaluated(finished) == BUDGET
    assert f"**{BUDGET} of {BUDGET}**" in _report_line(finished)
    with sqlite3.connect(finished / "claims.sqlite") as conn:
        assert conn.execute("SELECT budget FROM nasenergy_studies").fetchone()[0] == BUDGET
        assert conn.execute("SELECT count(*) FROM nasenergy_cells WHERE status = 'done'").fetchone()[0] == BUDGET


@pytest.mark.parametrize("loss", ["delete", "empty"])
def test_a_lost_journal_is_refused_while_the_claims_remember_its_evaluations(finished, loss, capsys):
    journal = finished / "study.journal"
    journal.unlink() if loss == "delete" else journal.write_bytes(b"")
    before = (finished / "candidates.csv").read_text()
    capsys.readouterr()
    assert _search(finished) == 2
    assert "holds no trial, but the claims remember" in _one_error_line(capsys)
    assert (finished / "candidates.csv").read_text() == before  # the run's files are kept


def test_a_claims_database_that_fails_mid_run_is_one_line_and_the_resume_keeps_the_budget(tmp_path, fake_env,
                                                                                         capsys, monkeypatch):
    """A full disk under claims.sqlite (SQLite's 'database or disk is full'): exit 1, one line."""
    import sqlite3 as dbapi

    import sqlalchemy as sa

    from nasenergy.search.storage.claim_ledger import ClaimLedger

    real_finish, calls = ClaimLedger.finish, [0]

    def finish(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:
            raise sa.exc.OperationalError("UPDATE nasenergy_cells", {}, dbapi.OperationalError(
                "database or disk is full"))
        return real_finish(self, *args, **kwargs)

    out = tmp_path / "run"
    monkeypatch.setattr(ClaimLedger, "finish", finish)
    status = _search(out)
    monkeypatch.setattr(ClaimLedger, "finish", real_finish)
    line = _one_error_line(capsys)
    assert status == 1 and "claims.sqlite: OperationalError: database or disk is full" in line
    assert _search(out) == 0
    assert _evaluated(out) == BUDGET
