"""A pool of daemon worker threads for sync tools.

Unlike `ThreadPoolExecutor`, nothing here is ever joined: a tool that hangs forever keeps one
daemon thread blocked and the run (and the process, at exit) goes on without it. Idle workers are
reused, so a step costs a queue hand-off, not a thread start. Each call runs in a copy of the
submitter's `contextvars` context (as `asyncio.to_thread` does), so an OpenTelemetry span or any
other ContextVar set by the caller is visible inside, and what the call sets stays there.

Two rules keep the bound (`MAX_WORKERS`) from ever causing a hang:
- a call submitted *from* a worker (an agent used as a tool, a sub-agent's plan under a deadline)
  never queues: it gets an idle worker or a new thread, so nested runs never wait on workers their
  own callers hold;
- a caller that stops waiting (deadline, Ctrl-C, a sibling's error) calls `abandon`: calls not
  started yet are cancelled and never start, and a running call's worker stops counting against
  the bound (a replacement may start), so hung calls cannot starve later runs.

`abandon` also raises the call's halt flag: code running inside the call (and inside calls it
submits) sees `halted()` turn true, so an agent used as a tool or a batch item whose caller gave
up starts no new step or tool.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from actloop.runnables._halts import HALTS

if TYPE_CHECKING:
    import asyncio

__all__ = ["abandon", "run_batch", "run_in_worker", "submit", "tracking"]

T = TypeVar("T")


class _Call(Future[T]):
    """A worker call's future, with the flag `abandon` sets so the call can see it was given up."""

    def __init__(self) -> None:
        super().__init__()
        self.halt = threading.Event()


_tasks: queue.SimpleQueue[
    tuple[_Call[Any], contextvars.Context, Callable[..., Any], tuple[Any, ...]]
] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0
"""Workers waiting for a task and not yet reserved by a submitter."""
_started = 0
"""Workers that count against MAX_WORKERS (abandoned ones no longer do)."""
_backlog = 0
"""Calls queued while every worker was busy and no more could start."""
_written_off: set[Future[Any]] = set()
"""Running calls whose caller stopped waiting: their worker exits once the call returns."""
_local = threading.local()
_tracked: contextvars.ContextVar[list[Future[Any]] | None] = contextvars.ContextVar(
    "actloop_tracked_calls", default=None
)
MAX_WORKERS = 128
"""Past this many workers, top-level calls queue for the next free one instead of starting a
thread (calls from inside a worker never queue).

Deadlines still hold when every worker is busy or hung: callers wait on their future with a
timeout, so a queued call simply counts against its run's deadline."""


def _worker() -> None:
    global _idle, _backlog
    _local.worker = True
    while True:
        future, context, fn, args = _tasks.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(context.run(_enter, future.halt, fn, args))
            except BaseException as exc:
                future.set_exception(exc)
        del context, fn, args
        with _lock:
            if future in _written_off:
                _written_off.discard(future)
                return  # a replacement already took this worker's place in the bound
            if _backlog:
                _backlog -= 1  # take a queued call next instead of going idle
            else:
                _idle += 1
        del future


def _enter(halt: threading.Event, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Run `fn(*args)` in the call's own context, where `halted()` also sees `halt`."""
    HALTS.set((*HALTS.get(), halt))
    return fn(*args)


def _start_thread() -> None:
    threading.Thread(target=_worker, name="actloop-worker", daemon=True).start()


def submit(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on a daemon worker (an idle one, else a new one up to MAX_WORKERS, or
    always a new one when called from a worker).

    It runs in a copy of the caller's context taken now: ContextVars read as the caller set them.
    """
    global _idle, _started, _backlog
    future: _Call[T] = _Call()
    nested = getattr(_local, "worker", False)
    with _lock:
        start = False
        if _idle > 0:
            _idle -= 1
        elif _started < MAX_WORKERS or nested:
            _started += 1
            start = True
        else:
            _backlog += 1
    _tasks.put((future, contextvars.copy_context(), fn, args))
    if start:
        _start_thread()
    return future


def abandon(futures: Iterable[Future[Any]]) -> None:
    """The caller stops waiting on these calls: the ones not started never start, and each
    running one frees its place in the bound (its worker exits when the call returns).

    Queued calls are cancelled first, so a replacement worker never picks one of them up. Each
    call's `halted()` turns true, so an agent running inside it (an agent used as a tool, a batch
    item) starts no new step or tool."""
    global _started, _backlog
    futures = list(futures)
    for future in futures:
        if isinstance(future, _Call) and not future.done():
            future.halt.set()
    running = [f for f in futures if not f.done() and not f.cancel()]
    replacements = 0
    with _lock:
        for future in running:
            if future.done() or future in _written_off:
                continue
            _written_off.add(future)
            _started -= 1
            if _backlog:  # a queued call was waiting for a worker: start one for it
                _backlog -= 1
                _started += 1
                replacements += 1
    for _ in range(replacements):
        _start_thread()


@contextlib.contextmanager
def tracking() -> Generator[list[Future[Any]]]:
    """Inside the block (and in tasks created in it), `run_in_worker` records its calls in the
    yielded list, so a caller that gives up on several tasks can `abandon` their calls at once
    (queued ones first) before cancelling the tasks."""
    calls: list[Future[Any]] = []
    token = _tracked.set(calls)
    try:
        yield calls
    finally:
        _tracked.reset(token)


async def run_in_worker(fn: Callable[..., T], *args: Any) -> T:
    """Await `fn(*args)` run on a daemon worker, re-raising exactly the exception it raised.

    Unlike `asyncio.wrap_future`, a `TimeoutError` or `CancelledError` from `fn` is not replaced
    by a new asyncio exception, and a `StopIteration` (which an asyncio future refuses, leaving the
    awaiter waiting forever) becomes a RuntimeError caused by it, as in a coroutine. Cancelling
    the awaiter abandons the call: it never starts if no worker has started it yet.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[T] = loop.create_future()
    future = submit(fn, *args)
    calls = _tracked.get()
    if calls is not None:
        calls.append(future)

    def forward(done: Future[T]) -> None:
        try:
            loop.call_soon_threadsafe(_settle, waiter, done)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    future.add_done_callback(forward)
    try:
        return await waiter
    finally:
        if not future.done():
            abandon((future,))


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


def run_batch(fn: Callable[[T], Any], items: list[T], limit: int) -> list[Any]:
    """`fn(item)` for each item on daemon workers, at most `limit` at once; results in order.

    An `Exception` waits for the calls already running (as a thread pool would), then raises the
    first in item order. An interrupt (Ctrl-C, SystemExit) reaches the caller at once: calls not
    started never start, and running ones are abandoned (`halted()` turns true in them).
    """
    import concurrent.futures

    futures: list[Future[Any]] = []
    try:
        running: set[Future[Any]] = set()
        for item in items:
            while len(running) >= limit:
                _, running = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
            futures.append(submit(fn, item))
            running.add(futures[-1])
        concurrent.futures.wait(futures)
    except BaseException:
        abandon(futures)
        raise
    return [f.result() for f in futures]
