"""Database outages: transient faults are retried for a bounded time with one line per outage; the
claims' writes are safe to run twice."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nasenergy.search.command.exit_codes import EXIT_DATABASE
from nasenergy.search.storage.claims import DONE, ClaimStore
from nasenergy.search.storage.db_retry import DatabaseUnavailableError, DbRetry, RetryingStorage, is_transient


def _refused() -> sa.exc.OperationalError:
    """The real error of connecting to a PostgreSQL port nobody listens on."""
    engine = sa.create_engine("postgresql+psycopg2://nobody@127.0.0.1:9/none", connect_args={"connect_timeout": 2})
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("something listens on port 9")


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s

    def clock(self) -> float:
        return self.now


def _retry(retry_s: float = 30.0) -> tuple[DbRetry, FakeTime, list[str]]:
    t, lines = FakeTime(), []
    return DbRetry(retry_s, what="the database db", report=lines.append, sleep=t.sleep, clock=t.clock), t, lines


def _flaky(fails: int, exc: BaseException, result: str = "ok"):
    calls = {"n": 0}

    def fn() -> str:
        calls["n"] += 1
        if calls["n"] <= fails:
            raise exc
        return result

    return fn, calls


def test_connection_faults_are_transient_and_others_are_not():
    refused = _refused()
    assert is_transient(refused)
    try:  # as Optuna's RDB storage re-raises it
        raise RuntimeError("An exception is raised during the commit.") from refused
    except RuntimeError as wrapped:
        assert is_transient(wrapped)
    assert not is_transient(sa.exc.IntegrityError("INSERT", {}, Exception("duplicate key")))
    assert not is_transient(sa.exc.OperationalError("SELECT", {}, Exception("no such table: x")))
    assert not is_transient(ValueError("connection refused"))  # not a database error


def test_an_outage_is_retried_with_backoff_and_reported_once():
    retry, t, lines = _retry()
    fn, calls = _flaky(6, _refused())
    assert retry.call(fn) == "ok" and calls["n"] == 7
    assert len(lines) == 1 and "the database db is unreachable" in lines[0] and "--db-retry-s" in lines[0]
    assert "Connection refused" in lines[0] or "connection refused" in lines[0].lower()
    assert t.sleeps == sorted(t.sleeps) and max(t.sleeps) <= 5.0  # growing, capped
    fn, _ = _flaky(2, _refused())
    retry.call(fn)
    assert len(lines) == 2 and retry.outages == 2  # a second outage: a second line


def test_a_long_outage_gives_up_with_its_exit_status_and_later_calls_fail_at_once():
    retry, t, lines = _retry(retry_s=10.0)
    fn, calls = _flaky(10**6, _refused())
    with pytest.raises(DatabaseUnavailableError) as ei:
        retry.call(fn)
    assert ei.value.exit_code == EXIT_DATABASE == 6
    message = str(ei.value)
    assert "\n" not in message and "giving up" in message and "--db-retry-s" in message
    assert 10.0 <= t.now <= 16.0 and len(lines) == 1
    slept, tried = len(t.sleeps), calls["n"]
    with pytest.raises(DatabaseUnavailableError):
        retry.call(fn)
    assert (len(t.sleeps), calls["n"], len(lines)) == (slept, tried + 1, 1)  # one attempt, no wait, no line


def test_a_lasting_error_is_raised_at_once():
    retry, t, lines = _retry()
    fn, calls = _flaky(1, sa.exc.IntegrityError("INSERT", {}, Exception("duplicate key")))
    with pytest.raises(sa.exc.IntegrityError):
        retry.call(fn)
    assert calls["n"] == 1 and not t.sleeps and not lines


def test_the_storage_proxy_retries_each_call_and_a_retried_tell_that_landed_counts():
    from optuna.exceptions import UpdateFinishedTrialError

    class Storage:
        def __init__(self) -> None:
            self.calls = 0
            self.name = "inner"

        def get_study_id_from_name(self, name: str) -> int:
            self.calls += 1
            if self.calls == 1:
                raise _refused()
            return 7

        def set_trial_state_values(self, trial_id: int, state, values=None) -> bool:
            self.calls += 1
            if self.calls == 3:  # the first attempt was committed, then the connection dropped
                raise _refused()
            raise UpdateFinishedTrialError("finished")

    retry, _, lines = _retry()
    storage = RetryingStorage(Storage(), retry)
    assert storage.name == "inner"
    assert storage.get_study_id_from_name("s") == 7 and len(lines) == 1
    assert storage.set_trial_state_values(1, None) is True
    with pytest.raises(UpdateFinishedTrialError):  # a trial another worker finished: raised
        storage.set_trial_state_values(1, None)


def test_optunas_fallback_warning_is_dropped_for_an_outage_only():
    """Optuna's RDB storage takes a failed trials query for one with too many variables and logs a
    warning; during an outage the retry's own line says it all, so that warning is dropped."""
    import logging

    RetryingStorage(object(), DbRetry(retry_s=0))
    rdb = logging.getLogger("optuna.storages._rdb.storage")

    def kept(message: str) -> bool:
        return bool(rdb.filter(rdb.makeRecord(rdb.name, logging.WARNING, __file__, 1, message, None, None)))

    outage = ("Caught an error from sqlalchemy: (psycopg2.OperationalError) server closed the connection "
              "unexpectedly. Falling back to a slower alternative.")
    too_many = ("Caught an error from sqlalchemy: (sqlite3.OperationalError) too many SQL variables. "
                "Falling back to a slower alternative.")
    assert not kept(outage)
    assert kept(too_many) and kept("A new study created in RDB with name: x")


def test_claim_writes_whose_first_attempt_was_committed_succeed_when_run_again(tmp_path):
    store = ClaimStore(f"sqlite:///{tmp_path / 'claims.sqlite'}", "s", lease_s=30)
    store.ensure_study(2, {})
    assert store.register_worker() == store.register_worker() == 0
    first = store.claim("c", "a", 3)
    assert first.kind == "claimed"
    assert store.claim("c", "a", 3).kind == "claimed"  # the retry of the same claim
    other = ClaimStore(f"sqlite:///{tmp_path / 'claims.sqlite'}", "s", lease_s=30)
    assert other.claim("c", "a", 4).kind == "exists"  # anyone else: the network is known
    assert store.owns("c") and not other.owns("c")
    assert store.finish("c", DONE) and store.finish("c", DONE)  # the retry finds its own write
    assert not other.finish("c", DONE)
    assert not store.owns("c")
    store.close()
    other.close()
