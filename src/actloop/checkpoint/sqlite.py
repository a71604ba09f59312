"""Durable runs in one SQLite file (stdlib, WAL): the embedded default store.

An existing file is first looked at through a read-only connection (`mode=ro`, so SQLite neither
merges a foreign file's hot WAL nor deletes it); only an actloop checkpoint (or an empty file) is
then opened for writing. `read_only=True` keeps that read-only connection, so `list_runs`, `get`
and `entries` work on a file this user may not write (falling back to `immutable=1` when SQLite
cannot create the `-shm` file and no `-wal` file holds unmerged pages). A file with a hot rollback
journal over what was an empty file (a process was killed creating its checkpoint) skips the look:
only a read-write connection can roll it back.

Bounds: every call waits at most its `timeout` (the run's remaining deadline, else the store's
`timeout`, 30 s): for the store's lock (one connection, shared by threads) and, as SQLite's busy
timeout, for another process's write lock on the file. The async twins first try the call inline
without waiting at all (a local write takes microseconds); only when it would wait (the lock is
held, the file is busy, the file is not open yet) does it go to a daemon worker, bounded the same.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from actloop.checkpoint._base import (
    HeldLease,
    JournalEntry,
    Lease,
    LeaseLostError,
    Owner,
    RunRecord,
    RunStatus,
    StoreTimeoutError,
)
from actloop.checkpoint._bounds import in_worker, late
from actloop.checkpoint._store import BaseCheckpointer
from actloop.exceptions import CheckpointError

__all__ = ["SqliteCheckpointer", "SqliteSaver"]

_APP_ID = 0x61637470  # "actp"
_SCHEMA_VERSION = 2
_LEASES = """
CREATE TABLE leases(thread_id TEXT PRIMARY KEY, pid INTEGER, host TEXT, started TEXT, token TEXT,
    epoch INTEGER NOT NULL, expires REAL)"""
_SCHEMA = f"""
CREATE TABLE runs(thread_id TEXT PRIMARY KEY, status TEXT NOT NULL, inputs TEXT NOT NULL,
    fingerprint TEXT NOT NULL, output TEXT, pending TEXT, error TEXT,
    created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE entries(thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    act INTEGER, call INTEGER, elapsed REAL NOT NULL, data TEXT, epoch INTEGER,
    PRIMARY KEY(thread_id, seq)) WITHOUT ROWID;
{_LEASES}
"""
_MIGRATE_FROM_1 = f"""
ALTER TABLE entries ADD COLUMN epoch INTEGER;
ALTER TABLE leases RENAME TO leases_v1;
{_LEASES};
INSERT INTO leases SELECT thread_id, pid, host, started, token, 1, NULL FROM leases_v1;
DROP TABLE leases_v1
"""
_WRITE_FAILED = (10, 13)
"""SQLITE_IOERR and SQLITE_FULL: a write failed (disk full, I/O error); the file is not corrupt."""
_RELEASED = "pid=NULL, host=NULL, started=NULL, token=NULL, expires=NULL"
_RUN_COLUMNS = "r.thread_id, status, inputs, fingerprint, output, pending, error, created, updated"
_T = TypeVar("_T")

_forks = 0
"""How many forks led to this process: a cheaper test than `os.getpid()` (a system call) of
whether a connection was opened in this process, made on every journal write."""


def _forked() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)


def _identity(conn: sqlite3.Connection) -> tuple[int, int]:
    """The file's application id and table count, read in one statement (one snapshot): read
    apart, a file another process initialises between the two reads looks foreign."""
    row = conn.execute(
        "SELECT (SELECT application_id FROM pragma_application_id),"
        " (SELECT count(*) FROM sqlite_master)"
    ).fetchone()
    return int(row[0]), int(row[1])


class SqliteCheckpointer(BaseCheckpointer):
    """Durable runs in one SQLite file (stdlib, WAL): the embedded default."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        locking_mode: str = "NORMAL",
        lease_ttl: float | None = None,
        read_only: bool = False,
        timeout: float = 30.0,
    ) -> None:
        if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous={synchronous!r}: use 'NORMAL', 'FULL' or 'EXTRA'")
        if locking_mode.upper() not in ("NORMAL", "EXCLUSIVE"):
            raise ValueError(f"locking_mode={locking_mode!r}: use 'NORMAL' or 'EXCLUSIVE'")
        self.path = Path(path)
        self.synchronous = synchronous.upper()
        self.locking_mode = locking_mode.upper()
        """EXCLUSIVE: this process keeps the file locked from its first access to `close()` (no
        lock calls and no shared-memory index per transaction: ~5 us less CPU a journaled step),
        and no other process can read or write it meanwhile. NORMAL (default): shared."""
        self.lease_ttl = lease_ttl
        self.read_only = read_only
        """Open the file read-only: reads work without write access, every write is refused."""
        self.timeout = timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._forks = 0
        """`_forks` when the connection was opened: it is used only in the process that opened
        it (a child after `fork` opens its own)."""
        self._busy_ms = -1
        """The connection's busy timeout now (set per call, to that call's bound)."""
        self._busy_wait = -1.0
        """The `wait` the busy timeout was last set for (a journal write skips `_busy` when its
        wait is the same)."""

    def __repr__(self) -> str:
        return f"SqliteCheckpointer({str(self.path)!r})"

    # -- connection ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _db(self, wait: float, write: bool = False) -> Generator[sqlite3.Connection]:
        """The connection under the lock, waiting at most `wait` seconds in all for the lock and
        for the file (StoreTimeoutError after: a call given up never writes later); a write runs
        in one IMMEDIATE transaction."""
        left = wait
        if not self._lock.acquire(False):  # another thread's call holds it: wait, within bound
            started = time.monotonic()
            if wait <= 0 or not self._lock.acquire(timeout=wait):
                raise late(repr(self), wait)
            left = wait - (time.monotonic() - started)
        try:
            if wait > 0 and left <= 0:
                raise late(repr(self), wait)
            try:
                conn = self._connection(max(left, 0.0))
                self._busy(conn, max(left, 0.0))
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
            except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
                self._fail(exc, wait)
        finally:
            self._lock.release()

    def _busy(self, conn: sqlite3.Connection, wait: float) -> None:
        """Make SQLite wait at most `wait` seconds for another process's lock on the file: in
        steps of 100 ms, rounded down, so the setting changes rarely (a PRAGMA per write would
        cost more than the write)."""
        ms = int(wait * 10) * 100 if wait >= 0.1 else int(wait * 1000)
        if ms != self._busy_ms:
            conn.execute(f"PRAGMA busy_timeout={ms}")
            self._busy_ms = ms
        self._busy_wait = wait

    def _call(self, fn: Callable[..., _T], timeout: float | None, *args: Any) -> _T:
        """`fn(*args, wait)` with the call's bound."""
        return fn(*args, self.bound(timeout))

    async def _acall(self, fn: Callable[..., _T], timeout: float | None, *args: Any) -> _T:
        """`fn(*args, wait)` inline when it need not wait, else on a worker (see the module)."""
        if self._conn is not None and self._forks == _forks:
            try:
                return fn(*args, 0.0)
            except StoreTimeoutError:
                pass  # it would have waited: nothing was done
        limit = self.bound(timeout)
        return await in_worker(functools.partial(fn, *args, limit), limit, repr(self))

    def _fail(self, exc: sqlite3.DatabaseError | UnicodeEncodeError, wait: float) -> NoReturn:
        """Raise what a statement raised, as `_failure` names it (an integrity or programming
        error as it is: the caller's to read)."""
        if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError)):
            raise exc
        raise self._failure(exc, wait) from exc

    def _failure(self, exc: sqlite3.DatabaseError | UnicodeEncodeError, wait: float) -> Exception:
        """The CheckpointError naming the file for what SQLite raised (a file still busy after
        the call's bound: StoreTimeoutError)."""
        if isinstance(exc, UnicodeEncodeError):  # sqlite3 binds text as strict UTF-8
            return CheckpointError(
                f"{exc.object[exc.start : exc.end]!a} is a lone surrogate, not valid Unicode text: "
                f"thread ids and saved text in {self.path} must be valid UTF-8"
            )
        if not isinstance(exc, sqlite3.OperationalError):
            return self._corrupt(exc)
        if "locked" in str(exc) or "busy" in str(exc):
            return late(f"checkpoint file {self.path} (busy: {exc})", wait)
        if "readonly" in str(exc) or "read-only" in str(exc):
            return CheckpointError(
                f"checkpoint file {self.path} cannot be written ({exc}); it was left untouched"
            )
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _WRITE_FAILED or "disk" in str(exc):
            return CheckpointError(
                f"could not read or write checkpoint file {self.path} ({exc}): the disk may "
                "be full or failing. Nothing is known to be corrupt: free space, then resume"
            )
        return self._corrupt(exc)

    def _corrupt(self, exc: Exception) -> CheckpointError:
        return CheckpointError(
            f"checkpoint file {self.path} is corrupt or unreadable ({exc}); it was left untouched"
        )

    def _connection(self, wait: float) -> sqlite3.Connection:
        if self._conn is not None and self._forks == _forks:
            return self._conn
        if wait <= 0:  # opening checks the whole file: never inline on an event loop
            raise late(repr(self), wait)
        self._busy_ms, self._busy_wait = round(wait * 1000), -1.0
        checked = self.read_only or (_has_content(self.path) and not _creation_cut(self.path))
        if checked:
            look = self._open_read_only(wait)
            try:
                self._check_existing(look)
            except BaseException:
                look.close()
                raise
            if self.read_only:
                self._conn, self._forks = look, _forks
                return look
            look.close()
        conn = sqlite3.connect(
            self.path, timeout=wait, isolation_level=None, check_same_thread=False
        )
        if self.locking_mode == "EXCLUSIVE":  # before the first read, so WAL needs no -shm
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("PRAGMA query_only=1")  # nothing is written before the file is checked
        try:
            self._check_or_init(conn, checked=checked)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self.synchronous}")
        except BaseException:
            conn.close()
            raise
        self._conn, self._forks = conn, _forks
        return conn

    def _open_read_only(self, wait: float) -> sqlite3.Connection:
        """A connection that cannot write the file (nor merge or delete its WAL)."""
        if not self.path.is_file():
            raise CheckpointError(f"no checkpoint file at {self.path}")
        uri = "file:" + urllib.parse.quote(os.fsencode(self.path.absolute()))
        conn = sqlite3.connect(
            f"{uri}?mode=ro", uri=True, timeout=wait, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            wal = Path(f"{self.path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise
        # No -shm could be made (no write access to the folder) and no WAL holds pages: the main
        # file is the whole database, and immutable reads it without any lock or side file.
        return sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )

    def _check_existing(self, conn: sqlite3.Connection) -> None:
        """CheckpointError unless the file is an intact actloop checkpoint or an empty database."""
        app_id, tables = _identity(conn)
        if app_id == _APP_ID:
            if self._check_ours(conn) < _SCHEMA_VERSION and self.read_only:
                raise CheckpointError(
                    f"checkpoint file {self.path} has an older schema; open it once with write "
                    "access to migrate it"
                )
        elif app_id != 0 or tables:
            raise self._foreign()
        elif self.read_only:
            raise CheckpointError(f"{self.path} is an empty database, not a checkpoint file")

    def _foreign(self) -> CheckpointError:
        return CheckpointError(
            f"{self.path} is not an actloop checkpoint file (it is another SQLite "
            "database); pass a new path. The file was left untouched."
        )

    def _check_or_init(self, conn: sqlite3.Connection, *, checked: bool = False) -> None:
        """Accept our own file (migrating an older one), initialise an empty one, reject the rest
        unwritten."""
        app_id, tables = _identity(conn)
        if app_id == _APP_ID:
            version = (
                conn.execute("PRAGMA user_version").fetchone()[0]  # read-only look did the rest
                if checked
                else self._check_ours(conn)
            )
            conn.execute("PRAGMA query_only=0")
            if version < _SCHEMA_VERSION:
                self._initialise(conn)
            return
        if app_id != 0 or tables:
            raise self._foreign()
        conn.execute("PRAGMA query_only=0")
        self._initialise(conn)

    def _check_ours(self, conn: sqlite3.Connection) -> int:
        """The schema version of our file; CheckpointError unless it is readable and intact."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (1, _SCHEMA_VERSION):
            raise CheckpointError(
                f"checkpoint file {self.path} has schema version {version}; this actloop "
                f"reads versions 1 to {_SCHEMA_VERSION}. The file was left untouched."
            )
        problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise self._corrupt(sqlite3.DatabaseError("; ".join(problems[:3])))
        return version

    def _initialise(self, conn: sqlite3.Connection) -> None:
        """Create the schema in an empty file, or migrate a version-1 file, in one transaction
        (re-checked inside it: another process may have done it first)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA application_id").fetchone()[0] != _APP_ID:
                script = _SCHEMA
            elif conn.execute("PRAGMA user_version").fetchone()[0] == 1:
                script = _MIGRATE_FROM_1
            else:
                script = ""  # another process got here first
            for statement in filter(str.strip, script.split(";")):  # executescript would commit
                conn.execute(statement)
            if script:
                conn.execute(f"PRAGMA application_id={_APP_ID}")
                conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        except BaseException:
            conn.rollback()
            raise
        conn.commit()

    def close(self) -> None:
        """Close this process's connection (reopened on next use)."""
        with self._lock:
            if self._conn is not None and self._forks == _forks:
                self._conn.close()
            self._conn = None

    # -- leases --------------------------------------------------------------------------------

    def _expiry(self, ttl: float | None) -> float | None:
        ttl = self.lease_ttl if ttl is None else ttl
        if ttl is not None and ttl < 0:
            raise ValueError(f"ttl={ttl!r}: a lease lasts zero seconds or more (None: no expiry)")
        return None if ttl is None else time.time() + ttl

    def _acquire(self, thread_id: str, owner: Owner, ttl: float | None, wait: float) -> Lease:
        expires = self._expiry(ttl)
        with self._db(wait, write=True) as conn:
            held = _held(conn, thread_id)
            if held.owner is not None and held.owner.token != owner.token and held.live():
                raise held.busy(thread_id)
            lease = Lease(thread_id, owner, held.epoch + 1, expires)
            conn.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?, ?, ?, ?)",
                (thread_id, owner.pid, owner.host, owner.started, owner.token, lease.epoch,
                 expires),
            )  # fmt: skip
        return lease

    def _renew(self, lease: Lease, ttl: float | None, wait: float) -> Lease:
        expires = self._expiry(ttl)
        with self._db(wait, write=True) as conn:
            _check_lease(conn, lease)
            conn.execute(
                "UPDATE leases SET expires=? WHERE thread_id=?", (expires, lease.thread_id)
            )
        return replace(lease, expires=expires)

    def _release(self, lease: Lease, wait: float) -> None:
        with self._db(wait, write=True) as conn:
            conn.execute(
                f"UPDATE leases SET {_RELEASED} WHERE thread_id=? AND token=? AND epoch=?",
                (lease.thread_id, lease.owner.token, lease.epoch),
            )

    def acquire(
        self,
        thread_id: str,
        owner: Owner,
        *,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Take the thread's lease when free, released, expired or held by a dead process."""
        return self._call(self._acquire, timeout, thread_id, owner, ttl)

    async def aacquire(
        self,
        thread_id: str,
        owner: Owner,
        *,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Async twin of `acquire`."""
        return await self._acall(self._acquire, timeout, thread_id, owner, ttl)

    def renew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """The lease with a new expiry (now + ttl); LeaseLostError if it is no longer current."""
        return self._call(self._renew, timeout, lease, ttl)

    async def arenew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """Async twin of `renew`."""
        return await self._acall(self._renew, timeout, lease, ttl)

    def release(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Give up the lease if it is still current; the epoch stays for the next owner."""
        self._call(self._release, timeout, lease)

    async def arelease(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Async twin of `release`."""
        await self._acall(self._release, timeout, lease)

    def _read_held(self, thread_id: str, wait: float) -> HeldLease:
        with self._db(wait) as conn:
            return _held(conn, thread_id)

    def held(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """The thread's lease as it stands (see `BaseCheckpointer.held`)."""
        return self._call(self._read_held, timeout, thread_id)

    async def aheld(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """Async twin of `held`."""
        return await self._acall(self._read_held, timeout, thread_id)

    def break_lease(self, thread_id: str, *, timeout: float | None = None) -> Owner | None:
        """Free the thread's lease whoever holds it (a process on another host that died, say)
        and return that holder; the epoch stays, so the old holder can write nothing more.
        CheckpointError when the holder is a live process on this host: stop it first."""
        with self._db(self.bound(timeout), write=True) as conn:
            held = _held(conn, thread_id)
            if held.owner is None:
                return None
            if held.owner.host == socket.gethostname() and held.owner.is_alive():
                raise CheckpointError(
                    f"thread {thread_id!r} is being run by process {held.owner.pid} on this host "
                    "(it is alive); stop it instead of breaking its lease"
                )
            conn.execute(f"UPDATE leases SET {_RELEASED} WHERE thread_id=?", (thread_id,))
        return held.owner

    def _check_write(self, conn: sqlite3.Connection, thread_id: str, lease: Lease | None) -> None:
        """Inside a write: the lease is current, or (no lease) no other process holds one."""
        if lease is not None:
            if lease.thread_id != thread_id:
                raise ValueError(f"the lease is for thread {lease.thread_id!r}, not {thread_id!r}")
            _check_lease(conn, lease)
            return
        held = _held(conn, thread_id)
        if held.blocks_this_process():
            raise held.busy(thread_id)

    # -- runs ----------------------------------------------------------------------------------

    def _select(self, where: str, args: tuple[Any, ...], wait: float) -> list[RunRecord]:
        sql = (
            f"SELECT {_RUN_COLUMNS}, l.pid, l.host FROM runs r "
            f"LEFT JOIN leases l ON l.thread_id = r.thread_id {where}"
        )
        with self._db(wait) as conn:
            rows = conn.execute(sql, args).fetchall()
        return [RunRecord(*r[:9], owner=None if r[9] is None else f"{r[9]}@{r[10]}") for r in rows]

    def _get(self, thread_id: str, wait: float) -> RunRecord | None:
        found = self._select("WHERE r.thread_id=?", (thread_id,), wait)
        return found[0] if found else None

    def _list(self, wait: float) -> list[RunRecord]:
        return self._select("ORDER BY updated DESC, r.thread_id", (), wait)

    def _list_running(self, wait: float) -> list[RunRecord]:
        where = "WHERE r.status='running' ORDER BY updated DESC, r.thread_id"
        return self._select(where, (), wait)

    def list_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """The runs whose status is `running`, most recently updated first."""
        return self._call(self._list_running, timeout)

    async def alist_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_running`."""
        return await self._acall(self._list_running, timeout)

    def get(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""
        return self._call(self._get, timeout, thread_id)

    async def aget(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """Async twin of `get`."""
        return await self._acall(self._get, timeout, thread_id)

    def list_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Every saved run, most recently updated first."""
        return self._call(self._list, timeout)

    async def alist_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_runs`."""
        return await self._acall(self._list, timeout)

    def _create(self, record: RunRecord, lease: Lease | None, wait: float) -> None:
        now = time.time()
        try:
            with self._db(wait, write=True) as conn:
                self._check_write(conn, record.thread_id, lease)
                conn.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.thread_id, record.status, record.inputs, record.fingerprint,
                     record.output, record.pending, record.error, now, now),
                )  # fmt: skip
        except sqlite3.IntegrityError as exc:
            raise CheckpointError(f"thread {record.thread_id!r} already has a run") from exc

    def create(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Save a new run (status as given)."""
        self._call(self._create, timeout, record, lease)

    async def acreate(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Async twin of `create`."""
        await self._acall(self._create, timeout, record, lease)

    def _update(
        self,
        thread_id: str,
        status: RunStatus,
        lease: Lease | None,
        fields: dict[str, str | None],
        wait: float,
    ) -> None:
        unknown = set(fields) - {"output", "pending", "error"}
        if unknown:
            raise TypeError(f"update() got unexpected fields {sorted(unknown)}")
        with self._db(wait, write=True) as conn:
            self._check_write(conn, thread_id, lease)
            conn.execute(
                "UPDATE runs SET status=?, output=?, pending=?, error=?, updated=? "
                "WHERE thread_id=?",
                (status, fields.get("output"), fields.get("pending"), fields.get("error"),
                 time.time(), thread_id),
            )  # fmt: skip

    def update(
        self,
        thread_id: str,
        status: RunStatus,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
        **fields: str | None,
    ) -> None:
        """Set the status; `output`, `pending` and `error` are replaced (missing ones cleared)."""
        self._call(self._update, timeout, thread_id, status, lease, fields)

    async def aupdate(
        self,
        thread_id: str,
        status: RunStatus,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
        **fields: str | None,
    ) -> None:
        """Async twin of `update`."""
        await self._acall(self._update, timeout, thread_id, status, lease, fields)

    def _delete(self, thread_id: str, wait: float) -> None:
        with self._db(wait, write=True) as conn:
            for table in ("runs", "entries"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id=?", (thread_id,))
            conn.execute(f"UPDATE leases SET {_RELEASED} WHERE thread_id=?", (thread_id,))

    def delete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Forget a run: its record, journal and lease holder (the epoch stays)."""
        self._call(self._delete, timeout, thread_id)

    async def adelete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Async twin of `delete`."""
        await self._acall(self._delete, timeout, thread_id)

    # -- journal -------------------------------------------------------------------------------

    def _append(
        self, thread_id: str, entries: Sequence[JournalEntry], lease: Lease | None, wait: float
    ) -> None:
        """Write the entries in one transaction. The hot path is one fenced statement (one
        transaction, autocommit) that writes all the entries or none, and only under the current
        lease; it takes the lock itself when it is free and the connection is open (what `_db`
        does, without a context manager's cost per step), else goes through `_db`."""
        try:
            if lease is None or lease.thread_id != thread_id:
                with self._db(wait, write=True) as conn:
                    self._check_write(conn, thread_id, lease)  # ValueError for another thread's
                    conn.executemany(_INSERT_ENTRY, [(thread_id, *e) for e in entries])
                return
            sql, values = _fenced_insert(thread_id, entries, lease)
            conn = self._conn
            if conn is None or self._forks != _forks or not self._lock.acquire(False):
                with self._db(wait) as conn:
                    self._insert_fenced(conn, sql, values, thread_id, entries, lease)
                return
            try:
                if wait != self._busy_wait:
                    self._busy(conn, wait)
                if conn.execute(sql, values).rowcount != len(entries):
                    self._not_written(conn, thread_id, entries, lease)
            except (sqlite3.DatabaseError, UnicodeEncodeError) as exc:
                self._fail(exc, wait)
            finally:
                self._lock.release()
        except sqlite3.IntegrityError as exc:
            seqs = ", ".join(str(e.seq) for e in entries)
            raise CheckpointError(
                f"journal entry {seqs} of thread {thread_id!r} already exists: another "
                "process wrote to this run"
            ) from exc

    def _insert_fenced(
        self,
        conn: sqlite3.Connection,
        sql: str,
        values: list[Any],
        thread_id: str,
        entries: Sequence[JournalEntry],
        lease: Lease,
    ) -> None:
        """Run the fenced insert; LeaseLostError when it wrote nothing."""
        if conn.execute(sql, values).rowcount != len(entries):
            self._not_written(conn, thread_id, entries, lease)

    def _not_written(
        self,
        conn: sqlite3.Connection,
        thread_id: str,
        entries: Sequence[JournalEntry],
        lease: Lease,
    ) -> NoReturn:
        """A fenced insert wrote nothing: LeaseLostError, saying why."""
        self._check_write(conn, thread_id, lease)  # raises LeaseLostError
        raise LeaseLostError(  # epochs only grow: the lease cannot be current again
            f"thread {thread_id!r}: entry {entries[0].seq} was not written under the "
            f"lease of epoch {lease.epoch}"
        )

    def append(
        self,
        thread_id: str,
        entry: JournalEntry,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add one entry in its own transaction, stamped with the lease's epoch."""
        self._append(thread_id, (entry,), lease, self.timeout if timeout is None else timeout)

    async def aappend(
        self,
        thread_id: str,
        entry: JournalEntry,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `append`."""
        await self._acall(self._append, timeout, thread_id, (entry,), lease)

    def append_all(
        self,
        thread_id: str,
        entries: Sequence[JournalEntry],
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add the entries in one transaction (all or none), stamped with the lease's epoch."""
        self._append(thread_id, entries, lease, self.timeout if timeout is None else timeout)

    async def aappend_all(
        self,
        thread_id: str,
        entries: Sequence[JournalEntry],
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `append_all`."""
        await self._acall(self._append, timeout, thread_id, entries, lease)

    def _entries(self, thread_id: str, wait: float) -> list[JournalEntry]:
        with self._db(wait) as conn:
            rows = conn.execute(
                "SELECT seq, kind, act, call, elapsed, data, epoch FROM entries "
                "WHERE thread_id=? ORDER BY seq",
                (thread_id,),
            ).fetchall()
        return [JournalEntry(*row) for row in rows]

    def entries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """The thread's journal in order."""
        return self._call(self._entries, timeout, thread_id)

    async def aentries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """Async twin of `entries`."""
        return await self._acall(self._entries, timeout, thread_id)


_INSERT_ENTRY = "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


@functools.cache
def _fenced_entries(shape: tuple[int, ...]) -> str:
    """One statement inserting one entry per item of `shape`, all only under the current lease.

    Parameters are numbered: ?1 the thread, ?2 the lease's epoch, ?3 its owner's token, then
    each entry's seq, kind, act, call, elapsed and data. A shape's bits say which of act (1), call
    (2) and data (4) the entry has; one it lacks is written as the literal NULL, not bound: the
    sqlite3 module binds None through its adapter lookup, which costs more than the write's
    Python bookkeeping."""
    count = 3
    rows: list[str] = []
    for bits in shape:
        cols = ["?1"]
        for bit in (0, 0, 1, 2, 0, 4):  # seq, kind, act, call, elapsed, data (0: always there)
            if bit and not bits & bit:
                cols.append("NULL")
            else:
                count += 1
                cols.append(f"?{count}")
        cols.append("?2")
        rows.append(f"({', '.join(cols)})")
    return (
        f"INSERT INTO entries SELECT * FROM (VALUES {', '.join(rows)}) WHERE EXISTS "
        "(SELECT 1 FROM leases WHERE thread_id=?1 AND epoch=?2 AND token=?3)"
    )


def _fenced_insert(
    thread_id: str, entries: Sequence[JournalEntry], lease: Lease
) -> tuple[str, list[Any]]:
    """The statement and values writing `entries` under `lease` (its epoch stamped on each)."""
    values: list[Any] = [thread_id, lease.epoch, lease.owner.token]
    shape: list[int] = []
    for seq, kind, act, call, elapsed, data, _ in entries:
        values += (seq, kind)
        bits = 0
        if act is not None:
            values.append(act)
            bits = 1
        if call is not None:
            values.append(call)
            bits |= 2
        values.append(elapsed)
        if data is not None:
            values.append(data)
            bits |= 4
        shape.append(bits)
    return _fenced_entries(tuple(shape)), values


def _has_content(path: Path) -> bool:
    """Whether `path` (or its WAL) already holds bytes, which must be checked before writing."""
    for part in (path, Path(f"{path}-wal")):
        with contextlib.suppress(OSError):
            if part.stat().st_size > 0:
                return True
    return False


_JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _creation_cut(path: Path) -> bool:
    """Whether a hot rollback journal says the file was empty before a transaction a killed
    process left unfinished (a checkpoint being created): rolling it back, which only a
    read-write connection can, restores the empty file."""
    try:
        with open(f"{path}-journal", "rb") as journal:
            header = journal.read(20)
    except OSError:
        return False
    return header[:8] == _JOURNAL_MAGIC and header[16:20] == bytes(4)


def _held(conn: sqlite3.Connection, thread_id: str) -> HeldLease:
    row = conn.execute(
        "SELECT pid, host, started, token, epoch, expires FROM leases WHERE thread_id=?",
        (thread_id,),
    ).fetchone()
    if row is None:
        return HeldLease(None, 0, None)
    return HeldLease(None if row[3] is None else Owner(*row[:4]), row[4], row[5])


def _check_lease(conn: sqlite3.Connection, lease: Lease) -> None:
    """LeaseLostError unless `lease` is the thread's current lease (same epoch and owner)."""
    held = _held(conn, lease.thread_id)
    held.check(lease)


class SqliteSaver(SqliteCheckpointer):
    """`SqliteCheckpointer` under LangGraph's name (`langgraph.checkpoint.sqlite.SqliteSaver`),
    for `create_agent(checkpointer=...)`. It takes a path, not a sqlite3 connection."""

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str) -> Generator[SqliteSaver]:
        """A saver on the file `conn_string` (":memory:" for none), closed on exit."""
        saver = cls(conn_string)
        try:
            yield saver
        finally:
            saver.close()

    def setup(self) -> None:
        """Nothing to do: the store creates its tables on first use (LangGraph's call)."""
