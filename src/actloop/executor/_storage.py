"""How the drivers carry out a durable run's store calls: the sync driver with the store's sync
methods, the async driver by awaiting its async twins. Each call is bounded by what is left of the
run's deadline (`DurableRun.bound`). These are the run's only holders of the store.

A lease that expires is renewed every third of its time to live by a heartbeat: a thread beside a
sync run, a task beside an async one. A renewal that fails (the lease was taken over, the store
does not answer) ends the heartbeat; the run's next write is then refused by the store's fencing
check. A lease the store could not release when the run ended is released on a daemon thread
once the store answers again (or it expires).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from actloop.checkpoint import BaseCheckpointer, Lease
from actloop.checkpoint._base import abandon, released
from actloop.exceptions import CheckpointError
from actloop.executor._durable import DurableRun, Ops, StoreCall
from actloop.executor._notes import call_note

if TYPE_CHECKING:
    from actloop.executor._loop import ToolCall
    from actloop.tools._notes import CallNote

__all__ = ["AsyncStore", "SyncStore", "acarry", "carry", "release_later"]

_T = TypeVar("_T")

Bound = Callable[[], float | None] | None
"""What bounds each store call: a function giving the seconds it may take, or None (the store's
own timeout: a run without a deadline)."""

RELEASE_RETRY_SECONDS = 3600.0
"""How long a lease the store failed to release is retried before it is left to expire."""


def carry(store: BaseCheckpointer, ops: Ops[_T] | StoreCall, bound: Bound) -> _T:
    """Make each call `ops` yields with the store's sync method, bounded by `bound()` seconds
    (None: the store's own timeout); send `ops` the result (or throw the error in); return its
    value. A lone `StoreCall` (a step's one write, `Writes`) is made directly."""
    if isinstance(ops, StoreCall):
        return _made(store, ops, bound)
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            call = ops.send(value) if error is None else ops.throw(error)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            value = _made(store, call, bound)
        except Exception as exc:
            error = exc


async def acarry(store: BaseCheckpointer, ops: Ops[_T] | StoreCall, bound: Bound) -> _T:
    """Async twin of `carry`: awaits the store's async twin of each call."""
    if isinstance(ops, StoreCall):
        return await _made(store, ops, bound, "a")
    value: Any = None
    error: Exception | None = None
    while True:
        try:
            call = ops.send(value) if error is None else ops.throw(error)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            value = await _made(store, call, bound, "a")
        except Exception as exc:
            error = exc


def _made(store: BaseCheckpointer, call: StoreCall, bound: Bound, twin: str = "") -> Any:
    """Make `call` with the store's method (its async twin with `twin="a"`: the awaitable is
    returned), bounded by `bound()` seconds (None: the store's own timeout)."""
    timeout = None if bound is None else bound()
    return getattr(store, twin + call.method)(*call.args, timeout=timeout, **call.kwargs)


class SyncStore:
    """Carries out a durable run's store calls with the store's sync methods."""

    def __init__(self, store: BaseCheckpointer, run: DurableRun) -> None:
        self.store, self.run = store, run
        self._stopped: threading.Event | None = None
        self.carry: Callable[[Ops[Any] | StoreCall], Any] = functools.partial(
            carry, store, bound=run.bounded
        )
        """`carry` bounded by the run's deadline (a partial: one frame less per store call)."""

    def open(self) -> None:
        """Open the run; start its heartbeat when its lease expires."""
        self.carry(self.run.open())
        every = self.run.renew_every
        if every is not None:
            self._stopped = threading.Event()
            threading.Thread(
                target=self._beat, args=(every, self._stopped), name="actloop-lease", daemon=True
            ).start()

    def _beat(self, every: float, stopped: threading.Event) -> None:
        while not stopped.wait(every):
            try:
                self.carry(self.run.renew())
            except CheckpointError:
                return

    def call_note(self, ticket: int, index: int, call: ToolCall) -> CallNote:
        """A tool call's note handle (`_notes`), recording with the sync store."""
        return call_note(self.run, self.carry, ticket, index, call)

    def close(self) -> None:
        """Stop the heartbeat and give the lease back (later, if the store cannot now)."""
        if self._stopped is not None:
            self._stopped.set()
        lease = self.carry(self.run.close())
        if lease is not None:
            release_later(self.store, lease)


class AsyncStore:
    """Carries out a durable run's store calls by awaiting the store's async twins."""

    def __init__(self, store: BaseCheckpointer, run: DurableRun) -> None:
        self.store, self.run = store, run
        self._beat: asyncio.Task[None] | None = None

    async def carry(self, ops: Ops[_T] | StoreCall) -> _T:
        """`acarry` bounded by the run's deadline."""
        return await acarry(self.store, ops, self.run.bounded)

    async def open(self) -> None:
        """Open the run; start its heartbeat task when its lease expires."""
        await self.carry(self.run.open())
        every = self.run.renew_every
        if every is not None:
            self._beat = asyncio.ensure_future(self._heartbeat(every))

    async def _heartbeat(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.carry(self.run.renew())
            except CheckpointError:
                return

    def call_note(self, ticket: int, index: int, call: ToolCall) -> CallNote:
        """A tool call's note handle (`_notes`). A note is recorded with the store's sync
        methods: `record` is sync, called from the tool's thread or any event loop."""
        write = functools.partial(carry, self.store, bound=self.run.bounded)
        return call_note(self.run, write, ticket, index, call)

    async def close(self) -> None:
        """Stop the heartbeat and give the lease back (later, if the store cannot now)."""
        if self._beat is not None:
            self._beat.cancel()
        lease = await self.carry(self.run.close())
        if lease is not None:
            release_later(self.store, lease)


def release_later(store: BaseCheckpointer, lease: Lease) -> None:
    """Retry releasing `lease` on a daemon thread, backing off to every 2 s: a store that failed
    or did not answer (disk full, database down or frozen) must not keep the thread locked for the
    rest of the process; once it answers again, another process can resume the run."""

    def retry() -> None:
        delay, give_up = 0.05, time.monotonic() + RELEASE_RETRY_SECONDS
        while time.monotonic() < give_up:
            time.sleep(delay)
            try:
                store.release(lease, timeout=max(delay, 5.0))
                released(lease)
                return
            except Exception:
                delay = min(delay * 2, 2.0)

    abandon(lease)  # meanwhile a resume in this process may take the thread over at once

    threading.Thread(target=retry, name="actloop-release", daemon=True).start()
