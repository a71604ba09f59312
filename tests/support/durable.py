"""Where a durable test's runs live: `Stores`, for SQLite or for the session's PostgreSQL server.

A test names its store by a temp dir (`stores.target(tmp_path)`): a file in it for SQLite, a
fresh database on the server for Postgres. Child processes get the same target string and open
it with `actloop.checkpoint.connect`. The `stores` fixture of tests/durable makes one per kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actloop.checkpoint import BaseCheckpointer, connect
from support.postgres import PostgresServer

__all__ = ["Stores"]


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
