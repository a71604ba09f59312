"""Where durable runs are saved: the store interface, its leases and its implementations."""

from actloop.checkpoint._base import (
    BaseCheckpointer,
    JournalEntry,
    Lease,
    LeaseLostError,
    Owner,
    RunRecord,
    RunStatus,
)
from actloop.checkpoint.sqlite import SqliteCheckpointer

__all__ = [
    "BaseCheckpointer",
    "JournalEntry",
    "Lease",
    "LeaseLostError",
    "Owner",
    "RunRecord",
    "RunStatus",
    "SqliteCheckpointer",
]

for _cls in (BaseCheckpointer, JournalEntry, Lease, LeaseLostError, Owner, RunRecord):
    _cls.__module__ = __name__  # users import them from here; reprs and pickles say so
del _cls
