"""How a store call is held to its time bound: on a daemon worker (sync I/O that cannot time out by
itself) or as a task (async I/O), given up when the bound passes.

A call given up is never joined: its worker (or task) finishes when the store answers, or never,
without holding the caller, the event loop or the process at exit. What it was writing may still
land later; every run write is fenced by its lease, so a late write of a run that lost its lease
is refused by the store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from actloop.checkpoint._base import StoreTimeoutError
from actloop.runnables._workers import abandon, submit

__all__ = ["in_worker", "on_worker", "within"]

_T = TypeVar("_T")


def on_worker(fn: Callable[[], _T], timeout: float, where: str) -> _T:
    """`fn()` on a daemon worker, waited for at most `timeout` seconds (StoreTimeoutError after)."""
    future = submit(fn)
    try:
        return future.result(timeout=max(timeout, 0.0))
    except concurrent.futures.TimeoutError:
        if not future.done():
            abandon((future,))
            raise late(where, timeout) from None
        return future.result()  # `fn` itself raised TimeoutError (or finished just now)
    except BaseException:
        abandon((future,))
        raise


async def within(call: Awaitable[_T], timeout: float, where: str) -> _T:
    """Await `call` for at most `timeout` seconds; after that it is cancelled and left to finish
    on its own (a driver cancelling a query may itself wait on the server), and
    StoreTimeoutError is raised."""
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait((task,), timeout=max(timeout, 0.0))
    except BaseException:
        _give_up(task)
        raise
    if not done:
        _give_up(task)
        raise late(where, timeout)
    return task.result()


async def in_worker(fn: Callable[[], _T], timeout: float, where: str) -> _T:
    """`fn()` on a daemon worker, awaited for at most `timeout` seconds: the async twin of a sync
    store call, so the event loop never waits on it."""
    loop = asyncio.get_running_loop()
    future = submit(fn)
    try:
        return await within(asyncio.wrap_future(future, loop=loop), timeout, where)
    finally:
        if not future.done():
            abandon((future,))


def _give_up(task: asyncio.Future[Any]) -> None:
    task.cancel()
    task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a given-up task's outcome, so asyncio does not log it as never retrieved."""
    if not task.cancelled():
        task.exception()


def late(where: str, timeout: float) -> StoreTimeoutError:
    """The error of a store call that outlived its bound."""
    return StoreTimeoutError(
        f"{where} did not answer in time (within {timeout:.3g} s); the call was given up. "
        "What the run saved before stays saved; resume it once the store answers again"
    )
