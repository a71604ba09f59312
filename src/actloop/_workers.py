"""A pool of daemon worker threads for sync tools.

Unlike `ThreadPoolExecutor`, nothing here is ever joined: a tool that hangs forever keeps one
daemon thread blocked and the run (and the process, at exit) goes on without it. Idle workers are
reused, so a step costs a queue hand-off, not a thread start.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["submit"]

T = TypeVar("T")

_tasks: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = (
    queue.SimpleQueue()
)
_lock = threading.Lock()
_idle = 0
"""Workers waiting for a task and not yet reserved by a submitter."""


def _worker() -> None:
    global _idle
    while True:
        future, fn, args = _tasks.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn(*args))
            except BaseException as exc:
                future.set_exception(exc)
        del future, fn, args
        with _lock:
            _idle += 1


def submit(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on a daemon worker: an idle one if any, else a new one (workers never exit)."""
    global _idle
    future: Future[T] = Future()
    with _lock:
        start = _idle == 0
        if not start:
            _idle -= 1
    _tasks.put((future, fn, args))
    if start:
        threading.Thread(target=_worker, name="actloop-worker", daemon=True).start()
    return future
