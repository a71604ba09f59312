"""Every store call is bounded: by its `timeout`, else by the store's own `timeout`. A call that
cannot finish in time raises `StoreTimeoutError` once the time is up, and an async call never
holds the event loop while it waits."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from actloop import CheckpointError
from actloop.checkpoint import (
    BaseCheckpointer,
    JournalEntry,
    Lease,
    Owner,
    PostgresCheckpointer,
    RunRecord,
    RunStatus,
    SqliteCheckpointer,
    StoreTimeoutError,
)
from support.postgres import PostgresServer
from support.waits import beside_a_ticker

T = TypeVar("T")


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[SqliteCheckpointer]:
    """A checkpoint file whose write lock another connection holds."""
    path = tmp_path / "runs.db"
    store = SqliteCheckpointer(path)
    store.list_runs()  # the file exists, in WAL mode
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN IMMEDIATE")
    try:
        yield store
    finally:
        lock.execute("ROLLBACK")
        lock.close()
        store.close()


def test_a_write_waits_no_longer_than_its_timeout(locked: SqliteCheckpointer) -> None:
    started = time.monotonic()
    with pytest.raises(StoreTimeoutError, match="did not answer in time") as caught:
        locked.acquire("T", Owner.current(), timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 5.0  # not SQLite's 30 s busy timeout
    assert str(caught.value).startswith(f"checkpoint file {locked.path} (busy: database is locked)")
    assert locked.list_runs(timeout=0.3) == []  # reads go on beside the writer (WAL)


def test_the_store_timeout_bounds_a_call_given_none(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "runs.db", timeout=0.2)
    store.list_runs()
    lock = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(StoreTimeoutError):
            store.acquire("T", Owner.current())
        assert time.monotonic() - started < 5.0
    finally:
        lock.execute("ROLLBACK")
        lock.close()
        store.close()


def test_an_async_write_on_a_busy_file_leaves_the_loop_free(locked: SqliteCheckpointer) -> None:
    outcome, stall = asyncio.run(
        beside_a_ticker(locked.aacquire("T", Owner.current(), timeout=1.0))
    )
    assert isinstance(outcome, StoreTimeoutError)
    assert stall < 0.2  # it waited on a worker, not on the event loop


class SlowStore(BaseCheckpointer):
    """A user's store with only sync methods, one of which (`get`) hangs: the async twins it
    inherits run it on a worker, bounded."""

    def __init__(self, inner: SqliteCheckpointer, hang: threading.Event) -> None:
        self.inner, self.hang = inner, hang

    def acquire(self, thread_id: str, owner: Owner, **kw: Any) -> Lease:
        return self.inner.acquire(thread_id, owner, **kw)

    def renew(self, lease: Lease, **kw: Any) -> Lease:
        return self.inner.renew(lease, **kw)

    def release(self, lease: Lease, **kw: Any) -> None:
        self.inner.release(lease, **kw)

    def get(self, thread_id: str, **kw: Any) -> RunRecord | None:
        self.hang.wait(30)  # a store that stopped answering, and ignores its timeout
        return self.inner.get(thread_id, **kw)

    def create(self, record: RunRecord, **kw: Any) -> None:
        self.inner.create(record, **kw)

    def update(self, thread_id: str, status: RunStatus, **kw: Any) -> None:
        self.inner.update(thread_id, status, **kw)

    def append(self, thread_id: str, entry: JournalEntry, **kw: Any) -> None:
        self.inner.append(thread_id, entry, **kw)

    def entries(self, thread_id: str, **kw: Any) -> list[JournalEntry]:
        return self.inner.entries(thread_id, **kw)

    def list_runs(self, **kw: Any) -> list[RunRecord]:
        return self.inner.list_runs(**kw)


def test_inherited_async_twins_are_bounded_even_when_the_store_is_not(tmp_path: Path) -> None:
    hang = threading.Event()
    store = SlowStore(SqliteCheckpointer(tmp_path / "runs.db"), hang)
    try:
        started = time.monotonic()
        outcome, stall = asyncio.run(beside_a_ticker(store.aget("T", timeout=0.3)))
        assert isinstance(outcome, StoreTimeoutError)
        assert time.monotonic() - started < 5.0 and stall < 0.2
        assert asyncio.run(store.alist_runs(timeout=1.0)) == []
    finally:
        hang.set()


def test_a_postgres_statement_ends_at_the_store_timeout_on_the_server_too(
    postgres_server: PostgresServer,
) -> None:
    """The server cancels a statement that outlives the store's `timeout` (here a lock wait),
    whatever bound the caller gave: a stuck statement never holds a pooled connection for long."""
    url = postgres_server.create_database()
    store = PostgresCheckpointer(url, lease_ttl=None, timeout=1.0)
    store.acquire("T", Owner.current())
    import psycopg

    holder = psycopg.connect(url)
    try:
        holder.execute("SELECT 1 FROM actloop.leases WHERE thread_id='T' FOR UPDATE")
        started = time.monotonic()
        with pytest.raises(CheckpointError, match="canceling statement due to statement timeout"):
            store.acquire("T", Owner.current(), timeout=20.0)  # held: the slow path locks it
        assert 1.0 <= time.monotonic() - started < 10.0
    finally:
        holder.rollback()
        holder.close()
        store.close()
