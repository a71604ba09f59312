"""Durable runs in PostgreSQL (psycopg 3 and its pool): a store several hosts share.

Same contract as `SqliteCheckpointer` (see `actloop.checkpoint._base`), with times taken from
the server's clock so leases mean the same on every host. Each operation is written once, as a
generator of queries (`_Op`) that a sync or an async runner drives on a pooled connection, in
one transaction (a single-statement operation runs in autocommit, which is one transaction too).

Layout: a PostgreSQL schema (`actloop` unless told) holding `meta(key, value)` (`format` =
`actloop-checkpoint`, `version`), `runs`, `entries` and `leases` (the columns of the SQLite
store; `expires` in server epoch seconds). A fenced write locks the lease row `FOR SHARE`, so a
take-over waits for it and a write racing a take-over finds the new epoch and writes nothing.
A schema holding other tables, a newer version, or a damaged layout raises `CheckpointError` and
is never written to; an older version is brought up to date by `_MIGRATIONS`, in one transaction.

Bounds: every call finishes within its `timeout` (the run's remaining deadline, else the store's
`timeout`, 30 s) whatever the server does. The async path awaits psycopg's async pool under that
bound (a call still waiting then is cancelled and left to finish on its own); the sync path runs
the sync pool's call on a daemon worker, waited for as long. Beneath that, every connection has a
`connect_timeout`, TCP keepalives (a dead host is noticed in about 30 s) and a server-side
`statement_timeout` of the store's `timeout` (a lock wait or a slow statement ends there too);
each only where the connection string does not set it already.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import threading
import time
import weakref
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from actloop.checkpoint._base import (
    HeldLease,
    JournalEntry,
    Lease,
    LeaseLostError,
    Owner,
    RunRecord,
    RunStatus,
)
from actloop.checkpoint._bounds import late, on_worker, within
from actloop.checkpoint._conninfo import mask_passwords, redacted
from actloop.checkpoint._store import BaseCheckpointer
from actloop.exceptions import CheckpointError, ConfigurationError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

__all__ = ["PostgresCheckpointer", "PostgresSaver"]

FORMAT = "actloop-checkpoint"
SCHEMA_VERSION = 1
_TABLES = {
    "meta": ["key", "value"],
    "runs": ["thread_id", "status", "inputs", "fingerprint", "output", "pending", "error",
             "created", "updated"],
    "entries": ["thread_id", "seq", "kind", "act", "call", "elapsed", "data", "epoch"],
    "leases": ["thread_id", "pid", "host", "started", "token", "epoch", "expires"],
}  # fmt: skip
_CREATE = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE {s}.meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE {s}.runs(thread_id TEXT PRIMARY KEY, status TEXT NOT NULL, inputs TEXT NOT NULL,
    fingerprint TEXT NOT NULL, output TEXT, pending TEXT, error TEXT,
    created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL);
CREATE TABLE {s}.entries(thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    act INTEGER, call INTEGER, elapsed DOUBLE PRECISION NOT NULL, data TEXT, epoch BIGINT,
    PRIMARY KEY(thread_id, seq));
CREATE TABLE {s}.leases(thread_id TEXT PRIMARY KEY, pid INTEGER, host TEXT, started TEXT,
    token TEXT, epoch BIGINT NOT NULL, expires DOUBLE PRECISION);
CREATE INDEX runs_updated ON {s}.runs(updated DESC);
INSERT INTO {s}.meta VALUES ('format', '{format}'), ('version', '{version}')
"""
_MIGRATIONS: list[str] = []
"""`_MIGRATIONS[i]` turns version i + 1 into i + 2 (SQL; `{s}` is the schema). Append only."""
_NOW = "extract(epoch from clock_timestamp())::float8"
_RELEASED = "pid=NULL, host=NULL, started=NULL, token=NULL, expires=NULL"
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_T = TypeVar("_T")


class _Query(NamedTuple):
    sql: str
    params: tuple[Any, ...] = ()


class _Result(NamedTuple):
    rows: list[tuple[Any, ...]]
    rowcount: int


_Op = Generator[_Query, _Result, _T]
"""One store operation: yields queries, is sent their results, returns its value."""


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise ConfigurationError(
            "PostgresCheckpointer needs psycopg 3 and psycopg_pool: pip install 'actloop[postgres]'"
        ) from exc
    return psycopg, psycopg_pool


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"


