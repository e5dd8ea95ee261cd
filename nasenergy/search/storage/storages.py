"""Where a study lives: a journal file in the run folder, or a database shared by workers.

Without ``--storage`` the Optuna study is an append-only journal (``study.journal``, written by
`nasenergy.search.storage.journal.JournalFile`) in the run folder and the claims table is a SQLite file
beside it (``claims.sqlite``); several worker processes on this machine may share them. With ``--storage postgresql://user@host:port/db`` the study and the
claims live in that database, so workers on many machines can share one study. ``sqlite:///file``
URLs are accepted too (one machine only).

SQLAlchemy 2.1 maps a bare ``postgresql://`` URL to the psycopg 3 driver; nasenergy depends on
psycopg2, so a bare URL is pointed at psycopg2 unless psycopg 3 is installed.
"""

from __future__ import annotations

import importlib.util
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from nasenergy.errors import UsageError, malformed_input
from nasenergy.search.storage.credentials import mask_text, mask_url
from nasenergy.search.storage.db_retry import RetryingStorage
from nasenergy.search.storage.db_timeouts import bound_transactions
from nasenergy.search.storage.sqlite_files import check_sqlite_file

if TYPE_CHECKING:
    import optuna

    from nasenergy.search.storage.db_retry import DbRetry

JOURNAL_FILE = "study.journal"
CLAIMS_FILE = "claims.sqlite"
_JOURNAL_LOCK_SUFFIX = ".lock"  # the lock file Optuna's own journal backend creates beside it
_SCHEMES = ("postgresql", "postgres", "sqlite")


class StorageError(UsageError):
    """A storage URL that is malformed, unsupported or unreachable."""


@dataclass(frozen=True)
class StorageSpec:
    """A resolved storage.

    Attributes:
        kind: ``journal`` (a file in the run folder) or ``rdb`` (a database URL).
        location: the journal file path, or the driver-qualified database URL.
        claims_url: the SQLAlchemy URL of the claims tables.
        display: ``location`` safe to print (password masked).
    """

    kind: Literal["journal", "rdb"]
    location: str
    claims_url: str
    display: str

    @property
    def is_shared_database(self) -> bool:
        """Whether workers on other machines may join (a server database, not a local file)."""
        return self.kind == "rdb" and not self.location.startswith("sqlite")

    @property
    def claims_display(self) -> str:
        """Where the claims live, safe to print: the run folder's claims file, or the database."""
        return self.claims_url.removeprefix("sqlite:///") if self.kind == "journal" else self.display

    def dashboard_command(self) -> str:
        """The optuna-dashboard command that opens this storage (shell-quoted)."""
        return f"optuna-dashboard {shlex.quote(self.display)}"


def resolve_storage(url: str | None, out_dir: Path) -> StorageSpec:
    """The storage for ``--storage url`` (or the run folder's journal when ``url`` is ``None``).

    Raises:
        StorageError: a malformed URL or an unsupported database.
    """
    if url is None:
        journal = out_dir.resolve() / JOURNAL_FILE
        claims = f"sqlite:///{out_dir.resolve() / CLAIMS_FILE}"
        return StorageSpec("journal", str(journal), claims, str(journal))
    qualified = normalize_url(url)
    return StorageSpec("rdb", qualified, qualified, mask_password(qualified))


def normalize_url(url: str) -> str:
    """Validate an RDB URL and make its driver explicit where SQLAlchemy would guess wrong.

    Raises:
        StorageError: a malformed URL or a scheme other than PostgreSQL or SQLite.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        raise StorageError(
            f"--storage: {mask_url(url)!r} is not a database URL; use postgresql://user@host:port/dbname"
        ) from None
    backend = parsed.get_backend_name()
    if backend not in _SCHEMES:
        raise StorageError(
            f"--storage: unsupported database {backend!r}; use postgresql://user@host:port/dbname "
            "(or leave --storage out for a journal file in the run folder)"
        )
    if backend in ("postgresql", "postgres"):
        if not parsed.database:
            raise StorageError(f"--storage: {mask_password(url)} names no database")
        driver = parsed.get_driver_name() if "+" in parsed.drivername else None
        if driver is None:
            driver = "psycopg" if importlib.util.find_spec("psycopg") else "psycopg2"
        parsed = parsed.set(drivername=f"postgresql+{driver}")
    elif not parsed.database:
        raise StorageError("--storage: a sqlite URL needs a file, e.g. sqlite:///runs/study.db")
    try:
        parsed.get_dialect()
    except NoSuchModuleError:
        raise StorageError(
            f"--storage: unknown database driver {parsed.drivername!r}; use postgresql://user@host:port/dbname "
            "(psycopg2) or postgresql+psycopg://..."
        ) from None
    return parsed.render_as_string(hide_password=False)


def mask_password(url: str) -> str:
    """``url`` with its password replaced by ``***``."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return mask_text(make_url(url).render_as_string(hide_password=True))
    except ArgumentError:
        return mask_text(url)


