"""Checks of the SQLite files a run opens, before SQLAlchemy or Optuna touch them: a file that is
not a database, or a damaged one, is one line naming the file and the repair, not a traceback.

* `check_sqlite_file`: a ``--storage sqlite:///FILE`` must be an SQLite database (or absent or
  empty: it is then created).
* `check_claims_file`: the run folder's ``claims.sqlite``; it is derived from the study
  (`nasenergy.search.sampling.study_budget`), so a missing or empty one is simply rebuilt, and a
  damaged one is refused with the command that sets it aside for a rebuild. Write-ahead-log files
  left without their database (the database deleted or emptied) would be replayed onto the new
  one; they are set aside first.
"""

from __future__ import annotations

import logging
import shlex
import sqlite3
import time
from pathlib import Path

from nasenergy.errors import UsageError, first_line

logger = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""
_SIDE_FILES = ("-wal", "-shm")


class SqliteFileError(UsageError):
    """A file that should be an SQLite database is not one, or is damaged."""


def _damage(path: Path) -> str | None:
    """Why ``path`` is not a sound SQLite database, or ``None`` (absent or empty: no damage)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if size == 0:
        return None
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if header != SQLITE_HEADER:
        return "not an SQLite database"
    try:
        conn = sqlite3.connect(path, timeout=30)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"damaged: {first_line(exc)}"
    problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return f"damaged: {problems[0]}" if problems else None


def check_sqlite_file(path: Path, what: str) -> None:
    """Refuse ``path`` unless it is absent, empty or a sound SQLite database.

    Args:
        path: the database file.
        what: how the message names it (e.g. ``--storage``).

    Raises:
        SqliteFileError: the file is not an SQLite database, is damaged or cannot be read.
    """
    problem = _damage(path)
    if problem is not None:
        raise SqliteFileError(f"{what}: {path} is {problem}; name a database file (or a new file to create one)")


def check_claims_file(path: Path, study_file: Path) -> None:
    """Make the run folder's claims database ready to open: a damaged one is refused, and the
    write-ahead-log files of a missing or empty one are set aside (``<file>.orphan-<UTC time>``).

    Only call it while holding the run folder exclusively.

    Args:
        path: ``claims.sqlite`` of the run folder.
        study_file: the study's journal, which the claims are rebuilt from.

    Raises:
        SqliteFileError: ``path`` is not a sound SQLite database; the message says how to set it
            aside, after which the same command rebuilds it from the study.
    """
    problem = _damage(path)
    if problem is not None:
        aside = shlex.quote(f"{path}.damaged")
        raise SqliteFileError(
            f"{path} is {problem}; it only mirrors {study_file.name}, which holds what was spent: move it aside "
            f"(mv {shlex.quote(str(path))} {aside}) and run the same command again to rebuild it from the study"
        )
    if path.exists() and path.stat().st_size > 0:
        return
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for suffix in _SIDE_FILES:
        side = Path(f"{path}{suffix}")
        if side.exists():
            side.rename(f"{side}.orphan-{stamp}")
            logger.warning("warning: %s had no database beside it; set aside as %s.orphan-%s", side, side.name, stamp)
