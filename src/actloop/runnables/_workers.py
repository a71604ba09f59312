"""A pool of daemon worker threads for sync tools.

Unlike `ThreadPoolExecutor`, nothing here is ever joined: a tool that hangs forever keeps one
daemon thread blocked and the run (and the process, at exit) goes on without it. Idle workers are
reused, so a step costs a queue hand-off, not a thread start. Each call runs in a copy of the
submitter's `contextvars` context (as `asyncio.to_thread` does), so an OpenTelemetry span or any
other ContextVar set by the caller is visible inside, and what the call sets stays there.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["run_in_worker", "submit"]

T = TypeVar("T")

_tasks: queue.SimpleQueue[
    tuple[Future[Any], contextvars.Context, Callable[..., Any], tuple[Any, ...]]
] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0
"""Workers waiting for a task and not yet reserved by a submitter."""
_started = 0
"""Workers started so far (they never exit)."""
_backlog = 0
"""Calls queued while every worker was busy and no more could start."""
MAX_WORKERS = 128
"""Past this many workers, calls queue for the next free one instead of starting a thread.

Deadlines still hold when every worker is busy or hung: callers wait on their future with a
timeout, so a queued call simply counts against its run's deadline."""


def _worker() -> None:
    global _idle, _backlog
    while True:
        future, context, fn, args = _tasks.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(context.run(fn, *args))
            except BaseException as exc:
                future.set_exception(exc)
        del future, context, fn, args
        with _lock:
            if _backlog:
                _backlog -= 1  # take a queued call next instead of going idle
            else:
                _idle += 1


def submit(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on a daemon worker (an idle one, else a new one up to MAX_WORKERS).

    It runs in a copy of the caller's context taken now: ContextVars read as the caller set them.
    """
    global _idle, _started, _backlog
    future: Future[T] = Future()
    with _lock:
        start = False
        if _idle > 0:
            _idle -= 1
        elif _started < MAX_WORKERS:
            _started += 1
            start = True
        else:
            _backlog += 1
    _tasks.put((future, contextvars.copy_context(), fn, args))
    if start:
        threading.Thread(target=_worker, name="actloop-worker", daemon=True).start()
    return future


async def run_in_worker(fn: Callable[..., T], *args: Any) -> T:
    """Await `fn(*args)` run on a daemon worker, re-raising exactly the exception it raised.

    Unlike `asyncio.wrap_future`, a `TimeoutError` or `CancelledError` from `fn` is not replaced
    by a new asyncio exception, and a `StopIteration` (which an asyncio future refuses, leaving the
    awaiter waiting forever) becomes a RuntimeError caused by it, as in a coroutine. Cancelling
    the awaiter cancels the call if no worker has started it yet.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[T] = loop.create_future()
    future = submit(fn, *args)

    def forward(done: Future[T]) -> None:
        try:
            loop.call_soon_threadsafe(_settle, waiter, done)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    future.add_done_callback(forward)
    try:
        return await waiter
    finally:
        if waiter.cancelled():
            future.cancel()


def _settle(waiter: asyncio.Future[T], done: Future[T]) -> None:
    if waiter.done():
        return
    if done.cancelled():
        waiter.cancel()
        return
    exc = done.exception()
    if exc is None:
        waiter.set_result(done.result())
    elif isinstance(exc, StopIteration):
        error = RuntimeError("tool raised StopIteration")
        error.__cause__ = exc
        waiter.set_exception(error)
    else:
        waiter.set_exception(exc)
