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

`elapsed` on every entry is the run's clock (seconds, resumes included) when it was written. A
lease per thread (owner pid, host, process start time, token) makes sure one process at a time
runs a thread; a lease whose owner died on this host may be taken over, which is what lets a run
resume after `kill -9`. Another store (Postgres, Redis) implements `BaseCheckpointer`'s eight
methods with the same meaning; payloads are opaque JSON text.

SQLite layout (`PRAGMA application_id` = 0x61637470, "actp"; `user_version` = 1):
`runs(thread_id PK, status, inputs, fingerprint, output, pending, error, created, updated)`,
`entries(thread_id, seq, kind, act, call, elapsed, data, PK(thread_id, seq))`,
`leases(thread_id PK, pid, host, started, token)`. WAL mode, `synchronous=NORMAL` (a committed
entry survives a killed process; pass `synchronous="FULL"` to survive power loss too), one
transaction per entry. A file that is not an actloop checkpoint, or is corrupt, raises
`CheckpointError` naming it and is never written to.
"""

from __future__ import annotations

import os
import socket
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

__all__ = [
    "BaseCheckpointer",
    "JournalEntry",
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


class BaseCheckpointer(ABC):
    """A store of durable runs; the executor calls these from one thread at a time per thread_id,
    except `append`, which parallel tool calls of one run may call concurrently."""

    @abstractmethod
    def acquire(self, thread_id: str, owner: Owner) -> None:
        """Take the thread's lease, or raise CheckpointError if a live process holds it."""

    @abstractmethod
    def release(self, thread_id: str, owner: Owner | None = None) -> None:
        """Give up the lease held by `owner` (None: whoever holds it)."""

    @abstractmethod
    def get(self, thread_id: str) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""

    @abstractmethod
    def create(self, record: RunRecord) -> None:
        """Save a new run; CheckpointError if the thread already has one."""

    @abstractmethod
    def update(self, thread_id: str, status: RunStatus, **fields: str | None) -> None:
        """Set the run's status and any of `output`, `pending`, `error`."""

    @abstractmethod
    def append(self, thread_id: str, entry: JournalEntry) -> None:
        """Add one journal entry durably (its own transaction); a taken `seq` raises."""

    @abstractmethod
    def entries(self, thread_id: str) -> list[JournalEntry]:
        """The thread's journal in `seq` order."""

    @abstractmethod
    def list_runs(self) -> list[RunRecord]:
        """Every saved run, most recently updated first."""

    def delete(self, thread_id: str) -> None:
        """Forget a run (its record, journal and lease)."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete runs")
