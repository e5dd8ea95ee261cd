"""Workers and their leases: a worker's id, registering it, renewing its lease (by hand or from
the `Heartbeat` thread), retiring it, expiring every lease, and which workers are alive.

A worker whose lease has expired counts as dead: its running claims become orphans that another
worker adopts (`nasenergy.search.storage.claim_ledger`). Leases are timed on the database's clock
(`ClaimDb._now`), one clock for every machine.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid

import sqlalchemy as sa

from nasenergy.search.storage.claim_db import ClaimDb, retried
from nasenergy.search.storage.claim_schema import WORKERS


def new_worker_id() -> str:
    """A unique id for this process: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class WorkerLeases(ClaimDb):
    """The workers of one study and their leases (see `ClaimDb` for the arguments)."""

    # ---------------------------------------------------------------- workers

    @retried
    def register_worker(self) -> int:
        """Add this worker with a fresh lease.

        Returns:
            Its rank: how many workers the study had registered before it (0 for the first).
        """
        with self._locked() as (conn, _, now):
            mine = conn.execute(
                sa.select(WORKERS.c.rank).where(WORKERS.c.study == self.study, WORKERS.c.worker_id == self.worker_id)
            ).scalar_one_or_none()
            if mine is not None:  # a retried registration whose first attempt was committed
                return int(mine)
            rank = conn.execute(
                sa.select(sa.func.count()).select_from(WORKERS).where(WORKERS.c.study == self.study)
            ).scalar_one()
            conn.execute(
                WORKERS.insert().values(
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
                WORKERS.update()
                .where(WORKERS.c.study == self.study, WORKERS.c.worker_id == self.worker_id)
                .values(lease_expires_at=now + self.lease_s)
            )

    @retried
    def retire_worker(self) -> None:
        """Mark this worker stopped (its lease ends now)."""
        with self._engine.begin() as conn:
            conn.execute(
                WORKERS.update()
                .where(WORKERS.c.study == self.study, WORKERS.c.worker_id == self.worker_id)
                .values(stopped=True, lease_expires_at=0.0)
            )

    @retried
    def expire_all_leases(self) -> int:
        """End every worker's lease (call only when no worker of the study can be alive).

        Returns:
            How many leases were still open.
        """
        with self._locked() as (conn, _, now):
            result = conn.execute(
                WORKERS.update()
                .where(WORKERS.c.study == self.study, WORKERS.c.lease_expires_at > now)
                .values(lease_expires_at=0.0, stopped=True)
            )
            return int(result.rowcount or 0)

    @retried
    def live_workers(self) -> set[str]:
        """Ids of the study's workers whose lease has not expired."""
        with self._engine.begin() as conn:
            return self._live_ids(conn, self._now(conn))

    def _live_ids(self, conn: sa.Connection, now: float) -> set[str]:
        rows = conn.execute(
            sa.select(WORKERS.c.worker_id).where(
                WORKERS.c.study == self.study, WORKERS.c.lease_expires_at > now, ~WORKERS.c.stopped
            )
        )
        return {r.worker_id for r in rows}


class Heartbeat:
    """A daemon thread renewing a worker's lease every ``lease_s / 4`` seconds.

    Use as a context manager; a failed renewal is retried at the next beat.
    """

    def __init__(self, store: WorkerLeases) -> None:
        self._store = store
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nasenergy-heartbeat", daemon=True)

    def _run(self) -> None:
        interval_s = self._store.lease_s / 4.0
        while not self._stop.wait(interval_s):
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
