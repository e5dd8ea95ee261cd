"""The exact budget: atomic claims of (study, network) and a budget slot.

Three small tables live in the study's database (the shared PostgreSQL database, or
``claims.sqlite`` in the run folder):

* ``nasenergy_studies``: one row per study with its budget and its study-defining settings.
* ``nasenergy_cells``: one row per network the study has seen, unique on ``(study, canonical)``,
  where ``canonical`` holds the network's key (`nasenergy.search.network_key`; the column keeps
  its name so existing study databases stay readable), with its status: ``filtered`` (cheap figures only), ``not_recorded``
  (the recorded profile lacks it), ``running`` (a full evaluation is claimed), ``done`` or
  ``failed``. Rows ``running`` or ``done`` hold the study's
  budget slots.
* ``nasenergy_workers``: one row per worker process with a lease that its heartbeat thread renews.

Every change happens in one transaction that first locks the study's row (``SELECT ... FOR
UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), so "is this network new, and is a budget
slot free?" and "take it" are one atomic step: at most ``budget`` networks are ever claimed, and
none twice. On PostgreSQL no transaction holds that lock, or waits for it, longer than the lease
(`nasenergy.search.db_timeouts`): a worker stopped inside one (``SIGSTOP``) has its session ended
by the server, and the others go on.

A worker killed with ``kill -9`` stops renewing its lease. Its ``running`` claims keep their budget
slot (the budget is never handed out twice) and become *orphans* once its lease has expired; any
worker then adopts an orphan and finishes that evaluation before it claims anything new, so the
study still ends with exactly ``budget`` finished evaluations. A run that owns its folder
exclusively (the local journal storage) knows every earlier worker is dead and expires their leases
at once, so a resume adopts orphans immediately; on a shared database a resume waits out the
lease (``--lease-s``). An interrupted worker (Ctrl-C) releases its claim, returning the slot.

Given a `DbRetry`, every operation but the heartbeat rides out database outages (each is one
transaction, run again after a transient fault). The writes are safe to run twice: a retried
claim, finish or registration whose first attempt was committed before the connection dropped
finds its own row and succeeds.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import sqlalchemy as sa

from nasenergy.errors import UsageError
from nasenergy.search.db_retry import DbRetry
from nasenergy.search.db_timeouts import bound_transactions

F = TypeVar("F", bound=Callable[..., Any])

FILTERED, RUNNING, DONE, FAILED = "filtered", "running", "done", "failed"
NOT_RECORDED = "not_recorded"
"""A network the recorded profile cannot measure (no slot, never measured)."""
SLOT_STATUSES = (RUNNING, DONE)
"""Cell statuses that hold a budget slot."""

_metadata = sa.MetaData()
_studies = sa.Table(
    "nasenergy_studies",
    _metadata,
    sa.Column("study", sa.String(200), primary_key=True),
    sa.Column("budget", sa.Integer, nullable=False),
    sa.Column("settings_json", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
_cells = sa.Table(
    "nasenergy_cells",
    _metadata,
    sa.Column("study", sa.String(200), nullable=False),
    sa.Column("canonical", sa.String(400), nullable=False),
    sa.Column("arch", sa.String(400), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("trial_number", sa.Integer, nullable=False),
    sa.Column("owner", sa.String(200), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.PrimaryKeyConstraint("study", "canonical", name="nasenergy_cells_study_canonical"),
)
_workers = sa.Table(
    "nasenergy_workers",
    _metadata,
    sa.Column("study", sa.String(200), nullable=False),
    sa.Column("worker_id", sa.String(200), nullable=False),
    sa.Column("rank", sa.Integer, nullable=False),
    sa.Column("host", sa.String(200), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("lease_expires_at", sa.Float, nullable=False),
    sa.Column("stopped", sa.Boolean, nullable=False),
    sa.PrimaryKeyConstraint("study", "worker_id", name="nasenergy_workers_study_worker"),
)
_SCHEMA_LOCK_KEY = 0x6E6173  # a PostgreSQL advisory lock serialising schema creation


class BudgetMismatchError(UsageError):
    """A resumed run or a joining worker disagrees with the stored study."""


@dataclass(frozen=True)
class Cell:
    """One network of a study.

    Attributes:
        canonical: the network's key (`nasenergy.search.network_key`; the unique key).
        arch: the architecture string as first suggested.
        status: ``filtered``, ``not_recorded``, ``running``, ``done`` or ``failed``.
        trial_number: the Optuna trial that measured (and evaluates) it.
        owner: the worker id that last wrote the row.
    """

    canonical: str
    arch: str
    status: str
    trial_number: int
    owner: str


@dataclass(frozen=True)
class ClaimResult:
    """The answer to a claim.

    Attributes:
        kind: ``claimed`` (the slot is yours), ``exists`` (the network is already known: see
            ``cell``) or ``budget_full`` (every slot is taken).
        cell: the claimed or the existing cell; ``None`` for ``budget_full``.
    """

    kind: Literal["claimed", "exists", "budget_full"]
    cell: Cell | None


@dataclass(frozen=True)
class BudgetStatus:
    """Counts of one study.

    Attributes:
        budget: full evaluations the study may spend.
        claimed: slots taken (``running`` + ``done``).
        done: finished full evaluations.
        running: claimed evaluations not finished yet.
        orphans: running evaluations whose owner's lease has expired.
        failed: evaluations that failed (they hold no slot).
        filtered: networks seen and filtered.
        live_workers: workers with an unexpired lease.
    """

    budget: int
    claimed: int
    done: int
    running: int
    orphans: int
    failed: int
    filtered: int
    live_workers: int

    @property
    def complete(self) -> bool:
        """Whether every budget slot holds a finished evaluation."""
        return self.done >= self.budget


@dataclass(frozen=True)
class StoredTrial:
    """What the study holds of one trial, as `ClaimStore.reconcile` needs it.

    Attributes:
        state: the Optuna state's name (``COMPLETE``, ``RUNNING``, ``FAIL``, ``PRUNED``, ...).
        network: the network key the trial recorded, if it recorded one.
        measured: whether the trial holds its cheap measurement (a claim is made only after it).
    """

    state: str
    network: str | None
    measured: bool = True


@dataclass(frozen=True)
class Reconciled:
    """What `ClaimStore.reconcile` changed.

    Attributes:
        forgotten: cells removed (their trials, or those trials' outcomes, are not stored).
        reopened: ``done`` cells made ``running`` again (their results are not stored).
    """

    forgotten: int
    reopened: int

    @property
    def changed(self) -> bool:
        """Whether anything was changed."""
        return bool(self.forgotten or self.reopened)


def new_worker_id() -> str:
    """A unique id for this process: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _retried(method: F) -> F:
    """Run a `ClaimStore` method through the store's `DbRetry` (when it has one)."""

    @functools.wraps(method)
    def wrapper(self: "ClaimStore", *args: Any, **kwargs: Any) -> Any:
        if self.retry is None:
            return method(self, *args, **kwargs)
        return self.retry.call(method, self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _row_cell(row: Any) -> Cell:
    return Cell(row.canonical, row.arch, row.status, int(row.trial_number), row.owner)


class ClaimStore:
    """The claims of one study in one database.

    Args:
        url: SQLAlchemy URL (``postgresql+psycopg2://...`` or ``sqlite:///...``).
        study: the study name.
        worker_id: this process's id (see `new_worker_id`).
        lease_s: how long a heartbeat keeps this worker alive.
        retry: rides out database outages (``None``: every fault is raised at once).
    """

    def __init__(
        self,
        url: str,
        study: str,
        *,
        worker_id: str | None = None,
        lease_s: float = 60.0,
        retry: DbRetry | None = None,
    ) -> None:
        self.study = study
        self.worker_id = worker_id or new_worker_id()
        self.lease_s = float(lease_s)
        self.retry = retry
        self._sqlite = url.startswith("sqlite")
        if self._sqlite:
            self._engine = sa.create_engine(url, connect_args={"timeout": 120})
            sa.event.listen(self._engine, "connect", _sqlite_on_connect)
            sa.event.listen(self._engine, "begin", _sqlite_begin_immediate)
        else:
            self._engine = sa.create_engine(
                url, pool_pre_ping=True, pool_size=2, max_overflow=2, connect_args={"connect_timeout": 10}
            )
            bound_transactions(self._engine, self.lease_s)  # no transaction holds the budget row past the lease
        self._create_schema()

    # ----------------------------------------------------------------- set-up

    @_retried
    def _create_schema(self) -> None:
        with self._engine.begin() as conn:
            if not self._sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK_KEY})
            _metadata.create_all(conn, checkfirst=True)

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
                sa.select(_studies.c.budget).where(_studies.c.study == self.study).with_for_update()
            ).scalar_one_or_none()
            if budget is None:
                raise UsageError(f"study {self.study!r} has no budget row; call ensure_study first")
            yield conn, int(budget), self._now(conn)

    @_retried
    def ensure_study(self, budget: int, settings: dict[str, Any]) -> int:
        """Create the study's row, or check a stored one against ``settings`` and ``budget``.

        A larger budget than the stored one extends the study; a smaller one is refused.

        Returns:
            The study's budget.

        Raises:
            BudgetMismatchError: the stored settings differ, or ``budget`` is below the stored one.
        """
        with self._engine.begin() as conn:
            if not self._sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK_KEY})
            row = conn.execute(
                sa.select(_studies).where(_studies.c.study == self.study).with_for_update()
            ).one_or_none()
            if row is None:
                conn.execute(
                    _studies.insert().values(
                        study=self.study,
                        budget=budget,
                        settings_json=json.dumps(settings, sort_keys=True),
                        created_at=self._now(conn),
                    )
                )
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
                conn.execute(_studies.update().where(_studies.c.study == self.study).values(budget=budget))
            return budget

    # ---------------------------------------------------------------- workers

    @_retried
    def register_worker(self) -> int:
        """Add this worker with a fresh lease.

        Returns:
            Its rank: how many workers the study had registered before it (0 for the first).
        """
        with self._locked() as (conn, _, now):
            mine = conn.execute(
                sa.select(_workers.c.rank).where(_workers.c.study == self.study, _workers.c.worker_id == self.worker_id)
            ).scalar_one_or_none()
            if mine is not None:  # a retried registration whose first attempt was committed
                return int(mine)
            rank = conn.execute(
                sa.select(sa.func.count()).select_from(_workers).where(_workers.c.study == self.study)
            ).scalar_one()
            conn.execute(
                _workers.insert().values(
                    study=self.study,
                    worker_id=self.worker_id,
                    rank=int(rank),
                    host=socket.gethostname(),
                    pid=os.getpid(),
                    lease_expires_at=now + self.lease_s,
                    stopped=False,
                )
            )
            return int(rank)

    def heartbeat(self) -> None:
        """Renew this worker's lease."""
        with self._engine.begin() as conn:
            now = self._now(conn)
            conn.execute(
                _workers.update()
                .where(_workers.c.study == self.study, _workers.c.worker_id == self.worker_id)
                .values(lease_expires_at=now + self.lease_s)
            )

    @_retried
    def retire_worker(self) -> None:
        """Mark this worker stopped (its lease ends now)."""
        with self._engine.begin() as conn:
            conn.execute(
                _workers.update()
                .where(_workers.c.study == self.study, _workers.c.worker_id == self.worker_id)
                .values(stopped=True, lease_expires_at=0.0)
            )

    @_retried
    def expire_all_leases(self) -> int:
        """End every worker's lease (call only when no worker of the study can be alive).

        Returns:
            How many leases were still open.
        """
        with self._locked() as (conn, _, now):
            result = conn.execute(
                _workers.update()
                .where(_workers.c.study == self.study, _workers.c.lease_expires_at > now)
                .values(lease_expires_at=0.0, stopped=True)
            )
            return int(result.rowcount or 0)

    @_retried
    def live_workers(self) -> set[str]:
        """Ids of the study's workers whose lease has not expired."""
        with self._engine.begin() as conn:
            return self._live_ids(conn, self._now(conn))

    def _live_ids(self, conn: sa.Connection, now: float) -> set[str]:
        rows = conn.execute(
            sa.select(_workers.c.worker_id).where(
                _workers.c.study == self.study, _workers.c.lease_expires_at > now, ~_workers.c.stopped
            )
        )
        return {r.worker_id for r in rows}

    # ------------------------------------------------------------------ cells

    @_retried
    def lookup(self, canonical: str) -> Cell | None:
        """The study's cell for ``canonical``, or ``None`` if the network is new."""
        with self._engine.begin() as conn:
            row = conn.execute(
                sa.select(_cells).where(_cells.c.study == self.study, _cells.c.canonical == canonical)
            ).one_or_none()
            return _row_cell(row) if row is not None else None

    @_retried
    def claim(self, canonical: str, arch: str, trial_number: int) -> ClaimResult:
        """Atomically take a budget slot for a new network.

        Returns:
            ``claimed`` with the new cell, ``exists`` with the known cell (no slot taken), or
            ``budget_full``.
        """
        with self._locked() as (conn, budget, now):
            row = conn.execute(
                sa.select(_cells).where(_cells.c.study == self.study, _cells.c.canonical == canonical)
            ).one_or_none()
            if row is not None:
                cell = _row_cell(row)
                if (cell.status, cell.owner, cell.trial_number) == (RUNNING, self.worker_id, trial_number):
                    return ClaimResult("claimed", cell)  # a retried claim whose first attempt was committed
                return ClaimResult("exists", cell)
            if self._count(conn, SLOT_STATUSES) >= budget:
                return ClaimResult("budget_full", None)
            cell = Cell(canonical, arch, RUNNING, trial_number, self.worker_id)
            conn.execute(_cells.insert().values(study=self.study, updated_at=now, **dataclasses.asdict(cell)))
            return ClaimResult("claimed", cell)

    @_retried
    def reopen(self, canonical: str, trial_number: int) -> ClaimResult:
        """Atomically take a budget slot for a network the filter rejected earlier (a ``filtered``
        cell), now to be evaluated by trial ``trial_number`` (`nasenergy.search.filter_yield`).

        Returns:
            ``claimed`` with the cell (now running, owned by this worker), ``exists`` with the cell
            when it is no longer a filtered one (another worker reopened it, or the network is
            new to the study: ``cell`` ``None``), or ``budget_full``.
        """
        with self._locked() as (conn, budget, now):
            where = (_cells.c.study == self.study, _cells.c.canonical == canonical)
            row = conn.execute(sa.select(_cells).where(*where)).one_or_none()
            cell = _row_cell(row) if row is not None else None
            if cell is None or cell.status != FILTERED:
                if cell is not None and (cell.status, cell.owner, cell.trial_number) == (
                        RUNNING, self.worker_id, trial_number):
                    return ClaimResult("claimed", cell)  # a retried reopen whose first attempt was committed
                return ClaimResult("exists", cell)
            if self._count(conn, SLOT_STATUSES) >= budget:
                return ClaimResult("budget_full", None)
            conn.execute(_cells.update().where(*where).values(
                status=RUNNING, trial_number=trial_number, owner=self.worker_id, updated_at=now))
            return ClaimResult("claimed", dataclasses.replace(cell, status=RUNNING, trial_number=trial_number,
                                                              owner=self.worker_id))

    @_retried
    def record(
        self, canonical: str, arch: str, trial_number: int, status: Literal["filtered", "failed", "not_recorded"]
    ) -> bool:
        """Remember a network that takes no slot: filtered, not in the recorded profile, or failed
        before any claim (e.g. its cheap measurement failed). Returns whether it was new to the study."""
        with self._locked() as (conn, _, now):
            exists = conn.execute(
                sa.select(_cells.c.status).where(_cells.c.study == self.study, _cells.c.canonical == canonical)
            ).one_or_none()
            if exists is not None:
                return False
            cell = Cell(canonical, arch, status, trial_number, self.worker_id)
            conn.execute(_cells.insert().values(study=self.study, updated_at=now, **dataclasses.asdict(cell)))
            return True

    @_retried
    def adopt_orphan(self) -> Cell | None:
        """Take over one running claim whose owner's lease has expired.

        Call it only while this worker works on no claim: a running claim it owns itself is then
        one a retried transaction left behind, and is taken up again like any orphan.

        Returns:
            The adopted cell (now owned by this worker; it keeps its slot), or ``None``.
        """
        with self._locked() as (conn, _, now):
            live = self._live_ids(conn, now) - {self.worker_id}
            rows = conn.execute(
                sa.select(_cells)
                .where(_cells.c.study == self.study, _cells.c.status == RUNNING)
                .order_by(_cells.c.updated_at)
            ).all()
            for row in rows:
                if row.owner not in live:
                    conn.execute(
                        _cells.update()
                        .where(_cells.c.study == self.study, _cells.c.canonical == row.canonical)
                        .values(owner=self.worker_id, updated_at=now)
                    )
                    return Cell(row.canonical, row.arch, RUNNING, int(row.trial_number), self.worker_id)
            return None

    @_retried
    def finish(self, canonical: str, status: Literal["done", "failed"], trial_number: int | None = None) -> bool:
        """Close this worker's claim as ``done`` or ``failed`` (a failure frees the slot).

        Args:
            canonical: the claimed network.
            status: ``done`` or ``failed``.
            trial_number: the trial now holding the result, when it changed (an adopted claim
                whose original trial could not be completed).

        Returns:
            Whether this worker still owned the claim (``False``: another worker adopted it
            after this worker's lease expired).
        """
        values: dict[str, Any] = {"status": status}
        if trial_number is not None:
            values["trial_number"] = trial_number
        with self._locked() as (conn, _, now):
            result = conn.execute(
                _cells.update()
                .where(
                    _cells.c.study == self.study,
                    _cells.c.canonical == canonical,
                    _cells.c.status.in_((RUNNING, status)),  # a retried finish finds its own write
                    _cells.c.owner == self.worker_id,
                )
                .values(updated_at=now, **values)
            )
            return bool(result.rowcount)

    @_retried
    def owns(self, canonical: str) -> bool:
        """Whether this worker still holds the running claim on ``canonical`` (``False``: another
        worker adopted it after this worker's lease expired, or it is closed)."""
        with self._engine.begin() as conn:
            owner = conn.execute(
                sa.select(_cells.c.owner).where(
                    _cells.c.study == self.study, _cells.c.canonical == canonical, _cells.c.status == RUNNING
                )
            ).scalar_one_or_none()
            return owner == self.worker_id

    @_retried
    def release(self, canonical: str) -> bool:
        """Give back this worker's unfinished claim and its slot (e.g. on Ctrl-C)."""
        with self._locked() as (conn, _, _now):
            result = conn.execute(
                _cells.delete().where(
                    _cells.c.study == self.study,
                    _cells.c.canonical == canonical,
                    _cells.c.status == RUNNING,
                    _cells.c.owner == self.worker_id,
                )
            )
            return bool(result.rowcount)

    @_retried
    def reconcile(self, stored: Mapping[int, StoredTrial], *, everyone_dead: bool) -> Reconciled:
        """Make the claims agree with the trials the study holds: the budget counts only
        evaluations whose results are stored.

        A journal cut short (a crash of the machine, a damaged or restored file) can lose trials
        whose cells this database still holds. So:

        * a cell whose trial the study lacks, or whose trial names another network, or a slot's
          cell whose unfinished trial lacks its measurement, is forgotten (its network is new
          again; a slot it held goes back);
        * a ``done`` cell whose trial is not ``COMPLETE`` (its result was lost) is ``running``
          again, with no owner: a worker adopts it and evaluates that trial's network again;
        * with ``everyone_dead`` (no worker of the study can be alive), a cell that holds no slot
          and whose trial was never closed is forgotten too (its outcome was lost).

        Without ``everyone_dead`` only the second rule applies, to measured trials in ``stored``
        (other workers may be creating trials and claims meanwhile; a database storage never loses
        one).

        Args:
            stored: the study's trials by number.
            everyone_dead: no worker of the study is alive (the run folder is held exclusively).

        Returns:
            How many cells were forgotten and how many were opened again.
        """
        forgotten = reopened = 0
        with self._locked() as (conn, _, now):
            rows = conn.execute(sa.select(_cells).where(_cells.c.study == self.study)).all()
            for row in rows:
                trial = stored.get(int(row.trial_number))
                where = (_cells.c.study == self.study, _cells.c.canonical == row.canonical)
                if everyone_dead and (
                    trial is None
                    or (trial.network is not None and trial.network != row.canonical)
                    or (row.status not in SLOT_STATUSES and trial.state == "RUNNING")
                    or (row.status in SLOT_STATUSES and trial.state != "COMPLETE" and not trial.measured)
                ):
                    conn.execute(_cells.delete().where(*where))
                    forgotten += 1
                elif row.status == DONE and trial is not None and trial.state != "COMPLETE" and trial.measured:
                    conn.execute(_cells.update().where(*where).values(status=RUNNING, owner="", updated_at=now))
                    reopened += 1
        return Reconciled(forgotten=forgotten, reopened=reopened)

    @_retried
    def status(self) -> BudgetStatus:
        """The study's counts, read in one transaction."""
        with self._engine.begin() as conn:
            now = self._now(conn)
            budget = conn.execute(
                sa.select(_studies.c.budget).where(_studies.c.study == self.study)
            ).scalar_one_or_none()
            counts = dict(
                conn.execute(
                    sa.select(_cells.c.status, sa.func.count())
                    .where(_cells.c.study == self.study)
                    .group_by(_cells.c.status)
                ).all()
            )
            live = self._live_ids(conn, now)
            owners = conn.execute(
                sa.select(_cells.c.owner).where(_cells.c.study == self.study, _cells.c.status == RUNNING)
            ).scalars()
            orphans = sum(1 for o in owners if o not in live)
        running, done = counts.get(RUNNING, 0), counts.get(DONE, 0)
        return BudgetStatus(
            budget=int(budget or 0),
            claimed=running + done,
            done=done,
            running=running,
            orphans=orphans,
            failed=counts.get(FAILED, 0),
            filtered=counts.get(FILTERED, 0),
            live_workers=len(live),
        )

    @_retried
    def cells(self) -> list[Cell]:
        """Every cell of the study, in claim order."""
        with self._engine.begin() as conn:
            rows = conn.execute(
                sa.select(_cells).where(_cells.c.study == self.study).order_by(_cells.c.updated_at)
            ).all()
            return [_row_cell(r) for r in rows]

    def _count(self, conn: sa.Connection, statuses: tuple[str, ...]) -> int:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(_cells)
                .where(_cells.c.study == self.study, _cells.c.status.in_(statuses))
            ).scalar_one()
        )


class Heartbeat:
    """A daemon thread renewing a worker's lease every ``lease_s / 4`` seconds.

    Use as a context manager; a failed renewal is retried at the next beat.
    """

    def __init__(self, store: ClaimStore) -> None:
        self._store = store
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nasenergy-heartbeat", daemon=True)

    def _run(self) -> None:
        interval = self._store.lease_s / 4.0
        while not self._stop.wait(interval):
            try:
                self._store.heartbeat()
            except sa.exc.SQLAlchemyError:
                continue

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


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
