"""Durable runs in one SQLite file (stdlib, WAL): the embedded default store."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from actloop.checkpoint._base import BaseCheckpointer, JournalEntry, Owner, RunRecord, RunStatus
from actloop.exceptions import CheckpointError

__all__ = ["SqliteCheckpointer"]

_APP_ID = 0x61637470  # "actp"
_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE runs(thread_id TEXT PRIMARY KEY, status TEXT NOT NULL, inputs TEXT NOT NULL,
    fingerprint TEXT NOT NULL, output TEXT, pending TEXT, error TEXT,
    created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE entries(thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    act INTEGER, call INTEGER, elapsed REAL NOT NULL, data TEXT,
    PRIMARY KEY(thread_id, seq)) WITHOUT ROWID;
CREATE TABLE leases(thread_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL,
    started TEXT NOT NULL, token TEXT NOT NULL)
"""
_RUN_COLUMNS = "r.thread_id, status, inputs, fingerprint, output, pending, error, created, updated"


class SqliteCheckpointer(BaseCheckpointer):
    """Durable runs in one SQLite file (stdlib, WAL): the embedded default."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL") -> None:
        if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous={synchronous!r}: use 'NORMAL', 'FULL' or 'EXTRA'")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def __repr__(self) -> str:
        return f"SqliteCheckpointer({str(self.path)!r})"

    # -- connection ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _db(self, write: bool = False) -> Generator[sqlite3.Connection]:
        """The connection under the lock; a write runs in one IMMEDIATE transaction."""
        with self._lock, self._errors():
            conn = self._connection()
            if not write:
                yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    @contextlib.contextmanager
    def _errors(self) -> Generator[None]:
        """Turn SQLite failures into CheckpointError naming the file."""
        try:
            yield
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise CheckpointError(f"checkpoint file {self.path} is busy: {exc}") from exc
            raise self._corrupt(exc) from exc
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from exc

    def _corrupt(self, exc: Exception) -> CheckpointError:
        return CheckpointError(
            f"checkpoint file {self.path} is corrupt or unreadable ({exc}); it was left untouched"
        )

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        conn = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA query_only=1")  # nothing is written before the file is checked
        try:
            self._check_or_init(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _check_or_init(self, conn: sqlite3.Connection) -> None:
        """Accept our own file, initialise an empty one, reject anything else unwritten."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id == _APP_ID:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != _SCHEMA_VERSION:
                raise CheckpointError(
                    f"checkpoint file {self.path} has schema version {version}; this actloop "
                    f"reads version {_SCHEMA_VERSION}"
                )
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise self._corrupt(sqlite3.DatabaseError("; ".join(problems[:3])))
            conn.execute("PRAGMA query_only=0")
            return
        if app_id != 0 or tables:
            raise CheckpointError(
                f"{self.path} is not an actloop checkpoint file (it is another SQLite "
                "database); pass a new path. The file was left untouched."
            )
        conn.execute("PRAGMA query_only=0")
        conn.execute("BEGIN IMMEDIATE")
        if conn.execute("PRAGMA application_id").fetchone()[0] != _APP_ID:  # lost no race
            for statement in _SCHEMA.split(";"):  # not executescript: it would commit first
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id={_APP_ID}")
            conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        conn.commit()

    def close(self) -> None:
        """Close this process's connection (reopened on next use)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # -- leases --------------------------------------------------------------------------------

    def acquire(self, thread_id: str, owner: Owner) -> None:
        """Take the thread's lease; a lease whose process is gone is taken over."""
        with self._db(write=True) as conn:
            row = conn.execute(
                "SELECT pid, host, started, token FROM leases WHERE thread_id=?", (thread_id,)
            ).fetchone()
            if row is not None and row[3] != owner.token:
                holder = Owner(*row)
                if holder.is_alive():
                    raise CheckpointError(
                        f"thread {thread_id!r} is being run by process {holder.pid} on "
                        f"{holder.host}; wait for it to end (or stop it) and resume then"
                    )
            conn.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?)",
                (thread_id, owner.pid, owner.host, owner.started, owner.token),
            )

    def release(self, thread_id: str, owner: Owner | None = None) -> None:
        """Give up the lease (only if `owner` still holds it; None: unconditionally)."""
        with self._db(write=True) as conn:
            if owner is None:
                conn.execute("DELETE FROM leases WHERE thread_id=?", (thread_id,))
            else:
                conn.execute(
                    "DELETE FROM leases WHERE thread_id=? AND token=?", (thread_id, owner.token)
                )

    # -- runs ----------------------------------------------------------------------------------

    def _select(self, where: str, args: tuple[Any, ...]) -> list[RunRecord]:
        sql = (
            f"SELECT {_RUN_COLUMNS}, l.pid, l.host FROM runs r "
            f"LEFT JOIN leases l ON l.thread_id = r.thread_id {where}"
        )
        with self._db() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [RunRecord(*r[:9], owner=None if r[9] is None else f"{r[9]}@{r[10]}") for r in rows]

    def get(self, thread_id: str) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""
        found = self._select("WHERE r.thread_id=?", (thread_id,))
        return found[0] if found else None

    def list_runs(self) -> list[RunRecord]:
        """Every saved run, most recently updated first."""
        return self._select("ORDER BY updated DESC, r.thread_id", ())

    def create(self, record: RunRecord) -> None:
        """Save a new run (status as given)."""
        now = time.time()
        try:
            with self._db(write=True) as conn:
                conn.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.thread_id, record.status, record.inputs, record.fingerprint,
                     record.output, record.pending, record.error, now, now),
                )  # fmt: skip
        except sqlite3.IntegrityError as exc:
            raise CheckpointError(f"thread {record.thread_id!r} already has a run") from exc

    def update(self, thread_id: str, status: RunStatus, **fields: str | None) -> None:
        """Set the status; `output`, `pending` and `error` are replaced (missing ones cleared)."""
        unknown = set(fields) - {"output", "pending", "error"}
        if unknown:
            raise TypeError(f"update() got unexpected fields {sorted(unknown)}")
        with self._db(write=True) as conn:
            conn.execute(
                "UPDATE runs SET status=?, output=?, pending=?, error=?, updated=? "
                "WHERE thread_id=?",
                (status, fields.get("output"), fields.get("pending"), fields.get("error"),
                 time.time(), thread_id),
            )  # fmt: skip

    def delete(self, thread_id: str) -> None:
        """Forget a run: its record, journal and lease."""
        with self._db(write=True) as conn:
            for table in ("runs", "entries", "leases"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id=?", (thread_id,))

    # -- journal -------------------------------------------------------------------------------

    def append(self, thread_id: str, entry: JournalEntry) -> None:
        """Add one entry in its own transaction."""
        try:
            with self._lock, self._errors():
                self._connection().execute(
                    "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", (thread_id, *entry)
                )
        except sqlite3.IntegrityError as exc:
            raise CheckpointError(
                f"journal entry {entry.seq} of thread {thread_id!r} already exists: another "
                "process wrote to this run"
            ) from exc

    def entries(self, thread_id: str) -> list[JournalEntry]:
        """The thread's journal in order."""
        with self._db() as conn:
            rows = conn.execute(
                "SELECT seq, kind, act, call, elapsed, data FROM entries WHERE thread_id=? "
                "ORDER BY seq",
                (thread_id,),
            ).fetchall()
        return [JournalEntry(*row) for row in rows]
