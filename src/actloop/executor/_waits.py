"""How the drivers wait: on worker threads with a timeout (sync) or on tasks (async).

A wait that ends early (the deadline passed, Ctrl-C, a sibling's error) abandons what it waited
for: calls still queued for a worker never start, and running ones stop counting against the
pool's bound (`actloop.runnables._workers.abandon`). Nothing here is ever joined. Waiting on one
call (`wait_one`, `within`) is `actloop.runnables._deadlines`, which the stores' bounds share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from actloop.executor._loop import ToolCall
from actloop.runnables._deadlines import Deadline, wait_one, within
from actloop.runnables._halts import HALTS, halted

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "HALTS",
    "Deadline",
    "Fatal",
    "collect",
    "run_window",
    "stop_if_halted",
    "wait_one",
    "within",
]

Calls = list[ToolCall]


def stop_if_halted() -> None:
    """Raise KeyboardInterrupt in a run whose worker call was abandoned (an agent used as a tool
    past its caller's deadline, Ctrl-C or error; a batch item after Ctrl-C): it starts no new step
    or tool (`actloop.runnables._halts.halted`). The drivers call it before each plan, stop
    call and tool only when `HALTS` is not empty (inside a worker call): one context-variable read
    before each."""
    if halted():
        raise KeyboardInterrupt("the call running this agent was abandoned; it starts nothing new")


def run_window(
    fn: Callable[[ToolCall, int], Any], calls: Calls, limit: int, timeout: float | None
) -> tuple[list[Future[Any]], set[Future[Any]]]:
    """Run the calls on workers, at most `limit` at a time, until all finish, one raises or the
    timeout passes. Calls not started by then never start (queued ones are cancelled) and running
    ones are abandoned, also when the wait itself is interrupted. Returns (futures, finished)."""
    from actloop.runnables._workers import abandon

    futures: list[Future[Any]] = []
    try:
        _wait_window(fn, calls, limit, timeout, futures)
    except BaseException:
        abandon(futures)
        raise
    done = {f for f in futures if f.done()}
    if len(done) < len(futures):
        abandon(futures)
    return futures, done


def _wait_window(
    fn: Callable[[ToolCall, int], Any],
    calls: Calls,
    limit: int,
    timeout: float | None,
    futures: list[Future[Any]],
) -> None:
    """Submit into `futures` and wait, as `run_window` says."""
    import concurrent.futures

    from actloop.runnables._workers import submit

    futures.extend(submit(fn, call, i) for i, call in enumerate(calls[:limit]))
    if limit >= len(calls):
        concurrent.futures.wait(
            futures, timeout=timeout, return_when=concurrent.futures.FIRST_EXCEPTION
        )
        return
    deadline = None if timeout is None else time.monotonic() + timeout
    running = set(futures)
    while running:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        done, running = concurrent.futures.wait(
            running, timeout=left, return_when=concurrent.futures.FIRST_COMPLETED
        )
        if not done or any(f.exception() is not None for f in done):
            return
        while len(running) < limit and len(futures) < len(calls):
            index = len(futures)
            futures.append(submit(fn, calls[index], index))
            running.add(futures[-1])


class Fatal(Exception):
    """Carries a tool's KeyboardInterrupt or SystemExit out of a child task (see AsyncDriver)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


def collect(futures: list[Any], done: set[Any]) -> tuple[dict[int, Any], BaseException | None]:
    """Results of the finished futures by index, and the first error in action order."""
    finished: dict[int, Any] = {}
    error: BaseException | None = None
    for i, future in enumerate(futures):
        if future not in done:
            continue
        exc = future.exception()
        if exc is None:
            finished[i] = future.result()
        elif error is None:
            error = exc.error if isinstance(exc, Fatal) else exc
    return finished, error
