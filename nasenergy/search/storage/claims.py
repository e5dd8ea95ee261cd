"""The exact budget: atomic claims of (study, network) and a budget slot; `ClaimStore` is its API.

Three small tables live in the study's database (the shared PostgreSQL database, or
``claims.sqlite`` in the run folder):

* ``nasenergy_studies``: one row per study with its budget and its study-defining settings.
* ``nasenergy_cells``: one row per network the study has seen, unique on ``(study, canonical)``,
  where ``canonical`` holds the network's key (`nasenergy.run.network_key`; the column keeps
  its name so existing study databases stay readable), with its status: ``filtered`` (cheap figures only), ``not_recorded``
  (the recorded profile lacks it), ``running`` (a full evaluation is claimed), ``done`` or
  ``failed``. Rows ``running`` or ``done`` hold the study's
  budget slots.
* ``nasenergy_workers``: one row per worker process with a lease that its heartbeat thread renews.

Every change happens in one transaction that first locks the study's row (``SELECT ... FOR
UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), so "is this network new, and is a budget
slot free?" and "take it" are one atomic step: at most ``budget`` networks are ever claimed, and
none twice. On PostgreSQL no transaction holds that lock, or waits for it, longer than the lease
(`nasenergy.search.storage.db_timeouts`): a worker stopped inside one (``SIGSTOP``) has its session ended
by the server, and the others go on.

A worker killed with ``kill -9`` stops renewing its lease. Its ``running`` claims keep their budget
slot (the budget is never handed out twice) and become *orphans* once its lease has expired; any
worker then adopts an orphan and finishes that evaluation before it claims anything new, so the
study still ends with exactly ``budget`` finished evaluations. A run that owns its folder
exclusively (the local journal storage) knows every earlier worker is dead and expires their leases
at once, so a resume adopts orphans immediately; on a shared database a resume waits out the
lease (``--lease-s``). An interrupted worker (Ctrl-C) releases its claim, returning the slot.

The claims are not the record of what was spent: the study is (it alone holds the results; see
`nasenergy.search.sampling.study_budget`). On every start they are reconciled with the study and
what the study proves is restored, so a ``claims.sqlite`` deleted, emptied or older than the study
is rebuilt and never lets a budget slot be spent twice.

Given a `DbRetry`, every operation but the heartbeat rides out database outages (each is one
transaction, run again after a transient fault). The writes are safe to run twice: a retried
claim, finish or registration whose first attempt was committed before the connection dropped
finds its own row and succeeds.

The parts, each with one job: `nasenergy.search.storage.claim_schema` (the tables, a cell's statuses),
`nasenergy.search.storage.claim_db` (the engine, the clock, the study's row and its lock, retries),
`nasenergy.search.storage.leases` (workers, their leases and the `Heartbeat`),
`nasenergy.search.storage.claim_queries` (reading the cells: lookups, counts) and
`nasenergy.search.storage.claim_ledger` (changing the cells: claims, their ends, reconciling). Their
public names are importable from here.
"""

from __future__ import annotations

from nasenergy.search.storage.claim_db import BudgetMismatchError
from nasenergy.search.storage.claim_ledger import BudgetStatus, ClaimLedger, ClaimResult, Reconciled, StoredTrial
from nasenergy.search.storage.claim_schema import DONE, FAILED, FILTERED, NOT_RECORDED, RUNNING, SLOT_STATUSES, Cell
from nasenergy.search.storage.db_retry import DbRetry
from nasenergy.search.storage.leases import Heartbeat, new_worker_id

__all__ = [
    "DONE", "FAILED", "FILTERED", "NOT_RECORDED", "RUNNING", "SLOT_STATUSES",
    "BudgetMismatchError", "BudgetStatus", "Cell", "ClaimResult", "ClaimStore", "Heartbeat", "Reconciled",
    "StoredTrial", "new_worker_id",
]


class ClaimStore(ClaimLedger):
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
        super().__init__(url, study, worker_id=worker_id or new_worker_id(), lease_s=lease_s, retry=retry)
