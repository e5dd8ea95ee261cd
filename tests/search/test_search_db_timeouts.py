"""The lease bounds every PostgreSQL transaction: the timeouts derived from ``--lease-s`` are set in
each transaction of the claims and of the Optuna storage."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nasenergy.search.storage.claims import ClaimStore
from nasenergy.search.storage.db_retry import trouble
from nasenergy.search.storage.db_timeouts import pg_timeouts_ms, set_local_sql
from nasenergy.search.storage.storages import normalize_url, open_optuna_storage, resolve_storage


def test_the_timeouts_follow_the_lease():
    assert pg_timeouts_ms(60) == {"idle_in_transaction_session_timeout": 30_000, "lock_timeout": 30_000,
                                  "statement_timeout": 60_000}
    assert "statement_timeout" not in pg_timeouts_ms(60, statements=False)
    assert min(pg_timeouts_ms(0.1).values()) >= 1000  # never below a second
    assert set_local_sql(10).count("SET LOCAL") == 3


def test_a_lock_wait_and_an_ended_session_are_named_as_such():
    class LockTimeout(Exception):
        pgcode = "55P03"

    class Ended(Exception):
        pgcode = "25P03"

    assert trouble(LockTimeout("canceling statement due to lock timeout")).startswith("is busy")
    assert "ended this worker's session" in trouble(Ended("terminating connection due to idle-in-transaction timeout"))
    assert trouble(OSError("connection refused")) == "is unreachable"


def _show(conn, name: str) -> str:
    return conn.execute(sa.text(f"SHOW {name}")).scalar_one()


@pytest.mark.postgres
def test_every_transaction_on_postgresql_carries_the_lease_timeouts(pg_url, unique_name):
    spec = resolve_storage(pg_url, None)
    claims = ClaimStore(normalize_url(pg_url), unique_name, lease_s=8)
    try:
        with claims._engine.begin() as conn:
            assert (_show(conn, "lock_timeout"), _show(conn, "idle_in_transaction_session_timeout"),
                    _show(conn, "statement_timeout")) == ("4s", "4s", "8s")
        with claims._engine.connect() as conn:  # an implicit transaction too
            assert _show(conn, "lock_timeout") == "4s"
    finally:
        claims.close()
    storage = open_optuna_storage(spec, lease_s=8)
    with storage.engine.connect() as conn:
        assert (_show(conn, "lock_timeout"), _show(conn, "idle_in_transaction_session_timeout")) == ("4s", "4s")
        assert _show(conn, "statement_timeout") == "0"  # Optuna's reads of a large study may be long
    with open_optuna_storage(spec).engine.connect() as conn:  # no lease given: the server's defaults
        assert _show(conn, "lock_timeout") == "0"
