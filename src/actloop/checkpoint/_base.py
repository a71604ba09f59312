"""What a durable run is saved as: its record, its journal's entries, its lease, the store errors.

The store interface (`BaseCheckpointer`) is in `_store`, the entries' data format in `_entries`.
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
    "ask"       a    i    {"questions": [{"key", "message", "schema"}], "state"}: asked a person
    "answer"    a    i    {question key: {"action", "content"}}: the answers to the latest ask
    "note"      a    i    a running call's own text (`actloop.tools.call_note`): the latest is
                          given back to the call when the run is resumed
    "context"   -    -    {"traceparent": ...}: the trace of the run (or resume) that wrote it

`elapsed` on every entry is the run's clock (seconds, resumes included) when it was written;
`epoch` is the fencing epoch of the lease that wrote it (None when written without one).

Leases: one owner at a time runs a thread. `acquire` returns a `Lease` (owner, expiry, epoch); the
epoch grows by one on every acquisition of the thread and never goes back. A lease may be taken
over once it has expired or its owner is dead (`Owner.is_alive`), which is what lets a run resume
after `kill -9`. Every write may carry the lease, and the store checks it in the write's own
transaction, so a process that lost its lease (paused, partitioned, overtaken) cannot write.
Payloads are opaque JSON text to a store.

SQLite layout (`PRAGMA application_id` = 0x61637470, "actp"; `user_version` = 2):
`runs(thread_id PK, status, inputs, fingerprint, output, pending, error, created, updated)`,
`entries(thread_id, seq, kind, act, call, elapsed, data, epoch, PK(thread_id, seq))`,
`leases(thread_id PK, pid, host, started, token, epoch, expires)` (a released lease keeps its row
and epoch, with no owner). Version-1 files are migrated in place on first open. WAL mode,
`synchronous=NORMAL` (a committed entry survives a killed process; pass `synchronous="FULL"` to
survive power loss too), one transaction per write (`append_all`: a step's plan with its call's
result). A file that is not an actloop checkpoint, or
is corrupt, raises `CheckpointError` naming it and is never written to.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from actloop.exceptions import CheckpointError

__all__ = [
    "HeldLease",
    "JournalEntry",
    "Lease",
    "LeaseHeldError",
    "LeaseLostError",
    "Owner",
    "RunRecord",
    "RunStatus",
    "StoreTimeoutError",
    "abandon",
    "released",
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


_this: tuple[int, str, str] | None = None


def _this_process() -> tuple[int, str, str]:
    """This process's pid, host and start time, read once per process (a forked child reads its
    own): every durable run names its owner, and /proc costs a file read."""
    global _this
    pid = os.getpid()
    if _this is None or _this[0] != pid:
        _this = (pid, socket.gethostname(), _proc_start(pid) or "")
    return _this


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
        return cls(*_this_process())

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


class StoreTimeoutError(CheckpointError):
    """A store call did not finish within its bound (what was left of the run's deadline, or
    the store's `timeout`): the store did not answer in time. What it was writing may still land
    later, fenced by the lease like every write."""


class HeldLease(NamedTuple):
    """A thread's lease row as a store read it: the owner (None when free), the epoch (0 when
    never taken), the expiry, and the store's clock at the read (None: this host's clock)."""

    owner: Owner | None
    epoch: int
    expires: float | None
    now: float | None = None

    def live(self) -> bool:
        """Held, unexpired, and its owner is not known to be dead (nor a run of this process
        that ended without giving its lease back: see `abandon`)."""
        if self.owner is None or self.owner.token in _ABANDONED:
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


_ABANDONED: set[str] = set()
"""Tokens of leases whose run in this process has ended but whose release did not land yet
(the store failed: disk full, database down). Tokens are made fresh for each run and never leave
the process that made them, so only this process's own ended runs are in here."""


def abandon(lease: Lease) -> None:
    """`lease`'s run has ended: the thread may be taken over at once, in this process too (a
    resume after a failed release must not be refused as if the dead run still held it)."""
    _ABANDONED.add(lease.owner.token)


def released(lease: Lease) -> None:
    """`lease` was given back: nothing needs to remember it."""
    _ABANDONED.discard(lease.owner.token)


def _is_this_process(owner: Owner) -> bool:
    return owner.pid == os.getpid() and owner.host == socket.gethostname()
