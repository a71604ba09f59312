"""Where durable runs are saved: a small store interface and its SQLite implementation.

A durable run (`AgentExecutor(checkpointer=...)` invoked with `configurable.thread_id`) is a
`RunRecord` (inputs, settings fingerprint, status, final output or pending approvals) plus an
append-only journal of `JournalEntry` rows, one per result the loop was sent:

    kind       act  call  data (JSON text)
    "plan"      -    -    {"output": <dumpd of AgentAction | [AgentAction] | AgentFinish>}
                          or {"parse_error": {"error", "observation", "llm_output", "send_to_llm"}}
    "deadline"  -    -    null: the time limit passed while the agent was planning
    "stop"      -    -    dumpd of the AgentFinish of the stopped response
    "start"     a    i    null: call i of step a began (written only for idempotent=False tools)
    "obs"       a    i    dumpd of call i's observation
    "timeout"   a    -    [indices of the calls that finished before the deadline]
    "decision"  a    i    {"decision": "approve" | "reject" | "edit", "reason", "tool_input"}
    "context"   -    -    {"traceparent": ...}: the trace of the run (or resume) that wrote it

`elapsed` on every entry is the run's clock (seconds, resumes included) when it was written;
`epoch` is the fencing epoch of the lease that wrote it (None when written without one).

Leases: one owner at a time runs a thread. `acquire` returns a `Lease` (owner, expiry, epoch); the
epoch grows by one on every acquisition of the thread and never goes back. A lease may be taken
over once it has expired or its owner is dead (`Owner.is_alive`), which is what lets a run resume
after `kill -9`. Every write may carry the lease, and the store checks it in the write's own
transaction, so a process that lost its lease (paused, partitioned, overtaken) cannot write.
Another store (Postgres) implements `BaseCheckpointer`'s abstract methods with the same meaning
and overrides the async twins; payloads are opaque JSON text.

SQLite layout (`PRAGMA application_id` = 0x61637470, "actp"; `user_version` = 2):
`runs(thread_id PK, status, inputs, fingerprint, output, pending, error, created, updated)`,
`entries(thread_id, seq, kind, act, call, elapsed, data, epoch, PK(thread_id, seq))`,
`leases(thread_id PK, pid, host, started, token, epoch, expires)` (a released lease keeps its row
and epoch, with no owner). Version-1 files are migrated in place on first open. WAL mode,
`synchronous=NORMAL` (a committed entry survives a killed process; pass `synchronous="FULL"` to
survive power loss too), one transaction per entry. A file that is not an actloop checkpoint, or
is corrupt, raises `CheckpointError` naming it and is never written to.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from actloop.exceptions import CheckpointError

__all__ = [
    "BaseCheckpointer",
    "JournalEntry",
    "Lease",
    "LeaseHeldError",
    "LeaseLostError",
    "Owner",
    "RunRecord",
    "RunStatus",
]

RunStatus = Literal["running", "paused", "failed", "finished"]
"""`running` (in progress, or interrupted by a crash), `paused` (waiting for approval), `failed`
(an exception ended it; resumable), `finished` (done; cannot be resumed)."""


@dataclass(frozen=True)
class RunRecord:
    """The header of one durable run: what it was asked and where it stands."""

    thread_id: str
    status: RunStatus
    inputs: str
    """The run's inputs as `dumps` JSON."""
    fingerprint: str
    """JSON of the settings replay depends on (tool names, limits)."""
    output: str | None = None
    """When finished: the final outputs as `dumps` JSON."""
    pending: str | None = None
    """When paused: JSON list of the calls waiting for approval."""
    error: str | None = None
    """When failed: `"ExceptionType: message"`."""
    created: float = 0.0
    updated: float = 0.0
    owner: str | None = None
    """`"pid@host"` of the process holding the thread's lease, if any (read-only)."""


class JournalEntry(NamedTuple):
    """One journal row; see the module docstring for the kinds."""

    seq: int
    kind: str
    act: int | None
    call: int | None
    elapsed: float
    data: str | None
    epoch: int | None = None
    """The fencing epoch of the lease that wrote it; the store fills it in on `append`."""