def _version_number(text: str | None) -> int | None:
    """A schema version stored as text: ASCII digits, at most 9 (`²` or a 5,000-digit number
    is a damaged or foreign store, not a version)."""
    if text is None or not 0 < len(text) <= 9 or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


class PostgresCheckpointer(BaseCheckpointer):
    """Durable runs in PostgreSQL: one store for many hosts; `resume` works from any of them.

    `conninfo` is a libpq connection string or URI, passed to psycopg unchanged. Leases expire
    after `lease_ttl` seconds (30 by default) unless the run's heartbeat renews them, so a run
    whose host died or stalled is taken over by another. Needs `pip install 'actloop[postgres]'`.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        schema: str = "actloop",
        lease_ttl: float | None = 30.0,
        max_connections: int = 16,
        connect_timeout: float = 10.0,
        timeout: float = 30.0,
    ) -> None:
        if not _NAME.fullmatch(schema):
            raise ValueError(f"schema={schema!r}: use lower-case letters, digits and _")
        self.conninfo, self.schema, self.lease_ttl = conninfo, schema, lease_ttl
        self.max_connections, self.connect_timeout = max_connections, connect_timeout
        self.timeout = timeout
        self._lock = threading.Lock()
        self._pool: ConnectionPool | None = None
        self._pid = 0
        self._apools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Task[AsyncConnectionPool]
        ] = weakref.WeakKeyDictionary()
        self._kwargs: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"PostgresCheckpointer({redacted(self.conninfo)!r})"

    # -- connections and errors ----------------------------------------------------------------

    def _where(self) -> str:
        return f"PostgreSQL store {redacted(self.conninfo)} (schema {self.schema})"

    @contextlib.contextmanager
    def _errors(self) -> Generator[None]:
        """psycopg failures as CheckpointError naming the store (its password hidden)."""
        psycopg, pool = _psycopg()
        try:
            yield
        except psycopg.errors.UniqueViolation:
            raise
        except pool.PoolTimeout as exc:
            detail = mask_passwords(str(exc), self.conninfo)
            raise late(f"{self._where()} (no connection: {detail})", self.timeout) from None
        except psycopg.OperationalError as exc:
            raise self._failed("is unreachable", exc) from None
        except psycopg.Error as exc:
            raise self._failed("failed", exc) from None

    def _failed(self, what: str, exc: BaseException) -> CheckpointError:
        """Our error for a psycopg failure, the password masked out of libpq's text (which may
        quote the connection string); psycopg's own error is not chained, it holds the text raw."""
        return CheckpointError(f"{self._where()} {what}: {mask_passwords(str(exc), self.conninfo)}")

    def _connect_kwargs(self) -> dict[str, Any]:
        """Autocommit and the connect timeout, plus each bound the connection string leaves out:
        TCP keepalives and a server-side statement timeout of the store's `timeout`."""
        if self._kwargs is not None:
            return self._kwargs
        psycopg, _ = _psycopg()
        try:
            given = psycopg.conninfo.conninfo_to_dict(self.conninfo)
        except psycopg.Error as exc:
            detail = mask_passwords(str(exc).strip(), self.conninfo)
            raise ConfigurationError(
                f"{self._where()}: libpq cannot read the connection string ({detail}); "
                "see https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING"
            ) from None
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(self.connect_timeout)),
        }
        keepalives = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
                      "keepalives_count": 3}  # fmt: skip
        kwargs.update({k: v for k, v in keepalives.items() if k not in given})
        options = str(given.get("options") or "")
        if "statement_timeout" not in options:
            limit = f"-c statement_timeout={max(1, round(self.timeout * 1000))}"
            kwargs["options"] = f"{options} {limit}".strip()
        self._kwargs = kwargs
        return kwargs

    def _sync_pool(self) -> ConnectionPool:
        if self._pool is not None and self._pid == os.getpid():
            return self._pool
        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                psycopg, pools = _psycopg()
                with (
                    psycopg.connect(self.conninfo, **self._connect_kwargs()) as conn,
                    conn.transaction(),
                ):
                    _drive(conn, self._prepare())
                self._pool = pools.ConnectionPool(
                    self.conninfo,
                    min_size=1,
                    max_size=self.max_connections,
                    kwargs=self._connect_kwargs(),
                    timeout=self.connect_timeout,
                    open=True,
                    name="actloop-checkpoint",
                )
                self._pid = os.getpid()
        assert self._pool is not None
        return self._pool

    async def _async_pool(self) -> AsyncConnectionPool:
        """This event loop's pool, opened once (callers that arrive while it opens wait for it;
        a failed opening is tried again by the next call)."""
        loop = asyncio.get_running_loop()
        task = self._apools.get(loop)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = self._apools[loop] = loop.create_task(self._open_async_pool())
        return await asyncio.shield(task)

    async def _open_async_pool(self) -> AsyncConnectionPool:
        psycopg, pools = _psycopg()
        conn = await psycopg.AsyncConnection.connect(self.conninfo, **self._connect_kwargs())
        async with conn, conn.transaction():
            await _adrive(conn, self._prepare())
        pool = pools.AsyncConnectionPool(
            self.conninfo,
            min_size=1,
            max_size=self.max_connections,
            kwargs=self._connect_kwargs(),
            timeout=self.connect_timeout,
            open=False,
            name="actloop-checkpoint",
        )
        await pool.open()
        return pool

    def _run(self, op: _Op[_T], *, transaction: bool = True, timeout: float | None = None) -> _T:
        """Run `op` on the sync pool, on a daemon worker waited for at most the call's bound."""
        limit = self.bound(timeout)
        call = functools.partial(self._run_now, op, transaction, limit)
        return on_worker(call, limit, self._where())

    def _run_now(self, op: _Op[_T], transaction: bool, limit: float) -> _T:
        with self._errors(), self._sync_pool().connection(timeout=limit) as conn:
            if not transaction:
                return _drive(conn, op)
            with conn.transaction():
                return _drive(conn, op)

    async def _arun(
        self, op: _Op[_T], *, transaction: bool = True, timeout: float | None = None
    ) -> _T:
        """Run `op` on this loop's async pool, awaited for at most the call's bound."""
        limit = self.bound(timeout)
        return await within(self._arun_now(op, transaction, limit), limit, self._where())

    async def _arun_now(self, op: _Op[_T], transaction: bool, limit: float) -> _T:
        with self._errors():
            pool = await self._async_pool()
            async with pool.connection(timeout=limit) as conn:
                if not transaction:
                    return await _adrive(conn, op)
                async with conn.transaction():
                    return await _adrive(conn, op)

    def close(self) -> None:
        """Close this process's sync pool (reopened on next use)."""
        with self._lock:
            if self._pool is not None and self._pid == os.getpid():
                self._pool.close()
            self._pool = None

    async def aclose(self) -> None:
        """Close the async pool of the running event loop, and the sync pool."""
        task = self._apools.pop(asyncio.get_running_loop(), None)
        if task is not None and task.done() and not task.cancelled() and not task.exception():
            await task.result().close()
        self.close()

    # -- schema --------------------------------------------------------------------------------

    def _prepare(self) -> _Op[None]:
        """Check the schema (reading only), then create or migrate it under an advisory lock;
        the caller runs it in one transaction, so a refusal writes nothing."""
        version = yield from self._version()
        if version == SCHEMA_VERSION:
            return
        yield _Query("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"actloop:{self.schema}",))
        version = yield from self._version()  # another process may have done it meanwhile
        if version == SCHEMA_VERSION:
            return
        script = _CREATE if version == 0 else ";".join(_MIGRATIONS[version - 1 :])
        for statement in filter(str.strip, script.split(";")):
            yield _Query(statement.format(s=self.schema, format=FORMAT, version=SCHEMA_VERSION))
        yield _Query(
            f"UPDATE {self.schema}.meta SET value=%s WHERE key='version'", (str(SCHEMA_VERSION),)
        )

    def _version(self) -> _Op[int]:
        """0 for a missing or empty schema, else our version; CheckpointError for anything else."""
        found = yield _Query(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema=%s",
            (self.schema,),
        )
        columns: dict[str, set[str]] = {}
        for table, column in found.rows:
            columns.setdefault(table, set()).add(column)
        if not columns:
            return 0
        where = f"schema {self.schema!r} of {redacted(self.conninfo)}"
        if "meta" not in columns or not {"key", "value"} <= columns["meta"]:
            raise CheckpointError(
                f"{where} is not an actloop checkpoint store (it holds other tables); pass "
                "another schema=. It was left untouched."
            )
        meta = yield _Query(f"SELECT key, value FROM {self.schema}.meta")
        values = dict(meta.rows)
        if values.get("format") != FORMAT:
            raise CheckpointError(
                f"{where} is not an actloop checkpoint store (meta says format "
                f"{values.get('format')!r}); pass another schema=. It was left untouched."
            )
        version = _version_number(values.get("version"))
        if version is None:
            shown = repr(values.get("version"))
            raise CheckpointError(
                f"{where} is damaged (its schema version {_clip(shown)} is not a number); it "
                "was left untouched. Restore it from a backup or pass another schema=."
            )
        if version > SCHEMA_VERSION:
            raise CheckpointError(
                f"{where} has schema version {version}; this actloop reads versions 1 to "
                f"{SCHEMA_VERSION}. It was left untouched."
            )
        if version == SCHEMA_VERSION:
            missing = [
                f"{t}.{c}" for t, cs in _TABLES.items() for c in cs if c not in columns.get(t, ())
            ]
            if missing:
                raise CheckpointError(
                    f"{where} is damaged (missing {', '.join(missing[:4])}); it was left "
                    "untouched. Restore it from a backup or pass another schema=."
                )
        return version

    # -- leases --------------------------------------------------------------------------------

    def _ttl(self, ttl: float | None) -> float | None:
        ttl = self.lease_ttl if ttl is None else ttl
        if ttl is not None and ttl < 0:
            raise ValueError(f"ttl={ttl!r}: a lease lasts zero seconds or more (None: no expiry)")
        return ttl

    def _grab(self, thread_id: str, owner: Owner, ttl: float | None) -> _Op[Lease | None]:
        """The lease of a thread that is new, released or expired, in one statement; None when
        it is held (then `_acquire` looks at its holder)."""
        found = yield _Query(
            f"INSERT INTO {self.schema}.leases AS l VALUES (%s, %s, %s, %s, %s, 1, {_NOW} + %s) "
            "ON CONFLICT (thread_id) DO UPDATE SET pid=excluded.pid, host=excluded.host, "
            "started=excluded.started, token=excluded.token, epoch=l.epoch + 1, "
            f"expires=excluded.expires WHERE l.token IS NULL OR l.expires <= {_NOW} "
            "RETURNING epoch",
            (thread_id, owner.pid, owner.host, owner.started, owner.token, ttl),
        )
        if not found.rows:
            return None
        expires = None if ttl is None else time.time() + ttl
        return Lease(thread_id, owner, found.rows[0][0], expires)

    def _acquire(self, thread_id: str, owner: Owner, ttl: float | None) -> _Op[Lease]:
        s = self.schema
        yield _Query(
            f"INSERT INTO {s}.leases(thread_id, epoch) VALUES (%s, 0) ON CONFLICT DO NOTHING",
            (thread_id,),
        )
        held = yield from _held(s, thread_id, lock="UPDATE")
        if held.owner is not None and held.owner.token != owner.token and held.live():
            raise held.busy(thread_id)
        yield _Query(
            f"UPDATE {s}.leases SET pid=%s, host=%s, started=%s, token=%s, epoch=%s, "
            f"expires={_NOW} + %s WHERE thread_id=%s",
            (owner.pid, owner.host, owner.started, owner.token, held.epoch + 1, ttl, thread_id),
        )
        expires = None if ttl is None else time.time() + ttl
        return Lease(thread_id, owner, held.epoch + 1, expires)

    def _renew(self, lease: Lease, ttl: float | None) -> _Op[Lease]:
        yield from _check_lease(self.schema, lease, lock="UPDATE")
        yield _Query(
            f"UPDATE {self.schema}.leases SET expires={_NOW} + %s WHERE thread_id=%s",
            (ttl, lease.thread_id),
        )
        return replace(lease, expires=None if ttl is None else time.time() + ttl)

    def _release(self, lease: Lease) -> _Op[None]:
        yield _Query(
            f"UPDATE {self.schema}.leases SET {_RELEASED} WHERE thread_id=%s AND token=%s "
            "AND epoch=%s",
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
        ttl, until = self._ttl(ttl), time.monotonic() + self.bound(timeout)
        lease = self._run(self._grab(thread_id, owner, ttl), transaction=False, timeout=timeout)
        if lease is not None:
            return lease
        left = until - time.monotonic()
        return self._run(self._acquire(thread_id, owner, ttl), timeout=left)

    async def aacquire(
        self,
        thread_id: str,
        owner: Owner,
        *,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Async twin of `acquire`."""
        ttl, until = self._ttl(ttl), time.monotonic() + self.bound(timeout)
        grab = self._grab(thread_id, owner, ttl)
        lease = await self._arun(grab, transaction=False, timeout=timeout)
        if lease is not None:
            return lease
        left = until - time.monotonic()
        return await self._arun(self._acquire(thread_id, owner, ttl), timeout=left)

    def renew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """The lease with a new expiry (now + ttl); LeaseLostError if it is no longer current."""
        return self._run(self._renew(lease, self._ttl(ttl)), timeout=timeout)

    async def arenew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """Async twin of `renew`."""
        return await self._arun(self._renew(lease, self._ttl(ttl)), timeout=timeout)

    def release(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Give up the lease if it is still current; the epoch stays for the next owner."""
        self._run(self._release(lease), transaction=False, timeout=timeout)

    async def arelease(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Async twin of `release`."""
        await self._arun(self._release(lease), transaction=False, timeout=timeout)

    def held(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """The thread's lease as it stands, by the server's clock (see `BaseCheckpointer.held`)."""
        op = _held(self.schema, thread_id, lock=None)
        return self._run(op, transaction=False, timeout=timeout)

    async def aheld(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """Async twin of `held`."""
        op = _held(self.schema, thread_id, lock=None)
        return await self._arun(op, transaction=False, timeout=timeout)

    # -- runs ----------------------------------------------------------------------------------

    def _select(self, where: str, args: tuple[Any, ...]) -> _Op[list[RunRecord]]:
        s = self.schema
        found = yield _Query(
            "SELECT r.thread_id, status, inputs, fingerprint, output, pending, error, created, "
            f"updated, l.pid, l.host FROM {s}.runs r LEFT JOIN {s}.leases l "
            f"ON l.thread_id = r.thread_id {where}",
            args,
        )
        return [
            RunRecord(*r[:9], owner=None if r[9] is None else f"{r[9]}@{r[10]}") for r in found.rows
        ]

    def _get(self, thread_id: str) -> _Op[RunRecord | None]:
        found = yield from self._select("WHERE r.thread_id=%s", (thread_id,))
        return found[0] if found else None

    def _list(self) -> _Op[list[RunRecord]]:
        return (yield from self._select("ORDER BY updated DESC, r.thread_id", ()))

    def _list_running(self) -> _Op[list[RunRecord]]:
        where = "WHERE r.status='running' ORDER BY updated DESC, r.thread_id"
        return (yield from self._select(where, ()))

    def list_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """The runs whose status is `running`, most recently updated first."""
        return self._run(self._list_running(), transaction=False, timeout=timeout)

    async def alist_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_running`."""
        return await self._arun(self._list_running(), transaction=False, timeout=timeout)

    def get(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""
        return self._run(self._get(thread_id), transaction=False, timeout=timeout)

    async def aget(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """Async twin of `get`."""
        return await self._arun(self._get(thread_id), transaction=False, timeout=timeout)

    def list_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Every saved run, most recently updated first."""
        return self._run(self._list(), transaction=False, timeout=timeout)

    async def alist_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_runs`."""
        return await self._arun(self._list(), transaction=False, timeout=timeout)

    def _create(self, record: RunRecord, lease: Lease | None) -> _Op[None]:
        """Under its own lease, one fenced statement (see `_append`); else in a transaction."""
        s = self.schema
        values = (record.thread_id, record.status, record.inputs, record.fingerprint,
                  record.output, record.pending, record.error)  # fmt: skip
        if not _fenced(lease, record.thread_id):
            yield from _check_write(s, record.thread_id, lease)
            found = yield _Query(
                f"INSERT INTO {s}.runs VALUES (%s, %s, %s, %s, %s, %s, %s, {_NOW}, {_NOW}) "
                "ON CONFLICT DO NOTHING",
                values,
            )
        else:
            assert lease is not None
            found = yield _Query(
                f"INSERT INTO {s}.runs SELECT %s, %s, %s, %s, %s, %s, %s, {_NOW}, {_NOW} "
                f"FROM {s}.leases WHERE thread_id=%s AND epoch=%s AND token=%s FOR SHARE "
                "ON CONFLICT DO NOTHING",
                (*values, record.thread_id, lease.epoch, lease.owner.token),
            )
            if found.rowcount != 1:
                yield from _check_lease(s, lease, lock=None)  # LeaseLostError if that was why
        if found.rowcount != 1:
            raise CheckpointError(f"thread {record.thread_id!r} already has a run")

    def create(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Save a new run (status as given)."""
        fenced = _fenced(lease, record.thread_id)
        self._run(self._create(record, lease), transaction=not fenced, timeout=timeout)

    async def acreate(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Async twin of `create`."""
        fenced = _fenced(lease, record.thread_id)
        await self._arun(self._create(record, lease), transaction=not fenced, timeout=timeout)

    def _update(
        self, thread_id: str, status: RunStatus, lease: Lease | None, fields: dict[str, str | None]
    ) -> _Op[None]:
        unknown = set(fields) - {"output", "pending", "error"}
        if unknown:
            raise TypeError(f"update() got unexpected fields {sorted(unknown)}")
        s = self.schema
        values = (status, fields.get("output"), fields.get("pending"), fields.get("error"))
        sql = (
            f"UPDATE {s}.runs SET status=%s, output=%s, pending=%s, error=%s, updated={_NOW} "
            "WHERE thread_id=%s"
        )
        if not _fenced(lease, thread_id):
            yield from _check_write(s, thread_id, lease)
            yield _Query(sql, (*values, thread_id))
            return
        assert lease is not None
        written = yield _Query(
            f"{sql} AND EXISTS (SELECT 1 FROM {s}.leases WHERE thread_id=%s AND epoch=%s "
            "AND token=%s FOR SHARE)",
            (*values, thread_id, thread_id, lease.epoch, lease.owner.token),
        )
        if written.rowcount != 1:
            yield from _check_lease(s, lease, lock=None)  # LeaseLostError if that was why

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
        op = self._update(thread_id, status, lease, fields)
        self._run(op, transaction=not _fenced(lease, thread_id), timeout=timeout)

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
        op = self._update(thread_id, status, lease, fields)
        await self._arun(op, transaction=not _fenced(lease, thread_id), timeout=timeout)

    def _delete(self, thread_id: str) -> _Op[None]:
        for table in ("runs", "entries"):
            yield _Query(f"DELETE FROM {self.schema}.{table} WHERE thread_id=%s", (thread_id,))
        yield _Query(
            f"UPDATE {self.schema}.leases SET {_RELEASED} WHERE thread_id=%s", (thread_id,)
        )

    def delete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Forget a run: its record, journal and lease holder (the epoch stays)."""
        self._run(self._delete(thread_id), timeout=timeout)

    async def adelete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Async twin of `delete`."""
        await self._arun(self._delete(thread_id), timeout=timeout)

    # -- journal -------------------------------------------------------------------------------

    def _append(self, thread_id: str, entry: JournalEntry, lease: Lease | None) -> _Op[None]:
        """One fenced INSERT under a lease (a single statement: its own transaction)."""
        s = self.schema
        if not _fenced(lease, thread_id):  # the caller opened a transaction
            yield from _check_write(s, thread_id, lease)
            yield _Query(f"INSERT INTO {s}.entries VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                         (thread_id, *entry))  # fmt: skip
            return
        assert lease is not None
        written = yield _Query(
            f"INSERT INTO {s}.entries SELECT %s, %s::int, %s, %s::int, %s::int, %s::float8, "
            f"%s, %s::bigint FROM {s}.leases WHERE thread_id=%s AND epoch=%s AND token=%s "
            "FOR SHARE",
            (thread_id, *entry[:6], lease.epoch, thread_id, lease.epoch, lease.owner.token),
        )
        if written.rowcount != 1:
            yield from _check_lease(s, lease, lock=None)  # raises LeaseLostError
            raise LeaseLostError(  # epochs only grow: the lease cannot be current again
                f"thread {thread_id!r}: entry {entry.seq} was not written under the lease "
                f"of epoch {lease.epoch}"
            )

    def _duplicate(self, thread_id: str, entry: JournalEntry) -> CheckpointError:
        return CheckpointError(
            f"journal entry {entry.seq} of thread {thread_id!r} already exists: another "
            "process wrote to this run"
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
        psycopg, _ = _psycopg()
        try:
            fenced = _fenced(lease, thread_id)
            op = self._append(thread_id, entry, lease)
            self._run(op, transaction=not fenced, timeout=timeout)
        except psycopg.errors.UniqueViolation as exc:
            raise self._duplicate(thread_id, entry) from exc

    async def aappend(
        self,
        thread_id: str,
        entry: JournalEntry,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `append`."""
        psycopg, _ = _psycopg()
        try:
            fenced = _fenced(lease, thread_id)
            op = self._append(thread_id, entry, lease)
            await self._arun(op, transaction=not fenced, timeout=timeout)
        except psycopg.errors.UniqueViolation as exc:
            raise self._duplicate(thread_id, entry) from exc

    def _entries(self, thread_id: str) -> _Op[list[JournalEntry]]:
        found = yield _Query(
            f"SELECT seq, kind, act, call, elapsed, data, epoch FROM {self.schema}.entries "
            "WHERE thread_id=%s ORDER BY seq",
            (thread_id,),
        )
        return [JournalEntry(*row) for row in found.rows]

    def entries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """The thread's journal in order."""
        return self._run(self._entries(thread_id), transaction=False, timeout=timeout)

    async def aentries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """Async twin of `entries`."""
        return await self._arun(self._entries(thread_id), transaction=False, timeout=timeout)


# -- drivers of an operation ----------------------------------------------------------------------


def _drive(conn: psycopg.Connection[Any], op: _Op[_T]) -> _T:
    """Run `op`'s queries on `conn` in order, sending each its result."""
    cur = conn.cursor()
    result: _Result | None = None
    try:
        while True:
            query = op.send(result) if result is not None else next(op)
            cur.execute(query.sql.encode(), query.params or None)
            rows = cur.fetchall() if cur.description is not None else []
            result = _Result(rows, cur.rowcount)
    except StopIteration as stop:
        return stop.value
    finally:
        cur.close()


async def _adrive(conn: psycopg.AsyncConnection[Any], op: _Op[_T]) -> _T:
    """Async twin of `_drive`."""
    cur = conn.cursor()
    result: _Result | None = None
    try:
        while True:
            query = op.send(result) if result is not None else next(op)
            await cur.execute(query.sql.encode(), query.params or None)
            rows = await cur.fetchall() if cur.description is not None else []
            result = _Result(rows, cur.rowcount)
    except StopIteration as stop:
        return stop.value
    finally:
        await cur.close()


# -- lease checks (operations too) ----------------------------------------------------------------


def _fenced(lease: Lease | None, thread_id: str) -> bool:
    """Whether a write carries its own thread's lease: then it is one statement that writes only
    under that lease (its row locked FOR SHARE, so a take-over waits for it, and a write racing
    a take-over finds the new epoch and writes nothing), in autocommit: one round trip."""
    return lease is not None and lease.thread_id == thread_id


def _held(schema: str, thread_id: str, lock: str | None) -> _Op[HeldLease]:
    found = yield _Query(
        f"SELECT pid, host, started, token, epoch, expires, {_NOW} FROM {schema}.leases "
        f"WHERE thread_id=%s{f' FOR {lock}' if lock else ''}",
        (thread_id,),
    )
    if not found.rows:
        return HeldLease(None, 0, None, 0.0)
    row = found.rows[0]
    return HeldLease(None if row[3] is None else Owner(*row[:4]), row[4], row[5], row[6])


def _check_lease(schema: str, lease: Lease, lock: str | None) -> _Op[None]:
    """LeaseLostError unless `lease` is the thread's current lease (same epoch and owner)."""
    held = yield from _held(schema, lease.thread_id, lock)
    held.check(lease)


def _check_write(schema: str, thread_id: str, lease: Lease | None) -> _Op[None]:
    """Inside a write: the lease is current (its row locked until commit), or (no lease) no
    other process holds a live one."""
    if lease is not None:
        if lease.thread_id != thread_id:
            raise ValueError(f"the lease is for thread {lease.thread_id!r}, not {thread_id!r}")
        yield from _check_lease(schema, lease, lock="SHARE")
        return
    held = yield from _held(schema, thread_id, lock="SHARE")
    if held.blocks_this_process():
        raise held.busy(thread_id)


class PostgresSaver(PostgresCheckpointer):
    """`PostgresCheckpointer` under LangGraph's name (`langgraph.checkpoint.postgres`), for
    `create_agent(checkpointer=...)`."""

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str) -> Generator[PostgresSaver]:
        """A saver on `conn_string` (a libpq string or URI), closed on exit."""
        saver = cls(conn_string)
        try:
            yield saver
        finally:
            saver.close()

    def setup(self) -> None:
        """Nothing to do: the store creates its schema on first use (LangGraph's call)."""
