"""How a store call is held to its time bound: on a daemon worker (sync I/O that cannot time out by
itself) or as a task (async I/O), given up when the bound passes (`actloop.runnables._deadlines`,
as the executor waits on plans), with `StoreTimeoutError` for the caller.

A call given up is never joined: its worker (or task) finishes when the store answers, or never,
without holding the caller, the event loop or the process at exit. What it was writing may still
land later; every run write is fenced by its lease, so a late write of a run that lost its lease
is refused by the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from actloop.checkpoint._base import StoreTimeoutError
from actloop.runnables._deadlines import Deadline, wait_one
from actloop.runnables._deadlines import within as wait_within
from actloop.runnables._workers import run_in_worker

__all__ = ["in_worker", "late", "on_worker", "within"]

_T = TypeVar("_T")


def on_worker(fn: Callable[[], _T], timeout: float, where: str) -> _T:
    """`fn()` on a daemon worker, waited for at most `timeout` seconds (StoreTimeoutError after)."""
    try:
        return wait_one(fn, (), timeout)
    except Deadline:
        raise late(where, timeout) from None


async def within(call: Awaitable[_T], timeout: float, where: str) -> _T:
    """Await `call` for at most `timeout` seconds; after that it is cancelled and left to finish
    on its own (a driver cancelling a query may itself wait on the server), and
    StoreTimeoutError is raised."""
    task = asyncio.ensure_future(call)
    task.add_done_callback(_retrieve)  # a given-up call's error is nobody's to log
    try:
        return await wait_within(task, timeout)
    except Deadline:
        raise late(where, timeout) from None


async def in_worker(fn: Callable[[], _T], timeout: float, where: str) -> _T:
    """`fn()` on a daemon worker, awaited for at most `timeout` seconds: the async twin of a sync
    store call, so the event loop never waits on it (a call given up before it starts never
    starts)."""
    return await within(run_in_worker(fn), timeout, where)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a task's outcome, so asyncio does not log a given-up call's error as never
    retrieved."""
    if not task.cancelled():
        task.exception()


def late(where: str, timeout: float) -> StoreTimeoutError:
    """The error of a store call that outlived its bound."""
    return StoreTimeoutError(
        f"{where} did not answer in time (within {timeout:.3g} s); the call was given up. "
        "What the run saved before stays saved; resume it once the store answers again"
    )
