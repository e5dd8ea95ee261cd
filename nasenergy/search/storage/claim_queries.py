"""The read-only queries of a study's cells: looking one network up, whether this worker still
owns a claim, the study's counts (`BudgetStatus`) and its cells in claim order.

`CellQueries` is the base of `nasenergy.search.storage.claim_ledger.ClaimLedger`, whose transitions (claim,
record, finish, ...) change the cells these queries read. Each query is one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from nasenergy.search.storage.claim_db import retried
from nasenergy.search.storage.claim_schema import CELLS, DONE, FAILED, FILTERED, RUNNING, STUDIES, Cell, row_cell
from nasenergy.search.storage.leases import WorkerLeases


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


class CellQueries(WorkerLeases):
    """The read-only queries of one study's cells (see `ClaimDb` for the arguments)."""

    @retried
    def lookup(self, canonical: str) -> Cell | None:
        """The study's cell for ``canonical``, or ``None`` if the network is new."""
        with self._engine.begin() as conn:
            row = conn.execute(
                sa.select(CELLS).where(CELLS.c.study == self.study, CELLS.c.canonical == canonical)
            ).one_or_none()
            return row_cell(row) if row is not None else None

    @retried
    def owns(self, canonical: str) -> bool:
        """Whether this worker still holds the running claim on ``canonical`` (``False``: another
        worker adopted it after this worker's lease expired, or it is closed)."""
        with self._engine.begin() as conn:
            owner = conn.execute(
                sa.select(CELLS.c.owner).where(
                    CELLS.c.study == self.study, CELLS.c.canonical == canonical, CELLS.c.status == RUNNING
                )
            ).scalar_one_or_none()
            return owner == self.worker_id

    @retried
    def status(self) -> BudgetStatus:
        """The study's counts, read in one transaction."""
        with self._engine.begin() as conn:
            now = self._now(conn)
            budget = conn.execute(
                sa.select(STUDIES.c.budget).where(STUDIES.c.study == self.study)
            ).scalar_one_or_none()
            counts: dict[str, int] = dict(
                conn.execute(
                    sa.select(CELLS.c.status, sa.func.count())
                    .where(CELLS.c.study == self.study)
                    .group_by(CELLS.c.status)
                ).all()
            )
            live = self._live_ids(conn, now)
            owners = conn.execute(
                sa.select(CELLS.c.owner).where(CELLS.c.study == self.study, CELLS.c.status == RUNNING)
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

    @retried
    def cells(self) -> list[Cell]:
        """Every cell of the study, in claim order."""
        with self._engine.begin() as conn:
            rows = conn.execute(
                sa.select(CELLS).where(CELLS.c.study == self.study).order_by(CELLS.c.updated_at)
            ).all()
            return [row_cell(r) for r in rows]

    def _count(self, conn: sa.Connection, statuses: tuple[str, ...]) -> int:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(CELLS)
                .where(CELLS.c.study == self.study, CELLS.c.status.in_(statuses))
            ).scalar_one()
        )
