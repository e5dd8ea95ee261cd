"""The layout of the claims database: its three tables, a cell's statuses and a cell as a value.

The tables (``nasenergy_studies``, ``nasenergy_cells``, ``nasenergy_workers``) are described in
`nasenergy.search.storage.claims`; their names and columns are what existing study databases hold, so they
never change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import sqlalchemy as sa

FILTERED: Final[Literal["filtered"]] = "filtered"
RUNNING: Final[Literal["running"]] = "running"
DONE: Final[Literal["done"]] = "done"
FAILED: Final[Literal["failed"]] = "failed"
NOT_RECORDED: Final[Literal["not_recorded"]] = "not_recorded"
"""A network the recorded profile cannot measure (no slot, never measured)."""
SLOT_STATUSES = (RUNNING, DONE)
"""Cell statuses that hold a budget slot."""

METADATA = sa.MetaData()
"""The claims' tables (`STUDIES`, `CELLS`, `WORKERS`)."""
STUDIES = sa.Table(
    "nasenergy_studies",
    METADATA,
    sa.Column("study", sa.String(200), primary_key=True),
    sa.Column("budget", sa.Integer, nullable=False),
    sa.Column("settings_json", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)
"""One row per study: its budget and its study-defining settings (the row every change locks)."""
CELLS = sa.Table(
    "nasenergy_cells",
    METADATA,
    sa.Column("study", sa.String(200), nullable=False),
    sa.Column("canonical", sa.String(400), nullable=False),
    sa.Column("arch", sa.String(400), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("trial_number", sa.Integer, nullable=False),
    sa.Column("owner", sa.String(200), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.PrimaryKeyConstraint("study", "canonical", name="nasenergy_cells_study_canonical"),
)
"""One row per network a study has seen (`Cell`)."""
WORKERS = sa.Table(
    "nasenergy_workers",
    METADATA,
    sa.Column("study", sa.String(200), nullable=False),
    sa.Column("worker_id", sa.String(200), nullable=False),
    sa.Column("rank", sa.Integer, nullable=False),
    sa.Column("host", sa.String(200), nullable=False),
    sa.Column("pid", sa.Integer, nullable=False),
    sa.Column("lease_expires_at", sa.Float, nullable=False),
    sa.Column("stopped", sa.Boolean, nullable=False),
    sa.PrimaryKeyConstraint("study", "worker_id", name="nasenergy_workers_study_worker"),
)
"""One row per worker process, with its lease (`nasenergy.search.storage.leases`)."""
SCHEMA_LOCK_KEY = 0x6E6173
"""A PostgreSQL advisory lock serialising schema creation (and the creation of a study's row)."""


@dataclass(frozen=True)
class Cell:
    """One network of a study.

    Attributes:
        canonical: the network's key (`nasenergy.run.network_key`; the unique key).
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


def row_cell(row: Any) -> Cell:
    """The `Cell` of a row of `CELLS`."""
    return Cell(row.canonical, row.arch, row.status, int(row.trial_number), row.owner)
