"""Shared fixtures of the search tests: a PostgreSQL URL (tests skip without one)."""

from __future__ import annotations

import os
import uuid

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
