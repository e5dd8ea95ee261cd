"""Shared fixtures of the search tests: a synthetic benchmark table, the run-command helper, a
PostgreSQL URL (tests needing it skip without one) and control of that server (to stop and
restart it)."""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from pathlib import Path

import pytest

POSTGRES_ENV = "NASENERGY_TEST_POSTGRES_URL"
PG_CTL_ENV, PGDATA_ENV, PG_OSUSER_ENV = "NASENERGY_TEST_PG_CTL", "NASENERGY_TEST_PGDATA", "NASENERGY_TEST_PG_OSUSER"


class PgServer:
    """Stops and starts the test PostgreSQL server: ``pg_ctl -D PGDATA``, run as ``os_user`` when
    given (its settings live in the data folder, see ``.ci/run``)."""

    def __init__(self, pg_ctl: str, pgdata: str, os_user: str | None) -> None:
        self.pg_ctl, self.pgdata, self.os_user = pg_ctl, pgdata, os_user
        self.running = True

    def _ctl(self, *args: str) -> None:
        command = [self.pg_ctl, "-D", self.pgdata, *args]
        if self.os_user:
            command = ["su", self.os_user, "-s", "/bin/sh", "-c", shlex.join(command)]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        """Stop it at once (``-m fast``: open connections are cut)."""
        self._ctl("-m", "fast", "-w", "stop")
        self.running = False

    def start(self) -> None:
        """Start it again and wait until it accepts connections."""
        self._ctl("-l", str(Path(self.pgdata) / "log"), "-w", "start")
        self.running = True


@pytest.fixture
def pg_url() -> str:
    """The test PostgreSQL server's URL; the test skips when ``$NASENERGY_TEST_POSTGRES_URL`` is unset."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    return url


@pytest.fixture
def pg_server(pg_url):
    """Control of the test PostgreSQL server; the test skips unless ``$NASENERGY_TEST_PG_CTL`` and
    ``$NASENERGY_TEST_PGDATA`` say how to restart it. The server runs again after the test."""
    pg_ctl, pgdata = os.environ.get(PG_CTL_ENV), os.environ.get(PGDATA_ENV)
    if not (pg_ctl and pgdata):
        pytest.skip(f"{PG_CTL_ENV} and {PGDATA_ENV} are not set")
    server = PgServer(pg_ctl, pgdata, os.environ.get(PG_OSUSER_ENV) or None)
    yield server
    if not server.running:
        server.start()


@pytest.fixture
def unique_name() -> str:
    """A study name no other test (or earlier run against the same database) uses."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def table_path(tmp_path_factory) -> Path:
    """A synthetic TSS benchmark table (see `fake_parts.write_table`)."""
    from fake_parts import write_table
    from search_spaces import get_space

    return write_table(tmp_path_factory.mktemp("bench") / "tss_table.csv", get_space("tss"))


@pytest.fixture
def fake_env(table_path, monkeypatch) -> dict[str, str]:
    """The environment of a search using the test parts (also set for this process)."""
    from fake_parts import TABLE_ENV

    monkeypatch.setenv(TABLE_ENV, str(table_path))
    return {**os.environ, TABLE_ENV: str(table_path)}