def _proc_start(pid: int) -> str | None:
    """The process's start time from /proc (detects a reused pid), or None where unavailable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return "Z" if fields[0] in ("Z", "X") else fields[19]


@dataclass(frozen=True)
class Owner:
    """The process that holds a thread's lease."""

    pid: int
    host: str
    started: str
    """The process's start time (from /proc) or "" where unknown."""
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def current(cls) -> Owner:
        """An owner for this process, with a fresh token."""
        return cls(os.getpid(), socket.gethostname(), _proc_start(os.getpid()) or "")

    def is_alive(self) -> bool:
        """False only when this host can tell the process is gone (dead, zombie, pid reused)."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        started = _proc_start(self.pid)
        return started is None or not self.started or started == self.started

    def __str__(self) -> str:
        return f"{self.pid}@{self.host}"


@dataclass(frozen=True)
class Lease:
    """The right to write one thread's run, as `acquire` granted it."""

    thread_id: str
    owner: Owner
    epoch: int
    """Fencing token: grows on every acquisition (take-overs too) and never goes back."""
    expires: float | None
    """`time.time()` after which another owner may take over; None: not while the owner lives."""


class LeaseLostError(CheckpointError):
    """A write carried a lease that is no longer the thread's current one; nothing was written."""


class LeaseHeldError(CheckpointError):
    """Another live owner holds the thread's lease (`acquire`, or a write without a lease)."""


class HeldLease(NamedTuple):
    """A thread's lease row as a store read it: the owner (None when free), the epoch (0 when
    never taken), the expiry, and the store's clock at the read (None: this host's clock)."""

    owner: Owner | None
    epoch: int
    expires: float | None
    now: float | None = None

    def live(self) -> bool:
        """Held, unexpired, and its owner is not known to be dead."""
        if self.owner is None:
            return False
        now = time.time() if self.now is None else self.now
        if self.expires is not None and self.expires <= now:
            return False
        return self.owner.is_alive()

    def blocks_this_process(self) -> bool:
        """Held by another process that is live: a write without a lease must wait."""
        return self.owner is not None and not _is_this_process(self.owner) and self.live()

    def check(self, lease: Lease) -> None:
        """LeaseLostError unless `lease` is this (current) lease: same epoch and owner."""
        if self.owner is not None and (self.epoch, self.owner.token) == (
            lease.epoch,
            lease.owner.token,
        ):
            return
        now = "released" if self.owner is None else f"held by process {self.owner}"
        raise LeaseLostError(
            f"thread {lease.thread_id!r}: the lease of epoch {lease.epoch} (process "
            f"{lease.owner}) was lost; the thread is at epoch {self.epoch}, {now}. "
            "Nothing was written."
        )

    def busy(self, thread_id: str) -> LeaseHeldError:
        """The error for a thread this lease keeps from being run."""
        assert self.owner is not None
        return LeaseHeldError(
            f"thread {thread_id!r} is being run by process {self.owner.pid} on "
            f"{self.owner.host} (lease epoch {self.epoch}); wait for it to end (or stop it) and "
            "resume then"
        )


def _is_this_process(owner: Owner) -> bool:
    return owner.pid == os.getpid() and owner.host == socket.gethostname()


