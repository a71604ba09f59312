"""The store interface of durable runs (`BaseCheckpointer`): what a store provides and bounds."""

from __future__ import annotations

import functools
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from actloop.checkpoint._base import HeldLease, JournalEntry, Lease, Owner, RunRecord, RunStatus
from actloop.checkpoint._bounds import in_worker

__all__ = ["BaseCheckpointer"]


class BaseCheckpointer(ABC):
    """A store of durable runs, one lease-holder at a time per thread.

    **What a store provides.** `acquire`, `renew`, `release`, `get`, `create`, `update`, `append`,
    `entries` and `list_runs` (and `delete`, `break_lease`, `held` if it can), each with an
    `a`-prefixed async twin; `append_all` (several entries at once: a durable step's plan with
    its call's result) appends one by one unless the store writes them in one transaction, and
    `list_running` filters `list_runs` unless the store asks for those runs alone. Leases:
    `acquire` succeeds when the thread is free, released, expired, or held by a dead owner, and
    returns a lease whose `epoch` is one more than any before it. A write given `lease=` checks,
    in its own transaction, that the lease is still the thread's current one (same epoch and
    owner token) and otherwise raises `LeaseLostError` having written nothing; an expired lease
    nobody took over still writes. A write without a lease is refused (`CheckpointError`)
    while a live, unexpired lease is held by another process. A run calls these from one thread
    or task at a time, except `append` and `append_all` (and `renew`), which its parallel tool
    calls (and its heartbeat) may call concurrently.

    **What each call bounds.** Every method takes `timeout`: the seconds the call may take in all,
    whatever it waits on (a lock, a pooled connection, a busy file, a server that does not answer);
    None means the store's own `timeout`. A call that cannot finish in time raises
    `StoreTimeoutError` once the time is up, never later. A durable run passes what is left of its
    deadline, so a store that stops answering ends the run at its deadline.

    **Async twins.** They never hold the event loop longer than one local write. By default they
    run the sync method on a daemon worker thread, bounded as above; a store with native async I/O
    (Postgres) overrides them, and an embedded one (SQLite) answers inline when it need not wait.
    """

    lease_ttl: float | None = None
    """Seconds a lease lasts when `acquire`/`renew` get no `ttl`; None: no expiry."""
    timeout: float = 30.0
    """Seconds one call may take when its caller gives no `timeout` (a run without a deadline,
    a listing)."""

    def bound(self, timeout: float | None) -> float:
        """The seconds a call given `timeout` may take."""
        return self.timeout if timeout is None else max(timeout, 0.0)

    @abstractmethod
    def acquire(
        self,
        thread_id: str,
        owner: Owner,
        *,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Take the thread's lease, or raise CheckpointError if a live owner holds it."""

    @abstractmethod
    def renew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """The lease with a later expiry; LeaseLostError if it is no longer the current one."""

    @abstractmethod
    def release(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Give up the lease if it is still the current one (else do nothing)."""

    @abstractmethod
    def get(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """The run saved under `thread_id`, or None."""

    @abstractmethod
    def create(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Save a new run; CheckpointError if the thread already has one."""

    @abstractmethod
    def update(
        self,
        thread_id: str,
        status: RunStatus,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
        **fields: str | None,
    ) -> None:
        """Set the run's status and any of `output`, `pending`, `error`."""

    @abstractmethod
    def append(
        self,
        thread_id: str,
        entry: JournalEntry,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add one journal entry durably (its own transaction); a taken `seq` raises."""

    def append_all(
        self,
        thread_id: str,
        entries: Sequence[JournalEntry],
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add entries in `seq` order, within `timeout` in all. By default one `append` each (a
        crash may keep a prefix of them, which the journal allows); a store that can writes
        them in one transaction, all or none (SQLite does)."""
        end = time.monotonic() + self.bound(timeout)
        for entry in entries:
            self.append(thread_id, entry, lease=lease, timeout=max(end - time.monotonic(), 0.0))

    @abstractmethod
    def entries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """The thread's journal in `seq` order."""

    @abstractmethod
    def list_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Every saved run, most recently updated first."""

    def list_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """The saved runs whose status is `running` (going on, or left by a process that died),
        most recently updated first. A store that can asks only for those."""
        return [r for r in self.list_runs(timeout=timeout) if r.status == "running"]

    def held(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """The thread's lease as it stands (holder, epoch, expiry; `HeldLease.live()` tells if
        it still keeps others out): what a server process asks before it resumes a run another
        may be running. Optional: NotImplementedError where a store cannot tell."""
        raise NotImplementedError(f"{type(self).__name__} cannot read leases")

    def delete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Forget a run (its record, journal and lease holder; the epoch stays)."""
        raise NotImplementedError(f"{type(self).__name__} cannot delete runs")

    def break_lease(self, thread_id: str, *, timeout: float | None = None) -> Owner | None:
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

    # -- async twins: the sync method on a worker, bounded (see the class docstring) -------------

    async def _in_worker(self, method: Any, timeout: float | None, *args: Any, **kw: Any) -> Any:
        limit = self.bound(timeout)
        call = functools.partial(method, *args, timeout=limit, **kw)
        return await in_worker(call, limit, repr(self))

    async def aacquire(
        self,
        thread_id: str,
        owner: Owner,
        *,
        ttl: float | None = None,
        timeout: float | None = None,
    ) -> Lease:
        """Async twin of `acquire`."""
        return await self._in_worker(self.acquire, timeout, thread_id, owner, ttl=ttl)

    async def arenew(
        self, lease: Lease, *, ttl: float | None = None, timeout: float | None = None
    ) -> Lease:
        """Async twin of `renew`."""
        return await self._in_worker(self.renew, timeout, lease, ttl=ttl)

    async def arelease(self, lease: Lease, *, timeout: float | None = None) -> None:
        """Async twin of `release`."""
        await self._in_worker(self.release, timeout, lease)

    async def aget(self, thread_id: str, *, timeout: float | None = None) -> RunRecord | None:
        """Async twin of `get`."""
        return await self._in_worker(self.get, timeout, thread_id)

    async def acreate(
        self, record: RunRecord, *, lease: Lease | None = None, timeout: float | None = None
    ) -> None:
        """Async twin of `create`."""
        await self._in_worker(self.create, timeout, record, lease=lease)

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
        await self._in_worker(self.update, timeout, thread_id, status, lease=lease, **fields)

    async def aappend(
        self,
        thread_id: str,
        entry: JournalEntry,
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `append`."""
        await self._in_worker(self.append, timeout, thread_id, entry, lease=lease)

    async def aappend_all(
        self,
        thread_id: str,
        entries: Sequence[JournalEntry],
        *,
        lease: Lease | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `append_all`: by default one `aappend` each, within `timeout` in all."""
        end = time.monotonic() + self.bound(timeout)
        for entry in entries:
            left = max(end - time.monotonic(), 0.0)
            await self.aappend(thread_id, entry, lease=lease, timeout=left)

    async def aentries(self, thread_id: str, *, timeout: float | None = None) -> list[JournalEntry]:
        """Async twin of `entries`."""
        return await self._in_worker(self.entries, timeout, thread_id)

    async def alist_runs(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_runs`."""
        return await self._in_worker(self.list_runs, timeout)

    async def alist_running(self, *, timeout: float | None = None) -> list[RunRecord]:
        """Async twin of `list_running`."""
        return await self._in_worker(self.list_running, timeout)

    async def aheld(self, thread_id: str, *, timeout: float | None = None) -> HeldLease:
        """Async twin of `held`."""
        return await self._in_worker(self.held, timeout, thread_id)

    async def adelete(self, thread_id: str, *, timeout: float | None = None) -> None:
        """Async twin of `delete`."""
        await self._in_worker(self.delete, timeout, thread_id)
