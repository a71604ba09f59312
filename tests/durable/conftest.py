"""The durable suite runs against both stores: `stores` is parametrized over SQLite and Postgres.

A test names where its runs live by a temp dir (`stores.target(tmp_path)`): a file in it for
SQLite, a fresh database on the session's PostgreSQL server for Postgres. Child processes get the
same target string and open it with `actloop.checkpoint.connect`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actloop.checkpoint import BaseCheckpointer, connect
from postgres_server import PostgresServer, postgres_server

__all__ = ["Stores", "postgres_server", "stores"]


class Stores:
    """Where a test's runs live, for one kind of store; closes what it opened."""

    def __init__(self, kind: str, server: PostgresServer | None) -> None:
        self.kind, self.server = kind, server
        self._targets: dict[tuple[Path, str], str] = {}
        self._opened: list[BaseCheckpointer] = []

    def target(self, tmp: Path, name: str = "runs.db") -> str:
        """The store of `tmp`: `tmp/name` (SQLite) or one database per (tmp, name) (Postgres)."""
        key = (tmp, name)
        if key not in self._targets:
            if self.server is None:
                self._targets[key] = str(tmp / name)
            else:
                self._targets[key] = self.server.create_database()
        return self._targets[key]

    def open(self, tmp: Path, name: str = "runs.db", **options: Any) -> BaseCheckpointer:
        """A store on `target(tmp, name)`; leases do not expire unless `lease_ttl` is given."""
        options.setdefault("lease_ttl", None)
        store = connect(self.target(tmp, name), **options)
        self._opened.append(store)
        return store

    def close(self) -> None:
        for store in self._opened:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest) -> Iterator[Stores]:
    server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None
    kinds = Stores(request.param, server)
    try:
        yield kinds
    finally:
        kinds.close()


_ = postgres_server