class BaseCheckpointer(ABC):
    """A store of durable runs, one lease-holder at a time per thread.

    A store implements `acquire`, `renew`, `release`, `get`, `create`, `update`, `append`,
    `entries` and `list_runs` (and `delete` if it can). Leases: `acquire` succeeds when the thread
    is free, released, expired, or held by a dead owner, and returns a lease whose `epoch` is one
    more than any before it. A write given `lease=` checks, in its own transaction, that the lease
    is still the thread's current one (same epoch and owner token) and otherwise raises
    `LeaseLostError` having written nothing; an expired lease nobody took over still writes. A
    write without a lease is refused (`CheckpointError`) while a live, unexpired lease is held by
    another process. The executor calls these from one thread at a time per thread_id, except
    `append`, which parallel tool calls of one run may call concurrently.

    The `a`-prefixed twins call the sync methods inline by default: an embedded store (SQLite)
    answers in microseconds, so a thread hop would cost more than it saves. A networked store
    overrides them with native async I/O.
    """

    lease_ttl: float | None = None
    """Seconds a lease lasts when `acquire`/`renew` get no `ttl`; None: no expiry."""

    @abstractmethod
    def acquire(self, thread_id: str, owner: Owner, *, ttl: float | None = None) -> Lease:
        """Take the thread's lease, or raise CheckpointError if a live owner holds it."""

    @abstractmethod
    def renew(self, lease: Lease, *, ttl: float | None = None) -> Lease:
        """The lease with a later expiry; LeaseLostError if it is no longer the current one."""

    @abstractmethod
    def release(self, lease: Lease) -> None:
        """Give up the lease if it is still the current one (else do nothing)."""

    @abstractmethod
    def get(self, thread_id: str) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""

    @abstractmethod
    def create(self, record: RunRecord, *, lease: Lease | None = None) -> None:
        """Save a new run; CheckpointError if the thread already has one."""

    @abstractmethod
    def update(
        self, thread_id: str, status: RunStatus, *, lease: Lease | None = None, **fields: str | None
    ) -> None:
        """Set the run's status and any of `output`, `pending`, `error`."""

    @abstractmethod
    def append(self, thread_id: str, entry: JournalEntry, *, lease: Lease | None = None) -> None:
        """Add one journal entry durably (its own transaction); a taken `seq` raises."""

    @abstractmethod
    def entries(self, thread_id: str) -> list[JournalEntry]:
        """The thread's journal in `seq` order."""

    @abstractmethod
    def list_runs(self) -> list[RunRecord]:
        """Every saved run, most recently updated first."""

    def delete(self, thread_id: str) -> None:
        """Forget a run (its record, journal and lease holder; the epoch stays)."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete runs")

    def break_lease(self, thread_id: str) -> Owner | None:
        """Free the thread's lease whoever holds it and return that holder (None: it was free);
        the epoch stays, so the old holder writes nothing more. For a holder that died where
        `Owner.is_alive` cannot tell (another host). CheckpointError if a live process on this
        host holds it."""
        raise NotImplementedError(f"{type(self).__name__} cannot break leases")

    def close(self) -> None:  # noqa: B027 (optional: a store with nothing open keeps it)
        """Give back what the store holds open (connections); it reopens on next use."""

    async def aclose(self) -> None:
        """Async twin of `close`."""
        self.close()

    # -- async twins: inline by default (see the class docstring) -------------------------------

    async def aacquire(self, thread_id: str, owner: Owner, *, ttl: float | None = None) -> Lease:
        """Async twin of `acquire`."""
        return self.acquire(thread_id, owner, ttl=ttl)

    async def arenew(self, lease: Lease, *, ttl: float | None = None) -> Lease:
        """Async twin of `renew`."""
        return self.renew(lease, ttl=ttl)

    async def arelease(self, lease: Lease) -> None:
        """Async twin of `release`."""
        self.release(lease)

    async def aget(self, thread_id: str) -> RunRecord | None:
        """Async twin of `get`."""
        return self.get(thread_id)

    async def acreate(self, record: RunRecord, *, lease: Lease | None = None) -> None:
        """Async twin of `create`."""
        self.create(record, lease=lease)

    async def aupdate(
        self, thread_id: str, status: RunStatus, *, lease: Lease | None = None, **fields: str | None
    ) -> None:
        """Async twin of `update`."""
        self.update(thread_id, status, lease=lease, **fields)

    async def aappend(
        self, thread_id: str, entry: JournalEntry, *, lease: Lease | None = None
    ) -> None:
        """Async twin of `append`."""
        self.append(thread_id, entry, lease=lease)

    async def aentries(self, thread_id: str) -> list[JournalEntry]:
        """Async twin of `entries`."""
        return self.entries(thread_id)

    async def alist_runs(self) -> list[RunRecord]:
        """Async twin of `list_runs`."""
        return self.list_runs()

    async def adelete(self, thread_id: str) -> None:
        """Async twin of `delete`."""
        self.delete(thread_id)
