"""The SQLite files a run opens are checked first: no database, a damaged one, a folder in its
place are one line; the write-ahead log of a missing claims file is set aside, not replayed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nasenergy.search.storage.sqlite_files import SqliteFileError, check_claims_file, check_sqlite_file


def _database(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
    return path


def test_absent_empty_and_sound_databases_pass(tmp_path):
    check_sqlite_file(tmp_path / "absent.db", "--storage")
    (tmp_path / "empty.db").write_bytes(b"")
    check_sqlite_file(tmp_path / "empty.db", "--storage")
    check_sqlite_file(_database(tmp_path / "sound.db"), "--storage")


def test_no_database_a_damaged_one_and_a_folder_are_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(SqliteFileError, match="notes.txt is not an SQLite database"):
        check_sqlite_file(tmp_path / "notes.txt", "--storage")
    damaged = _database(tmp_path / "damaged.db")
    data = bytearray(damaged.read_bytes())
    data[4096:8192] = b"\xff" * 4096
    damaged.write_bytes(bytes(data))
    with pytest.raises(SqliteFileError, match="damaged.db is damaged"):
        check_claims_file(damaged, tmp_path / "study.journal")
    (tmp_path / "folder.db").mkdir()
    with pytest.raises(SqliteFileError, match="cannot be read"):
        check_sqlite_file(tmp_path / "folder.db", "--storage")


def test_the_log_of_a_missing_claims_file_is_set_aside(tmp_path):
    claims = tmp_path / "claims.sqlite"
    (tmp_path / "claims.sqlite-wal").write_bytes(b"frames of a deleted database")
    (tmp_path / "claims.sqlite-shm").write_bytes(b"\0" * 64)
    check_claims_file(claims, tmp_path / "study.journal")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and all(".orphan-" in n for n in names)
    assert not claims.exists()
