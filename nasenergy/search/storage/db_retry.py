"""Riding out database outages: transient errors are retried with backoff for a bounded time.

A worker on a shared database meets the server restarting, failing over or dropping connections.
`DbRetry` runs each database call again until it succeeds or the outage has lasted ``retry_s``
seconds (``--db-retry-s``); it prints one line when an outage starts (not one per attempt) and
raises `DatabaseUnavailableError` (exit status `EXIT_DATABASE`) when it gives up. Once it has
given up, every later call is tried once and fails with the same error at once, so a worker's
clean-up cannot wait out a second outage.

`is_transient` tells a passing fault (connection refused or reset, the server shutting down or
starting up, a serialization failure, SQLite's busy database) from a lasting one (bad SQL, a
missing table, a constraint), which is raised unchanged. `RetryingStorage` wraps an Optuna
storage so that each of its calls is retried this way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from nasenergy.errors import NasEnergyError, first_line
from nasenergy.search.command.exit_codes import EXIT_DATABASE

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_RETRY_S = 120.0
"""Default ``--db-retry-s``: how long a worker rides out a database outage before it gives up."""

FIRST_BACKOFF_S = 0.25
MAX_BACKOFF_S = 5.0

_TRANSIENT_SQLSTATE_PREFIXES = ("08", "57P", "53", "40001", "40P01", "55P03", "25006")
"""SQLSTATEs of passing faults: connection exceptions (08), operator intervention such as a
shutdown or a server still starting (57P), insufficient resources such as too many connections
(53), serialization failures and deadlocks (40001, 40P01), lock timeouts (55P03) and a read-only
transaction on a standby just after a failover (25006)."""

_TRANSIENT_WORDS = (
    "connection refused",
    "could not connect",
    "server closed the connection",
    "connection reset",
    "connection already closed",
    "connection is closed",
    "terminating connection",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
    "ssl connection has been closed",
    "broken pipe",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "database is locked",
    "database is busy",
)


class DatabaseUnavailableError(NasEnergyError):
    """The database stayed unreachable for longer than ``--db-retry-s``."""

    exit_code = EXIT_DATABASE


class DatabaseFailedError(NasEnergyError):
    """A database error that no retry mends (a full disk, a damaged file, a refused write): a
    failure of the environment (exit status 1), said in one line."""


def database_failure(exc: BaseException, where: str) -> DatabaseFailedError:
    """``exc`` (a SQLAlchemy or DBAPI error) as one line naming ``where`` and the driver's words."""
    origin = getattr(exc, "orig", None) or exc
    return DatabaseFailedError(f"{where}: {type(origin).__name__}: {first_line(origin)}; fix it and run the "
                               "same command again to resume")


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, its causes and contexts, and the DBAPI errors SQLAlchemy wraps (``.orig``)."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen) or len(seen) > 20:
            continue
        seen.append(e)
        todo.extend([e.__cause__, e.__context__, getattr(e, "orig", None)])
    return seen


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) is a passing database fault worth retrying."""
    import sqlalchemy as sa

    for e in _chain(exc):
        if isinstance(e, sa.exc.DBAPIError) and e.connection_invalidated:
            return True
        if isinstance(e, (sa.exc.DisconnectionError, sa.exc.TimeoutError)):
            return True
        state = getattr(e, "pgcode", None) or getattr(e, "sqlstate", None)
        if isinstance(state, str) and state.startswith(_TRANSIENT_SQLSTATE_PREFIXES):
            return True
        if type(e).__name__ in ("OperationalError", "InterfaceError") and _names_a_passing_fault(str(e)):
            return True
    return False


def _names_a_passing_fault(text: str) -> bool:
    lowered = text.lower()
    return any(w in lowered for w in _TRANSIENT_WORDS)


class _OutageNoise(logging.Filter):
    """Drops the warning Optuna's RDB storage logs when a trials query fails ("Caught an error from
    sqlalchemy ... Falling back to a slower alternative": it takes every such error for a query
    with too many variables) where the error is a passing fault: the retry reports the outage in
    its own one line, and the fallback query meets the same outage and is retried."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Caught an error from sqlalchemy") and _names_a_passing_fault(message))


_OPTUNA_RDB_LOGGER = "optuna.storages._rdb.storage"
_NOISE = _OutageNoise()


