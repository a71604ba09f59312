"""Waiting at most so long: for a call on a daemon worker (`wait_one`) or for a coroutine
(`within`). What is still running when the time is up is abandoned, never joined, and `Deadline`
is raised. The executor's drivers wait on plans and stop calls this way, and the checkpoint stores
bound their calls this way (`actloop.checkpoint._bounds`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Deadline", "wait_one", "within"]


class Deadline(Exception):
    """The time was up before the call waited on finished (it was abandoned)."""


def wait_one(fn: Callable[..., Any], args: tuple[Any, ...], remaining: float) -> Any:
    """Run `fn(*args)` on a daemon worker and wait at most `remaining` seconds; a call still
    running then (or when the wait is interrupted) is abandoned."""
    import concurrent.futures  # with the workers, on first use: it costs ~5 ms at import

    from actloop.runnables._workers import abandon, submit

    future = submit(fn, *args)
    try:
        return future.result(timeout=max(remaining, 0.0))
    except concurrent.futures.TimeoutError:
        if not future.done():
            abandon((future,))
            raise Deadline from None
        return future.result()  # `fn` itself raised TimeoutError (or finished just now)
    except BaseException:
        abandon((future,))
        raise


async def within(call: Any, remaining: float) -> Any:
    """Await `call` for at most `remaining` seconds, then cancel it and raise `Deadline`.

    Unlike `asyncio.wait_for`, a TimeoutError raised by the call itself is not taken for the
    deadline, and a call that ignores its cancellation is abandoned rather than awaited.
    """
    import asyncio

    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait((task,), timeout=max(remaining, 0.0))
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise Deadline
    return task.result()
