"""Fixtures more than one folder uses. Helpers are in `tests/support` (import them from there)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.postgres import PostgresServer


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throw-away PostgreSQL server for the whole session (tests/durable, tests/distributed)."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()
