"""No transaction holds a lock, or waits for one, longer than a worker's lease (PostgreSQL).

Every transaction of the claims and of the Optuna storage on a PostgreSQL server starts with
``SET LOCAL`` of the server's own timeouts, derived from ``--lease-s``:

* ``idle_in_transaction_session_timeout`` (half the lease): a worker that stops inside a
  transaction (``SIGSTOP``, a laptop lid, a frozen VM) has its session ended by the server, which
  rolls the transaction back and frees the rows it locked, the study's budget row included. When
  the worker resumes, its next statement finds the connection closed: a passing fault, so the
  transaction is run again (`nasenergy.search.storage.db_retry`) and its lease, claims and trials are
  settled as for any worker silent past its lease.
* ``lock_timeout`` (half the lease): a worker waiting for a lock gives up after that long and
  tries the transaction again (SQLSTATE 55P03 is a passing fault), instead of queueing for as
  long as the holder is stopped.
* ``statement_timeout`` (the lease), on the claims only: no statement on the budget row runs
  longer than a lease. Optuna's storage has none: reading a large study's trials may rightly take
  longer, and its locks are bounded by the two timeouts above.

``SET LOCAL`` lasts one transaction, so the settings never leak into a pooled connection that
someone else reuses (a transaction-mode connection pooler included). SQLite has no such
timeouts; a worker stopped inside a SQLite transaction holds the local claims file until it
resumes (see `docs/reliability.md`).
"""

from __future__ import annotations

from typing import Any

MIN_TIMEOUT_MS = 1000
"""The shortest timeout set, milliseconds (a lease is at least 5 s, see ``--lease-s``)."""


def pg_timeouts_ms(lease_s: float, *, statements: bool = True) -> dict[str, int]:
    """The PostgreSQL timeouts for a worker whose lease is ``lease_s`` seconds, in ms
    (``statements``: with ``statement_timeout``)."""
    lease_ms = max(MIN_TIMEOUT_MS, int(float(lease_s) * 1000.0))
    half_ms = max(MIN_TIMEOUT_MS, lease_ms // 2)
    timeouts = {"idle_in_transaction_session_timeout": half_ms, "lock_timeout": half_ms}
    if statements:
        timeouts["statement_timeout"] = lease_ms
    return timeouts


def set_local_sql(lease_s: float, *, statements: bool = True) -> str:
    """One ``SET LOCAL`` statement per timeout, joined (sent in one round trip)."""
    timeouts = pg_timeouts_ms(lease_s, statements=statements)
    return "; ".join(f"SET LOCAL {name} = {ms}" for name, ms in timeouts.items())


def bound_transactions(engine: Any, lease_s: float, *, statements: bool = True) -> None:
    """Start every transaction of ``engine`` (a SQLAlchemy engine) with the lease's timeouts
    (``statements``: ``statement_timeout`` too); nothing for a database other than PostgreSQL."""
    from sqlalchemy import event  # lazy: storage.py stays light to import (the command's --help)

    if engine.dialect.name != "postgresql":
        return
    sql = set_local_sql(lease_s, statements=statements)

    def on_begin(conn: Any) -> None:
        conn.exec_driver_sql(sql)

    event.listen(engine, "begin", on_begin)
