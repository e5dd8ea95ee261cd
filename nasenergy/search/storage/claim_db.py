"""The connection to a study's claims database: its engine, its clock, its schema, the study's
row and the transaction that locks it, and running each operation through a `DbRetry`.

`ClaimDb` is the base of `nasenergy.search.storage.claims.ClaimStore`; the workers' leases
(`nasenergy.search.storage.leases`), the queries of the cells (`nasenergy.search.storage.claim_queries`) and their
changes (`nasenergy.search.storage.claim_ledger`) build on it.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

from nasenergy.errors import UsageError
from nasenergy.search.storage.claim_schema import METADATA, SCHEMA_LOCK_KEY, STUDIES
from nasenergy.search.storage.db_retry import DbRetry
from nasenergy.search.storage.db_timeouts import bound_transactions

F = TypeVar("F", bound=Callable[..., Any])


class BudgetMismatchError(UsageError):
    """A resumed run or a joining worker disagrees with the stored study."""


def retried(method: F) -> F:
    """Run a `ClaimDb` method through the store's `DbRetry` (when it has one)."""

    @functools.wraps(method)
    def wrapper(self: ClaimDb, *args: Any, **kwargs: Any) -> Any:
        if self.retry is None:
            return method(self, *args, **kwargs)
        return self.retry.call(method, self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def open_engine(url: str, lease_s: float) -> sa.Engine:
    """An engine for the claims at ``url``: SQLite in WAL mode whose transactions begin
    ``IMMEDIATE``, or PostgreSQL whose transactions are bounded by the lease
    (`nasenergy.search.storage.db_timeouts`)."""
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, connect_args={"timeout": 120})
        sa.event.listen(engine, "connect", _sqlite_on_connect)
        sa.event.listen(engine, "begin", _sqlite_begin_immediate)
        return engine
    engine = sa.create_engine(
        url, pool_pre_ping=True, pool_size=2, max_overflow=2, connect_args={"connect_timeout": 10}
    )
    bound_transactions(engine, lease_s)  # no transaction holds the budget row past the lease
    return engine


class ClaimDb:
    """One study's claims database, as one worker sees it.

    Args:
        url: SQLAlchemy URL (``postgresql+psycopg2://...`` or ``sqlite:///...``).
        study: the study name.
        worker_id: this process's id (`nasenergy.search.storage.leases.new_worker_id`).
        lease_s: how long a heartbeat keeps this worker alive.
        retry: rides out database outages (``None``: every fault is raised at once).
    """

    def __init__(self, url: str, study: str, *, worker_id: str, lease_s: float, retry: DbRetry | None) -> None:
        self.study = study
        self.worker_id = worker_id
        self.lease_s = float(lease_s)
        self.retry = retry
        self._sqlite = url.startswith("sqlite")
        self._engine = open_engine(url, self.lease_s)
        self._create_schema()

    # ----------------------------------------------------------------- set-up

    @retried
    def _create_schema(self) -> None:
        with self._engine.begin() as conn:
            if not self._sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_KEY})
            METADATA.create_all(conn, checkfirst=True)

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def _now(self, conn: sa.Connection) -> float:
        """Seconds since the epoch on the database's clock (one clock for every machine)."""
        if self._sqlite:
            return time.time()
        return float(conn.execute(sa.text("SELECT EXTRACT(EPOCH FROM clock_timestamp())")).scalar_one())

    @contextmanager
    def _locked(self) -> Iterator[tuple[sa.Connection, int, float]]:
        """A transaction holding the study's row lock: ``(conn, budget, now)``."""
        with self._engine.begin() as conn:
            budget = conn.execute(
                sa.select(STUDIES.c.budget).where(STUDIES.c.study == self.study).with_for_update()
            ).scalar_one_or_none()
            if budget is None:
                raise UsageError(f"study {self.study!r} has no budget row; call ensure_study first")
            yield conn, int(budget), self._now(conn)

    @retried
    def ensure_study(self, budget: int, settings: dict[str, Any], *, from_study: bool = False) -> int:
        """Create the study's row, or check a stored one against ``settings`` and ``budget``.

        A larger budget than the stored one extends the study; a smaller one is refused.

        Args:
            budget: the study's budget.
            settings: its study-defining settings.
            from_study: ``budget`` and ``settings`` were checked against the study itself, the
                record of what was spent (`nasenergy.search.sampling.study_budget`): a stored row
                that differs (claims copied from another run) takes them instead of refusing.

        Returns:
            The study's budget.

        Raises:
            BudgetMismatchError: the stored settings differ, or ``budget`` is below the stored one.
        """
        with self._engine.begin() as conn:
            if not self._sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK_KEY})
            row = conn.execute(
                sa.select(STUDIES).where(STUDIES.c.study == self.study).with_for_update()
            ).one_or_none()
            if row is None:
                conn.execute(
                    STUDIES.insert().values(
                        study=self.study,
                        budget=budget,
                        settings_json=json.dumps(settings, sort_keys=True),
                        created_at=self._now(conn),
                    )
                )
                return budget
            if from_study:
                conn.execute(STUDIES.update().where(STUDIES.c.study == self.study).values(
                    budget=budget, settings_json=json.dumps(settings, sort_keys=True)))
                return budget
            stored = json.loads(row.settings_json)
            diffs = [f"{k}: stored {stored.get(k)!r}, given {v!r}" for k, v in settings.items() if stored.get(k) != v]
            if diffs:
                raise BudgetMismatchError(
                    f"study {self.study!r} exists with other settings ({'; '.join(diffs)}); "
                    "use the stored settings or another --study-name"
                )
            if budget < row.budget:
                raise BudgetMismatchError(
                    f"study {self.study!r} has a budget of {row.budget} full evaluations; pass "
                    f"--budget {row.budget} (or more, to extend it)"
                )
            if budget > row.budget:
                conn.execute(STUDIES.update().where(STUDIES.c.study == self.study).values(budget=budget))
            return budget


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN IMMEDIATE instead of pysqlite's deferred BEGIN;
    # WAL lets readers run beside the one writer;
    # synchronous=NORMAL: a committed claim survives any crash of the process (kill -9 included);
    # only a power cut may lose the last few.
    dbapi_conn.isolation_level = None
    dbapi_conn.execute("PRAGMA journal_mode=WAL")
    dbapi_conn.execute("PRAGMA synchronous=NORMAL")


def _sqlite_begin_immediate(conn: sa.Connection) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")
