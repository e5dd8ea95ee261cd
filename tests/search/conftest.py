"""Shared fixtures of the search tests: a synthetic benchmark table, the run-command helper, and
a PostgreSQL URL (tests needing it skip without one)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

POSTGRES_ENV = "NASENERGY_TEST_POSTGRES_URL"


@pytest.fixture
def pg_url() -> str:
    """The test PostgreSQL server's URL; the test skips when ``$NASENERGY_TEST_POSTGRES_URL`` is unset."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    return url


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
