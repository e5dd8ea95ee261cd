"""The ledger of a study's networks: claiming a budget slot for a new network, reopening a
filtered one, recording one that takes no slot, adopting an orphan, finishing or releasing a claim,
reconciling the cells with the trials the study holds and restoring the cells the study proves
(counting them and the other read-only queries: `nasenergy.search.storage.claim_queries`).

The study (its journal or database) is the record of what was spent; the ledger is derived from
it and coordinates the workers. `ClaimLedger.reconcile` removes what the study does not back,
`ClaimLedger.restore` adds back what it holds and the ledger lacks (a ledger deleted, emptied or
restored from an older copy), so a resumed run never spends a slot twice.

Every change runs in one transaction holding the study's row lock (`ClaimDb._locked`), so "is this
network new, and is a budget slot free?" and "take it" are one atomic step. The writes are safe to
run twice: a retried claim or finish whose first attempt was committed finds its own row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from nasenergy.search.storage.claim_db import retried
from nasenergy.search.storage.claim_queries import BudgetStatus, CellQueries
from nasenergy.search.storage.claim_schema import (
    CELLS,
    DONE,
    FAILED,
    FILTERED,
    NOT_RECORDED,
    RUNNING,
    SLOT_STATUSES,
    Cell,
    row_cell,
)

__all__ = ["BudgetStatus", "ClaimLedger", "ClaimResult", "Reconciled", "StoredTrial"]


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
class StoredTrial:
    """What the study holds of one trial, as `ClaimStore.reconcile` needs it.

    Attributes:
        state: the Optuna state's name (``COMPLETE``, ``RUNNING``, ``FAIL``, ``PRUNED``, ...).
        network: the network key the trial recorded, if it recorded one.
        measured: whether the trial holds its cheap measurement (a claim is made only after it).
        outcome: the outcome the trial recorded (`nasenergy.run.outcomes`), if any.
        arch: the architecture string the trial recorded, if any.
    """

    state: str
    network: str | None
    measured: bool = True
    outcome: str | None = None
    arch: str | None = None


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


_RESTORED_STATUS: dict[str, str] = {
    "evaluated": DONE, "filtered": FILTERED, "infeasible": FILTERED, "not_recorded": NOT_RECORDED, "failed": FAILED,
}
"""The cell a finished trial proves, by its outcome: the cell its worker wrote before telling the
trial (`nasenergy.search.loop.candidate_step`); an evaluation only when the trial is ``COMPLETE``.
Duplicates, candidates over the budget and abandoned ones prove none; a running trial's claim, if it
had one, is lost with the ledger and its trial is closed as abandoned."""

_UNFINISHED = ("RUNNING", "WAITING")


class ClaimLedger(CellQueries):
    """The cells of one study: its networks and their budget slots (see `ClaimDb` for the
    arguments); the read-only queries (`lookup`, `owns`, `status`, `cells`) are `CellQueries`'."""

    @retried
    def claim(self, canonical: str, arch: str, trial_number: int) -> ClaimResult:
        """Atomically take a budget slot for a new network.

        Returns:
            ``claimed`` with the new cell, ``exists`` with the known cell (no slot taken), or
            ``budget_full``.
        """
        with self._locked() as (conn, budget, now):
            row = conn.execute(
                sa.select(CELLS).where(CELLS.c.study == self.study, CELLS.c.canonical == canonical)
            ).one_or_none()
            if row is not None:
                cell = row_cell(row)
                if (cell.status, cell.owner, cell.trial_number) == (RUNNING, self.worker_id, trial_number):
                    return ClaimResult("claimed", cell)  # a retried claim whose first attempt was committed
                return ClaimResult("exists", cell)
            if self._count(conn, SLOT_STATUSES) >= budget:
                return ClaimResult("budget_full", None)
            cell = Cell(canonical, arch, RUNNING, trial_number, self.worker_id)
            conn.execute(CELLS.insert().values(study=self.study, updated_at=now, **dataclasses.asdict(cell)))
            return ClaimResult("claimed", cell)

    @retried
    def reopen(self, canonical: str, trial_number: int) -> ClaimResult:
        """Atomically take a budget slot for a network the filter rejected earlier (a ``filtered``
        cell), now to be evaluated by trial ``trial_number`` (`nasenergy.search.loop.filter_yield`).

        Returns:
            ``claimed`` with the cell (now running, owned by this worker), ``exists`` with the cell
            when it is no longer a filtered one (another worker reopened it, or the network is
            new to the study: ``cell`` ``None``), or ``budget_full``.
        """
        with self._locked() as (conn, budget, now):
            where = (CELLS.c.study == self.study, CELLS.c.canonical == canonical)
            row = conn.execute(sa.select(CELLS).where(*where)).one_or_none()
            cell = row_cell(row) if row is not None else None
            if cell is None or cell.status != FILTERED:
                if cell is not None and (cell.status, cell.owner, cell.trial_number) == (
                        RUNNING, self.worker_id, trial_number):
                    return ClaimResult("claimed", cell)  # a retried reopen whose first attempt was committed
                return ClaimResult("exists", cell)
            if self._count(conn, SLOT_STATUSES) >= budget:
                return ClaimResult("budget_full", None)
            conn.execute(CELLS.update().where(*where).values(
                status=RUNNING, trial_number=trial_number, owner=self.worker_id, updated_at=now))
            return ClaimResult("claimed", dataclasses.replace(cell, status=RUNNING, trial_number=trial_number,
                                                              owner=self.worker_id))

    @retried
    def record(
        self, canonical: str, arch: str, trial_number: int, status: Literal["filtered", "failed", "not_recorded"]
    ) -> bool:
        """Remember a network that takes no slot: filtered, not in the recorded profile, or failed
        before any claim (e.g. its cheap measurement failed). Returns whether it was new to the study."""
        with self._locked() as (conn, _, now):
            exists = conn.execute(
                sa.select(CELLS.c.status).where(CELLS.c.study == self.study, CELLS.c.canonical == canonical)
            ).one_or_none()
            if exists is not None:
                return False
            cell = Cell(canonical, arch, status, trial_number, self.worker_id)
            conn.execute(CELLS.insert().values(study=self.study, updated_at=now, **dataclasses.asdict(cell)))
            return True

    @retried
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
                sa.select(CELLS)
                .where(CELLS.c.study == self.study, CELLS.c.status == RUNNING)
                .order_by(CELLS.c.updated_at)
            ).all()
            for row in rows:
                if row.owner not in live:
                    conn.execute(
                        CELLS.update()
                        .where(CELLS.c.study == self.study, CELLS.c.canonical == row.canonical)
                        .values(owner=self.worker_id, updated_at=now)
                    )
                    return Cell(row.canonical, row.arch, RUNNING, int(row.trial_number), self.worker_id)
            return None

    @retried
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
                CELLS.update()
                .where(
                    CELLS.c.study == self.study,
                    CELLS.c.canonical == canonical,
                    CELLS.c.status.in_((RUNNING, status)),  # a retried finish finds its own write
                    CELLS.c.owner == self.worker_id,
                )
                .values(updated_at=now, **values)
            )
            return bool(result.rowcount)

    @retried
    def release(self, canonical: str) -> bool:
        """Give back this worker's unfinished claim and its slot (e.g. on Ctrl-C)."""
        with self._locked() as (conn, _, _now):
            result = conn.execute(
                CELLS.delete().where(
                    CELLS.c.study == self.study,
                    CELLS.c.canonical == canonical,
                    CELLS.c.status == RUNNING,
                    CELLS.c.owner == self.worker_id,
                )
            )
            return bool(result.rowcount)

    @retried
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
            rows = conn.execute(sa.select(CELLS).where(CELLS.c.study == self.study)).all()
            for row in rows:
                trial = stored.get(int(row.trial_number))
                where = (CELLS.c.study == self.study, CELLS.c.canonical == row.canonical)
                if everyone_dead and (
                    trial is None
                    or (trial.network is not None and trial.network != row.canonical)
                    or (row.status not in SLOT_STATUSES and trial.state == "RUNNING")
                    or (row.status in SLOT_STATUSES and trial.state != "COMPLETE" and not trial.measured)
                ):
                    conn.execute(CELLS.delete().where(*where))
                    forgotten += 1
                elif row.status == DONE and trial is not None and trial.state != "COMPLETE" and trial.measured:
                    conn.execute(CELLS.update().where(*where).values(status=RUNNING, owner="", updated_at=now))
                    reopened += 1
        return Reconciled(forgotten=forgotten, reopened=reopened)

    @retried
    def restore(self, stored: Mapping[int, StoredTrial]) -> int:
        """Add the cells the study's finished trials prove and the ledger lacks.

        For each network a finished trial recorded (`_RESTORED_STATUS`), with no cell in the
        ledger, a cell is written as that trial's worker wrote it: ``done`` for an evaluation,
        ``filtered``, ``not_recorded`` or ``failed`` otherwise; an evaluation wins over an earlier
        trial of the same network that the filter rejected. Cells the ledger holds are left alone,
        so it is safe beside running workers (each wrote its cell before telling its trial).

        Args:
            stored: the study's trials by number.

        Returns:
            How many cells were added.
        """
        proven: dict[str, tuple[str, str, int]] = {}  # network -> (status, arch, trial number)
        for number in sorted(stored):
            trial = stored[number]
            status = _RESTORED_STATUS.get(trial.outcome or "")
            if status is None or not trial.network or trial.state in _UNFINISHED:
                continue
            if status == DONE and trial.state != "COMPLETE":
                continue
            known = proven.get(trial.network)
            if known is None or (status == DONE and known[0] != DONE):
                proven[trial.network] = (status, trial.arch or trial.network, number)
        if not proven:
            return 0
        added = 0
        with self._locked() as (conn, _, now):
            held = set(conn.execute(sa.select(CELLS.c.canonical).where(CELLS.c.study == self.study)).scalars())
            for network, (status, arch, number) in proven.items():
                if network in held:
                    continue
                conn.execute(CELLS.insert().values(study=self.study, canonical=network, arch=arch, status=status,
                                                   trial_number=number, owner="", updated_at=now))
                added += 1
        return added
