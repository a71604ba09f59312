"""The durable suite runs against both stores: `stores` is parametrized over SQLite and Postgres
(`support.durable.Stores`; the server is the session's `postgres_server` of tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.durable import Stores


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest) -> Iterator[Stores]:
    server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None
    kinds = Stores(request.param, server)
    try:
        yield kinds
    finally:
        kinds.close()
