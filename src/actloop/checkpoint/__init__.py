"""Where durable runs are saved: the store interface, its leases, its implementations, and the
read side of the journal.

`SqliteCheckpointer` (one file, stdlib) and `PostgresCheckpointer` (a server several hosts share;
`pip install 'actloop[postgres]'`, imported on first use); `connect(target)` picks by the target.
`read_thread(store, thread_id)` / `aread_thread` give a thread's history as typed records.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeGuard

from actloop.checkpoint._base import (
    JournalEntry,
    Lease,
    LeaseHeldError,
    LeaseLostError,
    Owner,
    RunRecord,
    RunStatus,
    StoreTimeoutError,
)
from actloop.checkpoint._entries import Decision, normalized_answers
from actloop.checkpoint._history import (
    CallRecord,
    ThreadHistory,
    aread_thread,
    read_thread,
    thread_history,
)
from actloop.checkpoint._store import BaseCheckpointer
from actloop.checkpoint.sqlite import SqliteCheckpointer

if TYPE_CHECKING:
    from actloop.checkpoint.postgres import PostgresCheckpointer

__all__ = [
    "BaseCheckpointer",
    "CallRecord",
    "Decision",
    "JournalEntry",
    "Lease",
    "LeaseHeldError",
    "LeaseLostError",
    "Owner",
    "PostgresCheckpointer",
    "RunRecord",
    "RunStatus",
    "SqliteCheckpointer",
    "StoreTimeoutError",
    "ThreadHistory",
    "aread_thread",
    "connect",
    "is_postgres_url",
    "normalized_answers",
    "read_thread",
    "thread_history",
]

for _cls in (
    BaseCheckpointer,
    CallRecord,
    Decision,
    JournalEntry,
    Lease,
    LeaseHeldError,
    LeaseLostError,
    Owner,
    RunRecord,
    StoreTimeoutError,
    ThreadHistory,
    aread_thread,
    normalized_answers,
    read_thread,
    thread_history,
):
    _cls.__module__ = __name__  # users import them from here; reprs and pickles say so
del _cls


def is_postgres_url(target: str | os.PathLike[str]) -> TypeGuard[str]:
    """True when `target` is a `postgres://` or `postgresql://` URL (else: a file path)."""
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def connect(target: str | os.PathLike[str], **options: Any) -> BaseCheckpointer:
    """The store `target` names: a `postgres://` or `postgresql://` URL opens a
    `PostgresCheckpointer`, anything else is the path of a `SqliteCheckpointer` file."""
    if is_postgres_url(target):
        from actloop.checkpoint.postgres import PostgresCheckpointer

        return PostgresCheckpointer(target, **options)
    return SqliteCheckpointer(target, **options)


def __getattr__(name: str) -> Any:
    """`PostgresCheckpointer` is imported on first use (it is an optional extra)."""
    if name == "PostgresCheckpointer":
        from actloop.checkpoint.postgres import PostgresCheckpointer

        PostgresCheckpointer.__module__ = __name__
        return PostgresCheckpointer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