def check_reachable(spec: StorageSpec, *, timeout_s: int = 10) -> None:
    """Connect once to a database storage (a SQLite file must be a database, or absent or empty).

    Raises:
        StorageError: the database cannot be reached, with the driver's first line.
        SqliteFileError: a SQLite file that is not a sound database.
    """
    if spec.kind != "rdb":
        return
    import sqlalchemy as sa
    from sqlalchemy.engine import make_url

    database = make_url(spec.location).database
    if not spec.is_shared_database and database and database != ":memory:":
        check_sqlite_file(Path(database), "--storage")  # SQLite opens any file, and fails at the first query

    connect_args = {"connect_timeout": timeout_s} if spec.is_shared_database else {}
    engine = sa.create_engine(spec.location, connect_args=connect_args)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.SQLAlchemyError as exc:
        first = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
        reason = mask_text(first[0], secrets=[_password(spec.location)]) if first else type(exc).__name__
        raise StorageError(f"--storage: cannot connect to {spec.display}: {reason}") from None
    finally:
        engine.dispose()


def _password(url: str) -> str | None:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).password
    except Exception:  # noqa: BLE001 - an unparsable URL has no password to hide beyond the text's
        return None


def clear_stale_journal_lock(spec: StorageSpec) -> None:
    """Remove the lock file Optuna's own journal backend (e.g. optuna-dashboard writing to the
    journal) left behind when killed.

    Only call this while holding the run folder exclusively (no live worker can own the lock).
    """
    if spec.kind == "journal":
        Path(spec.location + _JOURNAL_LOCK_SUFFIX).unlink(missing_ok=True)


def _cached(rdb: "optuna.storages.RDBStorage") -> "optuna.storages.BaseStorage":
    """``rdb`` behind Optuna's trial cache, as ``optuna.load_study`` would wrap it (a storage given
    as an object is used as is); ``rdb`` itself where Optuna no longer has that private class."""
    try:
        from optuna.storages._cached_storage import _CachedStorage
    except ImportError:
        return rdb
    return _CachedStorage(rdb)


def open_optuna_storage(
    spec: StorageSpec, *, attempts: int = 5, retry: "DbRetry | None" = None, lease_s: float | None = None
) -> "optuna.storages.BaseStorage":
    """The Optuna storage for ``spec``.

    Several workers may create the RDB schema at the same moment; a failed first attempt is
    retried a few times. Given ``retry``, a database storage rides out outages: each of its calls
    is retried through it (`nasenergy.search.storage.db_retry.RetryingStorage`). Given ``lease_s``, no
    transaction on a PostgreSQL server holds or waits for a lock longer than that lease
    (`nasenergy.search.storage.db_timeouts`): Optuna locks the study's row to number each new trial.
    """
    import optuna
    import sqlalchemy as sa

    if spec.kind == "journal":
        from optuna.storages.journal import JournalStorage

        from nasenergy.search.storage.journal import JournalDamagedError, JournalFile  # lazy: imports optuna

        damaged = (f"{spec.location} holds a log Optuna cannot replay (the file is damaged; restore it from a "
                   "copy or start a new study)")
        try:
            with malformed_input(JournalDamagedError, damaged, also=(AssertionError,)):  # Optuna: "Should not reach"
                return JournalStorage(JournalFile(spec.location))
        except OSError as exc:  # a folder in its place, a file that cannot be read
            raise StorageError(f"cannot open the journal {spec.location}: {exc.strerror or exc}") from None
    engine_kwargs: dict[str, object] = {"pool_pre_ping": True}
    if spec.is_shared_database:
        engine_kwargs["connect_args"] = {"connect_timeout": 10}
    for attempt in range(attempts):
        try:
            if retry is None:
                rdb = optuna.storages.RDBStorage(spec.location, engine_kwargs=engine_kwargs)
            else:
                rdb = retry.call(optuna.storages.RDBStorage, spec.location, engine_kwargs=engine_kwargs)
            if lease_s is not None:
                bound_transactions(rdb.engine, lease_s, statements=False)  # its reads may rightly be long
            if retry is None:
                return rdb
            return RetryingStorage(_cached(rdb), retry)  # type: ignore[return-value]
        except sa.exc.SQLAlchemyError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")