def describe(exc: BaseException) -> str:
    """One line saying what went wrong, from the innermost database error."""
    chain = _chain(exc)
    driver = [e for e in chain if type(e).__module__.split(".")[0] in ("psycopg2", "psycopg", "sqlite3")]
    return first_line(driver[0] if driver else chain[-1])


def trouble(exc: BaseException) -> str:
    """What a passing fault says of the database, in a few words: ``is unreachable``, or ``is
    busy`` (a lock wait ran past ``lock_timeout``), or that it ended this worker's session (the
    worker sat inside a transaction past ``idle_in_transaction_session_timeout``, e.g. paused);
    see `nasenergy.search.storage.db_timeouts`."""
    for e in _chain(exc):
        state = getattr(e, "pgcode", None) or getattr(e, "sqlstate", None)
        if state == "55P03" or "lock timeout" in str(e).lower():
            return "is busy (a lock wait ran past half of --lease-s)"
        if state == "25P03" or "idle-in-transaction timeout" in str(e).lower():
            return "ended this worker's session (it sat inside a transaction past half of --lease-s: paused?)"
    return "is unreachable"


class DbRetry:
    """Retries database calls through outages of up to ``retry_s`` seconds.

    Args:
        retry_s: how long one outage may last before the caller gives up (0: never retry).
        what: the database as the message names it (password masked).
        report: receives the one line per outage (default: the module's logger, WARNING, which
            `nasenergy.log` writes to stderr).
        sleep: waits between attempts (tests pass a fake).
        clock: a monotonic clock (tests pass a fake).
    """

    def __init__(
        self,
        retry_s: float = DEFAULT_RETRY_S,
        *,
        what: str = "the database",
        report: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.retry_s = float(retry_s)
        self.what = what
        self._report = report or logger.warning
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._outage_since: float | None = None
        self.outages = 0
        self.gave_up = False

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, run again after transient faults until the outage has lasted
        ``retry_s``.

        Raises:
            DatabaseUnavailableError: the outage lasted too long (or an earlier one did).
            Exception: whatever ``fn`` raises that is not a transient fault.
        """
        backoff = FIRST_BACKOFF_S
        while True:
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                if not is_transient(exc):
                    raise
                self._failed(exc)
                self._sleep(backoff)
                backoff = min(MAX_BACKOFF_S, backoff * 2)
                continue
            self._succeeded()
            return result

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            now = self._clock()
            if self._outage_since is None:
                self._outage_since = now
                self.outages += 1
                if not self.gave_up:
                    self._report(
                        f"warning: {self.what} {trouble(exc)} ({describe(exc)}); retrying for up to "
                        f"{self.retry_s:g} s (--db-retry-s)"
                    )
            if self.gave_up or now - self._outage_since >= self.retry_s:
                self.gave_up = True
                raise DatabaseUnavailableError(
                    f"{self.what} has been unreachable for {now - self._outage_since:.0f} s "
                    f"({describe(exc)}); giving up (raise --db-retry-s to wait longer)"
                ) from None

    def _succeeded(self) -> None:
        with self._lock:
            self._outage_since = None


class RetryingStorage:
    """An Optuna storage whose every method call goes through a `DbRetry`.

    Optuna uses a storage object it is given as is, so a `Study` over this proxy retries each of
    its storage calls. A retried ``set_trial_state_values`` that finds its trial finished means
    the first attempt was committed before the connection dropped; it counts as done.
    """

    def __init__(self, inner: Any, retry: DbRetry) -> None:
        self._inner = inner
        self._retry = retry
        logging.getLogger(_OPTUNA_RDB_LOGGER).addFilter(_NOISE)  # once: a filter is added at most once

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name.startswith("__"):
            return attr
        if name == "set_trial_state_values":
            return self._set_state

        def retried(*args: Any, **kwargs: Any) -> Any:
            return self._retry.call(attr, *args, **kwargs)

        return retried

    def _set_state(self, *args: Any, **kwargs: Any) -> Any:
        from optuna.exceptions import UpdateFinishedTrialError

        attempts = 0

        def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            try:
                return self._inner.set_trial_state_values(*args, **kwargs)
            except UpdateFinishedTrialError:
                if attempts > 1:
                    return True
                raise

        return self._retry.call(attempt)
