"""What only the Postgres store has: its schema (foreign, newer, damaged), an unreachable
server, hidden passwords, the server's clock for leases, and a writer racing a take-over."""

from __future__ import annotations

import re
import threading

import psycopg
import pytest

from actloop import CheckpointError
from actloop.checkpoint import (
    JournalEntry,
    LeaseLostError,
    Owner,
    PostgresCheckpointer,
    RunRecord,
    connect,
)
from support.postgres import PostgresServer


def snapshot(url: str, schema: str) -> list[tuple[str, str]]:
    """Every table and column in `schema`, and the rows of its tables (as text)."""
    with psycopg.connect(url) as conn:
        cols = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema=%s ORDER BY 1, 2",
            (schema,),
        ).fetchall()
        tables = sorted({t for t, _ in cols})
        rows = [
            (t, str(conn.execute(f"SELECT * FROM {schema}.{t} ORDER BY 1".encode()).fetchall()))
            for t in tables
        ]
    return [*cols, *rows]


def execute(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement.encode())


def test_connect_picks_the_store_by_target(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    store = connect(url, lease_ttl=5.0)
    assert isinstance(store, PostgresCheckpointer)
    assert (store.conninfo, store.schema, store.lease_ttl) == (url, "actloop", 5.0)
    assert PostgresCheckpointer.__module__ == "actloop.checkpoint"


def test_a_foreign_schema_is_refused_and_left_untouched(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    execute(url, "CREATE SCHEMA actloop", "CREATE TABLE actloop.users(name TEXT)",
            "INSERT INTO actloop.users VALUES ('ada')")  # fmt: skip
    before = snapshot(url, "actloop")
    store = PostgresCheckpointer(url)
    message = (
        f"schema 'actloop' of {url} is not an actloop checkpoint store (it holds other tables); "
        "pass another schema=. It was left untouched."
    )
    with pytest.raises(CheckpointError, match=f"^{re.escape(message)}$"):
        store.get("T")
    assert snapshot(url, "actloop") == before
    other = PostgresCheckpointer(url, schema="runs")  # another schema of the same database works
    other.create(RunRecord("T", "running", "{}", "{}"))
    assert [r.thread_id for r in other.list_runs()] == ["T"]
    other.close()


def test_a_newer_or_damaged_schema_is_refused_untouched(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    store = PostgresCheckpointer(url)
    store.create(RunRecord("T", "running", "{}", "{}"))
    store.close()
    execute(url, "UPDATE actloop.meta SET value='2' WHERE key='version'")
    before = snapshot(url, "actloop")
    with pytest.raises(
        CheckpointError,
        match=re.escape(
            f"schema 'actloop' of {url} has schema version 2; this actloop reads versions 1 to 1. "
            "It was left untouched."
        ),
    ):
        PostgresCheckpointer(url).list_runs()
    assert snapshot(url, "actloop") == before
    execute(url, "UPDATE actloop.meta SET value='1' WHERE key='version'",
            "ALTER TABLE actloop.entries DROP COLUMN epoch")  # fmt: skip
    before = snapshot(url, "actloop")
    with pytest.raises(
        CheckpointError, match=r"is damaged \(missing entries\.epoch\); it was left"
    ):
        PostgresCheckpointer(url).entries("T")
    assert snapshot(url, "actloop") == before
    execute(url, "UPDATE actloop.meta SET value='gadget' WHERE key='format'")
    with pytest.raises(CheckpointError, match=r"not an actloop checkpoint store .*format 'gadget'"):
        PostgresCheckpointer(url).entries("T")


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    with socket_port() as port:
        url = f"postgresql://ada:s3cret@127.0.0.1:{port}/db"
        store = PostgresCheckpointer(url, connect_timeout=2)
        with pytest.raises(CheckpointError) as caught:
            store.get("T")
    text = str(caught.value)
    assert text.startswith(
        f"PostgreSQL store postgresql://ada:***@127.0.0.1:{port}/db (schema actloop) is "
        "unreachable: "
    )
    assert "s3cret" not in text and "s3cret" not in repr(store)
    keywords = PostgresCheckpointer("host=h password='a b' dbname=x")
    assert repr(keywords) == "PostgresCheckpointer('host=h password=*** dbname=x')"


def test_leases_expire_by_the_servers_clock(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    store = PostgresCheckpointer(url)  # leases last 30 s by default on Postgres
    lease = store.acquire("T", Owner(1, "elsewhere", "", "a"))
    assert lease.epoch == 1 and lease.expires is not None
    with pytest.raises(CheckpointError, match="is being run by process 1 on elsewhere"):
        store.acquire("T", Owner.current())
    execute(url, "UPDATE actloop.leases SET expires = expires - 31")  # 31 s later, by the server
    taken = store.acquire("T", Owner.current())
    assert taken.epoch == 2
    with pytest.raises(LeaseLostError):
        store.append("T", JournalEntry(0, "obs", 0, 0, 1.0, "late"), lease=lease)
    store.close()


def test_a_write_racing_a_take_over_is_fenced(postgres_server: PostgresServer) -> None:
    """The take-over waits for a fenced write in flight (FOR SHARE), then the old lease writes
    nothing more: every entry has the epoch that was current when it was written."""
    url = postgres_server.create_database()
    old_store, new_store = PostgresCheckpointer(url), PostgresCheckpointer(url)
    old = old_store.acquire("T", Owner(1, "elsewhere", "", "a"), ttl=0.0)
    refused: list[int] = []

    def writer() -> None:
        for seq in range(400):
            try:
                old_store.append("T", JournalEntry(seq, "obs", 0, seq, 1.0, "x"), lease=old)
            except LeaseLostError:
                refused.append(seq)
                return

    thread = threading.Thread(target=writer)
    thread.start()
    while not old_store.entries("T"):
        pass
    new = new_store.acquire("T", Owner.current())
    seen = new_store.entries("T")  # what the new owner replays
    thread.join()
    assert new.epoch == 2 and refused and refused[0] == len(seen)
    assert new_store.entries("T") == seen  # nothing was written after the take-over
    old_store.close()
    new_store.close()


class socket_port:
    """A loopback port nobody listens on (bound, not listening, while in use)."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
