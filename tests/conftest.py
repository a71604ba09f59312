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


@pytest.fixture(scope="module")
def frozen_server() -> Iterator[PostgresServer]:
    """A throw-away PostgreSQL server of one test module's own, which its tests may freeze
    (`PostgresServer.freeze`): the session's server is never stopped."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()
