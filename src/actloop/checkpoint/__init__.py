"""Where durable runs are saved: the store interface and its implementations."""

from actloop.checkpoint._base import BaseCheckpointer, JournalEntry, Owner, RunRecord, RunStatus
from actloop.checkpoint.sqlite import SqliteCheckpointer

__all__ = [
    "BaseCheckpointer",
    "JournalEntry",
    "Owner",
    "RunRecord",
    "RunStatus",
    "SqliteCheckpointer",
]
